package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-console-producer.sh} fails within seconds and says why (issue #22, defect 1): an
 * unreachable {@code --bootstrap-server} and a missing topic end with exit 1 and one error line after
 * the tools' {@code max.block.ms} of 5 s (they used to wait 61 s in silence); an acks=all send to a
 * topic whose ISR is below {@code min.insync.replicas} logs its retries as rate-limited WARNs naming
 * the code and the attempt, and its {@code delivery.timeout.ms} error names the last error.
 */
@IntegrationTest
class ConsoleProducerFailFastTest {
    /**
     * What a user waits for at most: the tools' 5 s max.block.ms plus start-up and slack for a loaded
     * 2-core machine (before the fix: 61 s and more).
     */
    private static final long BOUND_MS = 12_000;

    @TempDir
    Path dir;

    @RegisterExtension
    final LogLines senderLog = LogLines.of("io.stellflow.client.ProducerSender");

    private record Timed(ToolRun run, long tookMs) {}

    private static Timed produce(String input, String... args) {
        ConsoleProducer tool = new ConsoleProducer();
        tool.in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));
        long startNs = System.nanoTime();
        ToolRun r = ToolRun.run(Tools.commandLine(tool), args);
        return new Timed(r, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
    }

    @Test
    void anUnreachableBootstrapServerFailsWithinSecondsNamingTheAddress() throws Exception {
        int port = LoopbackPorts.pick(); // free: nothing listens there
        String bootstrap = "127.0.0.1:" + port;
        // Three lines: the tool must stop at the first failure, not wait once per line.
        Timed t = produce("x\ny\nz\n", "--bootstrap-server", bootstrap, "--topic", "demo");
        assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
        assertThat(t.run().err())
                .contains("no broker reachable at bootstrap.servers=" + bootstrap)
                .contains("cannot connect to " + bootstrap + ": Connection refused")
                .contains("max.block.ms=5000");
        assertThat(t.tookMs()).isLessThan(BOUND_MS);
    }

    @Test
    void aMissingTopicFailsWithinSecondsSayingItDoesNotExist() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            Timed t = produce("x\ny\n", "--bootstrap-server", "127.0.0.1:" + server.port(), "--topic", "nosuch");
            assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
            assertThat(t.run().err())
                    .contains("topic nosuch does not exist")
                    .contains("UNKNOWN_TOPIC_OR_PARTITION")
                    .contains("stellflow-topics.sh --create");
            assertThat(t.tookMs()).isLessThan(BOUND_MS);
        }
    }

    @Test
    void retriesBelowMinIsrAreWarnedWithTheirCodeAndTheTimeoutNamesTheLastError() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            ToolRun created = ToolRun.run(
                    Tools.commandLine(new TopicsCommand()),
                    "--bootstrap-controller",
                    server.controller().rpcEndpoint(),
                    "--create",
                    "--topic",
                    "isr",
                    "--config",
                    "min.insync.replicas=2");
            assertThat(created.exit()).as(created.err()).isZero();
            String bootstrap = "127.0.0.1:" + server.port();
            Timed t = produce(
                    "x\n",
                    "--bootstrap-server",
                    bootstrap,
                    "--topic",
                    "isr",
                    "--acks",
                    "all",
                    "--producer-property",
                    "delivery.timeout.ms=3000",
                    "--producer-property",
                    "request.timeout.ms=2000");
            assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
            assertThat(t.run().err())
                    .contains("batch expired after 3000 ms (delivery.timeout.ms)")
                    .contains("last error: ")
                    .contains("(NOT_ENOUGH_REPLICAS 32)");
            assertThat(t.tookMs()).isLessThan(BOUND_MS);
            List<String> warns = senderLog.messages().stream()
                    .filter(m -> m.startsWith("produce to isr-0 failed with NOT_ENOUGH_REPLICAS 32 (attempt "))
                    .toList();
            // About 3 s of retries at up to 1 s apart: one WARN, then at most one per 5 s.
            assertThat(warns).hasSize(1);
            assertThat(warns.get(0)).contains("(attempt 1)").contains("delivery.timeout.ms=3000");
        }
    }
}
