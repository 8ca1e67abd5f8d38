package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A controller whose Raft port is taken fails its start with an exception its caller can report, and
 * the JVM goes on: Ratis's own reaction to a gRPC server that cannot bind is {@code System.exit(1)},
 * which in an embedding process (a broker's tests, a combined node) ends everything at once.
 */
class RaftPortInUseTest {
    @TempDir
    Path dir;

    @Test
    void aTakenRaftPortFailsTheStartWithoutEndingTheJvm() throws Exception {
        ControllerConfig config;
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Properties p = new Properties();
            p.setProperty("node.id", "1");
            p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + taken.getLocalPort());
            p.setProperty("controller.listener", "127.0.0.1:0");
            p.setProperty("metadata.log.dir", dir.resolve("c1").toString());
            config = ControllerConfig.fromProperties(p);

            assertThatThrownBy(() -> ControllerServer.start(config))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort())
                    .hasMessageContaining("Address already in use");
        }
        // The same directory starts once the port is free again: the failed start left nothing behind.
        try (ControllerServer server = ControllerServer.start(config)) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!server.isActive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(server.isActive())
                    .as("the controller leads its one-voter quorum")
                    .isTrue();
        }
        assertThat(Thread.getDefaultUncaughtExceptionHandler())
                .as("Ratis installs a default handler that would swallow or exit on uncaught exceptions")
                .isNull();
    }
}
