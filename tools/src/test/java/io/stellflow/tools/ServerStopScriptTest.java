package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.LoopbackPorts;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/stellflow-server.sh} writes a pid file and {@code bin/stellflow-server-stop.sh} stops the
 * node through it: a real combined node started by the launcher (the broker jar built by this
 * reactor, {@code STELLFLOW_NO_BUILD=1}), stopped with SIGTERM, its pid file removed; a second start
 * on the same config is refused while it runs; and with nothing running the stop script says so in
 * one line and exits 1 at once; a failed start removes its pid file (the JVM does, at exit:
 * {@code PidFile}).
 */
@IntegrationTest
class ServerStopScriptTest {
    private static final Path REPO = Path.of("").toAbsolutePath().getParent();

    @TempDir
    Path dir;

    /** Numbers each script run's output files. */
    private int runs;

    @Test
    void stopScriptStopsTheServerTheLauncherStartedAndSaysWhenNoneRuns() throws Exception {
        int[] ports = LoopbackPorts.pick(3);
        Path config = dir.resolve("node-7.properties");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "listeners=PLAINTEXT://127.0.0.1:" + ports[0],
                        "log.dirs=" + dir.resolve("data"),
                        "metadata.log.dir=" + dir.resolve("meta"),
                        "controller.quorum.voters=0@127.0.0.1:" + ports[1],
                        "controller.listener=127.0.0.1:" + ports[2],
                        "controller.quorum.election.timeout.ms=200",
                        "metrics.exporter=none",
                        "transport=nio",
                        ""));
        Path pidDir = dir.resolve("run");
        Path pidFile = pidDir.resolve("stellflow-node-7.pid");

        Process server = script("stellflow-server.sh", config.toString()).start();
        try {
            Wait.until(Duration.ofSeconds(60), () -> listening(ports[0]), "the broker listens on " + ports[0]);
            // The pid file names the JVM, which is the launcher's own process (it execs java), so
            // `$!` of whoever started the launcher, CPU readings and profilers see the JVM.
            long jvm = Long.parseLong(Files.readString(pidFile).strip());
            assertThat(jvm).isEqualTo(server.pid());
            assertThat(ProcessHandle.of(jvm).flatMap(h -> h.info().command()))
                    .hasValueSatisfying(c -> assertThat(c).endsWith("/java"));

            Result second = run(script("stellflow-server.sh", config.toString()), 30);
            assertThat(second.exit()).isEqualTo(1);
            assertThat(second.err())
                    .startsWith("error: a Stellflow server is already running with " + config + " (pid " + jvm);

            Result stop = run(script("stellflow-server-stop.sh", config.toString()), 90);
            assertThat(stop.exit()).as(stop.err()).isZero();
            assertThat(stop.out())
                    .startsWith("Stopping Stellflow server (pid " + jvm)
                    .contains("Stopped pid " + jvm + ".");
            // The script saw the pid gone; our Process object learns it from its reaper thread.
            assertThat(server.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(pidFile).doesNotExist();
            assertThat(listening(ports[0])).isFalse();
        } finally {
            server.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }

        // A failed start (here a bad value: exit 2) leaves no pid file behind.
        Files.writeString(dir.resolve("bad.properties"), "listeners=nonsense\n");
        Result failed =
                run(script("stellflow-server.sh", dir.resolve("bad.properties").toString()), 60);
        assertThat(failed.exit()).as(failed.err()).isEqualTo(2);
        assertThat(pidDir.resolve("stellflow-bad.pid")).doesNotExist();

        long startNs = System.nanoTime();
        Result none = run(script("stellflow-server-stop.sh"), 30);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.out()).isEmpty();
        assertThat(none.err()).isEqualTo("error: no Stellflow server to stop (no live pid file in " + pidDir + ")\n");

        // A stale pid file (its process gone) is removed, not signalled.
        Files.createDirectories(pidDir);
        Files.writeString(pidFile, server.pid() + "\n");
        Result stale = run(script("stellflow-server-stop.sh", config.toString()), 30);
        assertThat(stale.exit()).isEqualTo(1);
        assertThat(stale.err()).startsWith("error: no Stellflow server to stop for " + config);
        assertThat(pidFile).doesNotExist();
    }

    private ProcessBuilder script(String name, String... args) {
        List<String> cmd =
                new ArrayList<>(List.of(REPO.resolve("bin").resolve(name).toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("STELLFLOW_PID_DIR", dir.resolve("run").toString());
        pb.environment().put("STELLFLOW_NO_BUILD", "1");
        pb.environment().put("STELLFLOW_AOT", "off");
        pb.environment().put("STELLFLOW_JAVA_HOME", System.getProperty("java.home"));
        pb.environment().put("STELLFLOW_LOG_DIR", dir.resolve("logs").toString());
        pb.environment().put("STELLFLOW_HEAP_OPTS", "-Xmx256m");
        int n = ++runs;
        pb.redirectOutput(dir.resolve(name + "." + n + ".out").toFile());
        pb.redirectError(dir.resolve(name + "." + n + ".err").toFile());
        return pb;
    }

    private record Result(int exit, String out, String err) {}

    private Result run(ProcessBuilder pb, int timeoutS) throws Exception {
        Process p = pb.start();
        assertThat(p.waitFor(timeoutS, TimeUnit.SECONDS))
                .as("exits within " + timeoutS + " s")
                .isTrue();
        return new Result(
                p.exitValue(),
                Files.readString(pb.redirectOutput().file().toPath(), StandardCharsets.UTF_8),
                Files.readString(pb.redirectError().file().toPath(), StandardCharsets.UTF_8));
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
