package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowProducer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --describe} on a real node whose {@code min.insync.replicas} default is 2:
 * the replication factor and the topic's config overrides on the topic line, the log start / end
 * offsets on each partition line; the replication filters print nothing for a healthy topic; {@code
 * --under-min-isr-partitions} lists the partitions of a topic without an override (ISR 1 against the
 * broker's default 2, learned from DescribeBrokerConfigs) and {@code --at-min-isr-partitions} those of
 * a topic whose override is 1. Then {@code stellflow-configs.sh --entity-type brokers}: the broker's
 * static config with sources (an alias resolved), {@code --alter} refused with the reason.
 */
@IntegrationTest
class TopicsDescribeTest {
    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new TopicsCommand()), args);
    }

    private StellflowServer start() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("log.retention.hours", "1");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    @Test
    void describeShowsConfigsAndLogOffsetsAndTheFiltersPickTheirPartitions() throws Exception {
        try (StellflowServer server = start()) {
            String broker = "127.0.0.1:" + server.port();
            ToolRun created = run(
                    "--bootstrap-server",
                    broker,
                    "--create",
                    "--topic",
                    "desc",
                    "--partitions",
                    "2",
                    "--replication-factor",
                    "1",
                    "--config",
                    "retention.ms=86400000",
                    "--config",
                    "min.insync.replicas=1");
            assertThat(created.exit()).as(created.err()).isZero();
            assertThat(run("--bootstrap-server", broker, "--create", "--topic", "plain")
                            .exit())
                    .isZero();
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker);
            p.setProperty("acks", "1");
            try (StellflowProducer producer = new StellflowProducer(p)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord("desc", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(10, TimeUnit.SECONDS);
                }
            }

            ToolRun d = run("--bootstrap-server", broker, "--describe", "--topic", "desc");
            assertThat(d.exit()).as(d.err()).isZero();
            String[] lines = d.out().split("\n");
            assertThat(lines).hasSize(3);
            assertThat(lines[0])
                    .isEqualTo("Topic: desc\tPartitionCount: 2\tReplicationFactor: 1"
                            + "\tConfigs: min.insync.replicas=1,retention.ms=86400000");
            assertThat(lines[1])
                    .startsWith("\tTopic: desc\tPartition: 0\tLeader: ")
                    .endsWith("\tLogStartOffset: 0\tLogEndOffset: 3");
            assertThat(lines[2])
                    .startsWith("\tTopic: desc\tPartition: 1\tLeader: ")
                    .endsWith("\tLogStartOffset: 0\tLogEndOffset: 0");
            ToolRun plain = run("--bootstrap-server", broker, "--describe", "--topic", "plain");
            assertThat(plain.out()).startsWith("Topic: plain\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n");

            for (String filter : new String[] {"--under-replicated-partitions", "--unavailable-partitions"}) {
                ToolRun f = run("--bootstrap-server", broker, "--describe", filter);
                assertThat(f.exit()).as(f.err()).isZero();
                assertThat(f.out()).as(filter).isEmpty();
            }

            ToolRun under = run("--bootstrap-server", broker, "--describe", "--under-min-isr-partitions");
            assertThat(under.exit()).as(under.err()).isZero();
            assertThat(under.out().lines().toList())
                    .singleElement()
                    .asString()
                    .startsWith("\tTopic: plain\tPartition: 0\t");
            ToolRun at = run("--bootstrap-server", broker, "--describe", "--at-min-isr-partitions");
            assertThat(at.exit()).as(at.err()).isZero();
            assertThat(at.out()
                            .lines()
                            .map(l -> l.split("\t")[1] + " " + l.split("\t")[2])
                            .toList())
                    .containsExactlyInAnyOrder("Topic: desc Partition: 0", "Topic: desc Partition: 1");

            ToolRun two = run(
                    "--bootstrap-server", broker, "--describe", "--at-min-isr-partitions", "--unavailable-partitions");
            assertThat(two.exit()).isEqualTo(2);
            assertThat(two.err().strip().lines())
                    .containsExactly(two.err().lines().findFirst().orElseThrow(), OneLineUsageErrors.HINT);

            ToolRun missing = run("--bootstrap-server", broker, "--describe", "--topic", "nosuch");
            assertThat(missing.exit()).isEqualTo(1);
            assertThat(missing.out()).isEqualTo("Topic: nosuch\tError: UNKNOWN_TOPIC_OR_PARTITION\n");

            brokerConfigs(broker, server.brokerId());
        }
    }

    private static void brokerConfigs(String broker, int id) {
        long startNs = System.nanoTime();
        ToolRun d = ToolRun.run(
                Tools.commandLine(new ConfigsCommand()),
                "--bootstrap-server",
                broker,
                "--entity-type",
                "brokers",
                "--entity-name",
                Integer.toString(id),
                "--describe");
        assertThat(d.exit()).as(d.err()).isZero();
        assertThat(d.out())
                .startsWith("Static configs for broker " + id + " (dynamic broker configs: not supported):\n")
                .contains("  min.insync.replicas=2 (STATIC_BROKER_CONFIG)\n")
                .contains("  log.retention.ms=3600000 (STATIC_BROKER_CONFIG)\n")
                .contains("  log.retention.hours=1 (STATIC_BROKER_CONFIG)\n")
                .contains("  num.partitions=1 (DEFAULT_CONFIG)\n")
                .contains("  compression.type=producer (DEFAULT_CONFIG)\n")
                .contains("  compression.produce.policy=accept (DEFAULT_CONFIG)\n")
                .contains("  compression.max.decompressed.bytes=67108864 (DEFAULT_CONFIG)\n")
                .contains("  compression.zstd.level=3 (DEFAULT_CONFIG)\n")
                .contains("  transport=nio (STATIC_BROKER_CONFIG)\n");

        // Without --entity-name, every broker in Metadata (Kafka's tool does the same); one here.
        ToolRun all = ToolRun.run(
                Tools.commandLine(new ConfigsCommand()),
                "--bootstrap-server",
                broker,
                "--entity-type",
                "brokers",
                "--describe");
        assertThat(all.exit()).as(all.err()).isZero();
        assertThat(all.out()).isEqualTo(d.out());

        ToolRun alter = ToolRun.run(
                Tools.commandLine(new ConfigsCommand()),
                "--bootstrap-server",
                broker,
                "--entity-type",
                "brokers",
                "--entity-name",
                Integer.toString(id),
                "--alter",
                "--add-config",
                "num.io.threads=4");
        assertThat(alter.exit()).isEqualTo(1);
        assertThat(alter.err()).startsWith("error: dynamic broker configs are not supported");

        ToolRun unknown = ToolRun.run(
                Tools.commandLine(new ConfigsCommand()),
                "--bootstrap-server",
                broker,
                "--entity-type",
                "brokers",
                "--entity-name",
                "42",
                "--describe");
        assertThat(unknown.exit()).isEqualTo(1);
        assertThat(unknown.err()).startsWith("error: broker 42 is not in the cluster");
        ToolRun notAnId = ToolRun.run(
                Tools.commandLine(new ConfigsCommand()),
                "--bootstrap-server",
                broker,
                "--entity-type",
                "brokers",
                "--entity-name",
                "b1",
                "--describe");
        assertThat(notAnId.exit()).isEqualTo(2);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(10));
    }
}
