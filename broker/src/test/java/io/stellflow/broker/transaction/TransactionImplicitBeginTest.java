package io.stellflow.broker.transaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.transaction.TransactionRecords.TransactionValue;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * Implicit begin ({@link TransactionStateMachine}, EndTransaction v2): while the id is idle a
 * registration of sequence + 1 opens that transaction in its own write, an End of sequence + 1
 * completes it empty; each is accepted once, other sequences and v0's -1 keep the old rules.
 */
class TransactionImplicitBeginTest {
    private static final String TX = "orders-tx";

    private final TxnFixture f = new TxnFixture();

    private static TransactionPartition tp(String topic, int partition) {
        return new TransactionPartition(topic, partition);
    }

    /** Init, an explicit Begin (sequence 1), one partition, commit completed: COMPLETE_COMMIT at 1. */
    private InitResult committedOnce() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        f.markersWritten(f.end(TX, p, true).markers());
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        return p;
    }

    private TxnResult endV1(InitResult p, boolean commit, long sequence) {
        return f.run(f.machine.endTransaction(TX, p.producerId(), p.producerEpoch(), commit, sequence, f.nowMs));
    }

    @Test
    void aRegistrationOfTheNextSequenceBeginsTheTransactionInTheSameWrite() {
        InitResult p = committedOnce();
        f.nowMs += 40;
        int logged = f.log.size();
        assertThat(f.register(TX, p, 2, "t", 3))
                .isEqualTo(new TxnResult(Errors.NONE, TransactionState.ONGOING, 2, null));
        assertThat(f.log).hasSize(logged + 1); // begin and registration: one record
        TransactionValue v = f.machine.describe(TX);
        assertThat(v.state()).isEqualTo(TransactionState.ONGOING);
        assertThat(v.transactionSequence()).isEqualTo(2);
        assertThat(v.partitions()).containsExactly(tp("t", 3));
        assertThat(v.startTimestampMs()).isEqualTo(f.nowMs);
        assertThat(v.lastUpdateTimestampMs()).isEqualTo(f.nowMs);
        // The transaction now runs as an explicitly begun one: more partitions, then the End of 2.
        assertThat(f.register(TX, p, 2, "t", 4).errorCode()).isEqualTo(Errors.NONE);
        TxnResult end = endV1(p, false, 2);
        assertThat(end.markers().partitions()).containsExactly(tp("t", 3), tp("t", 4));
        assertThat(end.markers().transactionSequence()).isEqualTo(2);
        // The record replays to the same state on a new leader.
        assertThat(f.replayed(TxnFixture.COORDINATOR_EPOCH, f.nowMs)
                        .describe(TX)
                        .state())
                .isEqualTo(TransactionState.PREPARE_ABORT);
    }

    @Test
    void theFirstRegistrationAfterInitBeginsTooAndATimeoutCountsFromIt() {
        InitResult p = f.init(TX); // EMPTY at sequence 0
        f.nowMs += 1_000;
        assertThat(f.register(TX, p, 1, "t", 0).state()).isEqualTo(TransactionState.ONGOING);
        assertThat(f.machine.describe(TX).startTimestampMs()).isEqualTo(f.nowMs);
    }

    @Test
    void onlySequencePlusOneBeginsAndItBeginsOnce() {
        InitResult p = committedOnce();
        int logged = f.log.size();
        assertThat(f.register(TX, p, 3, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE); // +2
        assertThat(f.register(TX, p, 1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE); // the old one
        assertThat(f.register(TX, p, 0, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.COMPLETE_COMMIT);

        assertThat(f.register(TX, p, 2, "t", 0).errorCode()).isEqualTo(Errors.NONE);
        // While 2 is open, a registration of 3 is no implicit begin of another transaction.
        assertThat(f.register(TX, p, 3, "t", 1).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        f.markersWritten(endV1(p, true, 2).markers());
        // A late registration of 2 (its transaction is committed) begins nothing.
        logged = f.log.size();
        assertThat(f.register(TX, p, 2, "t", 5).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).transactionSequence()).isEqualTo(2);
    }

    @Test
    void aFencedOrUnboundProducerBeginsNothing() {
        InitResult old = committedOnce();
        InitResult p = f.init(TX); // epoch 1
        int logged = f.log.size();
        assertThat(f.register(TX, old, 2, "t", 0).errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        InitResult stranger = new InitResult(Errors.NONE, 4242, p.producerEpoch(), null);
        assertThat(f.register(TX, stranger, 2, "t", 0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).state()).isEqualTo(TransactionState.EMPTY);
    }

    @Test
    void whileThePreviousTransactionPreparesTheNextSequenceIsConcurrentTransactions() {
        InitResult p = f.init(TX);
        f.begin(TX, p);
        f.register(TX, p, 1, "t", 0);
        TxnResult prepare = f.end(TX, p, true); // PREPARE_COMMIT, markers not written yet
        int logged = f.log.size();
        assertThat(f.register(TX, p, 2, "t", 0).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(endV1(p, false, 2).errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(f.log).hasSize(logged);
        f.markersWritten(prepare.markers());
        assertThat(f.register(TX, p, 2, "t", 0).state()).isEqualTo(TransactionState.ONGOING);
    }

    @Test
    void anEndOfTheNextSequenceCompletesItEmptyAndALateRegistrationOfItIsRefused() {
        InitResult p = committedOnce();
        f.nowMs += 7;
        int logged = f.log.size();
        assertThat(endV1(p, false, 2)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_ABORT, 2, null));
        assertThat(f.log).hasSize(logged + 1);
        TransactionValue v = f.machine.describe(TX);
        assertThat(v.state()).isEqualTo(TransactionState.COMPLETE_ABORT);
        assertThat(v.transactionSequence()).isEqualTo(2);
        assertThat(v.partitions()).isEmpty();
        // The Produce of 2 that was late: its registration can no longer begin (nor join) anything.
        assertThat(f.register(TX, p, 2, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        // A repeated End of 2 is answered again; the other outcome is refused; nothing is written.
        assertThat(endV1(p, false, 2)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_ABORT, 2, null));
        assertThat(endV1(p, true, 2).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.log).hasSize(logged + 1);
        // The next transaction is 3.
        assertThat(f.register(TX, p, 3, "t", 0).transactionSequence()).isEqualTo(3);
    }

    @Test
    void anEndOfSequencePlusTwoOrOfACommittedOneChangesNothing() {
        InitResult p = committedOnce();
        int logged = f.log.size();
        assertThat(endV1(p, true, 3).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(endV1(p, false, 1).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.log).hasSize(logged);
        assertThat(f.machine.describe(TX).transactionSequence()).isEqualTo(1);
    }

    @Test
    void aV0ProducerStillNeedsAnExplicitBegin() {
        InitResult p = committedOnce();
        int logged = f.log.size();
        // -1: a Produce v0/v1 (the Go SDK) registers without a sequence, and an End v0 checks none.
        assertThat(f.register(TX, p, -1, "t", 0).errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(f.end(TX, p, true)).isEqualTo(new TxnResult(Errors.NONE, TransactionState.COMPLETE_COMMIT, 1, null));
        assertThat(f.log).hasSize(logged);
        assertThat(f.begin(TX, p).transactionSequence()).isEqualTo(2);
        assertThat(f.register(TX, p, -1, "t", 0).errorCode()).isEqualTo(Errors.NONE);
        assertThat(f.machine.describe(TX).partitions()).containsExactly(tp("t", 0));
    }
}
