package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --create} when the create does not simply succeed, on a real node: another
 * client creating the topic between the tool's look and its create (the real TOPIC_ALREADY_EXISTS of
 * a different partition count) is success under {@code --if-not-exists} and the usual error without
 * it; a create the controller committed whose answer was "not applied in time" (the broker's answer
 * when opening many partitions outlasts its 10 s wait) says the topic exists but is not ready, exit 3,
 * instead of "refused". The tool's {@link TopicsCommand.Creator} seam runs the other client's create
 * first, then the real one (or the real one, then the broker's timeout answer).
 */
@IntegrationTest
class TopicsCreateRaceTest {
    @TempDir
    Path dir;

    private static ToolRun run(TopicsCommand command, String... args) {
        return ToolRun.run(Tools.commandLine(command), args);
    }

    /** A tool whose create is preceded by another client's create of {@code topic} with 5 partitions. */
    private static TopicsCommand racedBy(String topic) {
        TopicsCommand c = new TopicsCommand();
        c.creator = (admin, name, partitions, rf) -> {
            admin.createTopic(topic, 5, rf);
            admin.createTopic(name, partitions, rf);
        };
        return c;
    }

    @Test
    void aCreateRacingAnotherIsSuccessUnderIfNotExistsAndAnErrorWithout() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            ToolRun quiet = run(
                    racedBy("raced"),
                    "--bootstrap-server",
                    broker,
                    "--create",
                    "--if-not-exists",
                    "--topic",
                    "raced",
                    "--partitions",
                    "2");
            assertThat(quiet.exit()).as(quiet.err()).isZero();
            assertThat(quiet.out() + quiet.err()).isEmpty();

            ToolRun loud = run(
                    racedBy("raced2"),
                    "--bootstrap-server",
                    broker,
                    "--create",
                    "--topic",
                    "raced2",
                    "--partitions",
                    "2");
            assertThat(loud.exit()).isEqualTo(1);
            assertThat(loud.err()).startsWith("error: topic raced2 already exists (TOPIC_ALREADY_EXISTS 29)");

            ToolRun described =
                    run(new TopicsCommand(), "--bootstrap-server", broker, "--describe", "--topic", "raced");
            assertThat(described.out()).contains("PartitionCount: 5"); // the other client's topic, untouched
        }
    }

    @Test
    void aCommittedCreateNotReadyInTimeSaysSoWithItsOwnExitStatus() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            TopicsCommand slow = new TopicsCommand();
            slow.creator = (admin, name, partitions, rf) -> {
                admin.createTopic(name, partitions, rf);
                throw new StellflowException(
                        Errors.BROKER_NOT_AVAILABLE,
                        "CreateTopic " + name + " refused: committed but not applied by this broker within 10000 ms");
            };
            long startNs = System.nanoTime();
            ToolRun r = run(slow, "--bootstrap-server", broker, "--create", "--topic", "big", "--partitions", "3");
            assertThat(r.exit()).isEqualTo(TopicsCommand.EXIT_CREATE_NOT_READY);
            assertThat(r.out()).isEmpty();
            assertThat(r.err())
                    .startsWith("error: the create of topic big was accepted by the controller but not all of its 3"
                            + " partition(s) are ready after ")
                    .endsWith("; check with --describe --topic big\n")
                    .doesNotContain("refused:\n");
            assertThat(r.err().strip().lines()).hasSize(1);
            assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(10));

            // A refusal that created nothing stays a refusal (exit 1), not "accepted".
            TopicsCommand down = new TopicsCommand();
            down.creator = (admin, name, partitions, rf) -> {
                throw new StellflowException(
                        Errors.BROKER_NOT_AVAILABLE, "CreateTopic " + name + " refused: no controller");
            };
            ToolRun refused =
                    run(down, "--bootstrap-server", broker, "--create", "--topic", "none", "--partitions", "1");
            assertThat(refused.exit()).isEqualTo(1);
            assertThat(refused.err()).startsWith("error: CreateTopic none refused: no controller");
            try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(broker, null))) {
                assertThat(admin.listTopics()).contains("big").doesNotContain("none");
            }
        }
    }
}
