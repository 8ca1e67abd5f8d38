package io.stellflow.broker.coordinator;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
import io.stellflow.broker.TransactionalProduceTest;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The cluster of the coordinator cluster tests ({@link CoordinatorClusterTest}, {@link
 * TransactionCoordinatorClusterTest}): three combined nodes (broker + controller) in this JVM with
 * {@code min.insync.replicas} 2, {@value #OFFSETS_PARTITIONS} {@code __consumer_offsets} and
 * {@value #TXN_PARTITIONS} {@code __transaction_state} partitions, a {@link CoordinatorRuntime} with
 * a {@link CounterShard} over the test topic {@value #TOPIC} on each node, a {@link NetworkClient}
 * bootstrapped at the first node, and the request helpers the tests share. Tests may stop and
 * restart nodes and runtimes through the arrays; {@link #close} closes whatever is left.
 *
 * <p>Thread-safety: confined to the test class's thread (JUnit's per-class lifecycle).
 */
final class CoordinatorTestCluster implements AutoCloseable {
    static final int N = 3;
    static final int OFFSETS_PARTITIONS = 5;
    static final int TXN_PARTITIONS = 4;
    static final String TOPIC = "coord-test";

    private final Path dir;
    final StellflowServer[] nodes = new StellflowServer[N];

    @SuppressWarnings("unchecked")
    final CoordinatorRuntime<CounterShard>[] runtimes = new CoordinatorRuntime[N];

    int[] dataPorts;
    private String voters;
    String bootstrapControllers;
    private int[] rpcPorts;
    private String[] transports;
    NetworkClient network;

    private CoordinatorTestCluster(Path dir) {
        this.dir = dir;
    }

    /**
     * Starts the three nodes in parallel under {@code dir}, a runtime on each, and the client.
     *
     * @param testName printed with the transports chosen ({@link TestTransports#describe})
     */
    static CoordinatorTestCluster start(Path dir, String testName) throws Exception {
        CoordinatorTestCluster c = new CoordinatorTestCluster(dir);
        try {
            c.startCluster(testName);
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
        return c;
    }

    private void startCluster(String testName) throws Exception {
        dataPorts = LoopbackPorts.pick(N);
        int[] raft = LoopbackPorts.pick(N);
        rpcPorts = LoopbackPorts.pick(N);
        transports = TestTransports.forBrokers(N);
        System.out.println(TestTransports.describe(testName, transports, 1));
        StringBuilder v = new StringBuilder();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < N; i++) {
            v.append(i == 0 ? "" : ",").append(i + 1).append("@127.0.0.1:").append(raft[i]);
            b.append(i == 0 ? "" : ",").append("127.0.0.1:").append(rpcPorts[i]);
        }
        voters = v.toString();
        bootstrapControllers = b.toString();
        ExecutorService starters = Executors.newFixedThreadPool(N);
        try {
            List<Future<StellflowServer>> starting = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                int index = i;
                starting.add(starters.submit(() -> startNode(index)));
            }
            for (int i = 0; i < N; i++) {
                nodes[i] = starting.get(i).get(60, TimeUnit.SECONDS);
                runtimes[i] = new CoordinatorRuntime<>(
                        TOPIC,
                        CounterShard::new,
                        new CoordinatorRuntimeConfig(1, 10_000, 4096),
                        InstantSource.system(),
                        CoordinatorRuntime.LoadListener.NONE);
                runtimes[i].start();
                nodes[i].replicaManager().addReplicaStateListener(runtimes[i]);
            }
        } finally {
            starters.shutdownNow();
        }
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[0]);
        cp.setProperty("request.timeout.ms", "10000");
        network = new NetworkClient(ClientConfig.from(cp, "coordinator-cluster-test"));
    }

    /** Starts node {@code i} (0-based; node id {@code i + 1}) with its dirs under the cluster's dir. */
    StellflowServer startNode(int i) throws Exception {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", Integer.toString(i + 1));
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + dataPorts[i]);
        p.setProperty("log.dirs", dir.resolve("node-" + (i + 1)).resolve("data").toString());
        p.setProperty(
                "metadata.log.dir",
                dir.resolve("node-" + (i + 1)).resolve("metadata").toString());
        p.setProperty("controller.quorum.voters", voters);
        p.setProperty("controller.listener", "127.0.0.1:" + rpcPorts[i]);
        p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
        p.setProperty("controller.quorum.election.timeout.ms", "300");
        p.setProperty("broker.session.timeout.ms", "3000");
        p.setProperty("broker.heartbeat.interval.ms", "300");
        p.setProperty("replica.lag.time.max.ms", "1000");
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("transport", transports[i]);
        p.setProperty("metrics.exporter", "none");
        p.setProperty("num.io.threads", "2");
        p.setProperty("num.network.threads", "1");
        p.setProperty("offsets.topic.num.partitions", Integer.toString(OFFSETS_PARTITIONS));
        p.setProperty("transaction.state.log.num.partitions", Integer.toString(TXN_PARTITIONS));
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    @Override
    public void close() {
        if (network != null) {
            network.close();
        }
        for (int i = 0; i < N; i++) {
            if (nodes[i] != null) {
                nodes[i].close();
            }
            if (runtimes[i] != null) {
                runtimes[i].close();
            }
        }
    }

    /** The metadata image of the first running node. */
    MetadataImage image() {
        for (StellflowServer s : nodes) {
            if (s != null) {
                return s.replicaManager().image();
            }
        }
        throw new IllegalStateException("no node running");
    }

    FindCoordinatorResponse findCoordinator(int node, String key, byte keyType) throws Exception {
        FindCoordinatorRequest req = new FindCoordinatorRequest(key, keyType);
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[node]),
                        ApiKeys.FIND_COORDINATOR,
                        req::write,
                        FindCoordinatorResponse::read)
                .get(15, TimeUnit.SECONDS);
    }

    InitProducerIdResponse initProducerId(int node, String transactionalId) throws Exception {
        InitProducerIdRequest req = new InitProducerIdRequest(transactionalId);
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[node]),
                        ApiKeys.INIT_PRODUCER_ID,
                        req::write,
                        InitProducerIdResponse::read)
                .get(15, TimeUnit.SECONDS);
    }

    <T> T send(
            int node,
            short apiKey,
            io.stellflow.protocol.message.ApiMessage body,
            io.stellflow.client.BodyReader<T> reader)
            throws Exception {
        return network.send(new HostPort("127.0.0.1", dataPorts[node]), apiKey, body::write, reader)
                .get(15, TimeUnit.SECONDS);
    }

    /** A read_committed Fetch of {@code topic}-{@code partition} from its leader: HW, LSO, aborted list, batches. */
    String readCommitted(String topic, int partition) throws Exception {
        int leader = image().topic(topic).partition(partition).leader();
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                1 << 20,
                FetchRequest.READ_COMMITTED,
                0,
                List.of(new FetchRequest.FetchTopic(
                        topic, List.of(new FetchRequest.FetchPartition(partition, -1, 0, -1L, 1 << 20)))));
        return send(leader - 1, ApiKeys.FETCH, request, body -> {
            FetchResponse.PartitionData d =
                    FetchResponse.read(body).responses().get(0).partitions().get(0);
            return "hw=" + d.highWatermark() + " lso=" + d.lastStableOffset() + " aborted=" + d.abortedTransactions()
                    + " " + TransactionalProduceTest.values(d);
        });
    }
}
