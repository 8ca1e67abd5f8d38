package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The proxies of {@link NetworkFaults} against echo servers: bytes pass, a cut holds exactly the
 * connections between the isolated broker and the others (including its controller link), heal closes
 * those and lets new ones through. "Broker 0" is this JVM's pid, so connections from this test are
 * identified as broker 0's through {@link SocketOwners} and {@code /proc}.
 */
@IntegrationTest
class NetworkFaultsTest {
    private final AtomicReference<long[]> pids = new AtomicReference<>(new long[] {-1, -1});
    private NetworkFaults net;
    private ServerSocket echo0;
    private ServerSocket echo1;

    @BeforeEach
    void setUp() throws IOException {
        assumeThat(SocketOwners.supported()).as("/proc/net/tcp (Linux)").isTrue();
        net = new NetworkFaults(pids::get);
        echo0 = echoServer();
        echo1 = echoServer();
    }

    @AfterEach
    void tearDown() throws IOException {
        if (net != null) {
            net.close();
        }
        if (echo0 != null) {
            echo0.close();
            echo1.close();
        }
    }

    private static ServerSocket echoServer() throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (true) {
                Socket s;
                try {
                    s = server.accept();
                } catch (IOException e) {
                    return;
                }
                Thread.ofVirtual().start(() -> {
                    try (s;
                            InputStream in = s.getInputStream();
                            OutputStream out = s.getOutputStream()) {
                        in.transferTo(out);
                    } catch (IOException e) {
                        // client went away
                    }
                });
            }
        });
        return server;
    }

    private static Socket connect(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(400);
        return s;
    }

    /**
     * Sends one byte and reads the echo: "ok", "held" (nothing within {@code waitMs}) or "closed". A
     * held byte is asserted with a short wait, a delivered or closed one with a long wait (a loaded
     * machine may take seconds to schedule the proxy's threads).
     */
    private static String roundTrip(Socket s, int b, int waitMs) throws IOException {
        try {
            s.setSoTimeout(waitMs);
            s.getOutputStream().write(b);
            s.getOutputStream().flush();
            int got = s.getInputStream().read();
            if (got < 0) {
                return "closed";
            }
            return got == b ? "ok" : "wrong byte " + got;
        } catch (SocketTimeoutException e) {
            return "held";
        } catch (IOException e) {
            return "closed";
        }
    }

    @Test
    void aConnectionFromABrokerIsIdentifiedByItsPid() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket accepted = server.accept()) {
            long me = ProcessHandle.current().pid();
            assertThat(SocketOwners.ownerOf(accepted.getPort(), server.getLocalPort(), List.of(12345678L, me)))
                    .isEqualTo(me);
            assertThat(SocketOwners.ownerOf(accepted.getPort(), server.getLocalPort(), List.of(12345678L)))
                    .isEqualTo(-1);
        }
    }

    @Test
    void isolatingABrokerHoldsItsLinksToOtherBrokersAndTheControllerUntilHealCloses() throws Exception {
        pids.set(new long[] {ProcessHandle.current().pid(), -1});
        NetworkFaults.Proxy toBroker1 = net.brokerProxy(1, echo1.getLocalPort());
        NetworkFaults.Proxy broker0ToController = net.controllerProxy(0, echo0.getLocalPort());
        NetworkFaults.Proxy broker1ToController = net.controllerProxy(1, echo0.getLocalPort());
        try (Socket b0b1 = connect(toBroker1.port());
                Socket b0c = connect(broker0ToController.port());
                Socket b1c = connect(broker1ToController.port())) {
            assertThat(roundTrip(b0b1, 1, 10_000)).isEqualTo("ok");
            assertThat(roundTrip(b0c, 2, 10_000)).isEqualTo("ok");
            assertThat(roundTrip(b1c, 3, 10_000)).isEqualTo("ok");

            net.isolate(0, false);
            assertThat(roundTrip(b0b1, 4, 500)).as("broker 0 -> broker 1").isEqualTo("held");
            assertThat(roundTrip(b0c, 5, 500)).as("broker 0 -> controller").isEqualTo("held");
            assertThat(roundTrip(b1c, 6, 10_000)).as("broker 1 -> controller").isEqualTo("ok");
            try (Socket fresh = connect(toBroker1.port())) {
                assertThat(roundTrip(fresh, 7, 500))
                        .as("a new connection during the cut")
                        .isEqualTo("held");
            }

            net.heal();
            assertThat(roundTrip(b0b1, 8, 10_000))
                    .as("after heal, a held connection")
                    .isEqualTo("closed");
            assertThat(roundTrip(b0c, 9, 10_000)).isEqualTo("closed");
            assertThat(roundTrip(b1c, 10, 10_000)).as("untouched by the cut").isEqualTo("ok");
            try (Socket fresh = connect(toBroker1.port())) {
                assertThat(roundTrip(fresh, 11, 10_000)).isEqualTo("ok");
            }

            net.isolate(1, false);
            try (Socket in = connect(toBroker1.port())) {
                assertThat(roundTrip(in, 12, 500))
                        .as("broker 0 -> isolated broker 1")
                        .isEqualTo("held");
            }
            net.heal();
        }
    }

    @Test
    void clientsAreCutOnlyWhenAsked() throws Exception {
        NetworkFaults.Proxy toBroker1 = net.brokerProxy(1, echo1.getLocalPort());
        try (Socket client = connect(toBroker1.port())) {
            net.isolate(1, false);
            assertThat(roundTrip(client, 1, 10_000))
                    .as("client -> isolated broker, clients not cut")
                    .isEqualTo("ok");
            net.isolate(1, true);
            assertThat(roundTrip(client, 2, 500))
                    .as("client -> isolated broker, clients cut")
                    .isEqualTo("held");
            net.heal();
            assertThat(roundTrip(client, 3, 10_000)).isEqualTo("closed");
        }
    }
}
