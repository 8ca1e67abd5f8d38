package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tools run by {@code bin/_launch.sh} log WARN and up to stderr only: {@code bin/stellflow-metadata-quorum.sh}
 * runs in a child JVM with the logging configuration the launcher gives it ({@code config/tools-logback.xml}),
 * against a one-controller quorum, and its stdout holds only the tool's output (no netty/gRPC DEBUG lines).
 */
@IntegrationTest
class ToolsLoggingTest {
    private static final Path REPO = Path.of("").toAbsolutePath().getParent();

    @TempDir
    Path dir;

    @Test
    void launcherGivesEveryToolTheToolsLoggingConfigurationUnlessTheServersChoseTheirOwn() throws IOException {
        String launch = Files.readString(REPO.resolve("bin/_launch.sh"));
        assertThat(launch).contains("-Dlogback.configurationFile=$STELLFLOW_HOME/config/tools-logback.xml");
        String config = Files.readString(REPO.resolve("config/tools-logback.xml"));
        assertThat(config).contains("<target>System.err</target>").contains("${stellflow.log.level:-WARN}");
        // Both node launchers exec bin/_node.sh, which gives the servers their own configuration.
        for (String server : List.of("bin/stellflow-server.sh", "bin/stellflow-controller.sh")) {
            assertThat(Files.readString(REPO.resolve(server))).as(server).contains("exec \"$home/bin/_node.sh\"");
        }
        assertThat(Files.readString(REPO.resolve("bin/_node.sh")))
                .contains("-Dlogback.configurationFile=${STELLFLOW_LOG_CONFIG:-$home/config/logback.xml}");
    }

    @Test
    void metadataQuorumDescribePrintsOnlyItsOutputOnStdout() throws Exception {
        int[] ports = LoopbackPorts.pick(2);
        int raft = ports[0];
        int rpc = ports[1];
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + raft);
        p.setProperty("controller.listener", "127.0.0.1:" + rpc);
        p.setProperty("metadata.log.dir", dir.resolve("c1").toString());
        p.setProperty("cluster.id", "logging-test");
        try (ControllerServer server = ControllerServer.start(ControllerConfig.fromProperties(p))) {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Dlogback.configurationFile=" + REPO.resolve("config/tools-logback.xml"),
                    "-cp",
                    System.getProperty("java.class.path"),
                    MetadataQuorumCommand.class.getName(),
                    "--bootstrap-controller",
                    "127.0.0.1:" + rpc,
                    "--timeout-ms",
                    "30000",
                    "describe"));
            Path out = dir.resolve("out");
            Path err = dir.resolve("err");
            Process child = new ProcessBuilder(cmd)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String stdout = Files.readString(out, StandardCharsets.UTF_8);
            String stderr = Files.readString(err, StandardCharsets.UTF_8);
            assertThat(child.exitValue()).as(stderr).isZero();
            assertThat(stdout).startsWith("ClusterId: ").contains("\nLeaderId: 1\n");
            assertThat(stdout).doesNotContain("DEBUG", "INFO", "WARN", "Exception", "io.netty", "io.grpc");
            assertThat(stderr).doesNotContain("DEBUG", " INFO ");
        }
    }
}
