package io.stellflow.server.common.topic;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicConfigRulesTest {
    @Test
    void legalValuesPassAtTheirBoundsAndBlanksAroundAreIgnored() {
        String[][] ok = {
            {"cleanup.policy", "delete"},
            {"cleanup.policy", " Compact , DELETE "},
            {"retention.ms", "-1"},
            {"retention.bytes", "0"},
            {"segment.bytes", "1024"},
            {"segment.bytes", String.valueOf(Integer.MAX_VALUE)},
            {"segment.ms", "1"},
            {"segment.index.bytes", "8"},
            {"index.interval.bytes", "0"},
            {"flush.messages", "1"},
            {"flush.ms", "0"},
            {"delete.retention.ms", "0"},
            {"min.cleanable.dirty.ratio", "0"},
            {"min.cleanable.dirty.ratio", "1.0"},
            {"file.delete.delay.ms", " 60000 "},
            {"min.insync.replicas", "1"},
            {"max.message.bytes", "78"},
            {"max.message.bytes", " 1048588 "},
            {"max.message.bytes", "67043328"},
            {"unclean.leader.election.enable", "true"},
            {"unclean.leader.election.enable", " FALSE "},
            {"compression.type", "producer"},
            {"compression.type", " zstd "},
            {"compression.type", "gzip"},
            {"compression.type", "snappy"},
            {"compression.type", "lz4"},
            {"compression.type", "uncompressed"},
            {"compression.gzip.level", "-1"},
            {"compression.gzip.level", "9"},
            {"compression.lz4.level", "1"},
            {"compression.lz4.level", "17"},
            {"compression.zstd.level", "-131072"},
            {"compression.zstd.level", "22"},
            {"compression.produce.policy", "accept"},
            {"compression.produce.policy", " Refuse "},
            {"preallocate", "false"},
            {"preallocate", " TRUE "},
        };
        for (String[] c : ok) {
            assertThat(TopicConfigRules.validate(c[0], c[1]))
                    .as("%s=%s", c[0], c[1])
                    .isNull();
        }
        assertThat(TopicConfigRules.KEYS)
                .hasSize(21)
                .contains(
                        "retention.ms",
                        "min.insync.replicas",
                        "unclean.leader.election.enable",
                        "preallocate",
                        "max.message.bytes");
        assertThat(TopicConfigRules.normalize(" 5 ")).isEqualTo("5");
    }

    @Test
    void unknownKeysAndBadValuesAreRefusedNamingKeyAndValue() {
        assertThat(TopicConfigRules.validate("retention.hours", "1"))
                .contains("unknown topic config 'retention.hours'")
                .contains("retention.ms");
        assertThat(TopicConfigRules.validate("segment.bytes", "1023")).isEqualTo("segment.bytes=1023 must be >= 1024");
        assertThat(TopicConfigRules.validate("segment.bytes", "3000000000")).contains("is not an int");
        assertThat(TopicConfigRules.validate("retention.ms", "-2")).isEqualTo("retention.ms=-2 must be >= -1");
        assertThat(TopicConfigRules.validate("retention.ms", "1d")).isEqualTo("retention.ms=1d is not a long");
        assertThat(TopicConfigRules.validate("flush.messages", "0")).contains("must be >= 1");
        assertThat(TopicConfigRules.validate("min.cleanable.dirty.ratio", "NaN"))
                .contains("must be in [0, 1]");
        assertThat(TopicConfigRules.validate("min.cleanable.dirty.ratio", "1.5"))
                .contains("must be in [0, 1]");
        assertThat(TopicConfigRules.validate("compression.type", "brotli"))
                .isEqualTo("compression.type=brotli must be one of producer, uncompressed, gzip, snappy, lz4, zstd");
        assertThat(TopicConfigRules.validate("compression.type", "none")).contains("must be one of");
        // Case-sensitive, as Kafka's ValidString: a new value must be Kafka's exact name.
        assertThat(TopicConfigRules.validate("compression.type", "ZSTD"))
                .isEqualTo("compression.type=ZSTD must be one of producer, uncompressed, gzip, snappy, lz4, zstd"
                        + " (lower case, as in Kafka)");
        assertThat(TopicConfigRules.validate("compression.type", " Gzip ")).startsWith("compression.type=Gzip must");
        assertThat(TopicConfigRules.validate("compression.type", "Producer")).contains("must be one of");
        assertThat(TopicConfigRules.validate("compression.type", "UNCOMPRESSED"))
                .contains("must be one of");
        assertThat(TopicConfigRules.validate("compression.gzip.level", "0")).contains("must be 1..9 or -1");
        assertThat(TopicConfigRules.validate("compression.lz4.level", "18"))
                .isEqualTo("compression.lz4.level=18 must be in [1, 17]");
        assertThat(TopicConfigRules.validate("compression.zstd.level", "23")).contains("must be in [-131072, 22]");
        assertThat(TopicConfigRules.validate("compression.produce.policy", "reject"))
                .isEqualTo("compression.produce.policy=reject must be accept or refuse");
        assertThat(TopicConfigRules.validate("cleanup.policy", "shred")).contains("delete, compact or compact,delete");
        assertThat(TopicConfigRules.validate("cleanup.policy", "")).contains("cleanup.policy=");
        assertThat(TopicConfigRules.validate("min.insync.replicas", "0")).contains("must be >= 1");
        assertThat(TopicConfigRules.validate("max.message.bytes", "77"))
                .isEqualTo("max.message.bytes=77 must be in [78, 67043328]");
        assertThat(TopicConfigRules.validate("max.message.bytes", "67043329")).contains("must be in [78, 67043328]");
        assertThat(TopicConfigRules.validate("max.message.bytes", "1MB"))
                .isEqualTo("max.message.bytes=1MB is not an int");
        assertThat(TopicConfigRules.validate("unclean.leader.election.enable", "yes"))
                .isEqualTo("unclean.leader.election.enable=yes must be true or false");
        assertThat(TopicConfigRules.validate("unclean.leader.election.enable", ""))
                .isEqualTo("unclean.leader.election.enable= must be true or false");
        assertThat(TopicConfigRules.validate("preallocate", "1")).isEqualTo("preallocate=1 must be true or false");
        assertThat(TopicConfigRules.validate("segment.ms", null)).isEqualTo("segment.ms has no value");
        assertThat(TopicConfigRules.validate(null, "1")).contains("unknown topic config");
    }

    @Test
    void theLogKeysAreEveryKeyButTheReplicationAndProduceSettings() {
        assertThat(TopicConfigRules.LOG_KEYS)
                .hasSize(18)
                .contains(
                        "preallocate",
                        "cleanup.policy",
                        "compression.produce.policy",
                        "retention.ms",
                        "segment.bytes",
                        "min.cleanable.dirty.ratio",
                        "compression.type")
                .doesNotContain("min.insync.replicas", "unclean.leader.election.enable", "max.message.bytes");
        assertThat(TopicConfigRules.KEYS).containsAll(TopicConfigRules.LOG_KEYS).hasSize(21);
    }
}
