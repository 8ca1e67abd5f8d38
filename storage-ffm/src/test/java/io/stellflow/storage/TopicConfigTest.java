package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
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
                        Map.entry("file.delete.delay.ms", "40"),
                        Map.entry("compression.type", " LZ4 "),
                        Map.entry("compression.gzip.level", "5"),
                        Map.entry("compression.lz4.level", "1"),
                        Map.entry("compression.zstd.level", "-7"),
                        Map.entry("compression.produce.policy", " REFUSE "),
                        Map.entry("preallocate", " False ")));
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
        assertThat(c.compression().name()).isEqualTo("lz4");
        assertThat(c.compression().target()).isEqualTo(CompressionType.LZ4);
        assertThat(c.compression().levels()).isEqualTo(new CompressionConfig(5, 1, -7));
        assertThat(c.compression().refuseCompressedProduce()).isTrue();
        assertThat(c.compression().producePolicy()).isEqualTo("refuse");
        assertThat(c.preallocate()).isFalse();
        assertThat(LogConfig.defaults().preallocate()).isTrue();
        assertThat(TopicConfig.KEYS).hasSize(18);
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
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("preallocate", "yes")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("preallocate=yes")
                .hasMessageContaining("must be true or false");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("cleanup.policy", "shred")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cleanup.policy=shred");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("min.cleanable.dirty.ratio", "NaN")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("min.cleanable.dirty.ratio");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("compression.type", "brotli")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compression.type=brotli");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("compression.zstd.level", "23")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compression.zstd.level");
        assertThatThrownBy(() -> TopicConfig.apply(LogConfig.defaults(), Map.of("compression.produce.policy", "no")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compression.produce.policy=no");
    }

    @Test
    void compressionTypeSaysWhichBatchesTheLeaderRewrites() {
        LogCompression producer = LogConfig.defaults().compression();
        assertThat(producer.target()).isNull();
        for (int codec = 0; codec <= 4; codec++) {
            assertThat(producer.rewrites(codec)).isFalse();
        }
        LogCompression uncompressed = producer.withName("uncompressed");
        assertThat(uncompressed.rewrites(0)).isFalse();
        assertThat(uncompressed.rewrites(3)).isTrue();
        LogCompression zstd = producer.withName("zstd");
        assertThat(zstd.rewrites(4)).isFalse();
        assertThat(zstd.rewrites(0)).isTrue();
        assertThat(zstd.rewrites(1)).isTrue();
    }

    @Test
    void producePolicyDefaultsToAcceptAndSurvivesTheOtherCompressionKeys() {
        LogCompression accept = LogConfig.defaults().compression();
        assertThat(accept.refuseCompressedProduce()).isFalse();
        assertThat(accept.producePolicy()).isEqualTo("accept");
        LogCompression refuse = accept.withProducePolicy("refuse");
        assertThat(refuse.withName("uncompressed").refuseCompressedProduce()).isTrue();
        assertThat(refuse.withLevel(CompressionType.ZSTD, 7).refuseCompressedProduce())
                .isTrue();
        assertThat(refuse.withProducePolicy(" Accept ").refuseCompressedProduce())
                .isFalse();
    }
}
