package io.stellflow.broker;

import static io.stellflow.broker.TransactionalProduceTest.batch;
import static io.stellflow.broker.TransactionalProduceTest.begin;
import static io.stellflow.broker.TransactionalProduceTest.end;
import static io.stellflow.broker.TransactionalProduceTest.init;
import static io.stellflow.broker.TransactionalProduceTest.produce;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeProducersRequest;
import io.stellflow.protocol.message.DescribeProducersResponse;
import io.stellflow.protocol.message.DescribeTransactionsRequest;
import io.stellflow.protocol.message.DescribeTransactionsResponse;
import io.stellflow.protocol.message.DescribeTransactionsResponse.DescribedTransaction;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ListTransactionsRequest;
import io.stellflow.protocol.message.ListTransactionsResponse;
import io.stellflow.protocol.message.ListTransactionsResponse.ListedTransaction;
import io.stellflow.protocol.message.TopicPartitions;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ListTransactions (32), DescribeTransactions (33) and DescribeProducers (34) on one real broker over
 * its socket, with a transaction opened as the Go SDK opens it (Init, Begin, Produce to two
 * partitions): the filters, Kafka's state names, an unknown and an empty id, unknown partitions, the
 * producer state before and after the COMMIT; then the same through {@code StellflowAdmin.transactions()}.
 */
@IntegrationTest
class TransactionAdminApisTest {
    private static final String TOPIC = "txn-admin";

    @TempDir
    Path dir;

    @Test
    void listsDescribesAndShowsProducerStateOfAnOpenThenCommittedTransaction() throws Exception {
        Properties props = TestBroker.props(dir, "nio");
        props.setProperty("transaction.state.log.num.partitions", "2");
        try (StellflowServer server = TestBroker.start(props);
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            InitProducerIdResponse a = init(c, "tx-a");
            InitProducerIdResponse b = init(c, "tx-b");
            assertThat(begin(c, "tx-a", a.producerId(), a.producerEpoch()).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(produce(
                            c,
                            "tx-a",
                            TOPIC,
                            List.of(0, 1),
                            List.of(
                                    batch(a.producerId(), a.producerEpoch(), 0, "x", "y"),
                                    batch(a.producerId(), a.producerEpoch(), 0, "z"))))
                    .containsExactly(Errors.NONE, Errors.NONE);

            assertThat(list(c, List.of(), List.of()).transactions())
                    .containsExactly(
                            new ListedTransaction("tx-a", a.producerId(), "Ongoing"),
                            new ListedTransaction("tx-b", b.producerId(), "Empty"));
            assertThat(list(c, List.of("Ongoing"), List.of()).transactions())
                    .extracting(ListedTransaction::transactionalId)
                    .containsExactly("tx-a");
            assertThat(list(c, List.of(), List.of(b.producerId(), 123_456L)).transactions())
                    .extracting(ListedTransaction::transactionalId)
                    .containsExactly("tx-b");
            assertThat(list(c, List.of("CompleteCommit"), List.of()).transactions())
                    .isEmpty();

            List<DescribedTransaction> described = describe(c, List.of("tx-a", "nope", ""));
            DescribedTransaction da = described.get(0);
            assertThat(da.errorCode()).isEqualTo(Errors.NONE);
            assertThat(da.state()).isEqualTo("Ongoing");
            assertThat(da.producerId()).isEqualTo(a.producerId());
            assertThat(da.producerEpoch()).isEqualTo(a.producerEpoch());
            assertThat(da.transactionSequence()).isEqualTo(1);
            assertThat(da.transactionTimeoutMs()).isEqualTo(60_000);
            assertThat(da.transactionStartTimeMs()).isPositive();
            assertThat(da.partitions())
                    .containsExactly(
                            new DescribeTransactionsResponse.TopicPartition(TOPIC, 0),
                            new DescribeTransactionsResponse.TopicPartition(TOPIC, 1));
            assertThat(described.get(1))
                    .isEqualTo(DescribedTransaction.of(Errors.NONE, "nope", DescribeTransactionsResponse.DEAD));
            assertThat(described.get(2)).isEqualTo(DescribedTransaction.of(Errors.INVALID_REQUEST, "", ""));

            DescribeProducersResponse open = producers(
                    c, List.of(new TopicPartitions(TOPIC, List.of(0, 7)), new TopicPartitions("missing", List.of(0))));
            DescribeProducersResponse.Partition p0 =
                    open.topics().get(0).partitions().get(0);
            assertThat(p0.errorCode()).isEqualTo(Errors.NONE);
            assertThat(p0.producers()).hasSize(1);
            DescribeProducersResponse.Producer s = p0.producers().get(0);
            assertThat(s.producerId()).isEqualTo(a.producerId());
            assertThat(s.lastSequence()).isEqualTo(1); // two records from sequence 0
            assertThat(s.currentTxnStartOffset()).isZero(); // the BEGIN marker
            assertThat(s.transactionSequence()).isEqualTo(1);
            assertThat(s.coordinatorEpoch()).isEqualTo(-1);
            assertThat(s.lastTimestampMs()).isPositive();
            assertThat(open.topics().get(0).partitions().get(1).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(open.topics().get(1).partitions().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);

            assertThat(end(c, "tx-a", a.producerId(), a.producerEpoch(), true).errorCode())
                    .isEqualTo(Errors.NONE);
            DescribeProducersResponse.Producer closed = producers(c, List.of(new TopicPartitions(TOPIC, List.of(0))))
                    .topics()
                    .get(0)
                    .partitions()
                    .get(0)
                    .producers()
                    .get(0);
            assertThat(closed.currentTxnStartOffset()).isEqualTo(-1);
            assertThat(closed.transactionSequence()).isEqualTo(-1);
            assertThat(closed.coordinatorEpoch()).isNotNegative();
            assertThat(list(c, List.of("CompleteCommit"), List.of()).transactions())
                    .extracting(ListedTransaction::transactionalId)
                    .containsExactly("tx-a");

            // The same through the admin client, which asks every broker and each partition's leader.
            Properties cp = new Properties();
            cp.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
            try (StellflowAdmin admin = new StellflowAdmin(cp)) {
                assertThat(admin.transactions().listTransactions(List.of(), List.of()))
                        .extracting(ListedTransaction::transactionalId)
                        .containsExactly("tx-a", "tx-b");
                assertThat(admin.transactions().describeTransactions(List.of("tx-b", "nope")))
                        .extracting(DescribedTransaction::state)
                        .containsExactly("Empty", DescribeTransactionsResponse.DEAD);
                TopicPartition tp1 = new TopicPartition(TOPIC, 1);
                TopicPartition unknown = new TopicPartition(TOPIC, 9);
                var byPartition = admin.transactions().describeProducers(List.of(tp1, unknown));
                assertThat(byPartition.get(tp1).producers())
                        .extracting(DescribeProducersResponse.Producer::producerId)
                        .containsExactly(a.producerId());
                assertThat(byPartition.get(unknown).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
        }
    }

    private static ListTransactionsResponse list(RawClient c, List<String> states, List<Long> pids) throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.LIST_TRANSACTIONS, Requests.nextCorrelationId(), new ListTransactionsRequest(states, pids));
        ListTransactionsResponse resp = ListTransactionsResponse.read(r.body());
        assertThat(resp.errorCode()).isEqualTo(Errors.NONE);
        return resp;
    }

    private static List<DescribedTransaction> describe(RawClient c, List<String> ids) throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.DESCRIBE_TRANSACTIONS, Requests.nextCorrelationId(), new DescribeTransactionsRequest(ids));
        return DescribeTransactionsResponse.read(r.body()).transactions();
    }

    private static DescribeProducersResponse producers(RawClient c, List<TopicPartitions> topics) throws IOException {
        RawClient.Response r =
                c.call(ApiKeys.DESCRIBE_PRODUCERS, Requests.nextCorrelationId(), new DescribeProducersRequest(topics));
        return DescribeProducersResponse.read(r.body());
    }
}
