package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConfigTest {
    @Test
    void producerConfigReadsKafkaNamesAndRejectsBadValuesNamingTheKey() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "h1:1, h2:2");
        p.setProperty("acks", "all");
        p.setProperty("linger.ms", "7");
        ProducerConfig c = ProducerConfig.from(p);
        assertThat(c.acks()).isEqualTo((short) -1);
        assertThat(c.lingerMs()).isEqualTo(7);
        assertThat(c.common().bootstrapServers()).containsExactly(new HostPort("h1", 1), new HostPort("h2", 2));
        assertThat(c.maxInFlightPerConnection()).isEqualTo(5);
        p.setProperty("batch.size", "big");
        assertThatThrownBy(() -> ProducerConfig.from(p)).hasMessageContaining("batch.size");
        p.remove("batch.size");
        p.setProperty("acks", "2");
        assertThatThrownBy(() -> ProducerConfig.from(p)).hasMessageContaining("acks");
        assertThatThrownBy(() -> ConsumerConfig.from(new Properties())).hasMessageContaining("bootstrap.servers");
    }

    @Test
    void checkCrcsIsOnByDefaultAndReadsTrueOrFalseOnly() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "h1:1");
        assertThat(ConsumerConfig.from(p).checkCrcs()).isTrue();
        p.setProperty("check.crcs", "FALSE");
        assertThat(ConsumerConfig.from(p).checkCrcs()).isFalse();
        p.setProperty("check.crcs", "true");
        assertThat(ConsumerConfig.from(p).checkCrcs()).isTrue();
        p.setProperty("check.crcs", "no");
        assertThatThrownBy(() -> ConsumerConfig.from(p)).hasMessageContaining("check.crcs");
    }

    @Test
    void aGroupIdTheWireCannotCarryIsRefusedNamingTheKeyAndTheLimit() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "h1:1");
        p.setProperty("group.id", "g".repeat(32_767));
        assertThat(ConsumerConfig.from(p).groupId()).hasSize(32_767);
        p.setProperty("group.id", "g".repeat(32_768));
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group.id is 32768 UTF-8 bytes")
                .hasMessageContaining("32767");
        // Counted in UTF-8 bytes, not chars: 16384 two-byte chars are 32768 bytes.
        p.setProperty("group.id", "\u00e9".repeat(16_384));
        assertThatThrownBy(() -> ConsumerConfig.from(p)).hasMessageContaining("group.id is 32768 UTF-8 bytes");
        p.setProperty("group.id", "g");
        p.setProperty("group.instance.id", "i".repeat(40_000));
        assertThatThrownBy(() -> ConsumerConfig.from(p)).hasMessageContaining("group.instance.id is 40000 UTF-8 bytes");
    }

    @Test
    void isolationLevelIsReadUncommittedByDefaultAndReadsKafkasTwoValuesOnly() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "h1:1");
        assertThat(ConsumerConfig.from(p).isolationLevel()).isEqualTo(ConsumerConfig.READ_UNCOMMITTED);
        assertThat(ConsumerConfig.from(p).readCommitted()).isFalse();
        p.setProperty("isolation.level", "READ_COMMITTED");
        assertThat(ConsumerConfig.from(p).isolationLevel()).isEqualTo(ConsumerConfig.READ_COMMITTED);
        assertThat(ConsumerConfig.from(p).readCommitted()).isTrue();
        p.setProperty("isolation.level", "read_uncommitted");
        assertThat(ConsumerConfig.from(p).readCommitted()).isFalse();
        p.setProperty("isolation.level", "committed");
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid value for isolation.level: 'committed' (read_uncommitted or read_committed)");
    }

    @Test
    void compressionMaxDecompressedBytesIsTheBrokersDefaultAndRangeNotFetchMaxBytes() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "h1:1");
        ConsumerConfig c = ConsumerConfig.from(p);
        assertThat(c.compressionMaxDecompressedBytes())
                .isEqualTo(64 << 20)
                .isEqualTo(io.stellflow.protocol.record.CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES)
                .isGreaterThan(c.fetchMaxBytes());
        p.setProperty("fetch.max.bytes", "1000000");
        assertThat(ConsumerConfig.from(p).compressionMaxDecompressedBytes()).isEqualTo(64 << 20);
        p.setProperty("compression.max.decompressed.bytes", "65536");
        assertThat(ConsumerConfig.from(p).compressionMaxDecompressedBytes()).isEqualTo(65_536);
        p.setProperty("compression.max.decompressed.bytes", "1073741824");
        assertThat(ConsumerConfig.from(p).compressionMaxDecompressedBytes()).isEqualTo(1 << 30);
        p.setProperty("compression.max.decompressed.bytes", "1073741825");
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .hasMessage(
                        "invalid value for compression.max.decompressed.bytes: 1073741825 (allowed 65536..1073741824)");
        p.setProperty("compression.max.decompressed.bytes", "65535");
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid value for compression.max.decompressed.bytes: 65535 (allowed 65536..1073741824)");
        p.setProperty("compression.max.decompressed.bytes", "2147483648");
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .hasMessageContaining("compression.max.decompressed.bytes: 2147483648 (allowed");
        p.setProperty("compression.max.decompressed.bytes", "64MiB");
        assertThatThrownBy(() -> ConsumerConfig.from(p))
                .hasMessageContaining("compression.max.decompressed.bytes: '64MiB' is not a number");
    }
}
