package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.coordinator.CoordinatorRuntimeConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.protocol.Errors;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TransactionCoordinator} over a real {@link io.stellflow.broker.coordinator.CoordinatorRuntime},
 * log and {@link Partition} of {@code __transaction_state}-0 (broker 1 leads, the test plays follower
 * 2 by reporting its fetch offsets) with a recording marker writer: what happens to a transaction
 * whose PREPARE record could not be committed when it was written, as after a restart of every
 * broker (the partition's new leader alone in the ISR, or its followers not fetching yet). Its End
 * fails with {@code COORDINATOR_NOT_AVAILABLE}, the record stays in the log, and once the partition
 * commits again the sweeper must send its markers within a cleanup interval or two, not leave the
 * transaction (and every partition's last stable offset) pinned until the coordinator moves.
 */
@IntegrationTest // about 2 s a test: each waits a few real sweeps
class TransactionCoordinatorTest {
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000020");
    private static final long COMMIT_TIMEOUT_MS = 5_000;
    /** Real time between sweeps: the test waits at most a few of them. */
    private static final long CLEANUP_INTERVAL_MS = 200;

    private static final String TX = "tx-lso";
    private static final TransactionPartition A = new TransactionPartition("t", 0);
    private static final TransactionPartition B = new TransactionPartition("t", 1);

    @TempDir
    Path dir;

    private UnifiedLog log;
    private Partition partition;
    private final AtomicLong nowMs = new AtomicLong(1_000_000);
    private final InstantSource clock = () -> Instant.ofEpochMilli(nowMs.get());
    private final AtomicLong producerIds = new AtomicLong(4000);
    private final List<TransactionMarkerRequest> written = new CopyOnWriteArrayList<>();
    private TransactionCoordinator coordinator;

    @BeforeEach
    void setUp() throws IOException {
        log = UnifiedLog.open(
                dir.resolve(TransactionStateTopic.NAME + "-0"),
                new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        partition = new Partition(TransactionStateTopic.NAME, 0, 0, log, 1, 0L);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 3);
        partition.becomeLeader(2, System.currentTimeMillis());
        partition.minInsyncReplicas(2);
        Properties p = new Properties();
        p.setProperty("transaction.state.log.num.partitions", "1");
        p.setProperty(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", Long.toString(CLEANUP_INTERVAL_MS));
        coordinator = new TransactionCoordinator(
                TransactionCoordinatorConfig.parse(p),
                new CoordinatorRuntimeConfig(1, COMMIT_TIMEOUT_MS, 1 << 16),
                clock,
                () -> 1,
                request -> {
                    written.add(request);
                    return CompletableFuture.completedFuture(null);
                },
                producerIds::getAndIncrement);
        coordinator.start();
        coordinator.runtime().onBecomeLeader(partition, new PartitionImage(0, List.of(1, 2), 1, 2, List.of(1, 2), 3));
        Wait.until(Duration.ofSeconds(10), () -> coordinator.runtime().status(0) == Errors.NONE, "coordinator loaded");
    }

    @AfterEach
    void tearDown() throws IOException {
        coordinator.close();
        log.close();
    }

    /** Lets follower 2 fetch to the log end, again and again, until {@code f} is done; its value. */
    private <T> T committed(CompletableFuture<T> f) {
        Wait.until(
                Duration.ofSeconds(10),
                () -> {
                    partition.recordFollowerFetch(2, partition.logEndOffset(), System.currentTimeMillis());
                    return f.isDone();
                },
                "write committed");
        return f.join();
    }

    private static short errorOf(CompletableFuture<?> f) {
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        return CoordinatorException.errorCodeOf(f.handle((v, e) -> e).join());
    }

    /** Init, Begin and the registration of partitions A and B, each committed. */
    private InitResult openTransaction() {
        InitResult p = committed(coordinator.initProducerId(TX, () -> true));
        assertThat(p.errorCode()).isEqualTo(Errors.NONE);
        TxnResult begun = committed(coordinator.beginTransaction(TX, p.producerId(), p.producerEpoch(), () -> true));
        assertThat(begun.errorCode()).isEqualTo(Errors.NONE);
        for (TransactionPartition tp : List.of(A, B)) {
            TxnResult r = committed(coordinator.registerPartition(TX, p.producerId(), p.producerEpoch(), 1, tp));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        }
        return p;
    }

    private TransactionState state() {
        return coordinator.describeTransaction(TX).join().state();
    }

    /**
     * Waits a few sweeps (and a {@link TransactionCoordinator#CLAIM_RETRY_MS}) with follower 2 not
     * fetching: no marker may go out for a PREPARE record that is not committed.
     */
    private void assertNoMarkersWhileUncommitted() throws InterruptedException {
        Thread.sleep(TransactionCoordinator.CLAIM_RETRY_MS + 3 * CLEANUP_INTERVAL_MS);
        assertThat(written).as("no marker for an uncommitted PREPARE").isEmpty();
        assertThat(state()).isEqualTo(TransactionState.PREPARE_COMMIT);
    }

    private void awaitCommitMarkersAndCompletion(InitResult p) {
        awaitCommitMarkersAndCompletion(p, 2);
    }

    /** The follower fetches to the log end until the writer got {@code TX}'s commit markers and COMPLETE_COMMIT is committed. */
    private void awaitCommitMarkersAndCompletion(InitResult p, int coordinatorEpoch) {
        Wait.until(
                Duration.ofSeconds(5),
                () -> {
                    partition.recordFollowerFetch(2, partition.logEndOffset(), System.currentTimeMillis());
                    return state() == TransactionState.COMPLETE_COMMIT
                            && partition.highWatermark() == partition.logEndOffset();
                },
                "the sweeper sent the markers of the PREPARE_COMMIT whose End failed (writer got " + written + ")");
        assertThat(written)
                .as("the markers, sent once")
                .containsExactly(new TransactionMarkerRequest(
                        TX, List.of(A, B), p.producerId(), p.producerEpoch(), true, coordinatorEpoch, 1));
    }

    @Test
    void anEndWhosePrepareRecordWasNotCommittedInTimeHasItsMarkersSentOnceThePartitionCommitsAgain()
            throws InterruptedException {
        InitResult p = openTransaction();
        long before = partition.logEndOffset();
        CompletableFuture<TxnResult> end =
                coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, () -> true);
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() > before, "PREPARE_COMMIT appended");
        nowMs.addAndGet(COMMIT_TIMEOUT_MS); // follower 2 never fetched it in time
        coordinator.runtime().wakeup();
        assertThat(errorOf(end)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertNoMarkersWhileUncommitted();

        awaitCommitMarkersAndCompletion(p);
        // The client's retry of its End meets the completed transaction.
        TxnResult again =
                committed(coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, () -> true));
        assertThat(again.state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }

    @Test
    void anEndWhileTheIsrIsBelowMinInsyncReplicasHasItsMarkersSentOnceTheFollowerIsBack() throws InterruptedException {
        InitResult p = openTransaction();
        // As after a restart of every broker: the partition's leader is alone in its ISR for a while.
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1), 4);
        CompletableFuture<TxnResult> end =
                coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, () -> true);
        assertThat(errorOf(end)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertNoMarkersWhileUncommitted();

        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 5);
        awaitCommitMarkersAndCompletion(p);
    }

    @Test
    void aNewLeaderThatLoadsAnUncommittedPrepareSendsItsMarkersOnlyOnceItIsCommitted() throws InterruptedException {
        InitResult p = openTransaction();
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1), 4);
        assertThat(errorOf(coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, () -> true)))
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        // Re-elected at epoch 6 with its follower back in the ISR but not fetching yet: the new shard
        // loads the log to its end, PREPARE_COMMIT included, which a leader change could still lose.
        partition.becomeLeader(6, System.currentTimeMillis());
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 6);
        coordinator.runtime().onBecomeLeader(partition, new PartitionImage(0, List.of(1, 2), 1, 6, List.of(1, 2), 6));
        Wait.until(
                Duration.ofSeconds(10),
                () -> coordinator
                        .describeTransaction(TX)
                        .handle((v, e) -> e == null && v != null)
                        .join(),
                "reloaded at epoch 6");
        assertNoMarkersWhileUncommitted();

        awaitCommitMarkersAndCompletion(p, 6);
    }

    @Test
    void anEndV1IsAnsweredOnceItsMarkersAreWrittenWithoutWaitingForTheCompleteRecordToCommit() {
        InitResult p = openTransaction();
        long prepareOffset = partition.logEndOffset();
        CompletableFuture<TxnResult> end =
                coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, 1L, () -> true);
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() > prepareOffset, "PREPARE_COMMIT appended");
        // Follower 2 fetches PREPARE_COMMIT only: the markers go out, COMPLETE_COMMIT is appended after it.
        partition.recordFollowerFetch(2, prepareOffset + 1, System.currentTimeMillis());
        Wait.until(
                Duration.ofSeconds(10),
                () -> end.isDone() && partition.logEndOffset() == prepareOffset + 2,
                "End answered and COMPLETE_COMMIT appended");
        assertThat(end.join().errorCode()).isEqualTo(Errors.NONE);
        assertThat(end.join().state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(partition.highWatermark())
                .as("COMPLETE_COMMIT not committed")
                .isEqualTo(prepareOffset + 1);
        assertThat(state()).isEqualTo(TransactionState.COMPLETE_COMMIT);

        // The next Begin runs behind COMPLETE_COMMIT and is answered once both are committed.
        TxnResult next = committed(coordinator.beginTransaction(TX, p.producerId(), p.producerEpoch(), () -> true));
        assertThat(next.transactionSequence()).isEqualTo(2);
        assertThat(partition.highWatermark()).isEqualTo(partition.logEndOffset());
    }

    @Test
    void anEndV0IsAnsweredOnlyOnceTheCompleteRecordIsCommitted() throws InterruptedException {
        InitResult p = openTransaction();
        long prepareOffset = partition.logEndOffset();
        CompletableFuture<TxnResult> end =
                coordinator.endTransaction(TX, p.producerId(), p.producerEpoch(), true, () -> true);
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() > prepareOffset, "PREPARE_COMMIT appended");
        partition.recordFollowerFetch(2, prepareOffset + 1, System.currentTimeMillis());
        Wait.until(
                Duration.ofSeconds(10),
                () -> partition.logEndOffset() == prepareOffset + 2,
                "COMPLETE_COMMIT appended");
        Thread.sleep(200);
        assertThat(end)
                .as("the Go SDK's End waits for COMPLETE_COMMIT to commit")
                .isNotDone();
        assertThat(committed(end).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }
}
