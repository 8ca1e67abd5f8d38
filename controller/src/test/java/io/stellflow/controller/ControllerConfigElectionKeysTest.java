package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The leader election keys of {@link ControllerConfig}: Kafka's defaults, parsing, and refusals. */
class ControllerConfigElectionKeysTest {
    static Properties base(String... kv) {
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:9093");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void aVoterListErrorNamesItsKeyAndValue() {
        Properties p = base("controller.quorum.voters", "1@127.0.0.1:9093,2@127.0.0.1:9093");
        assertThatThrownBy(() -> ControllerConfig.forNode(p, 1, 9092, java.nio.file.Path.of("/tmp/sf-unused")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value '1@127.0.0.1:9093,2@127.0.0.1:9093' for configuration key"
                        + " 'controller.quorum.voters': duplicate address");
    }

    @Test
    void defaultsAreKafkas() {
        ControllerConfig c = ControllerConfig.fromProperties(base());
        assertThat(c.uncleanLeaderElectionEnable()).isFalse();
        assertThat(c.autoLeaderRebalanceEnable()).isTrue();
        assertThat(c.leaderImbalanceCheckIntervalSeconds()).isEqualTo(300);
        assertThat(c.leaderImbalancePerBrokerPercentage()).isEqualTo(10);
        assertThat(c.withClusterId("x").uncleanLeaderElectionEnable()).isFalse();
    }

    @Test
    void valuesAreReadAndKeptByWithClusterId() {
        ControllerConfig c = ControllerConfig.fromProperties(base(
                "unclean.leader.election.enable", " TRUE ",
                "auto.leader.rebalance.enable", "false",
                "leader.imbalance.check.interval.seconds", "1",
                "leader.imbalance.per.broker.percentage", "0"));
        for (ControllerConfig x : new ControllerConfig[] {c, c.withClusterId("x")}) {
            assertThat(x.uncleanLeaderElectionEnable()).isTrue();
            assertThat(x.autoLeaderRebalanceEnable()).isFalse();
            assertThat(x.leaderImbalanceCheckIntervalSeconds()).isEqualTo(1);
            assertThat(x.leaderImbalancePerBrokerPercentage()).isZero();
        }
    }

    @Test
    void badValuesAreRefusedNamingTheKey() {
        assertThatThrownBy(() -> ControllerConfig.fromProperties(base("unclean.leader.election.enable", "yes")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value 'yes' for configuration key 'unclean.leader.election.enable': "
                        + "must be true or false");
        assertThatThrownBy(() -> ControllerConfig.fromProperties(base("auto.leader.rebalance.enable", "")))
                .hasMessageContaining("auto.leader.rebalance.enable");
        assertThatThrownBy(() -> ControllerConfig.fromProperties(base("leader.imbalance.check.interval.seconds", "0")))
                .hasMessage("Invalid value '0' for configuration key 'leader.imbalance.check.interval.seconds': "
                        + "must be in 1..86400");
        assertThatThrownBy(() -> ControllerConfig.fromProperties(base("leader.imbalance.per.broker.percentage", "101")))
                .hasMessage("Invalid value '101' for configuration key 'leader.imbalance.per.broker.percentage': "
                        + "must be in 0..100");
    }
}
