package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowVersion;
import io.stellflow.testsupport.IntegrationTest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-perf.sh} fails within seconds with one line when something is wrong (issue #22):
 * produce to a missing topic (it waited 62 s), a taken {@code --metrics-port} (it died with a stack
 * trace), consume asked for more records than the topic holds (it exited 0 without a word); and
 * {@code --version} prints the release (it printed nothing).
 */
@IntegrationTest
class PerfFailFastTest {
    @TempDir
    Path dataDir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        server = InProcessBroker.start(dataDir);
        bootstrap = "127.0.0.1:" + server.port();
    }

    @AfterEach
    void stopBroker() {
        server.close();
    }

    private record Timed(PerfRun run, long tookMs) {}

    private static Timed timed(String... args) {
        long startNs = System.nanoTime();
        PerfRun r = PerfRun.of(args);
        return new Timed(r, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
    }

    @Test
    void produceToAMissingTopicFailsWithinSecondsSayingSo() {
        Timed t = timed("produce", "--bootstrap-server", bootstrap, "--topic", "nosuch2", "--num-records", "10");
        assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
        assertThat(t.run().err())
                .startsWith("error: topic nosuch2 does not exist")
                .contains("max.block.ms=5000");
        assertThat(t.tookMs()).isLessThan(12_000);
    }

    @Test
    void aTakenMetricsPortIsOneLineAndExit1() throws Exception {
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic("m", 1);
        }
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = taken.getLocalPort();
            Timed t = timed(
                    "produce",
                    "--bootstrap-server",
                    bootstrap,
                    "--topic",
                    "m",
                    "--num-records",
                    "10",
                    "--metrics-port",
                    Integer.toString(port));
            assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
            assertThat(t.run().err())
                    .startsWith("error: --metrics-port " + port + ": cannot listen on 127.0.0.1:" + port + " (")
                    .contains("give a free port, or 0 for any free one")
                    .doesNotContain("\tat ");
            assertThat(t.run().err().lines()).hasSize(1);
            assertThat(t.tookMs()).isLessThan(10_000);
        }
    }

    @Test
    void consumeShortOfNumRecordsFailsNamingReadVersusAsked() throws Exception {
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic("short", 1);
        }
        PerfRun produced =
                PerfRun.of("produce", "--bootstrap-server", bootstrap, "--topic", "short", "--num-records", "21");
        assertThat(produced.exit()).as(produced.err()).isZero();
        Timed t = timed(
                "consume",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "short",
                "--num-records",
                "100",
                "--timeout-ms",
                "1000");
        assertThat(t.run().exit()).as(t.run().err()).isEqualTo(1);
        assertThat(t.run().err())
                .contains("error: read 21 of --num-records 100: no record arrived for 1000 ms (--timeout-ms)");
        assertThat(t.tookMs()).isLessThan(12_000);

        PerfRun exact =
                PerfRun.of("consume", "--bootstrap-server", bootstrap, "--topic", "short", "--num-records", "21");
        assertThat(exact.exit()).as(exact.err()).isZero();
    }

    @Test
    void versionPrintsTheRelease() {
        for (String[] args : new String[][] {{"--version"}, {"produce", "--version"}, {"consume", "--version"}}) {
            PerfRun r = PerfRun.of(args);
            assertThat(r.exit()).isZero();
            assertThat(r.out()).isEqualTo("Stellflow " + StellflowVersion.version() + "\n");
        }
        assertThat(StellflowVersion.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }
}
