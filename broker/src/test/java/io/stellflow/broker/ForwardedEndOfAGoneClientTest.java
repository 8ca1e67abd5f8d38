package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.client.BodyReader;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #20, the delayed forwarded EndTransaction v0 (the Jepsen anomaly): three combined nodes in
 * this JVM, each advertising a proxy port, so broker-to-broker requests pass a proxy that can hold
 * one request frame. A client sends End(commit) v0 of transaction N to broker F, which is not the
 * coordinator C; F forwards it and the proxy in front of C holds it. The client gives up: it closes
 * its connection, retries the End at C (answered), begins N+1 and produces in it. Then the held End
 * reaches C. It must not end N+1: a Begin through F behind it finds N+1 still open, N+1 takes one
 * more write, and its own End commits all of it. Before the forward gate C ran the held End, which
 * committed N+1 with only its first write (the later Produce was refused).
 */
@IntegrationTest
class ForwardedEndOfAGoneClientTest {
    private static final int N = 3;
    private static final String ID = "gone-client-tx";
    private static final String TOPIC = "fwd-gate";

    @Test
    void aForwardedEndHeldUntilItsClientLeftCannotEndTheNextTransaction(@TempDir Path dir) throws Exception {
        int[] dataPorts = LoopbackPorts.pick(N);
        int[] raft = LoopbackPorts.pick(N);
        int[] rpc = LoopbackPorts.pick(N);
        String[] transports = TestTransports.forBrokers(N);
        HoldingProxy[] proxies = new HoldingProxy[N];
        StellflowServer[] nodes = new StellflowServer[N];
        NetworkClient network = null;
        try {
            StringBuilder voters = new StringBuilder();
            StringBuilder controllers = new StringBuilder();
            for (int i = 0; i < N; i++) {
                proxies[i] = new HoldingProxy(dataPorts[i]);
                voters.append(i == 0 ? "" : ",")
                        .append(i + 1)
                        .append("@127.0.0.1:")
                        .append(raft[i]);
                controllers.append(i == 0 ? "" : ",").append("127.0.0.1:").append(rpc[i]);
            }
            ExecutorService starters = Executors.newFixedThreadPool(N);
            try {
                List<Future<StellflowServer>> starting = new ArrayList<>();
                for (int i = 0; i < N; i++) {
                    Properties p = new Properties();
                    p.setProperty("process.roles", "broker,controller");
                    p.setProperty("node.id", Integer.toString(i + 1));
                    p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + dataPorts[i]);
                    p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxies[i].port());
                    p.setProperty(
                            "log.dirs", dir.resolve("node-" + (i + 1) + "/data").toString());
                    p.setProperty(
                            "metadata.log.dir",
                            dir.resolve("node-" + (i + 1) + "/metadata").toString());
                    p.setProperty("controller.quorum.voters", voters.toString());
                    p.setProperty("controller.listener", "127.0.0.1:" + rpc[i]);
                    p.setProperty("controller.quorum.bootstrap.servers", controllers.toString());
                    p.setProperty("controller.quorum.election.timeout.ms", "300");
                    p.setProperty("broker.session.timeout.ms", "3000");
                    p.setProperty("broker.heartbeat.interval.ms", "300");
                    p.setProperty("min.insync.replicas", "2");
                    p.setProperty("transport", transports[i]);
                    p.setProperty("metrics.exporter", "none");
                    p.setProperty("num.io.threads", "2");
                    p.setProperty("num.network.threads", "1");
                    p.setProperty("transaction.state.log.num.partitions", "1");
                    BrokerConfig config = BrokerConfig.fromProperties(p);
                    starting.add(starters.submit(() -> StellflowServer.start(config)));
                }
                for (int i = 0; i < N; i++) {
                    nodes[i] = starting.get(i).get(60, TimeUnit.SECONDS);
                }
            } finally {
                starters.shutdownNow();
            }
            Properties cp = new Properties();
            cp.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[0]);
            cp.setProperty("request.timeout.ms", "10000");
            network = new NetworkClient(ClientConfig.from(cp, "forward-gate-test"));
            Cluster cluster = new Cluster(nodes, dataPorts, network);

            // The coordinator C of the id (the first Init creates __transaction_state) and a broker F that is not.
            InitProducerIdResponse[] init = new InitProducerIdResponse[1];
            Wait.until(
                    Duration.ofSeconds(60),
                    () -> {
                        TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
                        int node = t == null || t.partition(0).leader() < 1
                                ? 0
                                : t.partition(0).leader() - 1;
                        try {
                            init[0] = cluster.send(
                                    node,
                                    ApiKeys.INIT_PRODUCER_ID,
                                    new InitProducerIdRequest(ID),
                                    InitProducerIdResponse::read);
                        } catch (Exception e) {
                            return false;
                        }
                        return init[0].errorCode() == Errors.NONE;
                    },
                    "the coordinator of " + ID + " answers");
            int c = cluster.image()
                            .topic(TransactionStateTopic.NAME)
                            .partition(0)
                            .leader()
                    - 1;
            int f = (c + 1) % N;
            long pid = init[0].producerId();
            short epoch = init[0].producerEpoch();
            try (ControllerClient controller =
                    ControllerClient.builder(controllers.toString()).build()) {
                assertThat(controller
                                .createTopics(CreateTopicsRequest.newBuilder()
                                        .addTopics(CreatableTopic.newBuilder()
                                                .setName(TOPIC)
                                                .setNumPartitions(1)
                                                .setReplicationFactor(3))
                                        .build())
                                .getTopics(0)
                                .getError())
                        .isEqualTo(ErrorCode.NONE);
            }
            Wait.until(
                    Duration.ofSeconds(30),
                    () -> {
                        TopicImage t = cluster.image().topic(TOPIC);
                        return t != null && t.partition(0).isr().size() == 3;
                    },
                    TOPIC + " is in sync");

            // Transaction N through F, as the Go SDK runs it against its bootstrap broker.
            assertThat(cluster.begin(f, pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(cluster.produce(pid, epoch, 0, "n")).isEqualTo(Errors.NONE);

            // End(commit) N sent to F on the client's own connection; the proxy in front of C holds F's forward.
            proxies[c].holdNext(frame -> frame.apiKey() == ApiKeys.END_TRANSACTION
                    && frame.clientId().startsWith(BrokerRequests.CLIENT_ID_PREFIX + (f + 1)));
            try (RawClient client = new RawClient(dataPorts[f])) {
                client.send(ApiKeys.END_TRANSACTION, 1, new EndTransactionRequest(ID, pid, epoch, true));
                Wait.until(Duration.ofSeconds(15), proxies[c]::holding, "F's forward of the End is held");
            } // the client gives up on it: its connection to F closes

            // Its retry, at C, is answered; N+1 begins there and takes a write.
            TransactionResponse retried = cluster.send(
                    c,
                    ApiKeys.END_TRANSACTION,
                    new EndTransactionRequest(ID, pid, epoch, true),
                    TransactionResponse::read);
            assertThat(retried.errorCode()).isEqualTo(Errors.NONE);
            assertThat(cluster.begin(c, pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(cluster.produce(pid, epoch, 1, "n+1 first")).isEqualTo(Errors.NONE);

            // The delayed End of N reaches C, then a Begin through F on the same broker-to-broker connection.
            proxies[c].release();
            TransactionResponse behind = cluster.begin(f, pid, epoch);
            assertThat(behind.errorCode())
                    .as("N+1 is still open after the delayed End of N")
                    .isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(cluster.state(c)).isEqualTo("Ongoing");
            assertThat(cluster.produce(pid, epoch, 2, "n+1 second"))
                    .as("N+1 still takes writes")
                    .isEqualTo(Errors.NONE);

            // N+1 is ended by its own End only, with both writes.
            TransactionResponse ended = cluster.send(
                    c,
                    ApiKeys.END_TRANSACTION,
                    new EndTransactionRequest(ID, pid, epoch, true),
                    TransactionResponse::read);
            assertThat(ended.errorCode()).isEqualTo(Errors.NONE);
            assertThat(cluster.readCommitted())
                    .as("N's record and N+1's two, all committed")
                    .isEqualTo("lso=hw [1 record(s) of producer " + pid + ", 1 record(s) of producer " + pid
                            + ", 1 record(s) of producer " + pid + "]");
        } finally {
            if (network != null) {
                network.close();
            }
            for (int i = 0; i < N; i++) {
                if (nodes[i] != null) {
                    nodes[i].close();
                }
                if (proxies[i] != null) {
                    proxies[i].close();
                }
            }
        }
    }

    /** Requests to the nodes' real ports (not through the proxies). */
    private record Cluster(StellflowServer[] nodes, int[] dataPorts, NetworkClient network) {
        MetadataImage image() {
            return nodes[0].replicaManager().image();
        }

        <T> T send(int node, short apiKey, ApiMessage body, BodyReader<T> reader) throws Exception {
            return network.send(new HostPort("127.0.0.1", dataPorts[node]), apiKey, body::write, reader)
                    .get(15, TimeUnit.SECONDS);
        }

        TransactionResponse begin(int node, long pid, short epoch) throws Exception {
            return send(
                    node,
                    ApiKeys.BEGIN_TRANSACTION,
                    new BeginTransactionRequest(ID, pid, epoch),
                    TransactionResponse::read);
        }

        short produce(long pid, short epoch, int sequence, String value) throws Exception {
            ProduceRequest produce = new ProduceRequest(
                    ID,
                    (short) -1,
                    10_000,
                    List.of(new ProduceRequest.TopicData(
                            TOPIC,
                            List.of(new ProduceRequest.PartitionData(
                                    0,
                                    Unpooled.wrappedBuffer(
                                            TransactionalProduceTest.batch(pid, epoch, sequence, value)))))));
            int leader = image().topic(TOPIC).partition(0).leader();
            ProduceResponse r = send(leader - 1, ApiKeys.PRODUCE, produce, ProduceResponse::read);
            return r.responses().get(0).partitions().get(0).errorCode();
        }

        String state(int coordinator) throws Exception {
            return send(
                            coordinator,
                            ApiKeys.DESCRIBE_TRANSACTIONS,
                            new DescribeTransactionsRequest(List.of(ID)),
                            DescribeTransactionsResponse::read)
                    .transactions()
                    .get(0)
                    .state();
        }

        String readCommitted() throws Exception {
            int leader = image().topic(TOPIC).partition(0).leader();
            FetchRequest request = new FetchRequest(
                    -1,
                    0,
                    1,
                    1 << 20,
                    FetchRequest.READ_COMMITTED,
                    0,
                    List.of(new FetchRequest.FetchTopic(
                            TOPIC, List.of(new FetchRequest.FetchPartition(0, -1, 0, -1L, 1 << 20)))));
            return send(leader - 1, ApiKeys.FETCH, request, body -> {
                FetchResponse.PartitionData d =
                        FetchResponse.read(body).responses().get(0).partitions().get(0);
                String lso = d.lastStableOffset() == d.highWatermark()
                        ? "lso=hw"
                        : "lso=" + d.lastStableOffset() + " hw=" + d.highWatermark();
                return lso + " " + TransactionalProduceTest.values(d);
            });
        }
    }

    /**
     * A TCP proxy in front of a broker that relays every byte, except that it can hold the next
     * request frame matching a predicate (and pass the frames after it) until {@link #release}.
     */
    private static final class HoldingProxy implements AutoCloseable {
        record Frame(short apiKey, String clientId) {}

        private record Held(byte[] frame, OutputStream upstream) {}

        private final ServerSocket server;
        private final int target;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        private final AtomicReference<Predicate<Frame>> hold = new AtomicReference<>();
        private final AtomicReference<Held> held = new AtomicReference<>();

        HoldingProxy(int target) throws IOException {
            this.target = target;
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(this::accept);
        }

        int port() {
            return server.getLocalPort();
        }

        void holdNext(Predicate<Frame> which) {
            hold.set(which);
        }

        boolean holding() {
            return held.get() != null;
        }

        void release() throws IOException {
            Held h = held.getAndSet(null);
            assertThat(h).as("a held frame").isNotNull();
            synchronized (h.upstream()) {
                h.upstream().write(h.frame());
                h.upstream().flush();
            }
        }

        private void accept() {
            try {
                while (true) {
                    Socket downstream = server.accept();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                    downstream.setTcpNoDelay(true);
                    upstream.setTcpNoDelay(true);
                    sockets.add(downstream);
                    sockets.add(upstream);
                    Thread.ofVirtual().start(() -> copy(upstream, downstream));
                    Thread.ofVirtual().start(() -> requests(downstream, upstream));
                }
            } catch (IOException e) {
                // closed
            }
        }

        private void copy(Socket from, Socket to) {
            try (InputStream in = from.getInputStream()) {
                OutputStream out = to.getOutputStream();
                byte[] buf = new byte[64 * 1024];
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        /** Client to broker, frame by frame (int32 size, then the request header and body). */
        private void requests(Socket from, Socket to) {
            try (DataInputStream in = new DataInputStream(from.getInputStream())) {
                OutputStream out = to.getOutputStream();
                while (true) {
                    int size = in.readInt();
                    byte[] frame = new byte[4 + size];
                    frame[0] = (byte) (size >>> 24);
                    frame[1] = (byte) (size >>> 16);
                    frame[2] = (byte) (size >>> 8);
                    frame[3] = (byte) size;
                    in.readFully(frame, 4, size);
                    Predicate<Frame> which = hold.get();
                    if (which != null && which.test(parse(frame)) && hold.compareAndSet(which, null)) {
                        held.set(new Held(frame, out));
                        continue;
                    }
                    synchronized (out) {
                        out.write(frame);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // either side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        private static Frame parse(byte[] frame) {
            RequestHeader h = RequestHeader.read(Unpooled.wrappedBuffer(frame, 4, frame.length - 4));
            return new Frame(h.apiKey(), h.clientId() == null ? "" : h.clientId());
        }

        private static void closeQuietly(Socket s) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                closeQuietly(s);
            }
        }
    }
}
