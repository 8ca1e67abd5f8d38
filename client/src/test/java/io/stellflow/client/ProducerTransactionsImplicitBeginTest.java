package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.client.ProducerTransactions.Answer;
import io.stellflow.client.ProducerTransactions.State;
import io.stellflow.protocol.Errors;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Implicit begin in the producer's state machine ({@link ProducerTransactions}): after a transaction
 * ended at a coordinator that speaks EndTransaction v2, the next begins without a BeginTransaction
 * (sequence + 1); after every InitProducerId, and with a coordinator that speaks only v1, Begin is
 * sent; a locally begun transaction that sent nothing ends without a request.
 */
class ProducerTransactionsImplicitBeginTest {
    private static final long PID = 1000;

    /** Answers in order; records every call; {@code v2} is what {@link #beginsImplicitly} reports. */
    private static final class ScriptedCalls implements ProducerTransactions.Calls {
        final Deque<Answer> answers = new ArrayDeque<>();
        final List<String> calls = new ArrayList<>();
        boolean v2 = true;
        private boolean lastEndV2;

        @Override
        public Answer initProducerId(int transactionTimeoutMs) {
            calls.add("init");
            return answers.removeFirst();
        }

        @Override
        public Answer beginTransaction(long producerId, short epoch) {
            calls.add("begin " + epoch);
            return answers.removeFirst();
        }

        @Override
        public Answer endTransaction(long producerId, short epoch, boolean commit, long transactionSequence) {
            calls.add("end " + (commit ? "commit " : "abort ") + transactionSequence + " epoch " + epoch);
            lastEndV2 = v2;
            return answers.removeFirst();
        }

        @Override
        public boolean beginsImplicitly() {
            return lastEndV2;
        }
    }

    private static final class Batches implements ProducerTransactions.Batches {
        boolean resetNeeded;

        @Override
        public void producerId(long producerId, short epoch) {
            resetNeeded = false;
        }

        @Override
        public void flush() {}

        @Override
        public int failUnsent(StellflowException error) {
            return 0;
        }

        @Override
        public boolean producerIdResetNeeded() {
            return resetNeeded;
        }
    }

    private final ScriptedCalls calls = new ScriptedCalls();
    private final Batches batches = new Batches();
    private final List<Long> offsetSequences = new ArrayList<>();
    private final ProducerTransactions txn = new ProducerTransactions(
            "tx", 5000, calls, batches, (id, pid, epoch, seq, group, offsets) -> offsetSequences.add(seq));

    private void answer(short epoch, long sequence) {
        calls.answers.addLast(new Answer(Errors.NONE, PID, epoch, sequence));
    }

    /** Init (epoch 0), then a first transaction with an explicit Begin answering {@code sequence}, committed. */
    private void firstTransactionCommitted(long sequence) throws Exception {
        answer((short) 0, -1);
        txn.initTransactions();
        answer((short) 0, sequence);
        txn.beginTransaction();
        assertThat(txn.checkSend()).isNull(); // a record
        answer((short) 0, sequence);
        txn.commitTransaction();
    }

    @Test
    void afterTheFirstTransactionNoBeginIsSentAndEachTransactionTakesTheNextSequence() throws Exception {
        firstTransactionCommitted(7);
        for (long expected = 8; expected <= 10; expected++) {
            txn.beginTransaction();
            assertThat(txn.state()).isEqualTo(State.IN_TRANSACTION);
            assertThat(txn.transactionSequence()).isEqualTo(expected);
            assertThat(txn.checkSend()).isNull();
            answer((short) 0, expected);
            if (expected == 9) {
                txn.abortTransaction(); // an abort through End counts as well
            } else {
                txn.commitTransaction();
            }
        }
        assertThat(calls.calls)
                .containsExactly(
                        "init",
                        "begin 0",
                        "end commit 7 epoch 0",
                        "end commit 8 epoch 0",
                        "end abort 9 epoch 0",
                        "end commit 10 epoch 0");
    }

    @Test
    void aCoordinatorWithoutEndV2GetsABeginForEachTransaction() throws Exception {
        calls.v2 = false;
        firstTransactionCommitted(7);
        answer((short) 0, 8);
        txn.beginTransaction();
        assertThat(txn.transactionSequence()).isEqualTo(8);
        assertThat(calls.calls).containsExactly("init", "begin 0", "end commit 7 epoch 0", "begin 0");
    }

    @Test
    void anAbortThatNeedsANewEpochGoesBackToAnExplicitBegin() throws Exception {
        firstTransactionCommitted(7);
        txn.beginTransaction(); // local: 8
        assertThat(txn.checkSend()).isNull();
        batches.resetNeeded = true; // a batch failed and left a hole in its sequences
        answer((short) 0, 8); // End abort 8
        answer((short) 1, -1); // InitProducerId: epoch 1
        txn.abortTransaction();
        answer((short) 1, 9);
        txn.beginTransaction();
        assertThat(txn.transactionSequence()).isEqualTo(9);
        assertThat(calls.calls)
                .containsExactly("init", "begin 0", "end commit 7 epoch 0", "end abort 8 epoch 0", "init", "begin 1");
    }

    @Test
    void anAbortWhoseNewEpochFailsStaysAbortingAndItsRetryTakesTheEpochBeforeAnyLocalBegin() throws Exception {
        firstTransactionCommitted(7);
        txn.beginTransaction(); // local: 8
        assertThat(txn.checkSend()).isNull();
        batches.resetNeeded = true;
        answer((short) 0, 8); // End abort 8
        calls.answers.addLast(new Answer(Errors.INVALID_REQUEST, -1, (short) -1, -1)); // InitProducerId refused
        assertThatThrownBy(txn::abortTransaction).isInstanceOf(StellflowException.class);
        assertThat(txn.state()).isEqualTo(State.ABORTING); // not READY: the sequence hole is still there
        answer((short) 0, 8); // the same End, answered again
        answer((short) 1, -1); // InitProducerId: epoch 1
        txn.abortTransaction();
        answer((short) 1, 9);
        txn.beginTransaction();
        assertThat(calls.calls)
                .containsExactly(
                        "init",
                        "begin 0",
                        "end commit 7 epoch 0",
                        "end abort 8 epoch 0",
                        "init",
                        "end abort 8 epoch 0",
                        "init",
                        "begin 1");
    }

    @Test
    void aLocallyBegunTransactionThatSentNothingEndsWithoutARequestAndKeepsItsSequence() throws Exception {
        firstTransactionCommitted(7);
        txn.beginTransaction();
        txn.commitTransaction();
        txn.beginTransaction();
        txn.abortTransaction();
        assertThat(txn.state()).isEqualTo(State.READY);
        txn.beginTransaction();
        assertThat(txn.transactionSequence()).isEqualTo(8);
        assertThat(calls.calls).containsExactly("init", "begin 0", "end commit 7 epoch 0");
    }

    @Test
    void offsetsAsTheFirstActionCarryTheNextSequenceAndTheEndIsSent() throws Exception {
        firstTransactionCommitted(7);
        txn.beginTransaction();
        txn.sendOffsetsToTransaction(Map.of(new TopicPartition("in", 0), 42L), "group");
        answer((short) 0, 8);
        txn.commitTransaction();
        assertThat(offsetSequences).containsExactly(8L);
        assertThat(calls.calls).containsExactly("init", "begin 0", "end commit 7 epoch 0", "end commit 8 epoch 0");
    }

    @Test
    void theFirstTransactionAfterInitIsBegunExplicitlyEvenWhenItSendsNothing() throws Exception {
        answer((short) 0, -1);
        txn.initTransactions();
        answer((short) 0, 3);
        txn.beginTransaction();
        answer((short) 0, 3);
        txn.commitTransaction(); // Begin reached the coordinator: the End must be sent
        assertThat(calls.calls).containsExactly("init", "begin 0", "end commit 3 epoch 0");
    }

    @Test
    void aLocallyBegunTransactionItsCoordinatorNeverBeganIsAbortedUnderANewEpoch() throws Exception {
        firstTransactionCommitted(7); // End v2: the next Begin is local
        txn.beginTransaction();
        assertThat(txn.transactionSequence()).isEqualTo(8);
        assertThat(txn.checkSend()).isNull(); // a record went out; its registration was refused
        // The coordinator moved to a broker without EndTransaction v2: it never began 8.
        calls.v2 = false;
        calls.answers.addLast(new Answer(Errors.INVALID_TXN_STATE, PID, (short) 0, -1));
        assertThatThrownBy(txn::commitTransaction).isInstanceOf(StellflowException.class);
        assertThat(txn.state()).isEqualTo(State.ABORTABLE_ERROR);
        calls.answers.addLast(new Answer(Errors.INVALID_TXN_STATE, PID, (short) 0, -1)); // End abort of 8
        answer((short) 1, -1); // InitProducerId: a new epoch
        txn.abortTransaction(); // before the fix: INVALID_TXN_STATE again, ABORTABLE_ERROR for good
        assertThat(txn.state()).isEqualTo(State.READY);
        answer((short) 1, 8); // an explicit Begin again
        txn.beginTransaction();
        assertThat(txn.transactionSequence()).isEqualTo(8);
        assertThat(calls.calls)
                .containsExactly(
                        "init",
                        "begin 0",
                        "end commit 7 epoch 0",
                        "end commit 8 epoch 0",
                        "end abort 8 epoch 0",
                        "init",
                        "begin 1");
    }
}
