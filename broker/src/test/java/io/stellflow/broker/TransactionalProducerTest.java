package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerFencedException;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.client.TransactionAbortedException;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our producer's transactions end to end on one real broker (issue #20 point 5, {@code
 * docs/exactly-once.md} "Our producer: transactions"): commit over two partitions, abort, fencing by a
 * second producer with the same {@code transactional.id}, read back by a {@code read_committed}
 * consumer; and the v1 APIs over the raw socket: a late EndTransaction v1 or Produce v2 of an earlier
 * transaction is refused and changes nothing.
 */
@IntegrationTest
class TransactionalProducerTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String TOPIC = "txp";

    @TempDir
    Path dir;

    private Properties brokerProps() {
        Properties p = TestBroker.props(dir, "nio");
        p.setProperty("transaction.state.log.num.partitions", "2");
        p.setProperty("transaction.max.timeout.ms", "120000");
        return p;
    }

    private static Properties clientProps(StellflowServer server) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        return p;
    }

    private static StellflowProducer producer(StellflowServer server, String transactionalId, int lingerMs) {
        Properties p = clientProps(server);
        p.setProperty("transactional.id", transactionalId);
        p.setProperty("transaction.timeout.ms", "30000");
        p.setProperty("max.block.ms", "15000");
        p.setProperty("linger.ms", Integer.toString(lingerMs));
        return new StellflowProducer(p);
    }

    private static ProducerRecord record(int partition, String value) {
        return new ProducerRecord(TOPIC, partition, null, value.getBytes(StandardCharsets.UTF_8));
    }

    /** Every record a read_committed consumer reads from both partitions up to their LSO. */
    private static List<String> readCommitted(StellflowServer server, int expected) {
        Properties p = clientProps(server);
        p.setProperty("isolation.level", "read_committed");
        p.setProperty("auto.offset.reset", "earliest");
        p.setProperty("fetch.max.wait.ms", "50");
        List<String> values = new ArrayList<>();
        try (StellflowConsumer c = new StellflowConsumer(p)) {
            List<TopicPartition> tps = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));
            c.assign(tps);
            c.seekToBeginning(tps);
            Wait.until(
                    WAIT,
                    () -> {
                        for (ConsumerRecord r : c.poll(Duration.ofMillis(100))) {
                            values.add(new String(r.value(), StandardCharsets.UTF_8));
                        }
                        return values.size() >= expected;
                    },
                    "read_committed records");
            // Nothing more arrives: whatever else is in the log was aborted.
            values.addAll(c.poll(Duration.ofMillis(300)).stream()
                    .map(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .toList());
        }
        return values;
    }

    @Test
    void ourProducerCommitsOverTwoPartitionsAbortsAnotherAndReadCommittedSeesOnlyTheCommitted() throws Exception {
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            // linger.ms 60 s: a record stays queued until a flush, a commit or an abort takes it.
            try (StellflowProducer producer = producer(server, "tx-commit", 60_000)) {
                assertThatThrownBy(() -> producer.send(record(0, "outside")))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("initTransactions")
                        .hasMessageContaining("state UNINITIALIZED");
                producer.initTransactions();
                assertThatThrownBy(() -> producer.send(record(0, "before-begin")))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("beginTransaction");

                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> first = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    first.add(producer.send(record(0, "c1-p0-" + i)));
                    first.add(producer.send(record(1, "c1-p1-" + i)));
                }
                producer.commitTransaction();
                for (CompletableFuture<RecordMetadata> f : first) {
                    assertThat(f).isCompleted();
                    assertThat(f.get().offset()).isNotNegative();
                }

                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> aborted = new ArrayList<>();
                aborted.add(producer.send(record(0, "a-p0")));
                aborted.add(producer.send(record(1, "a-p1")));
                producer.flush(); // in the log, then aborted
                aborted.add(producer.send(record(0, "a-unsent")));
                producer.abortTransaction();
                assertThat(aborted.get(0)).isCompleted();
                assertThat(aborted.get(1)).isCompleted();
                // The record still queued at the abort is failed with a clear exception, never sent.
                assertThat(failure(aborted.get(2)))
                        .isInstanceOf(TransactionAbortedException.class)
                        .hasMessageContaining("tx-commit")
                        .hasMessageContaining("aborted before this record was sent");

                producer.beginTransaction();
                CompletableFuture<RecordMetadata> last = producer.send(record(1, "c2-p1"));
                producer.commitTransaction();
                assertThat(last).isCompleted();
            }
            List<String> seen = readCommitted(server, 7);
            assertThat(seen)
                    .containsExactlyInAnyOrder(
                            "c1-p0-0", "c1-p0-1", "c1-p0-2", "c1-p1-0", "c1-p1-1", "c1-p1-2", "c2-p1");
            for (int partition = 0; partition < 2; partition++) {
                FetchResponse.PartitionData d =
                        TransactionalProduceTest.fetch(c, TOPIC, partition, FetchRequest.READ_COMMITTED);
                assertThat(d.lastStableOffset()).as("no open transaction").isEqualTo(d.highWatermark());
                assertThat(d.abortedTransactions()).hasSize(1);
            }
        }
    }

    /**
     * Kafka's producer aborts a transaction left open when it is closed: the partitions' last stable
     * offsets reach their high watermarks at the close, not after {@code transaction.timeout.ms}
     * (30 s here).
     */
    @Test
    void closingAProducerInsideATransactionAbortsIt() throws Exception {
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            StellflowProducer producer = producer(server, "tx-close", 0);
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(record(0, "open-p0"));
            producer.send(record(1, "open-p1"));
            producer.flush();
            for (int partition = 0; partition < 2; partition++) {
                FetchResponse.PartitionData d =
                        TransactionalProduceTest.fetch(c, TOPIC, partition, FetchRequest.READ_COMMITTED);
                assertThat(d.lastStableOffset()).as("open").isLessThan(d.highWatermark());
            }
            long closeStartNs = System.nanoTime();
            producer.close();
            assertThat(Duration.ofNanos(System.nanoTime() - closeStartNs)).isLessThan(Duration.ofSeconds(10));
            for (int partition = 0; partition < 2; partition++) {
                FetchResponse.PartitionData d =
                        TransactionalProduceTest.fetch(c, TOPIC, partition, FetchRequest.READ_COMMITTED);
                assertThat(d.lastStableOffset()).as("aborted at the close").isEqualTo(d.highWatermark());
                assertThat(d.abortedTransactions()).hasSize(1);
            }
            assertThat(readCommitted(server, 0)).isEmpty();
        }
    }

    /**
     * {@code close(timeout)} bounds the abort of an open transaction too: with the broker gone the
     * abort's End would retry for {@code max.block.ms} (15 s here); the close returns after about its
     * 1 s.
     */
    @Test
    void closeWithATimeoutDoesNotWaitLongerForTheAbortOfAnOpenTransaction() throws Exception {
        StellflowProducer producer;
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            producer = producer(server, "tx-close-timeout", 0);
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(record(0, "open")).get();
        } // the broker is gone
        long closeStartNs = System.nanoTime();
        producer.close(Duration.ofSeconds(1));
        assertThat(Duration.ofNanos(System.nanoTime() - closeStartNs)).isLessThan(Duration.ofSeconds(5));
    }

    private static Throwable failure(CompletableFuture<?> f) {
        try {
            f.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aSecondProducerWithTheSameIdFencesTheFirstWhoseCommitThrows() throws Exception {
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            try (StellflowProducer zombie = producer(server, "tx-fence", 0);
                    StellflowProducer successor = producer(server, "tx-fence", 0)) {
                zombie.initTransactions();
                zombie.beginTransaction();
                zombie.send(record(0, "zombie")).get();

                successor.initTransactions(); // aborts the zombie's transaction under a higher epoch
                assertThatThrownBy(zombie::commitTransaction)
                        .isInstanceOf(ProducerFencedException.class)
                        .hasMessageContaining("tx-fence")
                        .hasMessageContaining("PRODUCER_FENCED");
                // Fatal: every later transactional call throws it again.
                assertThatThrownBy(zombie::beginTransaction).isInstanceOf(ProducerFencedException.class);
                assertThatThrownBy(zombie::abortTransaction).isInstanceOf(ProducerFencedException.class);

                successor.beginTransaction();
                successor.send(record(1, "successor")).get();
                successor.commitTransaction();
            }
            assertThat(readCommitted(server, 1)).containsExactly("successor");
        }
    }

    /** The offsets group {@code groupId} has committed, as a consumer of the group reads them. */
    private static Map<TopicPartition, Long> committed(StellflowServer server, String groupId) {
        Properties p = clientProps(server);
        p.setProperty("group.id", groupId);
        try (StellflowConsumer c = new StellflowConsumer(p)) {
            return c.committed(Set.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1)), WAIT);
        }
    }

    @Test
    void sendOffsetsToTransactionCommitsTheGroupsOffsetsOnlyWithTheTransaction() throws Exception {
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            TopicPartition in0 = new TopicPartition(TOPIC, 0);
            TopicPartition in1 = new TopicPartition(TOPIC, 1);
            try (StellflowProducer producer = producer(server, "tx-ctp", 0)) {
                producer.initTransactions();

                producer.beginTransaction();
                producer.send(record(1, "out-1")).get();
                producer.sendOffsetsToTransaction(Map.of(in0, 7L), "ctp");
                // Pending until the transaction commits: the group has no offset yet.
                assertThat(committed(server, "ctp").get(in0)).isNull();
                producer.commitTransaction();
                assertThat(committed(server, "ctp")).containsEntry(in0, 7L);

                producer.beginTransaction();
                producer.send(record(1, "out-aborted")).get();
                producer.sendOffsetsToTransaction(Map.of(in0, 20L, in1, 3L), "ctp");
                producer.abortTransaction();
                Map<TopicPartition, Long> afterAbort = committed(server, "ctp");
                assertThat(afterAbort).containsEntry(in0, 7L);
                assertThat(afterAbort.get(in1)).isNull();

                assertThatThrownBy(() -> producer.sendOffsetsToTransaction(Map.of(in0, 8L), "ctp"))
                        .isInstanceOf(IllegalStateException.class);
            }
            assertThat(readCommitted(server, 1)).containsExactly("out-1");
        }
    }

    @Test
    void aRecordTheBrokerRefusesMakesTheTransactionAbortableAndTheAbortTakesANewEpoch() throws Exception {
        Properties props = brokerProps();
        props.setProperty("message.max.bytes", "4096");
        try (StellflowServer server = TestBroker.start(props);
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            try (StellflowProducer producer = producer(server, "tx-abortable", 0)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(record(1, "kept-out")).get();
                CompletableFuture<RecordMetadata> tooLarge = producer.send(record(0, "x".repeat(8192)));
                assertThat(failure(tooLarge))
                        .isInstanceOf(StellflowException.class)
                        .hasMessageContaining("MESSAGE_TOO_LARGE");
                // Abortable: later sends get the error, commit refuses, abort recovers.
                assertThat(failure(producer.send(record(1, "after"))))
                        .hasMessageContaining("the transaction can only be aborted");
                assertThatThrownBy(producer::commitTransaction).hasMessageContaining("call abortTransaction");
                producer.abortTransaction();
                // The failed batch left a hole in partition 0's sequences: a new epoch, sequences from 0.
                producer.beginTransaction();
                producer.send(record(0, "committed-p0"));
                producer.send(record(1, "committed-p1"));
                producer.commitTransaction();
            }
            assertThat(readCommitted(server, 2)).containsExactlyInAnyOrder("committed-p0", "committed-p1");
            ByteBuf p0 = TransactionalProduceTest.fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED)
                    .records();
            assertThat(RecordBatchLayout.producerEpoch(p0, p0.readerIndex()))
                    .as("epoch")
                    .isEqualTo((short) 1);
            assertThat(RecordBatchLayout.baseSequence(p0, p0.readerIndex()))
                    .as("sequence")
                    .isZero();
        }
    }

    @Test
    void aLateEndOrProduceOfAnEarlierTransactionIsRefusedAndChangesNothing() throws Exception {
        try (StellflowServer server = TestBroker.start(brokerProps());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            // FindCoordinator v1 keyType 1 names this broker once __transaction_state is loaded; v0 refuses it.
            FindCoordinatorRequest find =
                    new FindCoordinatorRequest("late", FindCoordinatorRequest.KEY_TYPE_TRANSACTION);
            assertThat(call(c, ApiKeys.FIND_COORDINATOR, 0, find, FindCoordinatorResponse::read)
                            .errorCode())
                    .isEqualTo(Errors.INVALID_REQUEST);
            Wait.until(
                    WAIT,
                    () -> call(c, ApiKeys.FIND_COORDINATOR, 1, find, FindCoordinatorResponse::read)
                                    .port()
                            == server.port(),
                    "the transaction coordinator found");
            // InitProducerId v1: a timeout above transaction.max.timeout.ms is refused, a valid one taken.
            assertThat(call(
                                    c,
                                    ApiKeys.INIT_PRODUCER_ID,
                                    1,
                                    out -> new InitProducerIdRequest("late", 120_001).write(out, (short) 1),
                                    InitProducerIdResponse::read)
                            .errorCode())
                    .isEqualTo(Errors.INVALID_REQUEST);
            InitProducerIdResponse init = call(
                    c,
                    ApiKeys.INIT_PRODUCER_ID,
                    1,
                    out -> new InitProducerIdRequest("late", 30_000).write(out, (short) 1),
                    InitProducerIdResponse::read);
            assertThat(init.errorCode()).isEqualTo(Errors.NONE);
            long pid = init.producerId();
            short epoch = init.producerEpoch();

            long s1 = begin(c, pid, epoch);
            assertThat(produce(c, s1, TransactionalProduceTest.batch(pid, epoch, 0, "t1")))
                    .isEqualTo(Errors.NONE);
            assertThat(end(c, pid, epoch, true, s1)).isEqualTo(Errors.NONE);
            long s2 = begin(c, pid, epoch);
            assertThat(s2).isEqualTo(s1 + 1);
            long hw = TransactionalProduceTest.fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED)
                    .highWatermark();

            // Delayed requests of transaction s1 arrive while s2 is open: refused, nothing written.
            assertThat(end(c, pid, epoch, false, s1)).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(end(c, pid, epoch, true, s1)).isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(produce(c, s1, TransactionalProduceTest.batch(pid, epoch, 1, "late")))
                    .isEqualTo(Errors.INVALID_TXN_STATE);
            assertThat(TransactionalProduceTest.fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED)
                            .highWatermark())
                    .isEqualTo(hw);

            // Transaction s2 goes on as if nothing happened; a repeated End of it is answered again.
            assertThat(produce(c, s2, TransactionalProduceTest.batch(pid, epoch, 1, "t2")))
                    .isEqualTo(Errors.NONE);
            assertThat(end(c, pid, epoch, true, s2)).isEqualTo(Errors.NONE);
            assertThat(end(c, pid, epoch, true, s2)).isEqualTo(Errors.NONE);
            assertThat(end(c, pid, epoch, false, s2)).isEqualTo(Errors.INVALID_TXN_STATE);
            FetchResponse.PartitionData d = TransactionalProduceTest.fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(d.lastStableOffset()).isEqualTo(d.highWatermark());
            assertThat(d.abortedTransactions()).isEmpty();
            assertThat(TransactionalProduceTest.values(d))
                    .containsExactly("1 record(s) of producer " + pid, "1 record(s) of producer " + pid);
        }
    }

    private static <T> T call(RawClient c, short apiKey, int version, ApiMessage body, Function<ByteBuf, T> reader) {
        try {
            int correlationId = Requests.nextCorrelationId();
            c.send(RequestHeader.of(apiKey, (short) version, correlationId, "test"), body);
            RawClient.Response r = c.receive();
            assertThat(r.correlationId()).isEqualTo(correlationId);
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            return reader.apply(r.body());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long begin(RawClient c, long pid, short epoch) {
        TransactionResponse r = call(
                c,
                ApiKeys.BEGIN_TRANSACTION,
                1,
                new BeginTransactionRequest("late", pid, epoch),
                b -> TransactionResponse.read(b, true));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        assertThat(r.transactionState()).isEqualTo("ONGOING");
        return r.transactionSequence();
    }

    private static short end(RawClient c, long pid, short epoch, boolean commit, long sequence) {
        EndTransactionRequest req = new EndTransactionRequest("late", pid, epoch, commit, sequence);
        return call(c, ApiKeys.END_TRANSACTION, 1, out -> req.write(out, (short) 1), TransactionResponse::read)
                .errorCode();
    }

    private static short produce(RawClient c, long sequence, byte[] batch) {
        ProduceRequest req = new ProduceRequest(
                "late",
                sequence,
                (short) -1,
                10_000,
                List.of(new ProduceRequest.TopicData(
                        TOPIC, List.of(new ProduceRequest.PartitionData(0, Unpooled.wrappedBuffer(batch))))));
        return call(c, ApiKeys.PRODUCE, 2, out -> req.write(out, (short) 2), ProduceResponse::read)
                .responses()
                .get(0)
                .partitions()
                .get(0)
                .errorCode();
    }
}
