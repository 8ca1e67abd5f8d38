package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.server.common.topic.TopicConfigRules;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The controller validates topic configs with the key table ({@link TopicConfigRules}, without the
 * storage module); the brokers apply them with the storage's {@link TopicConfig}. Both must accept
 * and refuse the same keys and values, or a config the controller committed would not reach the logs;
 * the storage alone also takes a {@code compression.type} in another case, stored before the
 * controller refused it.
 */
class TopicConfigAgreementTest {
    private static final String[] VALUES = {
        "-2",
        "-1",
        "0",
        "1",
        "7",
        "8",
        "1023",
        "1024",
        " 4096 ",
        "2147483647",
        "2147483648",
        "9223372036854775807",
        "0.0",
        "0.5",
        "1",
        "1.5",
        "-0.1",
        "NaN",
        "x",
        "",
        "delete",
        "compact",
        "compact,delete",
        " Delete , COMPACT ",
        "compact,",
        "shred",
        "producer",
        "uncompressed",
        " ZSTD ",
        "Gzip",
        " zstd ",
        "lz4",
        "gzip",
        "snappy",
        "none",
        "brotli",
        "accept",
        " REFUSE ",
        "reject",
        "9",
        "10",
        "17",
        "18",
        "22",
        "23",
        "-131072",
        "-131073"
    };

    @Test
    void theControllerAcceptsExactlyTheLogOverridesTheStorageAcceptsPlusTheReplicationKeys() {
        Set<String> extra = new TreeSet<>(TopicConfigRules.KEYS);
        extra.removeAll(TopicConfig.KEYS);
        assertThat(extra)
                .as("keys that are not log settings")
                .containsExactly("max.message.bytes", "min.insync.replicas", "unclean.leader.election.enable");
        assertThat(TopicConfigRules.KEYS).containsAll(TopicConfig.KEYS);

        int checked = 0;
        int legacyChecked = 0;
        for (String key : TopicConfig.KEYS) {
            for (String value : VALUES) {
                boolean storage;
                try {
                    TopicConfig.apply(LogConfig.defaults(), Map.of(key, value));
                    storage = true;
                } catch (IllegalArgumentException e) {
                    storage = false;
                }
                boolean controller = TopicConfigRules.validate(key, value) == null;
                // The one difference: a compression.type in another case is refused as a new value
                // (Kafka's names are lower case) but still loads from a metadata record stored
                // before that rule.
                boolean legacy = key.equals("compression.type")
                        && !TopicConfigRules.COMPRESSION_TYPES.contains(value.strip())
                        && TopicConfigRules.COMPRESSION_TYPES.contains(
                                value.strip().toLowerCase(java.util.Locale.ROOT));
                assertThat(controller)
                        .as("%s='%s': storage %s", key, value, storage ? "accepts" : "refuses")
                        .isEqualTo(storage && !legacy);
                if (legacy) {
                    assertThat(storage)
                            .as("%s='%s' stored earlier still loads", key, value)
                            .isTrue();
                    legacyChecked++;
                }
                checked++;
            }
        }
        assertThat(checked).isEqualTo(TopicConfig.KEYS.size() * VALUES.length);
        assertThat(legacyChecked).as("upper-case compression.type values").isEqualTo(2);
    }
}
