package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --create} refusals on a combined node (broker + controller in this JVM):
 * a partition count or replication factor below 1 is a usage error (exit 2, nothing sent), and each
 * refusal by the controller through the broker ({@code --bootstrap-server}, CreateTopic v2) prints
 * its own code, a human reason and the controller's message (exit 1, nothing created).
 */
@IntegrationTest
class TopicsCommandErrorsTest {
    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(Tools.commandLine(new TopicsCommand()), args);
    }

    @Test
    void badCreatesFailWithTheirOwnReasonAndCreateNothing() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            String controller = server.controller().rpcEndpoint();

            for (String[] bad : new String[][] {
                {"--bootstrap-controller", controller, "--replication-factor", "0"},
                {"--bootstrap-controller", controller, "--replication-factor", "-1"},
                {"--bootstrap-server", broker, "--replication-factor", "0"},
                {"--bootstrap-server", broker, "--partitions", "0"},
                {"--bootstrap-server", broker, "--partitions", "-1"},
                {"--bootstrap-controller", controller, "--partitions", "0"}
            }) {
                String[] args = {bad[0], bad[1], "--create", "--topic", "never", bad[2], bad[3]};
                ToolRun r = run(args);
                assertThat(r.exit()).as(String.join(" ", args) + "\n" + r.err()).isEqualTo(2);
                assertThat(r.err()).contains(bad[2] + " must be at least 1, got " + bad[3]);
                assertThat(r.out()).isEmpty();
            }

            ToolRun created = run("--bootstrap-server", broker, "--create", "--topic", "a_b", "--partitions", "2");
            assertThat(created.exit()).as(created.err()).isZero();
            assertThat(created.out()).isEqualTo("Created topic a_b with 2 partition(s).\n");

            ToolRun collision = run("--bootstrap-server", broker, "--create", "--topic", "a.b");
            assertThat(collision.exit()).isEqualTo(1);
            assertThat(collision.err())
                    .startsWith("error: CreateTopic a.b refused: the topic exists with another partition count, or"
                            + " its name collides with an existing topic")
                    .contains("a_b")
                    .contains("(TOPIC_ALREADY_EXISTS 29)");

            ToolRun otherCount = run("--bootstrap-server", broker, "--create", "--topic", "a_b", "--partitions", "3");
            assertThat(otherCount.exit()).isEqualTo(1);
            assertThat(otherCount.err())
                    .startsWith("error: topic a_b already exists (TOPIC_ALREADY_EXISTS 29)")
                    .contains("--if-not-exists");

            ToolRun badName = run("--bootstrap-server", broker, "--create", "--topic", "no spaces!");
            assertThat(badName.exit()).isEqualTo(1);
            assertThat(badName.err())
                    .startsWith("error: CreateTopic no spaces! refused: illegal topic name")
                    .contains("illegal character")
                    .contains("(INVALID_TOPIC 28)");

            ToolRun tooWide =
                    run("--bootstrap-server", broker, "--create", "--topic", "wide", "--replication-factor", "4");
            assertThat(tooWide.exit()).isEqualTo(1);
            assertThat(tooWide.err())
                    .startsWith("error: CreateTopic wide refused: invalid replication factor")
                    .contains("(INVALID_REPLICATION_FACTOR 31)");

            ToolRun list = run("--bootstrap-server", broker, "--list");
            assertThat(list.exit()).as(list.err()).isZero();
            assertThat(list.out()).isEqualTo("a_b\n");
        }
    }
}
