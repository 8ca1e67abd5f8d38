package io.stellflow.controller.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.LoopbackPorts;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The controller's ports at start and under a wrong client (issue #22): a taken Raft port or {@code
 * controller.listener} port fails the start with one {@link ConfigException} naming the key (not
 * Ratis' stack traces, not gRPC's keyless bind error), and bytes that are not HTTP/2 sent to either
 * port (our tools' wrong-port probe) put nothing on java.util.logging's console handler.
 */
@IntegrationTest
class ControllerPortsTest {
    @TempDir
    Path dir;

    private Properties props(int raftPort, int listenerPort) {
        Properties p = new Properties();
        p.setProperty("process.roles", "controller");
        p.setProperty("node.id", "5");
        p.setProperty("controller.quorum.voters", "5@127.0.0.1:" + raftPort);
        p.setProperty("controller.listener", "127.0.0.1:" + listenerPort);
        p.setProperty("metadata.log.dir", dir.resolve("metadata").toString());
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("metrics.exporter", "none");
        return p;
    }

    private static ServerSocket taken() throws Exception {
        ServerSocket s = new ServerSocket();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return s;
    }

    @Test
    void aTakenRaftPortNamesControllerQuorumVoters() throws Exception {
        try (ServerSocket raft = taken()) {
            int port = raft.getLocalPort();
            ControllerNode.Config config = ControllerNode.Config.fromProperties(props(port, 0));
            assertThatThrownBy(() -> ControllerNode.start(config).close())
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("Invalid value '5@127.0.0.1:" + port
                            + "' for configuration key 'controller.quorum.voters': cannot listen on 127.0.0.1:"
                            + port + " (")
                    .hasMessageContaining("Address already in use")
                    .hasMessageEndingWith("stop it, or give controller.quorum.voters another port");
        }
    }

    @Test
    void aTakenControllerListenerPortNamesTheKey() throws Exception {
        try (ServerSocket rpc = taken()) {
            int port = rpc.getLocalPort();
            ControllerNode.Config config = ControllerNode.Config.fromProperties(props(LoopbackPorts.pick(), port));
            assertThatThrownBy(() -> ControllerNode.start(config).close())
                    .isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("Invalid value '127.0.0.1:" + port
                            + "' for configuration key 'controller.listener': cannot listen on 127.0.0.1:" + port
                            + " (")
                    .hasMessageContaining("Address already in use")
                    .hasMessageEndingWith("stop it, or give controller.listener another port");
        }
    }

    @Test
    void garbageOnTheControllerPortsReachesNoJulConsole() throws Exception {
        int raftPort = LoopbackPorts.pick();
        List<LogRecord> seen = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLoggerName() != null && r.getLoggerName().contains("grpc")) {
                    seen.add(r);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        // JUL's root handlers are the console (stderr) handler; a record that gets here is printed.
        Logger root = Logger.getLogger("");
        root.addHandler(capture);
        try (ControllerNode node = ControllerNode.start(ControllerNode.Config.fromProperties(props(raftPort, 0)))) {
            String rpc = node.controller().rpcEndpoint();
            int rpcPort = Integer.parseInt(rpc.substring(rpc.lastIndexOf(':') + 1));
            for (int port : new int[] {rpcPort, raftPort}) {
                try (Socket s = new Socket("127.0.0.1", port)) {
                    s.getOutputStream().write("\0\0\0\u0010not http/2 at all".getBytes(StandardCharsets.ISO_8859_1));
                    s.getOutputStream().flush();
                    s.setSoTimeout(10_000);
                    InputStream in = s.getInputStream();
                    // The server answers with a GOAWAY and closes: read to the end.
                    while (in.read() >= 0) {}
                }
            }
            // The transport logs as it closes: wait a second for a record that must not come.
            Wait.poll(Duration.ofSeconds(1), () -> !seen.isEmpty(), "a gRPC transport record");
            assertThat(seen.stream().map(r -> r.getLoggerName() + " " + r.getLevel() + " " + r.getMessage()))
                    .as("gRPC transport records on JUL's console")
                    .isEmpty();
        } finally {
            root.removeHandler(capture);
        }
    }
}
