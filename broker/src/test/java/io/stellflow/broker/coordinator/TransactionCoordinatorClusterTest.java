package io.stellflow.broker.coordinator;

import static io.stellflow.broker.coordinator.CoordinatorTestCluster.N;
import static io.stellflow.broker.coordinator.CoordinatorTestCluster.TXN_PARTITIONS;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.stellflow.broker.TransactionalProduceTest;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transaction coordinator against three combined nodes (broker + controller) in this JVM
 * ({@link CoordinatorTestCluster}): the first InitProducerId creates {@code __transaction_state}
 * (compacted, RF 3); another broker forwards the transactional APIs of an id whose partition it does
 * not lead to the coordinator (a whole transaction through it commits); only the coordinator lists
 * and describes an id; a transaction whose partitions other brokers lead registers them and gets its
 * markers over the wire. Tests share the cluster and run in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class TransactionCoordinatorClusterTest {
    private CoordinatorTestCluster cluster;
    private int[] dataPorts;
    private String bootstrapControllers;

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        cluster = CoordinatorTestCluster.start(tmp, "TransactionCoordinatorClusterTest");
        dataPorts = cluster.dataPorts;
        bootstrapControllers = cluster.bootstrapControllers;
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
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
                    TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
                    if (t == null || t.partition(partition).leader() < 1) {
                        try {
                            cluster.initProducerId(0, id);
                        } catch (Exception e) {
                            return false;
                        }
                        return false;
                    }
                    try {
                        return cluster.initProducerId(t.partition(partition).leader() - 1, id)
                                        .errorCode()
                                == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " answers");
        TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
        assertThat(t.partitions()).hasSize(TXN_PARTITIONS);
        assertThat(t.partitions().get(0).replicas()).hasSize(3);
        assertThat(t.config()).containsEntry("cleanup.policy", "compact");
        int leader = t.partition(partition).leader();
        InitProducerIdResponse bound = cluster.initProducerId(leader - 1, id);
        assertThat(bound.errorCode()).isEqualTo(Errors.NONE);
        int other = leader % N; // a node index that is not the coordinator's
        // InitProducerId through another broker: the coordinator's answer, the same id, a new epoch.
        InitProducerIdResponse forwarded = cluster.initProducerId(other, id);
        assertThat(forwarded.errorCode()).isEqualTo(Errors.NONE);
        assertThat(forwarded.producerId()).isEqualTo(bound.producerId());
        assertThat(forwarded.producerEpoch()).isEqualTo((short) (bound.producerEpoch() + 1));
        // The old epoch is fenced by the coordinator, also when asked through another broker.
        TransactionResponse fenced = cluster.send(
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
                    TopicImage data = cluster.image().topic(topic);
                    return data != null && data.partition(0).isr().size() == 3;
                },
                topic + " is in sync");
        long pid = forwarded.producerId();
        short epoch = forwarded.producerEpoch();
        TransactionResponse begun = cluster.send(
                other,
                ApiKeys.BEGIN_TRANSACTION,
                new BeginTransactionRequest(id, pid, epoch),
                TransactionResponse::read);
        assertThat(begun).isEqualTo(new TransactionResponse(Errors.NONE, pid, epoch, "ONGOING"));
        int dataLeader = cluster.image().topic(topic).partition(0).leader();
        ProduceRequest produce = new ProduceRequest(
                id,
                (short) -1,
                10_000,
                List.of(new ProduceRequest.TopicData(
                        topic,
                        List.of(new ProduceRequest.PartitionData(
                                0,
                                Unpooled.wrappedBuffer(TransactionalProduceTest.batch(pid, epoch, 0, "forwarded")))))));
        ProduceResponse produced = cluster.send(dataLeader - 1, ApiKeys.PRODUCE, produce, ProduceResponse::read);
        assertThat(produced.responses().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE);
        TransactionResponse ended = cluster.send(
                other,
                ApiKeys.END_TRANSACTION,
                new EndTransactionRequest(id, pid, epoch, true),
                TransactionResponse::read);
        assertThat(ended).isEqualTo(new TransactionResponse(Errors.NONE, pid, epoch, "COMMITTED"));
        // BEGIN 0, the batch 1, COMMIT 2: committed and readable at read_committed.
        assertThat(cluster.readCommitted(topic, 0))
                .isEqualTo("hw=3 lso=3 aborted=[] [1 record(s) of producer " + pid + "]");
    }

    @Test
    @Order(2)
    void onlyTheCoordinatorListsAndDescribesATransactionalIdAndTheAdminFindsIt() throws Exception {
        String id = "admin-tx";
        int partition = GroupPartitioner.partitionFor(id, TXN_PARTITIONS);
        Wait.until(
                Duration.ofSeconds(30),
                () -> {
                    TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
                    try {
                        int node = t == null || t.partition(partition).leader() < 1
                                ? 0
                                : t.partition(partition).leader() - 1;
                        return cluster.initProducerId(node, id).errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " answers");
        int coordinator = cluster.image()
                        .topic(TransactionStateTopic.NAME)
                        .partition(partition)
                        .leader()
                - 1;
        for (int i = 0; i < N; i++) {
            DescribeTransactionsResponse.DescribedTransaction d = cluster.send(
                            i,
                            ApiKeys.DESCRIBE_TRANSACTIONS,
                            new DescribeTransactionsRequest(List.of(id)),
                            DescribeTransactionsResponse::read)
                    .transactions()
                    .get(0);
            List<String> listed = cluster
                    .send(
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
                    TopicImage data = cluster.image().topic(topic);
                    TopicImage t = cluster.image().topic(TransactionStateTopic.NAME);
                    if (t == null || t.partition(txnPartition).leader() < 1) {
                        try {
                            cluster.initProducerId(0, id); // creates __transaction_state
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
                        bound[0] =
                                cluster.initProducerId(t.partition(txnPartition).leader() - 1, id);
                        return bound[0].errorCode() == Errors.NONE;
                    } catch (Exception e) {
                        return false;
                    }
                },
                "the coordinator of " + id + " and the data partitions are ready");
        int coordinator = cluster.image()
                .topic(TransactionStateTopic.NAME)
                .partition(txnPartition)
                .leader();
        List<Integer> elsewhere = new ArrayList<>();
        for (PartitionImage p : cluster.image().topic(topic).partitions()) {
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
            TransactionResponse begun = cluster.send(
                    coordinator - 1,
                    ApiKeys.BEGIN_TRANSACTION,
                    new BeginTransactionRequest(id, pid, epoch),
                    TransactionResponse::read);
            assertThat(begun.errorCode()).isEqualTo(Errors.NONE);
            for (int partition : elsewhere) {
                int leader = cluster.image().topic(topic).partition(partition).leader();
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
                ProduceResponse answer = cluster.send(leader - 1, ApiKeys.PRODUCE, produce, ProduceResponse::read);
                assertThat(answer.responses().get(0).partitions().get(0).errorCode())
                        .as("transactional produce to %s-%d on broker %d", topic, partition, leader)
                        .isEqualTo(Errors.NONE);
            }
            TransactionResponse ended = cluster.send(
                    coordinator - 1,
                    ApiKeys.END_TRANSACTION,
                    new EndTransactionRequest(id, pid, epoch, commit),
                    TransactionResponse::read);
            assertThat(ended.errorCode()).isEqualTo(Errors.NONE);
        }
        String oneBatch = "1 record(s) of producer " + pid;
        for (int partition : elsewhere) {
            // BEGIN 0, kept 1, COMMIT 2, BEGIN 3, dropped 4, ABORT 5: the markers reached the leader.
            assertThat(cluster.readCommitted(topic, partition))
                    .isEqualTo("hw=6 lso=6 aborted=[AbortedTransaction[producerId=" + pid + ", firstOffset=3]] ["
                            + oneBatch + ", " + oneBatch + "]");
        }
    }
}
