package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LogConfigTest {
    @Test
    void defaultsMatchKafka() {
        LogConfig c = LogConfig.defaults();
        assertThat(c.segmentBytes()).isEqualTo(1 << 30);
        assertThat(c.indexIntervalBytes()).isEqualTo(4096);
        assertThat(c.indexMaxBytes()).isEqualTo(10 * 1024 * 1024);
        assertThat(c.flushMessages()).isEqualTo(Long.MAX_VALUE);
        assertThat(c.flushMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(c.retentionMs()).isEqualTo(7L * 24 * 3600 * 1000);
        assertThat(c.retentionBytes()).isEqualTo(-1);
        assertThat(c.fileDeleteDelayMs()).isEqualTo(60_000);
        assertThat(c.segmentMs()).isEqualTo(7L * 24 * 3600 * 1000);
    }

    @Test
    void theFiveValueConstructorKeepsTheOtherDefaultsAndTheBuilderRoundTrips() {
        LogConfig c = new LogConfig(2048, 100, 800, 10, 20);
        assertThat(c.retentionMs()).isEqualTo(LogConfig.DEFAULT_RETENTION_MS);
        assertThat(c.toBuilder().build()).isEqualTo(c);
        LogConfig custom = c.toBuilder()
                .retentionMs(-1)
                .retentionBytes(1 << 20)
                .fileDeleteDelayMs(0)
                .build();
        assertThat(custom.retentionMs()).isEqualTo(-1);
        assertThat(custom.retentionBytes()).isEqualTo(1 << 20);
        assertThat(custom.fileDeleteDelayMs()).isZero();
        assertThat(custom.segmentBytes()).isEqualTo(2048);
    }

    @Test
    void badRetentionValuesNameTheKey() {
        assertThatThrownBy(() -> LogConfig.builder().retentionMs(-2).build()).hasMessageContaining("log.retention.ms");
        assertThatThrownBy(() -> LogConfig.builder().retentionBytes(-2).build())
                .hasMessageContaining("log.retention.bytes");
        assertThatThrownBy(() -> LogConfig.builder().fileDeleteDelayMs(-1).build())
                .hasMessageContaining("log.segment.delete.delay.ms");
        assertThatThrownBy(() -> LogConfig.builder().segmentMs(0).build()).hasMessageContaining("log.roll.ms");
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> new LogConfig(10, 0, 8, 1, 0)).hasMessageContaining("log.segment.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, -1, 8, 1, 0)).hasMessageContaining("log.index.interval.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 7, 1, 0)).hasMessageContaining("log.index.size.max.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 8, 0, 0)).hasMessageContaining("log.flush.interval.messages");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 8, 1, -1)).hasMessageContaining("log.flush.interval.ms");
    }

    @Test
    void cleanupPolicyParsesKafkaSpellingsAndCleanerKeysAreValidated() {
        assertThat(LogConfig.defaults().cleanupPolicy()).isEqualTo(LogConfig.CleanupPolicy.DELETE);
        assertThat(LogConfig.defaults().deleteRetentionMs()).isEqualTo(86_400_000L);
        assertThat(LogConfig.defaults().minCleanableDirtyRatio()).isEqualTo(0.5);
        assertThat(LogConfig.CleanupPolicy.parse("compact")).isEqualTo(LogConfig.CleanupPolicy.COMPACT);
        assertThat(LogConfig.CleanupPolicy.parse("compact,delete")).isEqualTo(LogConfig.CleanupPolicy.COMPACT_DELETE);
        assertThat(LogConfig.CleanupPolicy.parse("Delete, compact")).isEqualTo(LogConfig.CleanupPolicy.COMPACT_DELETE);
        assertThat(LogConfig.CleanupPolicy.parse("delete")).isEqualTo(LogConfig.CleanupPolicy.DELETE);
        assertThat(LogConfig.CleanupPolicy.COMPACT_DELETE.toString()).isEqualTo("compact,delete");
        assertThat(LogConfig.CleanupPolicy.COMPACT.compact()).isTrue();
        assertThat(LogConfig.CleanupPolicy.COMPACT.delete()).isFalse();
        assertThatThrownBy(() -> LogConfig.CleanupPolicy.parse("compactt")).hasMessageContaining("cleanup.policy");
        assertThatThrownBy(() -> LogConfig.CleanupPolicy.parse("")).hasMessageContaining("cleanup.policy");
        assertThatThrownBy(() -> LogConfig.builder().deleteRetentionMs(-1).build())
                .hasMessageContaining("delete.retention.ms");
        assertThatThrownBy(() -> LogConfig.builder().minCleanableDirtyRatio(1.5).build())
                .hasMessageContaining("min.cleanable.dirty.ratio");
        LogConfig c = LogConfig.builder()
                .cleanupPolicy("compact")
                .deleteRetentionMs(5)
                .build();
        assertThat(c.toBuilder().build()).isEqualTo(c);
        assertThat(new LogConfig(1024, 0, 8, 1, 0, 1, 1, 1, 1).cleanupPolicy())
                .isEqualTo(LogConfig.CleanupPolicy.DELETE);
    }
}
