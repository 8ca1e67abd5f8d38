package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.transaction.TransactionRecords.TransactionValue;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.protocol.Errors;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class TransactionStateMachineTest {
    private static final String TX = "orders-tx";

    private final TxnFixture f = new TxnFixture();

    private static TransactionPartition tp(String topic, int partition) {
        return new TransactionPartition(topic, partition);
    }

    @Test
    void theFirstInitBindsAProducerIdAtEpochZeroAndEachLaterInitBumpsTheEpoch() {
        InitResult first = f.init(TX);
        assertThat(first).isEqualTo(new InitResult(Errors.NONE, 1000, (short) 0, null));
        InitResult second = f.init(TX);
        assertThat(second).isEqualTo(new InitResult(Errors.NONE, 1000, (short) 1, null));
        assertThat(f.init("other")).isEqualTo(new InitResult(Errors.NONE, 1002, (short) 0, null));
        assertThat(f.log).hasSize(3);
        TransactionValue v = f.machine.describe(TX);
        assertThat(v.state()).isEqualTo(TransactionState.EMPTY);
        assertThat(v.timeoutMs()).isEqualTo(TransactionCoordinatorConfig.DEFAULTS.defaultTimeoutMs());
        assertThat(v.transactionSequence()).isZero();
        assertThat(v.startTimestampMs()).isEqualTo(-1);
    }

    @Test
    void aCommitGoesOngoingPrepareCommitCompleteCommitAndTheNextBeginOpensTheNextSequence() {
        InitResult p = f.init(TX);
        f.nowMs += 5;
        assertThat(f.begin(TX, p)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 1, null));
        assertThat(f.machine.describe(TX).startTimestampMs()).isEqualTo(f.nowMs);
        assertThat(f.register(TX, p, 1, "t", 1).errorCode()).isEqualTo(Errors.NONE);
        assertThat(f.register(TX, p, -1, "t", 0).errorCode()).isEqualTo(Errors.NONE);
        TxnResult end = f.end(TX, p, true);
        assertThat(end.state()).isEqualTo(TransactionState.PREPARE_COMMIT);
        assertThat(end.markers())
                .isEqualTo(new TransactionMarkerRequest(
                        TX, List.of(tp("t", 0), tp("t", 1)), 1000, (short) 0, true, TxnFixture.COORDINATOR_EPOCH, 1));
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.PREPARE_COMMIT);
        assertThat(f.markersWritten(end.markers()).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        // A second completion of the same markers changes nothing.
        int logged = f.log.size();
        assertThat(f.markersWritten(end.markers()).state()).isNull();
        assertThat(f.log).hasSize(logged);

        TxnResult next = f.begin(TX, p);
        assertThat(next).isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 2, null));
        assertThat(f.machine.describe(TX).partitions()).isEmpty();
    }

    @Test
    void anEndV1OfAnotherTransactionSequenceIsRefusedAndChangesNothing() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult first = f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), true, 1, f.nowMs));
        f.markersWritten(first.markers());
        assertThat(f.begin(TX, p).transactionSequence()).isEqualTo(2);
        f.register(TX, p, 2, "t", 0);
        int logged = f.log.size();
        // A late End (abort or commit) of transaction 1 can neither end transaction 2 ...
        for (boolean commit : new boolean[] {false, true}) {
            assertThat(f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), commit, 1, f.nowMs)))
                    .isEqualTo(new TxnResult(Errors.INVALID_TXN_STATE, null, -1, null));
        }
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.ONGOING);
        // ... nor a sequence from the future; the right one ends it, and its retry is answered again.
        assertThat(f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), false, 3, f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        TxnResult second = f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), false, 2, f.nowMs));
        assertThat(second.state()).isEqualTo(TransactionState.PREPARE_ABORT);
        f.markersWritten(second.markers());
        assertThat(f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), false, 2, f.nowMs)))
                .isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_ABORT, 2, null));
        assertThat(f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), false, 1, f.nowMs))
                        .errorCode())
                .isEqualTo(Errors.INVALID_TXN_STATE);
    }

    @Test
    void anInitV1KeepsItsTransactionTimeoutAndRefusesOneOutsideTheBounds() {
        int max = TransactionCoordinatorConfig.DEFAULTS.maxTimeoutMs();
        for (int bad : new int[] {0, -2, max + 1}) {
            assertThat(f.run(f.machine.initProducerId(TX, 1000, bad, f.nowMs)))
                    .isEqualTo(new InitResult(Errors.INVALID_REQUEST, -1, (short) -1, null));
        }
        assertThat(f.machine.describe(TX)).isNull();
        assertThat(f.run(f.machine.initProducerId(TX, 1000, 5_000, f.nowMs)).producerEpoch())
                .isEqualTo((short) 0);
        assertThat(f.machine.describe(TX).timeoutMs()).isEqualTo(5_000);
        // a later Init with the default (-1) takes the broker's default again
        f.run(f.machine.initProducerId(TX, 1001, -1, f.nowMs));
        assertThat(f.machine.describe(TX).timeoutMs())
                .isEqualTo(TransactionCoordinatorConfig.DEFAULTS.defaultTimeoutMs());
        f.run(f.machine.initProducerId(TX, 1002, max, f.nowMs));
        assertThat(f.machine.describe(TX).timeoutMs()).isEqualTo(max);
    }

    @Test
    void anAbortGoesPrepareAbortThenCompleteAbort() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult end = f.end(TX, p, false);
        assertThat(end.state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(end.markers().commit()).isFalse();
        assertThat(end.markers().producerEpoch()).isZero();
        assertThat(f.markersWritten(end.markers()).state()).isEqualTo(TransactionState.COMPLETE_ABORT);
    }

    @Test
    void anEndWithoutPartitionsCompletesAtOnceWithoutMarkers() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        assertThat(f.end(TX, p, true)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_COMMIT, 1, null));
        f.begin(TX, p);
        assertThat(f.end(TX, p, false)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_ABORT, 2, null));
    }

    @Test
    void beginWhileOpenAndEndWithNoneOpenAreInvalidTxnState() {
        InitResult p = f.init(TX);
        assertThat(f.end(TX, p, true).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        f.begin(TX, p);
        int logged = f.log.size();
        assertThat(f.begin(TX, p)).isEqualTo(TxnResult.error(Errors.INVALID_TXN_STATE));
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).transactionSequence()).isEqualTo(1);
        f.end(TX, p, true);
        // A retried End with the same outcome answers it again; the other outcome is refused.
        assertThat(f.end(TX, p, true)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_COMMIT, 1, null));
        assertThat(f.end(TX, p, false).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.log).hasSize(logged + 1);
    }

    @Test
    void whileMarkersAreBeingWrittenBeginAndEndAnswerConcurrentTransactions() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult end = f.end(TX, p, true);
        assertThat(f.begin(TX, p).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(f.end(TX, p, true).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(f.end(TX, p, false).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.register(TX, p, 1, "t", 1).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        f.markersWritten(end.markers());
        assertThat(f.begin(TX, p).errorCode()).isEqualTo(Errors.NONE);
    }

    @Test
    void aNewInstanceFencesTheOldOneInBeginEndAndRegistration() {
        InitResult old = f.init(TX);
        InitResult current = f.init(TX);
        assertThat(current.producerEpoch()).isEqualTo((short) 1);
        assertThat(f.begin(TX, old).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
        f.begin(TX, current);
        assertThat(f.end(TX, old, true).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(f.register(TX, old, -1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(f.machine.describe(TX).partitions()).isEmpty();
    }

    @Test
    void aProducerIdNotBoundToTheIdOrAnEpochNeverHandedOutIsAnInvalidRequest() {
        InitResult p = f.init(TX);
        assertThat(f.begin("unknown", p).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        InitResult otherId = new InitResult(Errors.NONE, p.producerId() + 1, p.producerEpoch(), null);
        assertThat(f.begin(TX, otherId).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(f.end(TX, otherId, true).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        InitResult future = new InitResult(Errors.NONE, p.producerId(), (short) 5, null);
        assertThat(f.begin(TX, future).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        f.begin(TX, p);
        assertThat(f.register(TX, otherId, -1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
    }

    @Test
    void anInitDuringAnOpenTransactionAbortsItUnderABumpedEpochFirst() {
        InitResult old = f.init(TX);
        f.begin(TX, old);
        f.register(TX, old, 1, "t", 3);
        InitResult r = f.init(TX);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        assertThat(r.completeFirst())
                .isEqualTo(new TransactionMarkerRequest(
                        TX, List.of(tp("t", 3)), old.producerId(), (short) 1, false, TxnFixture.COORDINATOR_EPOCH, 1));
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.PREPARE_ABORT);
        // A third instance while the abort's markers are in flight is told to come back.
        assertThat(f.init(TX).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(f.end(TX, old, true).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
        f.markersWritten(r.completeFirst());
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_ABORT);
        InitResult again = f.init(TX);
        assertThat(again).isEqualTo(new InitResult(Errors.NONE, old.producerId(), (short) 2, null));
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.EMPTY);
    }

    @Test
    void anInitFindingUnclaimedPrepareMarkersHandsThemOutAgain() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult end = f.end(TX, p, true);
        f.run(f.machine.releaseCompletion(TX, p.producerId(), 1)); // the marker write failed
        InitResult r = f.init(TX);
        assertThat(r.completeFirst()).isEqualTo(end.markers());
        assertThat(f.init(TX).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
    }

    @Test
    void anInitDuringAnOpenTransactionWithoutPartitionsBumpsAtOnce() {
        InitResult old = f.init(TX);
        f.begin(TX, old);
        assertThat(f.init(TX)).isEqualTo(new InitResult(Errors.NONE, old.producerId(), (short) 1, null));
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.EMPTY);
    }

    @Test
    void atTheLastEpochTheIdTakesANewProducerIdAtEpochZero() {
        f.init(TX);
        loadWithEpoch((short) (TransactionStateMachine.LAST_INIT_EPOCH - 1));
        assertThat(f.init(TX))
                .isEqualTo(new InitResult(Errors.NONE, 1000, TransactionStateMachine.LAST_INIT_EPOCH, null));
        long candidate = f.nextProducerId;
        InitResult rotated = f.init(TX);
        assertThat(rotated).isEqualTo(new InitResult(Errors.NONE, candidate, (short) 0, null));
        assertThat(f.begin(TX, rotated).errorCode()).isEqualTo(Errors.NONE);
        // The old producer id is no longer bound to the id.
        InitResult old = new InitResult(Errors.NONE, 1000, TransactionStateMachine.LAST_INIT_EPOCH, null);
        assertThat(f.end(TX, old, true).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
    }

    @Test
    void withoutAProducerIdFromTheControllerANewIdOrARotationIsRetriable() {
        assertThat(f.machine.initProducerId(TX, -1, f.nowMs).response())
                .isEqualTo(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
        assertThat(f.machine.describe(TX)).isNull();
        f.init(TX);
        assertThat(f.machine.initProducerId(TX, -1, f.nowMs).response().producerEpoch())
                .isEqualTo((short) 1);
        loadWithEpoch(TransactionStateMachine.LAST_INIT_EPOCH);
        assertThat(f.machine.initProducerId(TX, -1, f.nowMs).response())
                .isEqualTo(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
    }

    /** Puts TX at {@code epoch} through a replayed record, as if that many inits had happened. */
    private void loadWithEpoch(short epoch) {
        TransactionValue v = f.machine.describe(TX);
        CoordinatorRecord r = TransactionRecords.record(
                TX,
                new TransactionValue(
                        v.producerId(),
                        epoch,
                        v.state(),
                        v.timeoutMs(),
                        v.transactionSequence(),
                        v.startTimestampMs(),
                        v.lastUpdateTimestampMs(),
                        v.partitions()));
        f.machine.replay(0, r.key(), r.value());
    }

    @Test
    void aTransactionPastItsTimeoutIsAbortedUnderABumpedEpochAndItsMarkersClaimedOnce() {
        InitResult p = f.init(TX);
        f.poll();
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        long start = f.nowMs;
        f.nowMs = start + f.config.defaultTimeoutMs(); // exactly at the timeout: not past it
        assertThat(f.poll()).isEmpty();
        assertThat(f.machine.nextDeadlineMs()).isEqualTo(f.nowMs + f.config.cleanupIntervalMs());
        f.nowMs += 1;
        assertThat(f.poll()).isEmpty(); // before the next cleanup interval
        f.nowMs = f.machine.nextDeadlineMs();
        List<CoordinatorRecord> aborted = f.poll();
        assertThat(aborted).hasSize(1);
        TransactionValue v = TransactionRecords.decode(
                        aborted.get(0).key(), aborted.get(0).value())
                .value();
        assertThat(v.state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(v.producerEpoch()).isEqualTo((short) 1);
        List<TransactionMarkerRequest> claimed = f.run(f.machine.claimCompletions());
        assertThat(claimed)
                .containsExactly(new TransactionMarkerRequest(
                        TX, List.of(tp("t", 0)), p.producerId(), (short) 1, false, TxnFixture.COORDINATOR_EPOCH, 1));
        assertThat(f.run(f.machine.claimCompletions())).isEmpty();
        // The vanished producer comes back: fenced.
        assertThat(f.end(TX, p, true).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
        f.markersWritten(claimed.get(0));
        assertThat(f.begin(TX, p).errorCode()).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_ABORT);
    }

    @Test
    void aTimedOutTransactionWithoutPartitionsCompletesItsAbortAtOnce() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.nowMs += f.config.defaultTimeoutMs() + 1;
        assertThat(f.poll()).hasSize(1);
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_ABORT);
        assertThat(f.machine.describe(TX).producerEpoch()).isEqualTo((short) 1);
        assertThat(f.run(f.machine.claimCompletions())).isEmpty();
    }

    @Test
    void anIdleTransactionalIdExpiresWithATombstoneAndAnOpenOneDoesNot() {
        InitResult p = f.init(TX);
        f.poll();
        f.nowMs += f.config.idExpirationMs() - 1;
        InitResult q = f.init("busy");
        f.begin("busy", q);
        f.nowMs += 1; // TX unchanged for exactly the expiration; "busy" open for 1 ms
        List<CoordinatorRecord> r = f.poll();
        assertThat(r).extracting(CoordinatorRecord::isTombstone).containsExactly(true);
        assertThat(TransactionRecords.decode(r.get(0).key(), null).transactionalId())
                .isEqualTo(TX);
        assertThat(f.machine.describe(TX)).isNull();
        assertThat(f.machine.describe("busy")).isNotNull();
        assertThat(f.machine.entryCount()).isEqualTo(1);
        // A returning producer starts over with a new producer id.
        assertThat(f.init(TX).producerId()).isNotEqualTo(p.producerId());
    }

    @Test
    void registrationNeedsTheOngoingTransactionOfItsSequenceAndWritesEachPartitionOnce() {
        InitResult p = f.init(TX);
        assertThat(f.register("unknown", p, -1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.register(TX, p, -1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        f.begin(TX, p);
        assertThat(f.register(TX, p, 2, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        int logged = f.log.size();
        assertThat(f.register(TX, p, 1, "t", 0))
                .isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 1, null));
        assertThat(f.register(TX, p, -1, "t", 0))
                .isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 1, null));
        assertThat(f.log).hasSize(logged + 1);
        assertThat(f.machine.describe(TX).partitions()).containsExactly(tp("t", 0));
    }

    @Test
    void aFailedMarkerWriteIsClaimedAgainAfterItsRelease() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult end = f.end(TX, p, true);
        assertThat(f.run(f.machine.claimCompletions())).isEmpty(); // End's caller is writing them
        f.run(f.machine.releaseCompletion(TX, p.producerId(), 0)); // another transaction's: ignored
        assertThat(f.run(f.machine.claimCompletions())).isEmpty();
        f.run(f.machine.releaseCompletion(TX, p.producerId(), 1));
        assertThat(f.run(f.machine.claimCompletions())).containsExactly(end.markers());
    }

    @Test
    void aClaimWritesItsTransactionAgainAndTheClaimsOfAFailedCommandAreReleasedByItsId() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        f.machine.claimAs(5);
        TxnResult end = f.end(TX, p, true); // its write is not committed in time: the answer is lost
        f.machine.claimAs(0);
        assertThat(f.run(f.machine.claimCompletions())).isEmpty();
        assertThat(f.run(f.machine.releaseClaim(4)))
                .as("another command's claims")
                .isZero();
        assertThat(f.run(f.machine.releaseClaim(5))).isEqualTo(1);

        f.machine.claimAs(6);
        CoordinatorResult<List<TransactionMarkerRequest>> claim = f.machine.claimCompletions();
        assertThat(claim.response()).containsExactly(end.markers());
        assertThat(claim.records())
                .as("answered once the PREPARE it rests on is committed")
                .hasSize(1);
        assertThat(TransactionRecords.decode(
                                claim.records().get(0).key(),
                                claim.records().get(0).value())
                        .value())
                .isEqualTo(f.machine.describe(TX));
        assertThat(f.run(f.machine.releaseClaim(5))).as("claimed again under 6").isZero();
        f.markersWritten(end.markers());
        assertThat(f.run(f.machine.releaseClaim(6)))
                .as("completed: nothing to release")
                .isZero();
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
    }

    @Test
    void aNewLeaderLoadsTheStateAndResendsTheMarkersOfATransactionFoundInPrepare() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "a", 0);
        f.register(TX, p, 1, "b", 2);
        f.end(TX, p, true); // the old leader fails before its markers are written
        InitResult q = f.init("done");
        f.begin("done", q);
        f.end("done", q, false);
        f.init("gone");
        f.log.add(TransactionRecords.tombstone("gone"));

        TransactionStateMachine fresh = f.replayed(8, f.nowMs);
        assertThat(fresh.describe(TX)).isEqualTo(f.machine.describe(TX));
        assertThat(fresh.describe("done")).isEqualTo(f.machine.describe("done"));
        assertThat(fresh.describe("gone")).isNull();
        assertThat(fresh.entryCount()).isEqualTo(2);
        List<TransactionMarkerRequest> resend = fresh.claimCompletions().response();
        assertThat(resend)
                .containsExactly(new TransactionMarkerRequest(
                        TX, List.of(tp("a", 0), tp("b", 2)), p.producerId(), (short) 0, true, 8, 1));
        assertThat(fresh.completeTransaction(TX, p.producerId(), 1, f.nowMs)
                        .response()
                        .state())
                .isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(fresh.beginTransaction(TX, p.producerId(), p.producerEpoch(), f.nowMs)
                        .response())
                .isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 2, null));
        assertThat(fresh.nextDeadlineMs()).isEqualTo(f.nowMs);
    }

    @Test
    void aRecordThatCannotBeParsedIsRefusedOnReplay() {
        assertThatThrownBy(() -> f.machine.replay(0, new byte[] {0, 9}, new byte[0]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new TreeSet<>(List.of(tp("b", 0), tp("a", 1), tp("a", 0))))
                .containsExactly(tp("a", 0), tp("a", 1), tp("b", 0));
    }
}
