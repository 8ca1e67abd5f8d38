package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.group.GroupConfig;
import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** offsets.*, group.*: Kafka's defaults, overrides, a clear error naming a bad key. */
class GroupCoordinatorConfigTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void defaultsAreKafkas() {
        GroupCoordinatorConfig c = GroupCoordinatorConfig.parse(new Properties());
        assertThat(c)
                .isEqualTo(new GroupCoordinatorConfig(
                        50, (short) 3, 104_857_600, 1, 5_000, 5_242_880, GroupConfig.defaults()));
        assertThat(BrokerConfig.fromProperties(props("log.dirs", "/tmp/x")).groupCoordinator())
                .isEqualTo(c);
    }

    @Test
    void overridesAreReadAndKnownToTheBroker() {
        BrokerConfig b = BrokerConfig.fromProperties(props(
                "offsets.topic.num.partitions", "7",
                "offsets.topic.replication.factor", "1",
                "offsets.topic.segment.bytes", "4096",
                "group.coordinator.threads", "2",
                "offsets.commit.timeout.ms", "100",
                "offsets.load.buffer.size", "1024",
                "group.min.session.timeout.ms", "1000",
                "group.max.session.timeout.ms", "60000",
                "group.consumer.session.timeout.ms", "10000",
                "group.consumer.heartbeat.interval.ms", "1000",
                "group.consumer.assignors", "range,uniform",
                "group.max.size", "10",
                "offsets.retention.minutes", "60",
                "offsets.retention.check.interval.ms", "1000",
                "offset.metadata.max.bytes", "100"));
        GroupConfig d = GroupConfig.defaults();
        assertThat(b.groupCoordinator())
                .isEqualTo(new GroupCoordinatorConfig(
                        7,
                        (short) 1,
                        4096,
                        2,
                        100,
                        1024,
                        new GroupConfig(
                                1000,
                                60000,
                                10000,
                                1000,
                                d.defaultRebalanceTimeoutMs(),
                                "range",
                                3_600_000L,
                                1000,
                                10,
                                100,
                                d.offsetHistorySlots(),
                                d.journalConsumerCommits())));
        assertThat(b.unknownKeys()).isEmpty();
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(props("offsets.topic.num.partitions", "0")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("offsets.topic.num.partitions"));
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(props("group.coordinator.threads", "65")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("group.coordinator.threads"));
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(props("offsets.topic.replication.factor", "x")))
                .isInstanceOf(ConfigException.class);
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(props("group.consumer.assignors", "sticky")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("group.consumer.assignors"));
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(props(
                        "group.consumer.session.timeout.ms", "1000", "group.consumer.heartbeat.interval.ms", "1000")))
                .isInstanceOfSatisfying(
                        ConfigException.class,
                        e -> assertThat(e.key()).isEqualTo("group.consumer.heartbeat.interval.ms"));
        assertThatThrownBy(() -> GroupCoordinatorConfig.parse(
                        props("group.min.session.timeout.ms", "7000", "group.max.session.timeout.ms", "6000")))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("group.max.session.timeout.ms"));
    }
}
