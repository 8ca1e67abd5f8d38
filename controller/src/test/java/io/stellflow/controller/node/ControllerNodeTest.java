package io.stellflow.controller.node;

import static io.stellflow.server.common.telemetry.PrometheusScrape.sampleNames;
import static io.stellflow.server.common.telemetry.PrometheusScrape.scrapeOrEmpty;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.server.common.telemetry.MetricsDictionary;
import io.stellflow.server.common.telemetry.PrometheusScrape;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A controller-only node ({@code process.roles=controller}): its configuration, and the "Controller"
 * instruments of the metrics dictionary on its own Prometheus endpoint, scraped over HTTP.
 */
@IntegrationTest
class ControllerNodeTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private Properties props() throws Exception {
        Properties p = new Properties();
        p.setProperty("process.roles", "controller");
        p.setProperty("node.id", "5");
        p.setProperty("controller.quorum.voters", "5@127.0.0.1:" + LoopbackPorts.pick());
        p.setProperty("controller.listener", "127.0.0.1:0");
        p.setProperty("metadata.log.dir", dir.resolve("metadata").toString());
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("metrics.port", "0");
        return p;
    }

    @Test
    void aControllerOnlyNodeExportsTheControllerInstrumentsOnItsOwnEndpoint() throws Exception {
        try (ControllerNode node = ControllerNode.start(ControllerNode.Config.fromProperties(props()))) {
            assertThat(node.metricsPort()).isPositive();
            Wait.until(WAIT, () -> node.controller().isActive(), "the controller active");
            Wait.untilPasses(
                    WAIT,
                    () -> assertThat(value(scrapeOrEmpty(node.metricsPort()), "stellflow_controller_active"))
                            .isEqualTo(1),
                    "controller.active = 1");
            try (ControllerClient client =
                    ControllerClient.builder(node.controller().rpcEndpoint()).build()) {
                // No broker is registered: refused, one command with result=error, nothing written.
                var r = client.createTopics(CreateTopicsRequest.newBuilder()
                        .addTopics(CreatableTopic.newBuilder()
                                .setName("orders")
                                .setNumPartitions(1)
                                .setReplicationFactor(1))
                        .build());
                assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
            }
            String text = PrometheusScrape.fetch(node.metricsPort(), "text/plain");
            List<Sample> samples = PrometheusScrape.parse(text);
            assertThat(value(samples, "stellflow_controller_command_count_total", "node_id", "5", "result", "error"))
                    .isEqualTo(1);
            assertThat(value(samples, "stellflow_controller_command_count_total", "result", "success"))
                    .isZero();
            assertThat(value(samples, "stellflow_controller_election_count_total"))
                    .isEqualTo(1);
            assertThat(value(samples, "stellflow_broker_registered_count")).isZero();
            assertThat(value(
                            samples, "target_info", "service_name", "stellflow-controller", "service_instance_id", "5"))
                    .isEqualTo(1);
            // The JVM and process series of every server process (issue 22): heap and open files.
            assertThat(samples)
                    .filteredOn(s -> s.name().equals("jvm_memory_used_bytes")
                            && "heap".equals(s.labels().get("jvm_memory_type")))
                    .isNotEmpty()
                    .allSatisfy(s -> assertThat(s.value()).isNotNegative());
            assertThat(value(samples, "jvm_file_descriptor_count")).isPositive();
            // Only controller series: a controller process exports no broker instruments.
            Set<String> controllerNames = expectedSampleNames(MetricsDictionary.load());
            for (Sample s : samples) {
                if (s.name().startsWith("stellflow_")) {
                    assertThat(controllerNames).as(s.name()).contains(s.name());
                }
            }
        }
    }

    @Test
    void theFileOfAControllerOnlyNodeIsReadWithTheDefaultsABrokerWouldDerive() throws Exception {
        Properties p = new Properties();
        p.setProperty("process.roles", "controller");
        p.setProperty("node.id", "3");
        p.setProperty("num.io.threads", "4");
        ControllerNode.Config config = ControllerNode.Config.fromProperties(p);
        assertThat(config.controller().self().raftAddress()).isEqualTo("127.0.0.1:9093");
        assertThat(config.controller().listenerPort()).isEqualTo(9094);
        assertThat(config.controller().metadataLogDir()).isEqualTo(Path.of("/tmp/stellflow-data-metadata"));
        assertThat(config.controller().raftPortPicked()).isFalse();
        assertThat(config.telemetry().port()).isEqualTo(9464);
        assertThat(config.unknownKeys()).containsExactly("num.io.threads");
    }

    @Test
    void aFileWithoutTheControllerRoleOrWithABadValueIsRefusedNamingTheKey() {
        Properties broker = new Properties();
        broker.setProperty("process.roles", "broker,controller");
        broker.setProperty("node.id", "1");
        assertThatThrownBy(() -> ControllerNode.Config.fromProperties(broker))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("process.roles");
        Properties bad = new Properties();
        bad.setProperty("process.roles", "controller");
        bad.setProperty("node.id", "1");
        bad.setProperty("metrics.port", "70000");
        assertThatThrownBy(() -> ControllerNode.Config.fromProperties(bad))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("'metrics.port'")
                .hasMessageContaining("'70000'");
    }

    /** The Prometheus sample names of the dictionary's Controller rows. */
    private static Set<String> expectedSampleNames(Map<String, MetricsDictionary.Row> dictionary) {
        Set<String> names = new HashSet<>();
        for (MetricsDictionary.Row row : dictionary.values()) {
            if (row.section().equals("Controller")) {
                names.addAll(sampleNames(row));
            }
        }
        return names;
    }
}
