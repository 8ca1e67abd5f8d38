package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdResponse;
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
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactional offset commits on one real broker over its socket (TxnOffsetCommit, {@code
 * docs/exactly-once.md} "Transactional offset commits"): InitProducerId with a transactional id,
 * BeginTransaction, TxnOffsetCommit to the group's coordinator (which registers its {@code
 * __consumer_offsets} partition in the transaction), EndTransaction. OffsetFetch shows the offsets
 * only after a commit, never after an abort, and a coordinator restarted with the transaction open
 * loads the offsets as pending and applies them when the transaction then commits.
 */
@IntegrationTest
public class TxnOffsetCommitEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String TOPIC = "in";
    private static final String GROUP = "etl";
    private static final String TID = "etl-tx";

    @TempDir
    Path dir;

    private Properties props() {
        Properties p = TestBroker.props(dir, "nio");
        p.setProperty("offsets.topic.num.partitions", "1");
        p.setProperty("transaction.state.log.num.partitions", "1");
        return p;
    }

    /**
     * TxnOffsetCommit of {@code offsets} (partition i gets offsets[i]), retried while the coordinator's
     * topic is created, led or loaded; the codes in partition order.
     */
    private static List<Short> txnCommit(RawClient c, long pid, short epoch, long... offsets) {
        List<OffsetCommitPartition> parts = new ArrayList<>();
        for (int i = 0; i < offsets.length; i++) {
            parts.add(new OffsetCommitPartition(i, offsets[i], "tx-meta"));
        }
        TxnOffsetCommitRequest req = new TxnOffsetCommitRequest(
                TID, GROUP, pid, epoch, -1, null, -1, List.of(new OffsetCommitTopic(TOPIC, parts)));
        List<Short> codes = new ArrayList<>();
        Wait.until(
                WAIT,
                () -> {
                    codes.clear();
                    OffsetCommitResponse r = OffsetCommitResponse.read(call(c, ApiKeys.TXN_OFFSET_COMMIT, req));
                    r.topics().get(0).partitions().forEach(p -> codes.add(p.errorCode()));
                    return !coordinatorMoving(codes.get(0));
                },
                "TxnOffsetCommit");
        return codes;
    }

    /**
     * The codes a client retries after a new FindCoordinator: the first group request creates
     * {@code __consumer_offsets}, whose partition is then led and loaded a moment later.
     */
    private static boolean coordinatorMoving(short code) {
        return code == Errors.COORDINATOR_NOT_AVAILABLE || code == Errors.NOT_COORDINATOR;
    }

    /** OffsetFetch v0 of partitions 0 and 1, retried while the coordinator loads. */
    private static List<Long> fetched(RawClient c) {
        List<Long> offsets = new ArrayList<>();
        Wait.until(
                WAIT,
                () -> {
                    offsets.clear();
                    OffsetFetchResponse r = OffsetFetchResponse.read(call(
                            c,
                            ApiKeys.OFFSET_FETCH,
                            new OffsetFetchRequest(
                                    GROUP, List.of(new OffsetFetchRequest.OffsetFetchTopic(TOPIC, List.of(0, 1))))));
                    boolean loading = false;
                    for (OffsetFetchResponse.OffsetFetchPartitionResponse p :
                            r.topics().get(0).partitions()) {
                        loading |= coordinatorMoving(p.errorCode());
                        offsets.add(p.offset());
                    }
                    return !loading;
                },
                "OffsetFetch");
        return offsets;
    }

    private static short plainCommit(RawClient c, int partition, long offset) {
        OffsetCommitRequest req = new OffsetCommitRequest(
                GROUP,
                List.of(new OffsetCommitTopic(TOPIC, List.of(new OffsetCommitPartition(partition, offset, "")))));
        short[] code = new short[1];
        Wait.until(
                WAIT,
                () -> {
                    code[0] = OffsetCommitResponse.read(call(c, ApiKeys.OFFSET_COMMIT, req))
                            .topics()
                            .get(0)
                            .partitions()
                            .get(0)
                            .errorCode();
                    return !coordinatorMoving(code[0]);
                },
                "OffsetCommit");
        return code[0];
    }

    private static io.netty.buffer.ByteBuf call(
            RawClient c, short apiKey, io.stellflow.protocol.message.ApiMessage body) {
        try {
            RawClient.Response r = c.call(apiKey, Requests.nextCorrelationId(), body);
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            return r.body();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** EndTransaction, retried while the transaction coordinator loads after a restart. */
    private static TransactionResponse end(RawClient c, long pid, short epoch, boolean commit) {
        TransactionResponse[] last = new TransactionResponse[1];
        Wait.until(
                WAIT,
                () -> {
                    try {
                        last[0] = TransactionalProduceTest.end(c, TID, pid, epoch, commit);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    return last[0].errorCode() != Errors.COORDINATOR_NOT_AVAILABLE
                            && last[0].errorCode() != Errors.NOT_COORDINATOR;
                },
                "EndTransaction");
        return last[0];
    }

    @Test
    void committedOffsetsAppearAtTheCommitAndAbortedOnesNever() throws Exception {
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            InitProducerIdResponse p = TransactionalProduceTest.init(c, TID);
            long pid = p.producerId();
            short epoch = p.producerEpoch();

            // No transaction open: refused, nothing written.
            assertThat(txnCommit(c, pid, epoch, 3)).containsExactly(Errors.INVALID_TXN_STATE);

            assertThat(TransactionalProduceTest.begin(c, TID, pid, epoch).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(txnCommit(c, pid, epoch, 10, 20)).containsExactly(Errors.NONE, Errors.NONE);
            assertThat(fetched(c)).as("pending offsets are invisible").containsExactly(-1L, -1L);
            assertThat(end(c, pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched(c)).containsExactly(10L, 20L);

            // An aborted transaction leaves the last committed offsets.
            assertThat(plainCommit(c, 1, 25)).isEqualTo(Errors.NONE);
            assertThat(TransactionalProduceTest.begin(c, TID, pid, epoch).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(txnCommit(c, pid, epoch, 11, 30)).containsExactly(Errors.NONE, Errors.NONE);
            assertThat(end(c, pid, epoch, false).errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched(c)).containsExactly(10L, 25L);

            // A new instance fences the old epoch.
            InitProducerIdResponse again = TransactionalProduceTest.init(c, TID);
            assertThat(again.producerEpoch()).isGreaterThan(epoch);
            assertThat(TransactionalProduceTest.begin(c, TID, pid, again.producerEpoch())
                            .errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(txnCommit(c, pid, epoch, 99)).containsExactly(Errors.INVALID_PRODUCER_EPOCH);
            assertThat(txnCommit(c, pid, again.producerEpoch(), 12)).containsExactly(Errors.NONE);
            assertThat(end(c, pid, again.producerEpoch(), true).errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched(c)).containsExactly(12L, 25L);
        }
    }

    @Test
    void aTransactionOpenAcrossACoordinatorRestartIsAppliedWhenItCommits() throws Exception {
        long pid;
        short epoch;
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            Requests.createTopic(c, TOPIC, 2);
            InitProducerIdResponse p = TransactionalProduceTest.init(c, TID);
            pid = p.producerId();
            epoch = p.producerEpoch();
            assertThat(plainCommit(c, 0, 5)).isEqualTo(Errors.NONE);
            assertThat(TransactionalProduceTest.begin(c, TID, pid, epoch).errorCode())
                    .isEqualTo(Errors.NONE);
            assertThat(txnCommit(c, pid, epoch, 40, 50)).containsExactly(Errors.NONE, Errors.NONE);
            assertThat(fetched(c)).containsExactly(5L, -1L);
        }
        // Restarted with the transaction open: the new coordinator loads its offsets as pending.
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            assertThat(fetched(c)).containsExactly(5L, -1L);
            assertThat(end(c, pid, epoch, true).errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched(c)).containsExactly(40L, 50L);
        }
        // And a load of the committed transaction (offsets, then its COMMIT marker) keeps them.
        try (StellflowServer server = TestBroker.start(props());
                RawClient c = new RawClient(server.port())) {
            assertThat(fetched(c)).containsExactly(40L, 50L);
        }
    }
}
