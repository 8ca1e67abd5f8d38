package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.Channel;
import io.stellflow.broker.BrokerListener.ConnectionState;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.network.RequestDispatcher;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.network.TransportType;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The broker's listener alone (nio, no API handlers): bind, the connection group, the close steps. */
class BrokerListenerTest {
    @TempDir
    Path dir;

    private final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
    }

    @Test
    void acceptedConnectionsAreTrackedUntilClosed() throws Exception {
        BrokerListener listener = new BrokerListener(config("127.0.0.1:0"), Transport.select(TransportType.NIO));
        try {
            int port = listener.bind(new RequestDispatcher(Map.of()), pool, false);
            assertThat(port).isPositive().isEqualTo(listener.port());
            try (Socket client = new Socket("127.0.0.1", port)) {
                await(() -> listener.connections().size() == 1, "the connection joins the group");
                ConnectionState state = listener.connectionState((InetSocketAddress) client.getLocalSocketAddress());
                assertThat(state).isEqualTo(new ConnectionState(0, true, 0, 0));
                assertThat(listener.connectionState(new InetSocketAddress("127.0.0.1", 1)))
                        .isNull();
                assertThat(listener.framePayloadBytes()).containsExactly(0, 0);

                listener.stopAccepting();
                assertThat(listener.connections().size())
                        .as("open connections stay")
                        .isEqualTo(1);

                listener.closeConnections();
                assertThat(listener.connections().size()).isZero();
                assertThat(client.getInputStream().read())
                        .as("closed by the broker")
                        .isEqualTo(-1);
            }
        } finally {
            listener.close();
        }
    }

    /**
     * Netty completes a close future before it fires channelInactive, where a connection hands its
     * held requests to the request pool; the server shuts that pool down right after
     * closeConnections, so closeConnections must wait for channelInactive. A task queued on the event
     * loop from the close future's listener runs before channelInactive and delays it here.
     */
    @Test
    void closeConnectionsReturnsOnlyAfterEveryConnectionsChannelInactive() throws Exception {
        BrokerListener listener = new BrokerListener(config("127.0.0.1:0"), Transport.select(TransportType.NIO));
        try {
            int port = listener.bind(new RequestDispatcher(Map.of()), pool, false);
            try (Socket client = new Socket("127.0.0.1", port)) {
                await(() -> listener.connections().size() == 1, "the connection joins the group");
                Channel ch = listener.connections().iterator().next();
                long delayMs = 300;
                ch.closeFuture().addListener(f -> ch.eventLoop().execute(() -> sleepQuietly(delayMs)));
                listener.stopAccepting();

                long startNs = System.nanoTime();
                listener.closeConnections();

                assertThat(listener.notYetInactive())
                        .as("every channelInactive ran")
                        .isZero();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs))
                        .as("waited behind the delayed channelInactive")
                        .isGreaterThanOrEqualTo(delayMs - 50);
            }
        } finally {
            listener.close();
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aTakenPortFailsTheBindWithABindException() throws Exception {
        BrokerListener first = new BrokerListener(config("127.0.0.1:0"), Transport.select(TransportType.NIO));
        try {
            int port = first.bind(new RequestDispatcher(Map.of()), pool, false);
            BrokerListener second =
                    new BrokerListener(config("127.0.0.1:" + port), Transport.select(TransportType.NIO));
            try {
                assertThatThrownBy(() -> second.bind(new RequestDispatcher(Map.of()), pool, false))
                        .isInstanceOf(BindException.class);
                second.stopAccepting(); // nothing bound: a no-op
            } finally {
                second.close();
            }
        } finally {
            first.stopAccepting();
            first.close();
        }
    }

    @Test
    void theFetchPathSaysWhenLogBytesAreCopied() throws IOException {
        Properties props = props("127.0.0.1:0");
        props.setProperty("fetch.zero.copy", "false");
        BrokerListener copying =
                new BrokerListener(BrokerConfig.fromProperties(props), Transport.select(TransportType.NIO));
        BrokerListener zeroCopy = new BrokerListener(config("127.0.0.1:0"), Transport.select(TransportType.NIO));
        try {
            assertThat(copying.fetchPath()).isEqualTo("copied into the response buffer (fetch.zero.copy=false)");
            assertThat(zeroCopy.fetchPath()).isEqualTo("zero-copy file regions (FileChannel.transferTo, sendfile)");
        } finally {
            copying.close();
            zeroCopy.close();
        }
    }

    private BrokerConfig config(String hostPort) {
        return BrokerConfig.fromProperties(props(hostPort));
    }

    private Properties props(String hostPort) {
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://" + hostPort);
        props.setProperty("log.dirs", dir.resolve("data").toString());
        props.setProperty("transport", "nio");
        props.setProperty("num.network.threads", "1");
        return props;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 10 s").isLessThan(deadlineNs);
            Thread.sleep(5);
        }
    }
}
