package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
@IntegrationTest
class RaftPortInUseTest {
    @TempDir
    Path dir;

    @Test
    void aTakenRaftPortFailsTheStartWithoutEndingTheJvm() throws Exception {
        Thread.UncaughtExceptionHandler handlerBefore = Thread.getDefaultUncaughtExceptionHandler();
        int port = LoopbackPorts.pick();
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + port);
        p.setProperty("controller.listener", "127.0.0.1:0");
        p.setProperty("metadata.log.dir", dir.resolve("c1").toString());
        ControllerConfig config = ControllerConfig.fromProperties(p);
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            assertThatThrownBy(() -> ControllerServer.start(config))
                    .isInstanceOf(BindException.class)
                    .hasMessageContaining("127.0.0.1:" + port)
                    .hasMessageContaining("Address already in use");
        }
        // The same port and directory start once the port is free: the failed start left nothing behind.
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
                .as("Ratis's ExitUtils replaces the default handler with one that terminates; ours is kept")
                .isSameAs(handlerBefore);
    }
}
