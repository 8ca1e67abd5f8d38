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
        assertThatThrownBy(() -> ProducerConfig.from(props("transactional.id", "tx-1", "enable.idempotence", "false")))
                .hasMessageStartingWith("transactional.id=tx-1 needs idempotence, not enable.idempotence=false");
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
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.type", "uncompressed")))
                .hasMessageEndingWith(
                        "('uncompressed' and 'producer' are topic and broker values; a producer says none)");
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.type", "producer")))
                .hasMessageStartingWith("compression.type=producer: unknown compression type 'producer'")
                .hasMessageContaining("a producer says none");
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.type", "lz4", "compression.lz4.level", "18")))
                .hasMessage("compression.lz4.level=18: out of range 1..17");
        assertThatThrownBy(() -> ProducerConfig.from(props("compression.gzip.level", "high")))
                .hasMessage("compression.gzip.level=high: not an integer");
    }
}
