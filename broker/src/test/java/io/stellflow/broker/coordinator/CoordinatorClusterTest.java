package io.stellflow.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
import io.stellflow.broker.TransactionalProduceTest;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinator against three combined nodes (broker + controller) in this JVM: FindCoordinator
 * to any broker creates {@code __consumer_offsets} (compacted, RF 3) and names the leader of the
 * group's partition with its Metadata host and port; bad keys get INVALID_REQUEST in the body;
 * another broker answers the group APIs with NOT_COORDINATOR in the body, but forwards the
 * transactional APIs of an id whose {@code __transaction_state} partition it does not lead to the
 * coordinator (a whole transaction through it commits). A
 * {@link CoordinatorRuntime} with a {@link CounterShard} on each node, over a test topic of RF 3 and
 * min.insync.replicas 2: a write is acknowledged only once every in-sync replica holds it; then the
 * leader's node stops during a stream of writes, and the new leader's loaded shard holds every
 * acknowledged write. Tests share the cluster and run in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class CoordinatorClusterTest {
    private static final int N = 3;
    private static final int OFFSETS_PARTITIONS = 5;
    private static final int TXN_PARTITIONS = 4;
    private static final String TOPIC = "coord-test";

    private Path dir;
    private final StellflowServer[] nodes = new StellflowServer[N];

    @SuppressWarnings("unchecked")
    private final CoordinatorRuntime<CounterShard>[] runtimes = new CoordinatorRuntime[N];

    private int[] dataPorts;
    private String voters;
    private String bootstrapControllers;
    private int[] rpcPorts;
    private String[] transports;
    private NetworkClient network;

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        dir = tmp;
        dataPorts = LoopbackPorts.pick(N);
        int[] raft = LoopbackPorts.pick(N);
        rpcPorts = LoopbackPorts.pick(N);
        transports = TestTransports.forBrokers(N);
        System.out.println(TestTransports.describe("CoordinatorClusterTest", transports, 1));
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
                starting.add(starters.submit(() -> start(index)));
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

    private StellflowServer start(int i) throws Exception {
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

    @AfterAll
    void stopCluster() {
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

    private MetadataImage image() {
        for (StellflowServer s : nodes) {
            if (s != null) {
                return s.replicaManager().image();
            }
        }
        throw new IllegalStateException("no node running");
    }

    private FindCoordinatorResponse findCoordinator(int node, String key, byte keyType) throws Exception {
        FindCoordinatorRequest req = new FindCoordinatorRequest(key, keyType);
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[node]),
                        ApiKeys.FIND_COORDINATOR,
                        req::write,
                        FindCoordinatorResponse::read)
                .get(15, TimeUnit.SECONDS);
    }

    @Test
    @Order(1)
    void findCoordinatorCreatesTheOffsetsTopicAndEveryBrokerNamesTheLeader() throws Exception {
        String group = "orders-service";
        int partition = GroupPartitioner.partitionFor(group, OFFSETS_PARTITIONS);
        for (int i = 0; i < N; i++) {
            int node = i;
            FindCoordinatorResponse[] last = new FindCoordinatorResponse[1];
            Wait.until(
                    Duration.ofSeconds(30),
                    () -> {
                        try {
                            last[0] = findCoordinator(node, group, FindCoordinatorRequest.KEY_TYPE_GROUP);
                        } catch (Exception e) {
                            return false;
                        }
                        return last[0].errorCode() == Errors.NONE;
                    },
                    "node " + (i + 1) + " names the coordinator");
            TopicImage offsets = image().topic(OffsetsTopic.NAME);
            PartitionImage p = offsets.partition(partition);
            assertThat(last[0].nodeId()).as("asked node " + (i + 1)).isEqualTo(p.leader());
            assertThat(last[0].host()).isEqualTo("127.0.0.1");
            assertThat(last[0].port()).isEqualTo(dataPorts[p.leader() - 1]);
        }
        TopicImage offsets = image().topic(OffsetsTopic.NAME);
        assertThat(offsets.partitions()).hasSize(OFFSETS_PARTITIONS);
        assertThat(offsets.partitions().get(0).replicas()).hasSize(3);
        assertThat(offsets.config()).containsEntry("cleanup.policy", "compact");
        MetadataRequest req = new MetadataRequest(List.of(OffsetsTopic.NAME), false, false, false);
        MetadataResponse md = network.send(
                        new HostPort("127.0.0.1", dataPorts[0]), ApiKeys.METADATA, req::write, MetadataResponse::read)
                .get(15, TimeUnit.SECONDS);
        assertThat(md.topics().get(0).isInternal()).isTrue();
    }

    private InitProducerIdResponse initProducerId(int node, String transactionalId) throws Exception {
        InitProducerIdRequest req = new InitProducerIdRequest(transactionalId);
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[node]),
                        ApiKeys.INIT_PRODUCER_ID,
                        req::write,
                        InitProducerIdResponse::read)
                .get(15, TimeUnit.SECONDS);
    }

    @Test
    @Order(2)
    void aBrokerThatIsNotTheCoordinatorForwardsTheTransactionalRequestsToIt() throws Exception {
        String id = "orders-tx";
        int partition = GroupPartitioner.partitionFor(id, TXN_PARTITIONS);
        // The first request creates __transaction_state; then every broker serves the id.
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    TopicImage t = image().topic(TransactionStateTopic.NAME);
                    if (t == null || t.partition(partition).leader() < 1) {
                        try {
                            initProducerId(0, id);
                        } catch (Exception e) {
                            return false;
                        }
                        return false;
                    }
                    try {
                        return initProducerId(t.partition(partition).leader() - 1, id)
                                        .errorCode()
                                == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " answers");
        TopicImage t = image().topic(TransactionStateTopic.NAME);
        assertThat(t.partitions()).hasSize(TXN_PARTITIONS);
        assertThat(t.partitions().get(0).replicas()).hasSize(3);
        assertThat(t.config()).containsEntry("cleanup.policy", "compact");
        int leader = t.partition(partition).leader();
        InitProducerIdResponse bound = initProducerId(leader - 1, id);
        assertThat(bound.errorCode()).isEqualTo(Errors.NONE);
        int other = leader % N; // a node index that is not the coordinator's
        // InitProducerId through another broker: the coordinator's answer, the same id, a new epoch.
        InitProducerIdResponse forwarded = initProducerId(other, id);
        assertThat(forwarded.errorCode()).isEqualTo(Errors.NONE);
        assertThat(forwarded.producerId()).isEqualTo(bound.producerId());
        assertThat(forwarded.producerEpoch()).isEqualTo((short) (bound.producerEpoch() + 1));
        // The old epoch is fenced by the coordinator, also when asked through another broker.
        TransactionResponse fenced = send(
                other,
                ApiKeys.BEGIN_TRANSACTION,
                new BeginTransactionRequest(id, bound.producerId(), bound.producerEpoch()),
                TransactionResponse::read);
        assertThat(fenced.errorCode()).isEqualTo(Errors.PRODUCER_FENCED);

        // A whole transaction through the non-coordinator, as the Go SDK runs it against its bootstrap broker.
        String topic = "txn-forwarded";
        try (ControllerClient controller =
                ControllerClient.builder(bootstrapControllers).build()) {
            CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(topic)
                            .setNumPartitions(1)
                            .setReplicationFactor(3))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        }
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    TopicImage data = image().topic(topic);
                    return data != null && data.partition(0).isr().size() == 3;
                },
                topic + " is in sync");
        long pid = forwarded.producerId();
        short epoch = forwarded.producerEpoch();
        TransactionResponse begun = send(
                other,
                ApiKeys.BEGIN_TRANSACTION,
                new BeginTransactionRequest(id, pid, epoch),
                TransactionResponse::read);
        assertThat(begun).isEqualTo(new TransactionResponse(Errors.NONE, pid, epoch, "ONGOING"));
        int dataLeader = image().topic(topic).partition(0).leader();
        ProduceRequest produce = new ProduceRequest(
                id,
                (short) -1,
                10_000,
                List.of(new ProduceRequest.TopicData(
                        topic,
                        List.of(new ProduceRequest.PartitionData(
                                0,
                                Unpooled.wrappedBuffer(TransactionalProduceTest.batch(pid, epoch, 0, "forwarded")))))));
        ProduceResponse produced = send(dataLeader - 1, ApiKeys.PRODUCE, produce, ProduceResponse::read);
        assertThat(produced.responses().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE);
        TransactionResponse ended = send(
                other,
                ApiKeys.END_TRANSACTION,
                new EndTransactionRequest(id, pid, epoch, true),
                TransactionResponse::read);
        assertThat(ended).isEqualTo(new TransactionResponse(Errors.NONE, pid, epoch, "COMMITTED"));
        // BEGIN 0, the batch 1, COMMIT 2: committed and readable at read_committed.
        assertThat(readCommitted(topic, 0)).isEqualTo("hw=3 lso=3 aborted=[] [1 record(s) of producer " + pid + "]");
    }

    @Test
    @Order(2)
    void onlyTheCoordinatorListsAndDescribesATransactionalIdAndTheAdminFindsIt() throws Exception {
        String id = "admin-tx";
        int partition = GroupPartitioner.partitionFor(id, TXN_PARTITIONS);
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    TopicImage t = image().topic(TransactionStateTopic.NAME);
                    try {
                        int node = t == null || t.partition(partition).leader() < 1
                                ? 0
                                : t.partition(partition).leader() - 1;
                        return initProducerId(node, id).errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " answers");
        int coordinator =
                image().topic(TransactionStateTopic.NAME).partition(partition).leader() - 1;
        for (int i = 0; i < N; i++) {
            DescribeTransactionsResponse.DescribedTransaction d = send(
                            i,
                            ApiKeys.DESCRIBE_TRANSACTIONS,
                            new DescribeTransactionsRequest(List.of(id)),
                            DescribeTransactionsResponse::read)
                    .transactions()
                    .get(0);
            List<String> listed = send(
                            i,
                            ApiKeys.LIST_TRANSACTIONS,
                            new ListTransactionsRequest(List.of(), List.of()),
                            ListTransactionsResponse::read)
                    .transactions()
                    .stream()
                    .map(ListTransactionsResponse.ListedTransaction::transactionalId)
                    .toList();
            if (i == coordinator) {
                assertThat(d.errorCode()).isEqualTo(Errors.NONE);
                assertThat(d.state()).isEqualTo("Empty");
                assertThat(listed).contains(id);
            } else {
                assertThat(d)
                        .isEqualTo(
                                DescribeTransactionsResponse.DescribedTransaction.of(Errors.NOT_COORDINATOR, id, ""));
                assertThat(listed).doesNotContain(id);
            }
        }
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[(coordinator + 1) % N]);
        try (StellflowAdmin admin = new StellflowAdmin(p)) {
            assertThat(admin.transactions().describeTransactions(List.of(id)))
                    .extracting(DescribeTransactionsResponse.DescribedTransaction::state)
                    .containsExactly("Empty");
            assertThat(admin.transactions().listTransactions(List.of("Empty"), List.of()))
                    .extracting(ListTransactionsResponse.ListedTransaction::transactionalId)
                    .contains(id);
        }
    }

    private <T> T send(
            int node,
            short apiKey,
            io.stellflow.protocol.message.ApiMessage body,
            io.stellflow.client.BodyReader<T> reader)
            throws Exception {
        return network.send(new HostPort("127.0.0.1", dataPorts[node]), apiKey, body::write, reader)
                .get(15, TimeUnit.SECONDS);
    }

    /** A read_committed Fetch of {@code topic}-{@code partition} from its leader: HW, LSO, aborted list, batches. */
    private String readCommitted(String topic, int partition) throws Exception {
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

    @Test
    @Order(2)
    void aTransactionWhosePartitionsAreLedElsewhereRegistersAndGetsItsMarkersOverTheWire() throws Exception {
        String topic = "txn-wire";
        try (ControllerClient controller =
                ControllerClient.builder(bootstrapControllers).build()) {
            CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(topic)
                            .setNumPartitions(6)
                            .setReplicationFactor(3))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        }
        String id = "wire-tx";
        int txnPartition = GroupPartitioner.partitionFor(id, TXN_PARTITIONS);
        InitProducerIdResponse[] bound = new InitProducerIdResponse[1];
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    TopicImage data = image().topic(topic);
                    TopicImage t = image().topic(TransactionStateTopic.NAME);
                    if (t == null || t.partition(txnPartition).leader() < 1) {
                        try {
                            initProducerId(0, id); // creates __transaction_state
                        } catch (Exception e) {
                            return false;
                        }
                        return false;
                    }
                    if (data == null
                            || data.partitions().stream().anyMatch(p -> p.isr().size() < 3)) {
                        return false;
                    }
                    try {
                        bound[0] = initProducerId(t.partition(txnPartition).leader() - 1, id);
                        return bound[0].errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " and the data partitions are ready");
        int coordinator = image().topic(TransactionStateTopic.NAME)
                .partition(txnPartition)
                .leader();
        List<Integer> elsewhere = new ArrayList<>();
        for (PartitionImage p : image().topic(topic).partitions()) {
            if (p.leader() != coordinator && elsewhere.size() < 2) {
                elsewhere.add(p.partition());
            }
        }
        assertThat(elsewhere)
                .as("partitions led by other brokers than the coordinator")
                .hasSize(2);
        long pid = bound[0].producerId();
        short epoch = bound[0].producerEpoch();
        int[] sequences = new int[6];
        for (boolean commit : new boolean[] {true, false}) {
            TransactionResponse begun = send(
                    coordinator - 1,
                    ApiKeys.BEGIN_TRANSACTION,
                    new BeginTransactionRequest(id, pid, epoch),
                    TransactionResponse::read);
            assertThat(begun.errorCode()).isEqualTo(Errors.NONE);
            for (int partition : elsewhere) {
                int leader = image().topic(topic).partition(partition).leader();
                ProduceRequest produce = new ProduceRequest(
                        id,
                        (short) -1,
                        10_000,
                        List.of(new ProduceRequest.TopicData(
                                topic,
                                List.of(new ProduceRequest.PartitionData(
                                        partition,
                                        Unpooled.wrappedBuffer(TransactionalProduceTest.batch(
                                                pid, epoch, sequences[partition]++, commit ? "kept" : "dropped")))))));
                ProduceResponse answer = send(leader - 1, ApiKeys.PRODUCE, produce, ProduceResponse::read);
                assertThat(answer.responses().get(0).partitions().get(0).errorCode())
                        .as("transactional produce to %s-%d on broker %d", topic, partition, leader)
                        .isEqualTo(Errors.NONE);
            }
            TransactionResponse ended = send(
                    coordinator - 1,
                    ApiKeys.END_TRANSACTION,
                    new EndTransactionRequest(id, pid, epoch, commit),
                    TransactionResponse::read);
            assertThat(ended.errorCode()).isEqualTo(Errors.NONE);
        }
        String oneBatch = "1 record(s) of producer " + pid;
        for (int partition : elsewhere) {
            // BEGIN 0, kept 1, COMMIT 2, BEGIN 3, dropped 4, ABORT 5: the markers reached the leader.
            assertThat(readCommitted(topic, partition))
                    .isEqualTo("hw=6 lso=6 aborted=[AbortedTransaction[producerId=" + pid + ", firstOffset=3]] ["
                            + oneBatch + ", " + oneBatch + "]");
        }
    }

    /**
     * TxnOffsetCommit to a group coordinator on another broker than the transaction coordinator: it
     * registers its __consumer_offsets partition over RegisterTxnPartition and gets the COMMIT marker
     * over WriteTxnMarkers, which applies the pending offsets there.
     */
    @Test
    @Order(2)
    void transactionalOffsetsOnAnotherBrokerRegisterAndCommitOverTheWire() throws Exception {
        String id = "offsets-tx";
        int txnPartition = GroupPartitioner.partitionFor(id, TXN_PARTITIONS);
        try (ControllerClient c = ControllerClient.builder(bootstrapControllers).build()) {
            c.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName("txn-in")
                            .setNumPartitions(1)
                            .setReplicationFactor(1))
                    .build());
        }
        int[] nodes = new int[2]; // the transaction coordinator, the group coordinator
        String[] group = new String[1];
        InitProducerIdResponse[] bound = new InitProducerIdResponse[1];
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    try {
                        TopicImage t = image().topic(TransactionStateTopic.NAME);
                        TopicImage offsets = image().topic(OffsetsTopic.NAME);
                        if (t == null || t.partition(txnPartition).leader() < 1 || offsets == null) {
                            initProducerId(0, id); // creates __transaction_state
                            return false;
                        }
                        nodes[0] = t.partition(txnPartition).leader() - 1;
                        for (int i = 0; group[0] == null && i < 100; i++) {
                            int l = offsets.partition(GroupPartitioner.partitionFor("g" + i, OFFSETS_PARTITIONS))
                                    .leader();
                            group[0] = l >= 1 && l - 1 != nodes[0] ? "g" + i : null;
                            nodes[1] = l - 1;
                        }
                        bound[0] = initProducerId(nodes[0], id);
                        return bound[0].errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "a transaction coordinator and a group coordinator on another broker");
        long pid = bound[0].producerId();
        short epoch = bound[0].producerEpoch();
        BeginTransactionRequest begin = new BeginTransactionRequest(id, pid, epoch);
        assertThat(send(nodes[0], ApiKeys.BEGIN_TRANSACTION, begin, TransactionResponse::read)
                        .errorCode())
                .isEqualTo(Errors.NONE);
        TxnOffsetCommitRequest commit = new TxnOffsetCommitRequest(
                id,
                group[0],
                pid,
                epoch,
                -1,
                null,
                -1,
                List.of(new OffsetCommitTopic("txn-in", List.of(new OffsetCommitPartition(0, 42, "")))));
        OffsetFetchRequest fetch = new OffsetFetchRequest(
                group[0], List.of(new OffsetFetchRequest.OffsetFetchTopic("txn-in", List.of(0))));
        short[] code = new short[1];
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    try {
                        code[0] = send(nodes[1], ApiKeys.TXN_OFFSET_COMMIT, commit, OffsetCommitResponse::read)
                                .topics()
                                .get(0)
                                .partitions()
                                .get(0)
                                .errorCode();
                    } catch (Exception e) {
                        return false;
                    }
                    return code[0] != Errors.COORDINATOR_NOT_AVAILABLE; // loading
                },
                "TxnOffsetCommit at broker " + (nodes[1] + 1));
        assertThat(code[0]).isEqualTo(Errors.NONE);
        assertThat(send(nodes[1], ApiKeys.OFFSET_FETCH, fetch, OffsetFetchResponse::read)
                        .topics()
                        .get(0)
                        .partitions())
                .extracting(OffsetFetchResponse.OffsetFetchPartitionResponse::offset)
                .containsExactly(-1L);
        EndTransactionRequest end = new EndTransactionRequest(id, pid, epoch, true);
        assertThat(send(nodes[0], ApiKeys.END_TRANSACTION, end, TransactionResponse::read)
                        .errorCode())
                .isEqualTo(Errors.NONE);
        assertThat(send(nodes[1], ApiKeys.OFFSET_FETCH, fetch, OffsetFetchResponse::read)
                        .topics()
                        .get(0)
                        .partitions())
                .extracting(OffsetFetchResponse.OffsetFetchPartitionResponse::offset)
                .containsExactly(42L);
    }

    @Test
    @Order(2)
    void badKeysAreInvalidRequestInTheBody() throws Exception {
        for (FindCoordinatorResponse r : List.of(
                findCoordinator(1, "", FindCoordinatorRequest.KEY_TYPE_GROUP),
                findCoordinator(1, null, FindCoordinatorRequest.KEY_TYPE_GROUP),
                findCoordinator(1, "g", (byte) 1))) {
            assertThat(r).isEqualTo(FindCoordinatorResponse.error(Errors.INVALID_REQUEST));
        }
    }

    @Test
    @Order(2)
    void aBrokerThatIsNotTheCoordinatorAnswersNotCoordinatorInTheBody() throws Exception {
        String group = "orders-service";
        int coordinator =
                findCoordinator(0, group, FindCoordinatorRequest.KEY_TYPE_GROUP).nodeId();
        int other = coordinator % N; // the index of another broker (ids are 1..N)
        HostPort at = new HostPort("127.0.0.1", dataPorts[other]);

        OffsetCommitRequest commit = new OffsetCommitRequest(
                group,
                null,
                OffsetCommitRequest.NO_MEMBER_EPOCH,
                List.of(new OffsetCommitTopic(
                        "t", List.of(new OffsetCommitPartition(0, 5, ""), new OffsetCommitPartition(1, 5, "")))));
        OffsetCommitResponse committed = network.send(
                        at, ApiKeys.OFFSET_COMMIT, commit::write, OffsetCommitResponse::read)
                .get(15, TimeUnit.SECONDS);
        assertThat(committed.topics().get(0).partitions())
                .extracting(OffsetCommitResponse.OffsetCommitPartitionResponse::errorCode)
                .containsExactly(Errors.NOT_COORDINATOR, Errors.NOT_COORDINATOR);

        JoinGroupResponse join = network.send(
                        at, ApiKeys.JOIN_GROUP, new JoinGroupRequest(group, "", 10_000)::write, JoinGroupResponse::read)
                .get(15, TimeUnit.SECONDS);
        assertThat(join).isEqualTo(JoinGroupResponse.error(Errors.NOT_COORDINATOR));

        OffsetFetchRequest fetch = new OffsetFetchRequest(group, null); // v1: every partition
        OffsetFetchResponse fetched = network.sendVersioned(
                        at,
                        ApiKeys.OFFSET_FETCH,
                        OffsetFetchRequest.VERSION_WITH_ALL_TOPICS,
                        v -> out -> fetch.write(out, (short) v),
                        v -> b -> OffsetFetchResponse.read(b, (short) v))
                .get(15, TimeUnit.SECONDS);
        assertThat(fetched.errorCode()).as("v1's group-level code").isEqualTo(Errors.NOT_COORDINATOR);

        JoinGroupResponse atCoordinator = network.send(
                        new HostPort("127.0.0.1", dataPorts[coordinator - 1]),
                        ApiKeys.JOIN_GROUP,
                        new JoinGroupRequest(group, "", 10_000)::write,
                        JoinGroupResponse::read)
                .get(15, TimeUnit.SECONDS);
        assertThat(atCoordinator.errorCode()).isEqualTo(Errors.NONE);
        assertThat(atCoordinator.leaderId()).isEqualTo(atCoordinator.memberId());
    }

    private int leaderIndex() {
        PartitionImage p = image().topic(TOPIC).partition(0);
        return p.leader() - 1;
    }

    @Test
    @Order(3)
    void aWriteIsAcknowledgedOnlyOnceEveryInSyncReplicaHoldsIt() throws Exception {
        try (ControllerClient controller =
                ControllerClient.builder(bootstrapControllers).build()) {
            CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(TOPIC)
                            .setNumPartitions(1)
                            .setReplicationFactor(3))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        }
        Wait.until(
                Duration.ofSeconds(30),
                () -> image().topic(TOPIC) != null
                        && image().topic(TOPIC).partition(0).isr().size() == 3
                        && runtimes[leaderIndex()].status(0) == Errors.NONE,
                "the test topic's leader loaded its shard");
        int leader = leaderIndex();
        for (int i = 0; i < N; i++) {
            if (i != leader) {
                assertThat(runtimes[i].status(0))
                        .as("node " + (i + 1) + " follows")
                        .isEqualTo(Errors.NOT_COORDINATOR);
            }
        }
        for (int k = 1; k <= 20; k++) {
            long total = runtimes[leader].submit(0, s -> s.add("n", 1)).get(15, TimeUnit.SECONDS);
            assertThat(total).isEqualTo(k);
            List<Integer> isr = image().topic(TOPIC).partition(0).isr();
            for (int id : isr) {
                Partition replica = nodes[id - 1].replicaManager().hostedPartition(TOPIC, 0);
                assertThat(replica.logEndOffset())
                        .as("write %d acknowledged: in-sync replica %d holds it", k, id)
                        .isGreaterThanOrEqualTo(k);
            }
            assertThat(isr).as("min.insync.replicas=2").hasSizeGreaterThanOrEqualTo(2);
        }
    }

    @Test
    @Order(4)
    void theNewLeaderAfterTheLeaderStopsHoldsEveryAcknowledgedWrite() throws Exception {
        int old = leaderIndex();
        CoordinatorRuntime<CounterShard> oldRuntime = runtimes[old];
        List<CompletableFuture<Long>> writes = new ArrayList<>();
        Thread stopper = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            nodes[old].close();
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < deadline && stopper.isAlive()) {
            CompletableFuture<Long> w = oldRuntime.submit(0, s -> s.add("n", 1));
            writes.add(w);
            try {
                w.get(15, TimeUnit.SECONDS); // one at a time: each acknowledged total is one batch
            } catch (Exception e) {
                Thread.sleep(1); // failed, not acknowledged (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE)
            }
        }
        stopper.join(60_000);
        nodes[old] = null;
        oldRuntime.close();
        runtimes[old] = null;
        long maxAcked = 0;
        int failed = 0;
        for (CompletableFuture<Long> w : writes) {
            if (w.isCompletedExceptionally()) {
                failed++;
                assertThat(CoordinatorException.errorCodeOf(
                                w.handle((x, e) -> e).join()))
                        .isIn(Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE);
            } else {
                maxAcked = Math.max(maxAcked, w.join());
            }
        }
        System.out.println("writes=" + writes.size() + " failed=" + failed + " maxAcked=" + maxAcked);
        assertThat(maxAcked).as("writes were acknowledged before the stop").isGreaterThan(20);

        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    PartitionImage p = image().topic(TOPIC).partition(0);
                    return p.leader() != PartitionImage.NO_LEADER
                            && p.leader() - 1 != old
                            && runtimes[p.leader() - 1].status(0) == Errors.NONE;
                },
                "a new leader loaded the shard");
        CoordinatorRuntime<CounterShard> now = runtimes[leaderIndex()];
        long loaded = now.read(0, s -> s.get("n")).get(15, TimeUnit.SECONDS);
        assertThat(loaded).as("every acknowledged write survived").isGreaterThanOrEqualTo(maxAcked);
        // The new leader may start with itself alone in the ISR: a write then fails with
        // COORDINATOR_NOT_AVAILABLE (below min.insync.replicas=2) until the follower is back in it.
        Partition newLeaderLog = nodes[leaderIndex()].replicaManager().hostedPartition(TOPIC, 0);
        Wait.until(
                Duration.ofSeconds(30),
                () -> newLeaderLog.inSyncReplicaCount() >= newLeaderLog.minInsyncReplicas(),
                "the new leader's ISR back at min.insync.replicas");
        assertThat(now.submit(0, s -> s.add("n", 1)).get(15, TimeUnit.SECONDS)).isEqualTo(loaded + 1);
    }

    @Test
    @Order(5)
    void aPreferredLeaderElectionMovesTheCoordinatorWithEveryAcknowledgedWrite() throws Exception {
        // Order 4 stopped the first leader, the partition's preferred replica: bring it back.
        int preferred = image().topic(TOPIC).partition(0).replicas().get(0) - 1;
        assertThat(nodes[preferred])
                .as("the preferred replica is the node order 4 stopped")
                .isNull();
        nodes[preferred] = start(preferred);
        runtimes[preferred] = new CoordinatorRuntime<>(
                TOPIC,
                CounterShard::new,
                new CoordinatorRuntimeConfig(1, 10_000, 4096),
                InstantSource.system(),
                CoordinatorRuntime.LoadListener.NONE);
        runtimes[preferred].start();
        nodes[preferred].replicaManager().addReplicaStateListener(runtimes[preferred]);
        Wait.until(
                Duration.ofSeconds(60),
                () -> image().topic(TOPIC).partition(0).isr().contains(preferred + 1),
                "the preferred replica is back in sync");
        int before = leaderIndex();
        assertThat(before).isNotEqualTo(preferred);
        long total = runtimes[before].submit(0, s -> s.add("n", 1)).get(15, TimeUnit.SECONDS);

        try (ControllerClient controller =
                ControllerClient.builder(bootstrapControllers).build()) {
            ElectLeadersResponse r = controller.electLeaders(ElectLeadersRequest.newBuilder()
                    .setElectionType(ElectionType.PREFERRED)
                    .addTopics(
                            ElectionTopicPartitions.newBuilder().setTopic(TOPIC).addPartitions(0))
                    .build());
            assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        }
        Wait.until(
                Duration.ofSeconds(30),
                () -> leaderIndex() == preferred && runtimes[preferred].status(0) == Errors.NONE,
                "the preferred replica leads and loaded the shard");
        Wait.until(
                Duration.ofSeconds(30),
                () -> runtimes[before].status(0) == Errors.NOT_COORDINATOR,
                "the former leader dropped the shard");
        CoordinatorRuntime<CounterShard> now = runtimes[preferred];
        assertThat(now.read(0, s -> s.get("n")).get(15, TimeUnit.SECONDS))
                .as("every acknowledged write moved with the coordinator")
                .isGreaterThanOrEqualTo(total);
        assertThat(now.submit(0, s -> s.add("n", 1)).get(15, TimeUnit.SECONDS)).isGreaterThan(total);
    }
}
