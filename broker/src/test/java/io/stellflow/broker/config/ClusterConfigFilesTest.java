package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.ClusterConfig.ProcessRole;
import io.stellflow.server.common.config.ConfigException;
import java.io.Reader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The sample cluster configs under config/cluster/ parse, and process.roles is validated. */
class ClusterConfigFilesTest {
    private static final Path DIR = Path.of("..", "config", "cluster");

    @Test
    void everySampleClusterConfigIsValidAndTheNodesAgreeOnTheirQuorum() throws Exception {
        Set<String> voters = new HashSet<>();
        Set<String> clusterIds = new HashSet<>();
        Set<Integer> metricsPorts = new HashSet<>();
        int files = 0;
        try (DirectoryStream<Path> all = Files.newDirectoryStream(DIR, "*.properties")) {
            for (Path file : all) {
                Properties p = new Properties();
                try (Reader r = Files.newBufferedReader(file)) {
                    p.load(r);
                }
                BrokerConfig config = BrokerConfig.fromProperties(p);
                assertThat(config.unknownKeys()).as(file.toString()).isEmpty();
                metricsPorts.add(config.telemetry().port());
                assertThat(config.clusterId()).as("cluster.id of " + file).isNotNull();
                clusterIds.add(config.clusterId());
                if (config.cluster().isController()) {
                    assertThat(config.cluster().controller().clusterId()).isEqualTo(config.clusterId());
                }
                if (config.cluster().isController()) {
                    voters.add(config.cluster().controller().voters().toString());
                    assertThat(config.cluster().controller().metadataLogDir().toString())
                            .doesNotStartWith(config.logDirs().get(0).toString() + "/");
                }
                files++;
            }
        }
        assertThat(files).isEqualTo(9);
        assertThat(metricsPorts)
                .as("one metrics port per process on one machine")
                .hasSize(9);
        assertThat(voters)
                .as("two quorums: combined nodes, dedicated controllers")
                .hasSize(2);
        assertThat(clusterIds)
                .as("one cluster.id per cluster, on its controllers and brokers alike")
                .containsExactlyInAnyOrder("stellflow-local-3", "stellflow-local-3x3");
    }

    @Test
    void processRolesDefaultsToCombinedAndRejectsNonsense() {
        BrokerConfig defaults = BrokerConfig.fromProperties(new Properties());
        assertThat(defaults.cluster().roles()).containsExactlyInAnyOrder(ProcessRole.BROKER, ProcessRole.CONTROLLER);
        assertThat(defaults.cluster().controller().voters().toString()).isEqualTo("[0@127.0.0.1:9093]");
        assertThat(defaults.cluster().controller().listenerPort()).isEqualTo(9094);
        assertThat(defaults.cluster().controller().metadataLogDir()).isEqualTo(Path.of("/tmp/stellflow-data-metadata"));

        Properties p = new Properties();
        p.setProperty("process.roles", "broker,zookeeper");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(p)).hasMessageContaining("process.roles");
        p.setProperty("process.roles", "broker");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(p))
                .hasMessageContaining("controller.quorum.bootstrap.servers");
        p.setProperty("node.id", "2");
        p.setProperty("broker.id", "3");
        p.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:9094");
        assertThatThrownBy(() -> BrokerConfig.fromProperties(p)).hasMessageContaining("node.id");
        p.remove("broker.id");
        assertThat(BrokerConfig.fromProperties(p).brokerId()).isEqualTo(2);
    }

    @Test
    void theRemovedMetadataLocalIsRefusedWhenTrueAndAnUnknownKeyWhenFalse() {
        for (String roles : new String[] {"broker", "broker,controller"}) {
            Properties p = new Properties();
            p.setProperty("process.roles", roles);
            p.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:9094");
            p.setProperty("metadata.local", "true");
            // A broker without a controller is gone: starting a cluster broker instead would give
            // the old config another meaning, so it is refused, naming the key.
            assertThatThrownBy(() -> BrokerConfig.fromProperties(p))
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("'metadata.local'")
                    .hasMessageContaining("removed");
            p.setProperty("metadata.local", "false"); // its old default: what every broker does now
            BrokerConfig config = BrokerConfig.fromProperties(p);
            assertThat(config.unknownKeys()).containsExactly("metadata.local");
            assertThat(BrokerConfig.knownKeys()).doesNotContain("metadata.local");
        }
    }
}
