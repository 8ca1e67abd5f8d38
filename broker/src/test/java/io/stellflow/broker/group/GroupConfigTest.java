package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class GroupConfigTest {
    @Test
    void theDefaultsAreKafkas() {
        GroupConfig c = GroupConfig.defaults();
        assertThat(c.offsetsRetentionMs()).isEqualTo(7L * 24 * 60 * 60 * 1000);
        assertThat(c.consumerSessionTimeoutMs()).isEqualTo(45_000);
        assertThat(c.consumerHeartbeatIntervalMs()).isEqualTo(2_000);
        assertThat(c.defaultAssignor()).isEqualTo("uniform");
        assertThat(c.offsetHistorySlots()).isEqualTo(256);
    }

    @Test
    void aBadValueNamesTheSettingAndTheValue() {
        assertThatThrownBy(
                        () -> new GroupConfig(6_000, 1_000, 45_000, 5_000, 300_000, "uniform", 1, 1, 10, 10, 10, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group.max.session.timeout.ms 1000");
        assertThatThrownBy(
                        () -> new GroupConfig(6_000, 60_000, 5_000, 5_000, 300_000, "uniform", 1, 1, 10, 10, 10, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group.consumer.heartbeat.interval.ms 5000");
        assertThatThrownBy(
                        () -> new GroupConfig(6_000, 60_000, 45_000, 5_000, 300_000, "sticky", 1, 1, 10, 10, 10, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown assignor sticky");
        assertThatThrownBy(
                        () -> new GroupConfig(6_000, 60_000, 45_000, 5_000, 300_000, "range", 0, 1, 10, 10, 10, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offsets.retention.minutes");
        assertThatThrownBy(
                        () -> new GroupConfig(6_000, 60_000, 45_000, 5_000, 300_000, "range", 1, 1, 10, 10, 0, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset history slots");
    }
}
