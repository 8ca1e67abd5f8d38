package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.transaction.TransactionMarkerRequest;
import io.stellflow.broker.transaction.TransactionMarkerWriter;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.RegisterTxnPartitionRequest;
import io.stellflow.protocol.message.RegisterTxnPartitionResponse;
import io.stellflow.protocol.message.TransactionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transaction coordinator over a real in-process broker and the wire (spec §6.12-6.13,
 * RegisterTxnPartition key 29), with a fake marker writer: {@code __transaction_state} is created on
 * the first InitProducerId; Init/Begin/End with every error of the spec; markers written for the
 * registered partitions, End answered once they are; a failed marker write retried by the sweeper; a
 * request of a closed connection dropped; a timed-out transaction aborted under a bumped epoch; and
 * after a restart the loaded coordinator completes a transaction left in PREPARE.
 */
@IntegrationTest
class TransactionCoordinatorEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    /** Records every request; fails them while {@link #failing} is set. */
    static final class FakeMarkers implements TransactionMarkerWriter {
        final List<TransactionMarkerRequest> requests = new CopyOnWriteArrayList<>();
        volatile boolean failing;

        @Override
        public CompletableFuture<Void> writeMarkers(TransactionMarkerRequest request) {
            requests.add(request);
            return failing
                    ? CompletableFuture.failedFuture(new IOException("leader unreachable"))
                    : CompletableFuture.completedFuture(null);
        }
    }

    private Properties props() {
        return props(60_000);
    }

    private Properties props(int transactionTimeoutMs) {
        Properties p = TestBroker.props(dir, "nio");
        p.setProperty("transaction.state.log.num.partitions", "3");
        p.setProperty("transaction.default.timeout.ms", Integer.toString(transactionTimeoutMs));
        p.setProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "200");
        return p;
    }

    private static InitProducerIdResponse init(RawClient c, String id) throws IOException {
        RawClient.Response r =
                c.call(ApiKeys.INIT_PRODUCER_ID, Requests.nextCorrelationId(), new InitProducerIdRequest(id));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return InitProducerIdResponse.read(r.body());
    }

    /** Retries while the topic is created and its partition loaded (clients retry 16). */
    private static InitProducerIdResponse awaitInit(RawClient c, String id) {
        InitProducerIdResponse[] last = new InitProducerIdResponse[1];
        Wait.until(
                WAIT,
                () -> {
                    try {
                        last[0] = init(c, id);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    assertThat(last[0].errorCode()).isIn(Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE);
                    return last[0].errorCode() == Errors.NONE;
                },
                "InitProducerId of " + id);
        return last[0];
    }

    private static TransactionResponse begin(RawClient c, String id, InitProducerIdResponse p) throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.BEGIN_TRANSACTION,
                Requests.nextCorrelationId(),
                new BeginTransactionRequest(id, p.producerId(), p.producerEpoch()));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return TransactionResponse.read(r.body());
    }

    private static TransactionResponse end(RawClient c, String id, InitProducerIdResponse p, boolean commit)
            throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.END_TRANSACTION,
                Requests.nextCorrelationId(),
                new EndTransactionRequest(id, p.producerId(), p.producerEpoch(), commit));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return TransactionResponse.read(r.body());
    }

    private static RegisterTxnPartitionResponse register(
            RawClient c, String id, InitProducerIdResponse p, long sequence, String topic, int partition)
            throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.REGISTER_TXN_PARTITION,
                Requests.nextCorrelationId(),
                new RegisterTxnPartitionRequest(id, p.producerId(), p.producerEpoch(), sequence, topic, partition));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return RegisterTxnPartitionResponse.read(r.body());
    }

    private static TransactionResponse state(short code, InitProducerIdResponse p, String state) {
        return new TransactionResponse(code, p.producerId(), p.producerEpoch(), state);
    }

    @Test
    void initBeginRegisterEndOverTheWireWithEveryErrorOfTheSpec() throws Exception {
        FakeMarkers markers = new FakeMarkers();
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            server.transactionCoordinator().markerWriter(markers);
            InitProducerIdResponse p = awaitInit(c, "tx");
            assertThat(p.producerId()).isNotNegative();
            assertThat(p.producerEpoch()).isZero();
            // The internal topic, created on first use with the configured partition count.
            RawClient.Response md = c.call(
                    ApiKeys.METADATA,
                    Requests.nextCorrelationId(),
                    new MetadataRequest(List.of(TransactionStateTopic.NAME), false, false, false));
            MetadataResponse.TopicMetadata t =
                    MetadataResponse.read(md.body()).topics().get(0);
            assertThat(t.isInternal()).isTrue();
            assertThat(t.partitions()).hasSize(3);

            assertThat(end(c, "tx", p, true)).isEqualTo(state(Errors.INVALID_TXN_STATE, p, "FAILED"));
            assertThat(begin(c, "tx", p)).isEqualTo(state(Errors.NONE, p, "ONGOING"));
            assertThat(begin(c, "tx", p)).isEqualTo(state(Errors.INVALID_TXN_STATE, p, "FAILED"));
            assertThat(register(c, "tx", p, 1, "orders", 0))
                    .isEqualTo(new RegisterTxnPartitionResponse(Errors.NONE, 1));
            assertThat(register(c, "tx", p, -1, "orders", 2))
                    .isEqualTo(new RegisterTxnPartitionResponse(Errors.NONE, 1));
            assertThat(register(c, "tx", p, 5, "orders", 1))
                    .isEqualTo(new RegisterTxnPartitionResponse(Errors.INVALID_TXN_STATE, -1));
            assertThat(end(c, "tx", p, true)).isEqualTo(state(Errors.NONE, p, "COMMITTED"));
            assertThat(markers.requests)
                    .extracting(TransactionMarkerRequest::partitions)
                    .containsExactly(
                            List.of(new TransactionPartition("orders", 0), new TransactionPartition("orders", 2)));
            TransactionMarkerRequest m = markers.requests.get(0);
            assertThat(m.commit()).isTrue();
            assertThat(m.transactionSequence()).isEqualTo(1);
            assertThat(m.producerId()).isEqualTo(p.producerId());

            // A bound producer id with another id, a null id, and a new instance fencing the old.
            InitProducerIdResponse stranger = new InitProducerIdResponse(Errors.NONE, p.producerId() + 99, (short) 0);
            assertThat(begin(c, "tx", stranger)).isEqualTo(state(Errors.INVALID_REQUEST, stranger, "FAILED"));
            assertThat(begin(c, null, p)).isEqualTo(state(Errors.INVALID_REQUEST, p, "FAILED"));
            assertThat(init(c, "")).isEqualTo(InitProducerIdResponse.error(Errors.INVALID_REQUEST));
            InitProducerIdResponse next = init(c, "tx");
            assertThat(next).isEqualTo(new InitProducerIdResponse(Errors.NONE, p.producerId(), (short) 1));
            assertThat(begin(c, "tx", p)).isEqualTo(state(Errors.PRODUCER_FENCED, p, "FAILED"));
            assertThat(end(c, "tx", p, false)).isEqualTo(state(Errors.PRODUCER_FENCED, p, "FAILED"));
            RegisterTxnPartitionResponse fenced = register(c, "tx", p, -1, "orders", 0);
            assertThat(fenced.errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);

            // An Init during an open transaction aborts it first, under a bumped epoch.
            assertThat(begin(c, "tx", next).errorCode()).isEqualTo(Errors.NONE);
            register(c, "tx", next, 2, "orders", 1);
            InitProducerIdResponse third = init(c, "tx");
            assertThat(third).isEqualTo(new InitProducerIdResponse(Errors.NONE, p.producerId(), (short) 3));
            TransactionMarkerRequest abort = markers.requests.get(markers.requests.size() - 1);
            assertThat(abort.commit()).isFalse();
            assertThat(abort.producerEpoch()).isEqualTo((short) 2);
            assertThat(abort.partitions()).containsExactly(new TransactionPartition("orders", 1));

            // An idempotent producer still gets a fresh id at epoch 0.
            InitProducerIdResponse idem = init(c, null);
            assertThat(idem.errorCode()).isEqualTo(Errors.NONE);
            assertThat(idem.producerEpoch()).isZero();
        }
    }

    @Test
    void aFailedMarkerWriteIsRetriedAndMeanwhileBeginAnswersConcurrentTransactions() throws Exception {
        FakeMarkers markers = new FakeMarkers();
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            server.transactionCoordinator().markerWriter(markers);
            InitProducerIdResponse p = awaitInit(c, "tx-f");
            begin(c, "tx-f", p);
            register(c, "tx-f", p, 1, "t", 0);
            markers.failing = true;
            assertThat(end(c, "tx-f", p, true)).isEqualTo(state(Errors.COORDINATOR_NOT_AVAILABLE, p, "FAILED"));
            // The sweeper sends the markers again every 200 ms while they fail.
            Wait.until(WAIT, () -> markers.requests.size() >= 3, "markers sent again");
            TransactionResponse during = begin(c, "tx-f", p);
            assertThat(during.errorCode()).isIn(Errors.CONCURRENT_TRANSACTIONS);
            markers.failing = false;
            Wait.untilPasses(
                    WAIT,
                    () -> {
                        try {
                            assertThat(end(c, "tx-f", p, true)).isEqualTo(state(Errors.NONE, p, "COMMITTED"));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    "the commit completed by the sweeper");
            assertThat(markers.requests)
                    .allSatisfy(m -> assertThat(m.transactionSequence()).isEqualTo(1));
            assertThat(begin(c, "tx-f", p)).isEqualTo(state(Errors.NONE, p, "ONGOING"));
        }
    }

    @Test
    void aRequestWhoseConnectionClosedBeforeItRanIsDroppedWithoutAWrite() throws Exception {
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            InitProducerIdResponse p = awaitInit(c, "tx-d");
            var coordinator = server.transactionCoordinator();
            assertThat(coordinator
                            .beginTransaction("tx-d", p.producerId(), p.producerEpoch(), () -> false)
                            .get(10, TimeUnit.SECONDS))
                    .isNull();
            assertThat(coordinator.initProducerId("tx-d", () -> false).get(10, TimeUnit.SECONDS))
                    .isNull();
            // Nothing was written: the epoch and the transaction sequence did not move.
            assertThat(begin(c, "tx-d", p)).isEqualTo(state(Errors.NONE, p, "ONGOING"));
            assertThat(register(c, "tx-d", p, 1, "t", 0).transactionSequence()).isEqualTo(1);
        }
    }

    @Test
    void aTransactionPastItsTimeoutIsAbortedUnderABumpedEpochSoTheVanishedProducerIsFenced() throws Exception {
        FakeMarkers markers = new FakeMarkers();
        try (StellflowServer server = TestBroker.start(props(3_000));
                RawClient c = new RawClient(server.port())) {
            server.transactionCoordinator().markerWriter(markers);
            InitProducerIdResponse p = awaitInit(c, "tx-t");
            begin(c, "tx-t", p);
            register(c, "tx-t", p, 1, "t", 4);
            Wait.until(WAIT, () -> !markers.requests.isEmpty(), "the timeout abort's markers");
            TransactionMarkerRequest m = markers.requests.get(0);
            assertThat(m.commit()).isFalse();
            assertThat(m.producerEpoch()).isEqualTo((short) 1);
            assertThat(m.partitions()).containsExactly(new TransactionPartition("t", 4));
            assertThat(end(c, "tx-t", p, true)).isEqualTo(state(Errors.PRODUCER_FENCED, p, "FAILED"));
            assertThat(init(c, "tx-t").producerEpoch()).isEqualTo((short) 2);
        }
    }

    @Test
    void afterARestartTheLoadedCoordinatorCompletesATransactionLeftInPrepare() throws Exception {
        StellflowServer server = TestBroker.start(props());
        FakeMarkers markers = new FakeMarkers();
        markers.failing = true;
        server.transactionCoordinator().markerWriter(markers);
        InitProducerIdResponse p;
        try (RawClient c = new RawClient(server.port())) {
            p = awaitInit(c, "tx-r");
            begin(c, "tx-r", p);
            register(c, "tx-r", p, 1, "t", 0);
            assertThat(end(c, "tx-r", p, false).errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        server.close();
        // The new coordinator's writer is the broker's default (it writes nothing yet and succeeds):
        // the load finds PREPARE_ABORT and completes it.
        StellflowServer restarted = TestBroker.start(props());
        try (RawClient c = new RawClient(restarted.port())) {
            Wait.untilPasses(
                    WAIT,
                    () -> {
                        try {
                            assertThat(end(c, "tx-r", p, false)).isEqualTo(state(Errors.NONE, p, "ABORTED"));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    "the abort completed after the load");
            assertThat(begin(c, "tx-r", p)).isEqualTo(state(Errors.NONE, p, "ONGOING"));
            assertThat(register(c, "tx-r", p, -1, "t", 0).transactionSequence()).isEqualTo(2);
        } finally {
            restarted.close();
        }
    }
}
