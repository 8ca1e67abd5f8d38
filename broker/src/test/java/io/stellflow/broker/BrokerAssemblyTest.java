package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The assembly per process role: a broker-only node starts no controller, a combined node starts its
 * own first and talks to it; a log dir in use fails the assembly and leaves nothing held.
 */
@IntegrationTest
class BrokerAssemblyTest {
    @TempDir
    Path dir;

    private BrokerTelemetry telemetry;
    private final Transport nio = Transport.select(TransportType.NIO);

    @BeforeEach
    void setUp() {
        telemetry = BrokerTelemetry.create(config(brokerOnly()).telemetry(), 1);
    }

    @AfterEach
    void tearDown() {
        telemetry.close();
    }

    @Test
    void aBrokerOnlyNodeStartsNoControllerAndKnowsItsConfiguredClusterId() throws IOException {
        BrokerConfig config = config(brokerOnly());
        try (BrokerAssembly parts = BrokerAssembly.open(config, nio, telemetry)) {
            assertThat(parts.controller()).isNull();
            assertThat(parts.clusterId()).isEqualTo("c1");
            assertThat(parts.newMetaProperties()).as("an empty log dir").isTrue();
            assertThat(parts.logs()).isNotNull();
            assertThat(parts.replicas().image().topicsByName()).isEmpty();
            assertThat(parts.client()).isNotNull();
            assertThat(parts.fetchers()).isNotNull();
        }
        // Closed: the log dir is free again.
        try (BrokerAssembly again = BrokerAssembly.brokerOnly(config, nio, telemetry)) {
            assertThat(again.controller()).isNull();
        }
    }

    @Test
    void aCombinedNodeStartsItsControllerWithTheClusterIdOfItsMetaProperties() throws IOException {
        Properties props = combined();
        BrokerMetadata.create(Files.createDirectories(dir.resolve("data")), 0, "from-disk"); // node.id 0: the default
        try (BrokerAssembly parts = BrokerAssembly.open(config(props), nio, telemetry)) {
            assertThat(parts.controller()).isNotNull();
            assertThat(parts.newMetaProperties()).isFalse();
            assertThat(parts.clusterId()).isEqualTo("from-disk");
            assertThat(parts.controller().clusterId()).isEqualTo("from-disk");
        }
    }

    @Test
    void aLogDirInUseFailsTheAssemblyAndHoldsNothing() throws IOException {
        BrokerConfig config = config(brokerOnly());
        try (BrokerAssembly first = BrokerAssembly.open(config, nio, telemetry)) {
            assertThatThrownBy(() -> BrokerAssembly.open(config, nio, telemetry))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("in use");
            assertThat(first.logs()).isNotNull();
        }
    }

    private Properties brokerOnly() {
        Properties props = new Properties();
        props.setProperty("process.roles", "broker");
        props.setProperty("node.id", "1");
        props.setProperty("cluster.id", "c1");
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        props.setProperty("log.dirs", dir.resolve("data").toString());
        // Never reached: the client connects only when it is used.
        props.setProperty("controller.quorum.bootstrap.servers", "127.0.0.1:1");
        props.setProperty("metrics.exporter", "none");
        return props;
    }

    private Properties combined() {
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        props.setProperty("log.dirs", dir.resolve("data").toString());
        props.setProperty("metrics.exporter", "none");
        props.setProperty("controller.quorum.election.timeout.ms", "100");
        return props;
    }

    private static BrokerConfig config(Properties props) {
        return BrokerConfig.fromProperties(props);
    }
}
