package io.stellflow.broker.coordinator;

import static io.stellflow.broker.coordinator.CoordinatorTestCluster.N;
import static io.stellflow.broker.coordinator.CoordinatorTestCluster.OFFSETS_PARTITIONS;
import static io.stellflow.broker.coordinator.CoordinatorTestCluster.TOPIC;
import static io.stellflow.broker.coordinator.CoordinatorTestCluster.TXN_PARTITIONS;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.controller.ControllerClient;
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
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
 * The group coordinator and the coordinator runtime against three combined nodes (broker +
 * controller) in this JVM ({@link CoordinatorTestCluster}): FindCoordinator to any broker creates
 * {@code __consumer_offsets} (compacted, RF 3) and names the leader of the group's partition with
 * its Metadata host and port; bad keys get INVALID_REQUEST in the body; another broker answers the
 * group APIs with NOT_COORDINATOR in the body; TxnOffsetCommit to a group coordinator on another
 * broker than the transaction coordinator commits over the wire. A {@link CoordinatorRuntime} with
 * a {@link CounterShard} on each node, over a test topic of RF 3 and min.insync.replicas 2: a write
 * is acknowledged only once every in-sync replica holds it; then the leader's node stops during a
 * stream of writes, and the new leader's loaded shard holds every acknowledged write; a preferred
 * leader election moves it back. The transaction coordinator's cluster tests are in {@link
 * TransactionCoordinatorClusterTest}. Tests share the cluster and run in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class CoordinatorClusterTest {
    private CoordinatorTestCluster cluster;
    private StellflowServer[] nodes;
    private CoordinatorRuntime<CounterShard>[] runtimes;
    private int[] dataPorts;
    private String bootstrapControllers;
    private NetworkClient network;

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        cluster = CoordinatorTestCluster.start(tmp, "CoordinatorClusterTest");
        nodes = cluster.nodes;
        runtimes = cluster.runtimes;
        dataPorts = cluster.dataPorts;
        bootstrapControllers = cluster.bootstrapControllers;
        network = cluster.network;
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
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
                            last[0] = cluster.findCoordinator(node, group, FindCoordinatorRequest.KEY_TYPE_GROUP);
                        } catch (Exception e) {
                            return false;
                        }
                        return last[0].errorCode() == Errors.NONE;
                    },
                    "node " + (i + 1) + " names the coordinator");
            TopicImage offsets = cluster.image().topic(OffsetsTopic.NAME);
            PartitionImage p = offsets.partition(partition);
            assertThat(last[0].nodeId()).as("asked node " + (i + 1)).isEqualTo(p.leader());
            assertThat(last[0].host()).isEqualTo("127.0.0.1");
            assertThat(last[0].port()).isEqualTo(dataPorts[p.leader() - 1]);
        }
        TopicImage offsets = cluster.image().topic(OffsetsTopic.NAME);
        assertThat(offsets.partitions()).hasSize(OFFSETS_PARTITIONS);
        assertThat(offsets.partitions().get(0).replicas()).hasSize(3);
        assertThat(offsets.config()).containsEntry("cleanup.policy", "compact");
        MetadataRequest req = new MetadataRequest(List.of(OffsetsTopic.NAME), false, false, false);
        MetadataResponse md = network.send(
                        new HostPort("127.0.0.1", dataPorts[0]), ApiKeys.METADATA, req::write, MetadataResponse::read)
                .get(15, TimeUnit.SECONDS);
        assertThat(md.topics().get(0).isInternal()).isTrue();
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
                        TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
                        TopicImage offsets = cluster.image().topic(OffsetsTopic.NAME);
                        if (t == null || t.partition(txnPartition).leader() < 1 || offsets == null) {
                            cluster.initProducerId(0, id); // creates __transaction_state
                            return false;
                        }
                        nodes[0] = t.partition(txnPartition).leader() - 1;
                        for (int i = 0; group[0] == null && i < 100; i++) {
                            int l = offsets.partition(GroupPartitioner.partitionFor("g" + i, OFFSETS_PARTITIONS))
                                    .leader();
                            group[0] = l >= 1 && l - 1 != nodes[0] ? "g" + i : null;
                            nodes[1] = l - 1;
                        }
                        bound[0] = cluster.initProducerId(nodes[0], id);
                        return bound[0].errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "a transaction coordinator and a group coordinator on another broker");
        long pid = bound[0].producerId();
        short epoch = bound[0].producerEpoch();
        BeginTransactionRequest begin = new BeginTransactionRequest(id, pid, epoch);
        assertThat(cluster.send(nodes[0], ApiKeys.BEGIN_TRANSACTION, begin, TransactionResponse::read)
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
                        code[0] = cluster.send(nodes[1], ApiKeys.TXN_OFFSET_COMMIT, commit, OffsetCommitResponse::read)
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
        assertThat(cluster.send(nodes[1], ApiKeys.OFFSET_FETCH, fetch, OffsetFetchResponse::read)
                        .topics()
                        .get(0)
                        .partitions())
                .extracting(OffsetFetchResponse.OffsetFetchPartitionResponse::offset)
                .containsExactly(-1L);
        EndTransactionRequest end = new EndTransactionRequest(id, pid, epoch, true);
        assertThat(cluster.send(nodes[0], ApiKeys.END_TRANSACTION, end, TransactionResponse::read)
                        .errorCode())
                .isEqualTo(Errors.NONE);
        assertThat(cluster.send(nodes[1], ApiKeys.OFFSET_FETCH, fetch, OffsetFetchResponse::read)
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
                cluster.findCoordinator(1, "", FindCoordinatorRequest.KEY_TYPE_GROUP),
                cluster.findCoordinator(1, null, FindCoordinatorRequest.KEY_TYPE_GROUP),
                cluster.findCoordinator(1, "g", (byte) 1))) {
            assertThat(r).isEqualTo(FindCoordinatorResponse.error(Errors.INVALID_REQUEST));
        }
    }

    @Test
    @Order(2)
    void aBrokerThatIsNotTheCoordinatorAnswersNotCoordinatorInTheBody() throws Exception {
        String group = "orders-service";
        int coordinator = cluster.findCoordinator(0, group, FindCoordinatorRequest.KEY_TYPE_GROUP)
                .nodeId();
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
        PartitionImage p = cluster.image().topic(TOPIC).partition(0);
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
                () -> cluster.image().topic(TOPIC) != null
                        && cluster.image().topic(TOPIC).partition(0).isr().size() == 3
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
            List<Integer> isr = cluster.image().topic(TOPIC).partition(0).isr();
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
                    PartitionImage p = cluster.image().topic(TOPIC).partition(0);
                    return p.leader() != PartitionImage.NO_LEADER
                            && p.leader() - 1 != old
                            && runtimes[p.leader() - 1].status(0) == Errors.NONE;
                },
                "a new leader loaded the shard");
        CoordinatorRuntime<CounterShard> now = runtimes[leaderIndex()];
        long loaded = now.read(0, s -> s.get("n")).get(15, TimeUnit.SECONDS);
        assertThat(loaded).as("every acknowledged write survived").isGreaterThanOrEqualTo(maxAcked);
        // The new leader may start with itself alone in the ISR, or shrink it to itself when the
        // follower has not fetched from it within replica.lag.time.max.ms (1 s here, easily missed on
        // a loaded 2-core machine just after the leader change): a write then fails with
        // COORDINATOR_NOT_AVAILABLE (below min.insync.replicas=2) until the follower is back in it.
        // A client retries that code, so this test does too. A write that failed after its append
        // may still commit later, so the total is at least loaded + 1, not exactly.
        Partition newLeaderLog = nodes[leaderIndex()].replicaManager().hostedPartition(TOPIC, 0);
        Wait.until(
                Duration.ofSeconds(30),
                () -> !newLeaderLog.inSyncReplicas().contains(old + 1)
                        && newLeaderLog.inSyncReplicaCount() >= newLeaderLog.minInsyncReplicas(),
                "the new leader's ISR without the stopped node, back at min.insync.replicas");
        assertThat(submitRetryingUnavailable(now, Duration.ofSeconds(30))).isGreaterThan(loaded);
    }

    /**
     * Adds 1 to the counter, retrying a COORDINATOR_NOT_AVAILABLE failure as a client would, until
     * {@code timeout} passes; returns the acknowledged total.
     */
    private static long submitRetryingUnavailable(CoordinatorRuntime<CounterShard> runtime, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                return runtime.submit(0, s -> s.add("n", 1)).get(15, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (CoordinatorException.errorCodeOf(e.getCause()) != Errors.COORDINATOR_NOT_AVAILABLE
                        || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    @Test
    @Order(5)
    void aPreferredLeaderElectionMovesTheCoordinatorWithEveryAcknowledgedWrite() throws Exception {
        // Order 4 stopped the first leader, the partition's preferred replica: bring it back.
        int preferred = cluster.image().topic(TOPIC).partition(0).replicas().get(0) - 1;
        assertThat(nodes[preferred])
                .as("the preferred replica is the node order 4 stopped")
                .isNull();
        nodes[preferred] = cluster.startNode(preferred);
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
                () -> cluster.image().topic(TOPIC).partition(0).isr().contains(preferred + 1),
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
