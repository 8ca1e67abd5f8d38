package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --create} of an existing topic is an error (issue #22, defect 5; it used
 * to print "Created topic demo"), through a broker and through the controllers alike, unless
 * {@code --if-not-exists}; {@code --if-exists} makes {@code --alter}, {@code --delete} and {@code
 * --describe} of a missing topic a no-op that exits 0, as in Kafka's kafka-topics.sh.
 */
@IntegrationTest
class TopicsCommandExistsTest {
    private static final long BOUND_MS = 10_000;

    @TempDir
    Path dir;

    private static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TopicsCommand()), args);
    }

    @Test
    void creatingAnExistingTopicFailsUnlessIfNotExists() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();
            ToolRun first = run("--bootstrap-server", broker, "--create", "--topic", "demo", "--partitions", "3");
            assertThat(first.exit()).as(first.err()).isZero();

            for (String[] endpoint :
                    new String[][] {{"--bootstrap-server", broker}, {"--bootstrap-controller", controller}}) {
                long startNs = System.nanoTime();
                ToolRun again = run(endpoint[0], endpoint[1], "--create", "--topic", "demo", "--partitions", "3");
                long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                assertThat(again.exit())
                        .as(endpoint[0] + ": " + again.out() + again.err())
                        .isEqualTo(1);
                assertThat(again.out()).doesNotContain("Created");
                assertThat(again.err())
                        .isEqualTo("error: topic demo already exists (TOPIC_ALREADY_EXISTS 29); add --if-not-exists"
                                + " to accept an existing topic, or use --alter to grow it\n");
                assertThat(tookMs).isLessThan(BOUND_MS);

                ToolRun quiet = run(
                        endpoint[0],
                        endpoint[1],
                        "--create",
                        "--if-not-exists",
                        "--topic",
                        "demo",
                        "--partitions",
                        "3");
                assertThat(quiet.exit()).as(quiet.err()).isZero();
                assertThat(quiet.out() + quiet.err()).isEmpty();
            }

            ToolRun described = run("--bootstrap-server", broker, "--describe", "--topic", "demo");
            assertThat(described.out()).contains("PartitionCount: 3"); // the first create's topic, untouched
        }
    }

    @Test
    void ifExistsMakesAlterDeleteAndDescribeOfAMissingTopicANoOp() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();

            ToolRun describe = run("--bootstrap-server", broker, "--describe", "--topic", "nosuch");
            assertThat(describe.exit()).isEqualTo(1);
            ToolRun delete = run("--bootstrap-server", broker, "--delete", "--topic", "nosuch");
            assertThat(delete.exit()).isEqualTo(1);
            assertThat(delete.err()).contains("UNKNOWN_TOPIC_OR_PARTITION");
            ToolRun alter =
                    run("--bootstrap-controller", controller, "--alter", "--topic", "nosuch", "--partitions", "2");
            assertThat(alter.exit()).isEqualTo(1);

            for (String[] args : new String[][] {
                {"--bootstrap-server", broker, "--describe", "--topic", "nosuch", "--if-exists"},
                {"--bootstrap-server", broker, "--delete", "--topic", "nosuch", "--if-exists"},
                {
                    "--bootstrap-controller",
                    controller,
                    "--alter",
                    "--topic",
                    "nosuch",
                    "--partitions",
                    "2",
                    "--if-exists"
                }
            }) {
                ToolRun r = run(args);
                assertThat(r.exit()).as(String.join(" ", args) + "\n" + r.err()).isZero();
                assertThat(r.out() + r.err()).isEmpty();
            }

            ToolRun list = run("--bootstrap-server", broker, "--list");
            assertThat(list.out()).doesNotContain("nosuch");

            ToolRun misplaced = run("--bootstrap-server", broker, "--create", "--topic", "x", "--if-exists");
            assertThat(misplaced.exit()).isEqualTo(2);
            assertThat(misplaced.err()).contains("--if-exists goes with --alter, --delete or --describe only");
        }
    }
}
