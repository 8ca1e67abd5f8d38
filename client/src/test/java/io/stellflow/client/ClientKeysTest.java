package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Kafka keys the clients cannot honour are refused with the reason instead of being ignored (issue
 * #22, defect 4: {@code compression.type=zstd} used to produce uncompressed batches without a word;
 * since #21 the producer compresses);
 * their no-op values and the keys the clients read pass.
 */
class ClientKeysTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:9092");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void unsupportedProducerKeysAreRefusedNamingKeyValueAndReason() {
        assertThatThrownBy(() -> ProducerConfig.from(props("transactional.id", "tx-1")))
                .hasMessageStartingWith("transactional.id=tx-1 is not supported");
        assertThatThrownBy(() -> ConsumerConfig.from(props("security.protocol", "SASL_SSL")))
                .hasMessageStartingWith(
                        "security.protocol=SASL_SSL is not supported: the client speaks PLAINTEXT only");
    }

    @Test
    void theirNoOpValuesAndEveryReadKeyPass() {
        ProducerConfig p = ProducerConfig.from(props(
                "compression.type",
                "NONE",
                "enable.idempotence",
                "false",
                "security.protocol",
                "plaintext",
                "linger.ms",
                "7",
                "no.such.key",
                "1"));
        assertThat(p.lingerMs()).isEqualTo(7);
        ConsumerConfig c = ConsumerConfig.from(props("isolation.level", "read_committed", "group.id", "g"));
        assertThat(c.common().bootstrapServers()).hasSize(1);
    }

    /** Issue #20: enable.idempotence is read (default false for now) and needs Kafka's settings. */
    @Test
    void idempotenceNeedsAcksAllAtMostFiveInFlightAndRetries() {
        assertThat(ProducerConfig.from(props()).enableIdempotence()).isFalse();
        ProducerConfig on = ProducerConfig.from(props("enable.idempotence", "TRUE"));
        assertThat(on.enableIdempotence()).isTrue();
        assertThat(on.acks()).isEqualTo((short) -1);
        assertThat(ProducerConfig.from(props(
                                "enable.idempotence",
                                "true",
                                "acks",
                                "all",
                                "max.in.flight.requests.per.connection",
                                "5",
                                "retries",
                                "3"))
                        .enableIdempotence())
                .isTrue();
        assertThatThrownBy(() -> ProducerConfig.from(props("enable.idempotence", "true", "acks", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("enable.idempotence=true needs acks=all (-1), not acks=1: set acks=all or"
                        + " enable.idempotence=false");
        assertThatThrownBy(() -> ProducerConfig.from(
                        props("enable.idempotence", "true", "max.in.flight.requests.per.connection", "6")))
                .hasMessage("enable.idempotence=true needs max.in.flight.requests.per.connection <= 5, not 6: lower"
                        + " it or set enable.idempotence=false");
        assertThatThrownBy(() -> ProducerConfig.from(props("enable.idempotence", "true", "retries", "0")))
                .hasMessage("enable.idempotence=true needs retries > 0, not retries=0: raise it or set"
                        + " enable.idempotence=false");
        assertThatThrownBy(() -> ProducerConfig.from(props("enable.idempotence", "yes")))
                .hasMessage("invalid value for enable.idempotence: 'yes' (true or false)");
        // Without idempotence the same settings stay legal.
        assertThat(ProducerConfig.from(props("acks", "1", "max.in.flight.requests.per.connection", "6", "retries", "0"))
                        .maxInFlightPerConnection())
                .isEqualTo(6);
    }

    /** Issue #21: compression.type and Kafka's level keys are honoured; bad values name key and value. */
    @Test
    void compressionTypeAndLevelsAreReadAndBadValuesRefused() {
        ProducerConfig p = ProducerConfig.from(props("compression.type", "ZSTD ", "compression.zstd.level", "7"));
        assertThat(p.compressionType()).isEqualTo(CompressionType.ZSTD);
        assertThat(p.compressionLevels()).isEqualTo(new CompressionConfig(-1, 9, 7));
        assertThat(ProducerConfig.from(props()).compressionType()).isEqualTo(CompressionType.NONE);
        assertThat(ProducerConfig.from(props("compression.type", "lz4", "compression.lz4.level", "1"))
                        .compressionLevels()
                        .lz4Level())
                .isEqualTo(1);
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.type", "brotli")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("compression.type=brotli: unknown compression type 'brotli': expected none, gzip,"
                        + " snappy, lz4 or zstd");
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.type", "lz4", "compression.lz4.level", "18")))
                .hasMessage("compression.lz4.level=18: out of range 1..17");
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.gzip.level", "high")))
                .hasMessage("compression.gzip.level=high: not an integer");
    }
}
