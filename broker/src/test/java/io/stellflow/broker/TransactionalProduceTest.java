package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Transactions end to end on one real broker over its socket, with requests shaped as the Go SDK
 * sends them (Produce v0 with the transactionalId, batches with producer id, epoch and sequence but
 * no isTransactional bit): the Produce path registers each partition at the coordinator and appends
 * with the transaction's sequence; End writes COMMIT or ABORT markers through the append agents (or,
 * with {@code num.append.agents=0}, on the request thread) and answers once they are replicated.
 */
@IntegrationTest
public class TransactionalProduceTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String TOPIC = "txn-data";

    @TempDir
    Path dir;

    private Properties props(int transactionTimeoutMs, int appendAgents) {
        Properties p = TestBroker.props(dir, "nio");
        p.setProperty("transaction.state.log.num.partitions", "2");
        p.setProperty("transaction.default.timeout.ms", Integer.toString(transactionTimeoutMs));
        p.setProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "200");
        p.setProperty("num.append.agents", Integer.toString(appendAgents));
        return p;
    }

    /** InitProducerId, retried while {@code __transaction_state} is created and loaded. */
    static InitProducerIdResponse init(RawClient c, String id) {
        InitProducerIdResponse[] last = new InitProducerIdResponse[1];
        Wait.until(
                WAIT,
                () -> {
                    RawClient.Response r;
                    try {
                        r = c.call(
                                ApiKeys.INIT_PRODUCER_ID, Requests.nextCorrelationId(), new InitProducerIdRequest(id));
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    last[0] = InitProducerIdResponse.read(r.body());
                    assertThat(last[0].errorCode()).isIn(Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE);
                    return last[0].errorCode() == Errors.NONE;
                },
                "InitProducerId of " + id);
        return last[0];
    }

    static TransactionResponse begin(RawClient c, String id, long pid, short epoch) throws IOException {
        return TransactionResponse.read(c.call(
                        ApiKeys.BEGIN_TRANSACTION,
                        Requests.nextCorrelationId(),
                        new BeginTransactionRequest(id, pid, epoch))
                .body());
    }

    static TransactionResponse end(RawClient c, String id, long pid, short epoch, boolean commit) throws IOException {
        return TransactionResponse.read(c.call(
                        ApiKeys.END_TRANSACTION,
                        Requests.nextCorrelationId(),
                        new EndTransactionRequest(id, pid, epoch, commit))
                .body());
    }

    /**
     * A transactional Produce v0 (acks=-1, as the Go SDK sends it) of one {@link #batch} to {@code
     * partition} of {@code topic}, waiting at most {@code timeoutMs} for the ISR.
     */
    public static ProduceRequest transactionalProduce(
            String transactionalId, String topic, int partition, byte[] batch, int timeoutMs) {
        return new ProduceRequest(
                transactionalId,
                (short) -1,
                timeoutMs,
                List.of(new ProduceRequest.TopicData(
                        topic, List.of(new ProduceRequest.PartitionData(partition, Unpooled.wrappedBuffer(batch))))));
    }

    /** One batch as the Go SDK sends it: producer fields set, no isTransactional bit. */
    public static byte[] batch(long pid, short epoch, int sequence, String... values) {
        ByteBuf out = Unpooled.buffer();
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 1_000);
            for (String v : values) {
                b.append(1_000, null, v.getBytes(StandardCharsets.UTF_8));
            }
            b.close();
            RecordBatchLayout.setProducerFields(out, 0, pid, epoch, sequence);
            byte[] bytes = new byte[out.readableBytes()];
            out.readBytes(bytes);
            return bytes;
        } finally {
            out.release();
        }
    }

    /** A transactional Produce (acks=-1) of one batch per partition; the codes in partition order. */
    static List<Short> produce(RawClient c, String id, String topic, List<Integer> partitions, List<byte[]> batches)
            throws IOException {
        List<ProduceRequest.PartitionData> data = new ArrayList<>();
        for (int i = 0; i < partitions.size(); i++) {
            data.add(new ProduceRequest.PartitionData(partitions.get(i), Unpooled.wrappedBuffer(batches.get(i))));
        }
        ProduceRequest request =
                new ProduceRequest(id, (short) -1, 10_000, List.of(new ProduceRequest.TopicData(topic, data)));
        RawClient.Response r = c.call(ApiKeys.PRODUCE, Requests.nextCorrelationId(), request);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        List<Short> codes = new ArrayList<>();
        for (ProduceResponse.PartitionResponse p :
                ProduceResponse.read(r.body()).responses().get(0).partitions()) {
            codes.add(p.errorCode());
        }
        return codes;
    }

    static FetchResponse.PartitionData fetch(RawClient c, String topic, int partition, byte isolation)
            throws IOException {
        FetchRequest request = new FetchRequest(
                -1,
                0,
                1,
                1 << 20,
                isolation,
                0,
                List.of(new FetchRequest.FetchTopic(
                        topic, List.of(new FetchRequest.FetchPartition(partition, -1, 0, -1L, 1 << 20)))));
        return Requests.fetchOne(c, request);
    }

    /** The values of a consumer's answer; fails on a control batch (no consumer sees a marker). */
    public static List<String> values(FetchResponse.PartitionData d) {
        List<String> values = new ArrayList<>();
        ByteBuf r = d.records();
        for (int p = r.readerIndex(); p < r.writerIndex(); p += RecordBatchLayout.batchSize(r, p)) {
            assertThat(ControlRecordLayout.isControl(r, p))
                    .as("a control batch reached a consumer")
                    .isFalse();
            int count = RecordBatchLayout.recordCount(r, p);
            values.add(count + " record(s) of producer " + RecordBatchLayout.producerId(r, p));
        }
        return values;
    }

    @ParameterizedTest(name = "num.append.agents={0}")
    @ValueSource(ints = {1, 0})
    void aCommittedTransactionIsReadCommittedAndAnAbortedOneIsListed(int agents) throws Exception {
        try (StellflowServer server = TestBroker.start(props(60_000, agents));
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            InitProducerIdResponse p = init(c, "tx");
            long pid = p.producerId();
            short epoch = p.producerEpoch();

            assertThat(begin(c, "tx", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(
                            c,
                            "tx",
                            TOPIC,
                            List.of(0, 1),
                            List.of(batch(pid, epoch, 0, "a", "b"), batch(pid, epoch, 0, "c"))))
                    .containsExactly(Errors.NONE, Errors.NONE);
            // Open: read_committed sees nothing yet, the LSO is the transaction's first offset (its BEGIN).
            FetchResponse.PartitionData open = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(open.lastStableOffset()).isZero();
            assertThat(values(open)).isEmpty();
            assertThat(end(c, "tx", pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            for (int partition = 0; partition < 2; partition++) {
                FetchResponse.PartitionData d = fetch(c, TOPIC, partition, FetchRequest.READ_COMMITTED);
                assertThat(d.lastStableOffset()).as("LSO = HW").isEqualTo(d.highWatermark());
                // BEGIN + data + COMMIT
                assertThat(d.highWatermark()).isEqualTo(partition == 0 ? 4 : 3);
                assertThat(d.abortedTransactions()).isEmpty();
                assertThat(values(d)).containsExactly((partition == 0 ? 2 : 1) + " record(s) of producer " + pid);
            }

            assertThat(begin(c, "tx", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(
                            c,
                            "tx",
                            TOPIC,
                            List.of(0, 1),
                            List.of(batch(pid, epoch, 2, "x"), batch(pid, epoch, 1, "y"))))
                    .containsExactly(Errors.NONE, Errors.NONE);
            // A second batch of the same transaction uses the cached registration.
            assertThat(produce(c, "tx", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 3, "z"))))
                    .containsExactly(Errors.NONE);
            assertThat(end(c, "tx", pid, epoch, false).errorCode()).isEqualTo(Errors.NONE);
            FetchResponse.PartitionData committed = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(committed.lastStableOffset())
                    .isEqualTo(committed.highWatermark())
                    .isEqualTo(8);
            assertThat(committed.abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(pid, 4));
            FetchResponse.PartitionData uncommitted = fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED);
            assertThat(values(uncommitted))
                    .containsExactly(
                            "2 record(s) of producer " + pid,
                            "1 record(s) of producer " + pid,
                            "1 record(s) of producer " + pid);
            FetchResponse.PartitionData other = fetch(c, TOPIC, 1, FetchRequest.READ_COMMITTED);
            assertThat(other.abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(pid, 3));
        }
    }

    @Test
    void aProduceOutsideATransactionAndAnOldEpochAreRefusedAndWriteNothing() throws Exception {
        try (StellflowServer server = TestBroker.start(props(60_000, 1));
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 1);
            InitProducerIdResponse p = init(c, "fenced");
            long pid = p.producerId();
            short epoch = p.producerEpoch();
            // Before any Begin, and after End without a new Begin.
            assertThat(produce(c, "fenced", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 0, "early"))))
                    .containsExactly(Errors.INVALID_TXN_STATE);
            assertThat(begin(c, "fenced", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(c, "fenced", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 0, "in"))))
                    .containsExactly(Errors.NONE);
            assertThat(end(c, "fenced", pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            long hw = fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED).highWatermark();
            assertThat(produce(c, "fenced", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 1, "late"))))
                    .containsExactly(Errors.INVALID_TXN_STATE);
            assertThat(fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED).highWatermark())
                    .isEqualTo(hw);

            // A new instance: the old epoch is fenced at the coordinator and in the partition.
            assertThat(begin(c, "fenced", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            InitProducerIdResponse again = init(c, "fenced");
            assertThat(again.producerId()).isEqualTo(pid);
            assertThat(again.producerEpoch()).isGreaterThan(epoch);
            assertThat(produce(c, "fenced", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 1, "zombie"))))
                    .containsExactly(Errors.INVALID_PRODUCER_EPOCH);
            assertThat(begin(c, "fenced", pid, epoch).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
            assertThat(fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED).highWatermark())
                    .isEqualTo(hw);
            // The new instance writes from sequence 0 under its epoch.
            short e2 = again.producerEpoch();
            assertThat(begin(c, "fenced", pid, e2).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(c, "fenced", TOPIC, List.of(0), List.<byte[]>of(batch(pid, e2, 0, "new"))))
                    .containsExactly(Errors.NONE);
            assertThat(end(c, "fenced", pid, e2, true).errorCode()).isEqualTo(Errors.NONE);
            FetchResponse.PartitionData d = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(d.lastStableOffset()).isEqualTo(d.highWatermark());
            assertThat(values(d)).containsExactly("1 record(s) of producer " + pid, "1 record(s) of producer " + pid);
        }
    }

    private static List<Short> markers(
            RawClient c, short epoch, int coordinatorEpoch, long sequence, int timeoutMs, long pid, String topic)
            throws IOException {
        WriteTxnMarkersRequest request = new WriteTxnMarkersRequest(
                pid,
                epoch,
                true,
                coordinatorEpoch,
                sequence,
                timeoutMs,
                List.of(new WriteTxnMarkersRequest.TopicPartition(topic, 0)));
        RawClient.Response r = c.call(ApiKeys.WRITE_TXN_MARKERS, Requests.nextCorrelationId(), request);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        List<Short> codes = new ArrayList<>();
        for (WriteTxnMarkersResponse.PartitionResult p :
                WriteTxnMarkersResponse.read(r.body()).partitions()) {
            codes.add(p.errorCode());
        }
        return codes;
    }

    @Test
    void writeTxnMarkersRefusesBadAndStaleMarkersPerPartitionAndWritesNothing() throws Exception {
        try (StellflowServer server = TestBroker.start(props(60_000, 1));
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 1);
            InitProducerIdResponse p = init(c, "markers");
            long pid = p.producerId();
            short epoch = p.producerEpoch();
            assertThat(begin(c, "markers", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(c, "markers", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 0, "one"))))
                    .containsExactly(Errors.NONE);
            assertThat(end(c, "markers", pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            assertThat(begin(c, "markers", pid, epoch).errorCode()).isEqualTo(Errors.NONE); // sequence 2
            assertThat(produce(c, "markers", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 1, "two"))))
                    .containsExactly(Errors.NONE);
            long hw = fetch(c, TOPIC, 0, FetchRequest.READ_UNCOMMITTED).highWatermark();

            assertThat(markers(c, epoch, Integer.MAX_VALUE, 2, -1, pid, TOPIC)).containsExactly(Errors.INVALID_REQUEST);
            assertThat(markers(c, epoch, Integer.MAX_VALUE, 2, 1_000, pid, "missing"))
                    .containsExactly(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(markers(c, (short) (epoch - 1), Integer.MAX_VALUE, 2, 1_000, pid, TOPIC))
                    .as("an older producer epoch")
                    .containsExactly(Errors.INVALID_PRODUCER_EPOCH);
            assertThat(markers(c, epoch, -1, 2, 1_000, pid, TOPIC))
                    .as("an older coordinator epoch")
                    .containsExactly(Errors.TRANSACTION_COORDINATOR_FENCED);
            assertThat(markers(c, epoch, Integer.MAX_VALUE, 1, 1_000, pid, TOPIC))
                    .as("a marker of the earlier transaction")
                    .containsExactly(Errors.INVALID_TXN_STATE);
            FetchResponse.PartitionData open = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(open.highWatermark()).isEqualTo(hw);
            assertThat(open.lastStableOffset()).isEqualTo(3); // the second transaction's BEGIN

            assertThat(end(c, "markers", pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            FetchResponse.PartitionData done = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(done.lastStableOffset()).isEqualTo(done.highWatermark()).isEqualTo(hw + 1);
        }
    }

    @Test
    void aTransactionLeftOpenPastItsTimeoutIsAbortedAndTheLastStableOffsetMovesOn() throws Exception {
        try (StellflowServer server = TestBroker.start(props(500, 1));
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 1);
            InitProducerIdResponse p = init(c, "vanished");
            long pid = p.producerId();
            short epoch = p.producerEpoch();
            assertThat(begin(c, "vanished", pid, epoch).errorCode()).isEqualTo(Errors.NONE);
            assertThat(produce(c, "vanished", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 0, "orphan"))))
                    .containsExactly(Errors.NONE);
            assertThat(fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED).lastStableOffset())
                    .isZero();
            // The producer vanishes: the coordinator aborts after 500 ms and writes the ABORT marker.
            Wait.until(
                    WAIT,
                    () -> {
                        FetchResponse.PartitionData d;
                        try {
                            d = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                        return d.highWatermark() == 3 && d.lastStableOffset() == 3;
                    },
                    "the timed-out transaction is aborted in the partition");
            FetchResponse.PartitionData d = fetch(c, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(d.abortedTransactions()).containsExactly(new FetchResponse.AbortedTransaction(pid, 0));
            assertThat(values(d)).containsExactly("1 record(s) of producer " + pid);
            // It was aborted under a bumped epoch: the vanished producer's next batch is fenced.
            assertThat(produce(c, "vanished", TOPIC, List.of(0), List.<byte[]>of(batch(pid, epoch, 1, "again"))))
                    .containsExactly(Errors.INVALID_PRODUCER_EPOCH);
        }
    }
    /**
     * A producer keeps several Produce requests of a partition in flight (as ours does, up to
     * max.in.flight.requests.per.connection): the requests read while the first batch's registration
     * is out must be appended behind it. Before the registration was cached only once its batch was
     * queued, a request read during the round trip but handled after the answer found the cache
     * filled and overtook the first batch: OUT_OF_ORDER_SEQUENCE_NUMBER, which a client retries after
     * its back-off (100 ms) in the middle of every transaction. Several producers at once keep the
     * request pool busy, which opens that window; the sends are spread by a seeded random pause.
     */
    @Test
    void pipelinedProducesOfATransactionAreAppendedInTheirOrder() throws Exception {
        int producers = 4;
        int transactions = 25;
        int inFlight = 5;
        long seed = System.nanoTime();
        try (StellflowServer server = TestBroker.start(props(60_000, 1));
                RawClient admin = new RawClient(server.port())) {
            Requests.createTopic(admin, TOPIC, 1);
            ExecutorService pool = Executors.newFixedThreadPool(producers);
            try {
                List<Future<List<Short>>> results = new ArrayList<>();
                for (int n = 0; n < producers; n++) {
                    String id = "pipe-" + n;
                    Random random = new Random(seed + n);
                    results.add(pool.submit(() -> {
                        List<Short> codes = new ArrayList<>();
                        try (RawClient c = new RawClient(server.port())) {
                            InitProducerIdResponse p = init(c, id);
                            long pid = p.producerId();
                            short epoch = p.producerEpoch();
                            int sequence = 0;
                            for (int t = 0; t < transactions; t++) {
                                assertThat(begin(c, id, pid, epoch).errorCode()).isEqualTo(Errors.NONE);
                                for (int i = 0; i < inFlight; i++) {
                                    ProduceRequest request = transactionalProduce(
                                            id, TOPIC, 0, batch(pid, epoch, sequence++, "v"), 10_000);
                                    c.send(ApiKeys.PRODUCE, Requests.nextCorrelationId(), request);
                                    LockSupport.parkNanos(random.nextInt(1_000_000));
                                }
                                for (int i = 0; i < inFlight; i++) {
                                    RawClient.Response r = c.receive();
                                    codes.add(ProduceResponse.read(r.body())
                                            .responses()
                                            .get(0)
                                            .partitions()
                                            .get(0)
                                            .errorCode());
                                }
                                assertThat(end(c, id, pid, epoch, true).errorCode())
                                        .isEqualTo(Errors.NONE);
                            }
                        }
                        return codes;
                    }));
                }
                for (Future<List<Short>> f : results) {
                    assertThat(f.get(60, TimeUnit.SECONDS))
                            .as("every pipelined batch appended in order (seed " + seed + ")")
                            .hasSize(transactions * inFlight)
                            .containsOnly(Errors.NONE);
                }
            } finally {
                pool.shutdownNow();
            }
            // BEGIN, 5 batches and COMMIT per transaction, every one of them readable.
            FetchResponse.PartitionData d = fetch(admin, TOPIC, 0, FetchRequest.READ_COMMITTED);
            assertThat(d.highWatermark()).isEqualTo((long) producers * transactions * (inFlight + 2));
            assertThat(d.lastStableOffset()).isEqualTo(d.highWatermark());
        }
    }
}
