package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class TopicConfigTest {
    @Test
    void everyTopicKeyOverridesItsBrokerDefault() {
        LogConfig c = TopicConfig.apply(
                LogConfig.defaults(),
                Map.ofEntries(
                        Map.entry("cleanup.policy", "Compact, Delete"),
                        Map.entry("retention.ms", "1000"),
                        Map.entry("retention.bytes", "2048"),
                        Map.entry("segment.bytes", "4096"),
                        Map.entry("segment.ms", "60000"),
                        Map.entry("segment.index.bytes", "800"),
                        Map.entry("index.interval.bytes", "0"),
                        Map.entry("flush.messages", "10"),
                        Map.entry("flush.ms", "20"),
                        Map.entry("delete.retention.ms", "30"),
                        Map.entry("min.cleanable.dirty.ratio", "0.25"),
                        Map.entry("file.delete.delay.ms", "40")));
        assertThat(c.cleanupPolicy()).isEqualTo(LogConfig.CleanupPolicy.COMPACT_DELETE);
        assertThat(c.retentionMs()).isEqualTo(1000);
        assertThat(c.retentionBytes()).isEqualTo(2048);
        assertThat(c.segmentBytes()).isEqualTo(4096);
        assertThat(c.segmentMs()).isEqualTo(60_000);
        assertThat(c.indexMaxBytes()).isEqualTo(800);
        assertThat(c.indexIntervalBytes()).isZero();
        assertThat(c.flushMessages()).isEqualTo(10);
        assertThat(c.flushMs()).isEqualTo(20);
        assertThat(c.deleteRetentionMs()).isEqualTo(30);
        assertThat(c.minCleanableDirtyRatio()).isEqualTo(0.25);
        assertThat(c.fileDeleteDelayMs()).isEqualTo(40);
        assertThat(TopicConfig.KEYS).hasSize(12);
    }

    @Test
    void noOverridesKeepsTheBaseAndUnsetKeysKeepTheirDefaults() {
        LogConfig base = LogConfig.builder().segmentBytes(2048).build();
        assertThat(TopicConfig.apply(base, Map.of())).isSameAs(base);
        assertThat(TopicConfig.apply(base, Map.of("retention.ms", "-1")).segmentBytes())
                .isEqualTo(2048);
    }

    @Test
    void unknownKeysAndBadValuesAreRejectedNamingKeyAndValue() {
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("retention.hours", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retention.hours=1");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("segment.bytes", "lots")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("segment.bytes=lots");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("segment.bytes", "10")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("segment.bytes");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("cleanup.policy", "shred")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cleanup.policy=shred");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("min.cleanable.dirty.ratio", "NaN")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("min.cleanable.dirty.ratio");
    }
}
