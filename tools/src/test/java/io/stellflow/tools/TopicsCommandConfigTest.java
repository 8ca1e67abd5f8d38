package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh ... --create --config k=v} and {@code --alter}: a combined node in this
 * JVM; the overrides reach the broker's logs, a bad one is refused with nothing created, and both
 * work through the broker's address as well as the controller's.
 */
@IntegrationTest
class TopicsCommandConfigTest {
    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TopicsCommand()), args);
    }

    @Test
    void createWithConfigGoesToTheControllerAndTheBrokersLogsUseIt() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String controller = server.controller().rpcEndpoint();
            ToolRun ok = run(
                    "--bootstrap-controller",
                    controller,
                    "--create",
                    "--topic",
                    "tuned",
                    "--partitions",
                    "2",
                    "--config",
                    "segment.bytes=2048",
                    "--config",
                    "cleanup.policy= compact "); // echoed as stored: trimmed
            assertThat(ok.exit()).as(ok.err()).isZero();
            assertThat(ok.out())
                    .isEqualTo("Created topic tuned with 2 partition(s) of 1 replica(s) and config "
                            + "{cleanup.policy=compact, segment.bytes=2048}.\n");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (int partition = 0; partition < 2; partition++) {
                Partition hosted;
                while ((hosted = server.replicaManager().hostedPartition("tuned", partition)) == null) {
                    assertThat(System.nanoTime())
                            .as("partition %d hosted", partition)
                            .isLessThan(deadline);
                    Thread.sleep(20);
                }
                assertThat(hosted.log().config().segmentBytes()).isEqualTo(2048);
                assertThat(hosted.log().config().cleanupPolicy().compact()).isTrue();
            }

            ToolRun bad = run(
                    "--bootstrap-controller",
                    controller,
                    "--create",
                    "--topic",
                    "mistuned",
                    "--config",
                    "retention.hours=5");
            assertThat(bad.exit()).isEqualTo(1);
            assertThat(bad.err())
                    .startsWith("error: CreateTopics mistuned refused: INVALID_CONFIG")
                    .contains("unknown topic config 'retention.hours'");
            assertThat(server.controller().image().topic("mistuned")).isNull();

            String broker = "127.0.0.1:" + server.port();
            // Without --replication-factor: the broker's default.replication.factor (1 here).
            ToolRun noFactor =
                    run("--bootstrap-server", broker, "--create", "--topic", "x0", "--config", "segment.bytes=2048");
            assertThat(noFactor.exit()).as(noFactor.err()).isZero();
            assertThat(server.controller().image().topic("x0").partition(0).replicas())
                    .hasSize(1);
            ToolRun viaBroker = run(
                    "--bootstrap-server",
                    broker,
                    "--create",
                    "--topic",
                    "x",
                    "--replication-factor",
                    "1",
                    "--config",
                    "segment.bytes=2048");
            assertThat(viaBroker.exit()).as(viaBroker.err()).isZero();
            assertThat(server.controller().image().topic("x").config()).containsEntry("segment.bytes", "2048");
            ToolRun both = run("--bootstrap-server", broker, "--bootstrap-controller", controller, "--list");
            assertThat(both.exit()).isEqualTo(2);
            assertThat(both.err())
                    .contains("exactly one of --bootstrap-server (brokers) and --bootstrap-controller (controllers)");
        }
    }

    @Test
    void createThroughABrokerWithoutCountsTakesTheBrokersDefaults() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("num.partitions", "3");
        p.setProperty("default.replication.factor", "1");
        try (StellflowServer server = StellflowServer.start(BrokerConfig.fromProperties(p))) {
            String broker = "127.0.0.1:" + server.port();
            ToolRun withConfig =
                    run("--bootstrap-server", broker, "--create", "--topic", "tuned", "--config", "segment.bytes=4096");
            assertThat(withConfig.exit()).as(withConfig.err()).isZero();
            assertThat(withConfig.out())
                    .isEqualTo("Created topic tuned with 3 partition(s) of 1 replica(s) and config"
                            + " {segment.bytes=4096}.\n");
            TopicImage tuned = server.controller().image().topic("tuned");
            assertThat(tuned.partitions()).hasSize(3);
            assertThat(tuned.partitions())
                    .allSatisfy(pi -> assertThat(pi.replicas()).hasSize(1));
            assertThat(tuned.config()).containsEntry("segment.bytes", "4096");

            ToolRun plain = run("--bootstrap-server", broker, "--create", "--topic", "plain");
            assertThat(plain.exit()).as(plain.err()).isZero();
            assertThat(plain.out()).isEqualTo("Created topic plain with 3 partition(s).\n");
            assertThat(server.controller().image().topic("plain").partitions()).hasSize(3);

            ToolRun given = run("--bootstrap-server", broker, "--create", "--topic", "two", "--partitions", "2");
            assertThat(given.exit()).as(given.err()).isZero();
            assertThat(server.controller().image().topic("two").partitions()).hasSize(2);

            // configs --describe without --entity-name: every topic, by name
            ToolRun all =
                    ToolRun.run(Tools.commandLine(new ConfigsCommand()), "--bootstrap-server", broker, "--describe");
            assertThat(all.exit()).as(all.err()).isZero();
            assertThat(all.out())
                    .isEqualTo("Configs for topic plain:\n  (none: the brokers' defaults apply)\n"
                            + "Configs for topic tuned:\n  segment.bytes=4096\n"
                            + "Configs for topic two:\n  (none: the brokers' defaults apply)\n");
        }
    }

    @Test
    void alterPartitionsOnlyIncreasesAndRefusesBadInputWritingNothing() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String controller = server.controller().rpcEndpoint();
            ToolRun created =
                    run("--bootstrap-controller", controller, "--create", "--topic", "growing", "--partitions", "2");
            assertThat(created.exit()).as(created.err()).isZero();
            TopicImage before = server.controller().image().topic("growing");

            ToolRun grown =
                    run("--bootstrap-controller", controller, "--alter", "--topic", "growing", "--partitions", "4");
            assertThat(grown.exit()).as(grown.err()).isZero();
            assertThat(grown.out()).isEqualTo("Topic growing now has 4 partition(s).\n");
            TopicImage after = server.controller().image().topic("growing");
            assertThat(after.id()).isEqualTo(before.id());
            assertThat(after.partitions()).hasSize(4);
            assertThat(after.partitions().subList(0, 2)).isEqualTo(before.partitions());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.replicaManager().hostedPartition("growing", 3) == null) {
                assertThat(System.nanoTime()).as("new partition 3 hosted").isLessThan(deadline);
                Thread.sleep(20);
            }

            long offset = server.controller().image().offset();
            for (String total : new String[] {"3", "4"}) {
                ToolRun refused = run(
                        "--bootstrap-controller", controller, "--alter", "--topic", "growing", "--partitions", total);
                assertThat(refused.exit()).isEqualTo(1);
                assertThat(refused.err())
                        .startsWith("error: CreatePartitions growing refused: INVALID_PARTITIONS")
                        .contains("topic has 4");
            }
            ToolRun unknown =
                    run("--bootstrap-controller", controller, "--alter", "--topic", "nope", "--partitions", "3");
            assertThat(unknown.exit()).isEqualTo(1);
            assertThat(unknown.err()).startsWith("error: CreatePartitions nope refused: UNKNOWN_TOPIC_OR_PARTITION");
            assertThat(server.controller().image().offset())
                    .as("nothing written")
                    .isEqualTo(offset);
            assertThat(server.controller().image().topic("growing").partitions())
                    .hasSize(4);

            ToolRun noCount = run("--bootstrap-controller", controller, "--alter", "--topic", "growing");
            assertThat(noCount.exit()).isEqualTo(2);
            assertThat(noCount.err()).contains("--alter needs --partitions");
            ToolRun viaBroker = run(
                    "--bootstrap-server",
                    "127.0.0.1:" + server.port(),
                    "--alter",
                    "--topic",
                    "growing",
                    "--partitions",
                    "5");
            assertThat(viaBroker.exit()).as(viaBroker.err()).isZero();
            assertThat(viaBroker.out()).isEqualTo("Topic growing now has 5 partition(s).\n");
            assertThat(server.controller().image().topic("growing").partitions())
                    .hasSize(5);
        }
    }

    /**
     * Topic {@code max.message.bytes} with the tools, through a broker: created with {@code
     * --config}, changed with {@code stellflow-configs.sh --alter}, listed by {@code --describe},
     * removed with {@code --delete-config}; each change reaches the partition the broker leads. A
     * value out of range is refused naming the range, with nothing changed.
     */
    @Test
    void maxMessageBytesIsCreatedAlteredDescribedAndDeletedThroughABroker() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            int brokerDefault = BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES;
            ToolRun created = run(
                    "--bootstrap-server", broker, "--create", "--topic", "sized", "--config", "max.message.bytes=2048");
            assertThat(created.exit()).as(created.err()).isZero();
            assertThat(created.out())
                    .isEqualTo("Created topic sized with 1 partition(s) of 1 replica(s) and config"
                            + " {max.message.bytes=2048}.\n");
            awaitLimit(server, brokerDefault, 2048);

            ToolRun alter = ToolRun.run(
                    Tools.commandLine(new ConfigsCommand()),
                    "--bootstrap-server",
                    broker,
                    "--entity-type",
                    "topics",
                    "--entity-name",
                    "sized",
                    "--alter",
                    "--add-config",
                    "max.message.bytes=4194304");
            assertThat(alter.exit()).as(alter.err()).isZero();
            assertThat(alter.out())
                    .isEqualTo("Completed updating config for topic sized.\nConfigs for topic sized:\n"
                            + "  max.message.bytes=4194304\n");
            awaitLimit(server, brokerDefault, 4 << 20);
            ToolRun describe = ToolRun.run(
                    Tools.commandLine(new ConfigsCommand()),
                    "--bootstrap-server",
                    broker,
                    "--entity-name",
                    "sized",
                    "--describe");
            assertThat(describe.exit()).as(describe.err()).isZero();
            assertThat(describe.out()).isEqualTo("Configs for topic sized:\n  max.message.bytes=4194304\n");

            ToolRun bad = ToolRun.run(
                    Tools.commandLine(new ConfigsCommand()),
                    "--bootstrap-server",
                    broker,
                    "--entity-name",
                    "sized",
                    "--alter",
                    "--add-config",
                    "max.message.bytes=77");
            assertThat(bad.exit()).isEqualTo(1);
            assertThat(bad.err())
                    .startsWith("error: INVALID_CONFIG")
                    .contains("max.message.bytes=77 must be in [78, 67043328]");
            assertThat(server.controller().image().topic("sized").config())
                    .containsEntry("max.message.bytes", "4194304");

            ToolRun delete = ToolRun.run(
                    Tools.commandLine(new ConfigsCommand()),
                    "--bootstrap-server",
                    broker,
                    "--entity-name",
                    "sized",
                    "--alter",
                    "--delete-config",
                    "max.message.bytes");
            assertThat(delete.exit()).as(delete.err()).isZero();
            awaitLimit(server, brokerDefault, brokerDefault);
        }
    }

    /** Waits until the broker's partition sized-0 has {@code expected} as its batch limit. */
    private static void awaitLimit(StellflowServer server, int brokerDefault, int expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Partition p;
        while ((p = server.replicaManager().hostedPartition("sized", 0)) == null
                || p.maxMessageBytes(brokerDefault) != expected) {
            assertThat(System.nanoTime())
                    .as("max.message.bytes %d at the partition", expected)
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
