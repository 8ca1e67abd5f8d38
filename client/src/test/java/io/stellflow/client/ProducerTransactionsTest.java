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
 * The transactional producer's state machine alone ({@link ProducerTransactions}), with a scripted
 * coordinator and a recording sender: Kafka's states and their transitions, the sequence carried from
 * Begin to End, abortable and fatal errors, the new epoch after an abort that left a sequence hole.
 */
class ProducerTransactionsTest {
    private static final long PID = 1000;

    /** Answers in order; records every call as "init 5000", "begin 1000/0", "end commit 3". */
    private static final class ScriptedCalls implements ProducerTransactions.Calls {
        final Deque<Answer> answers = new ArrayDeque<>();
        final List<String> calls = new ArrayList<>();

        @Override
        public Answer initProducerId(int transactionTimeoutMs) {
            calls.add("init " + transactionTimeoutMs);
            return answers.removeFirst();
        }

        @Override
        public Answer beginTransaction(long producerId, short epoch) {
            calls.add("begin " + producerId + "/" + epoch);
            return answers.removeFirst();
        }

        @Override
        public Answer endTransaction(long producerId, short epoch, boolean commit, long transactionSequence) {
            calls.add("end " + (commit ? "commit " : "abort ") + transactionSequence + " " + producerId + "/" + epoch);
            return answers.removeFirst();
        }
    }

    /** Records what the state machine asks of the sender; a failure can be injected during a flush. */
    private static final class RecordingBatches implements ProducerTransactions.Batches {
        final List<String> calls = new ArrayList<>();
        Runnable duringFlush = () -> {};
        boolean resetNeeded;
        final List<StellflowException> unsentErrors = new ArrayList<>();

        @Override
        public void producerId(long producerId, short epoch) {
            calls.add("id " + producerId + "/" + epoch);
            resetNeeded = false;
        }

        @Override
        public void flush() {
            calls.add("flush");
            duringFlush.run();
        }

        @Override
        public int failUnsent(StellflowException error) {
            calls.add("failUnsent");
            unsentErrors.add(error);
            return 1;
        }

        @Override
        public boolean producerIdResetNeeded() {
            return resetNeeded;
        }
    }

    private final ScriptedCalls calls = new ScriptedCalls();
    private final RecordingBatches batches = new RecordingBatches();
    private final ProducerTransactions txn = new ProducerTransactions(
            "tx", 5000, calls, batches, ProducerTransactions.TransactionalOffsetSender.UNAVAILABLE);

    private void answer(short code, short epoch, long sequence) {
        calls.answers.addLast(new Answer(code, PID, epoch, sequence));
    }

    private void ready() {
        answer(Errors.NONE, (short) 0, -1);
        txn.initTransactions();
    }

    private void begun(long sequence) {
        answer(Errors.NONE, (short) 0, sequence);
        txn.beginTransaction();
    }

    @Test
    void aCommitCarriesTheSequenceBeginAnsweredAndGoesBackToReady() throws Exception {
        assertThat(txn.state()).isEqualTo(State.UNINITIALIZED);
        ready();
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(batches.calls).containsExactly("id 1000/0");
        begun(7);
        assertThat(txn.state()).isEqualTo(State.IN_TRANSACTION);
        assertThat(txn.transactionSequence()).isEqualTo(7);
        assertThat(txn.checkSend()).isNull();
        answer(Errors.NONE, (short) 0, -1);
        txn.commitTransaction();
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(calls.calls).containsExactly("init 5000", "begin 1000/0", "end commit 7 1000/0");
        assertThat(batches.calls).containsExactly("id 1000/0", "flush");
    }

    @Test
    void callsInTheWrongStateAreIllegalStateAndChangeNothing() {
        assertThatThrownBy(txn::beginTransaction)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("beginTransaction in state UNINITIALIZED (transactional.id=tx), needs READY");
        assertThatThrownBy(txn::checkSend).isInstanceOf(IllegalStateException.class);
        ready();
        assertThatThrownBy(txn::initTransactions).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(txn::commitTransaction).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(txn::abortTransaction)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no transaction is open");
        assertThatThrownBy(() -> txn.sendOffsetsToTransaction(Map.of(), "g")).isInstanceOf(IllegalStateException.class);
        begun(1);
        assertThatThrownBy(txn::beginTransaction).isInstanceOf(IllegalStateException.class);
        assertThat(txn.state()).isEqualTo(State.IN_TRANSACTION);
        assertThat(calls.calls).containsExactly("init 5000", "begin 1000/0");
    }

    @Test
    void aRefusedInitOrBeginLeavesTheStateAsItWasSoTheCallCanBeRepeated() {
        answer(Errors.INVALID_REQUEST, (short) -1, -1);
        assertThatThrownBy(txn::initTransactions)
                .isInstanceOf(StellflowException.class)
                .hasMessageContaining("InitProducerId for transactional.id=tx refused");
        assertThat(txn.state()).isEqualTo(State.UNINITIALIZED);
        ready();
        answer(Errors.INVALID_REQUEST, (short) 0, -1);
        assertThatThrownBy(txn::beginTransaction).isInstanceOf(StellflowException.class);
        assertThat(txn.state()).isEqualTo(State.READY);
        begun(2);
        assertThat(txn.transactionSequence()).isEqualTo(2);
    }

    @Test
    void aBeginMeetingAnOpenTransactionOfOursTakesANewEpochAndBeginsAgainOnce() {
        ready();
        // The first Begin ran at the coordinator but its answer was lost; the retry meets it open.
        answer(Errors.INVALID_TXN_STATE, (short) 0, -1);
        answer(Errors.NONE, (short) 1, -1); // InitProducerId: epoch 1 (the coordinator aborts the open one)
        answer(Errors.NONE, (short) 1, 5);
        txn.beginTransaction();
        assertThat(txn.state()).isEqualTo(State.IN_TRANSACTION);
        assertThat(txn.transactionSequence()).isEqualTo(5);
        assertThat(calls.calls).containsExactly("init 5000", "begin 1000/0", "init 5000", "begin 1000/1");
        assertThat(batches.calls).containsExactly("id 1000/0", "id 1000/1");
    }

    @Test
    void aBeginStillMeetingAnOpenTransactionAfterTheNewEpochThrowsAndStaysReady() {
        ready();
        answer(Errors.INVALID_TXN_STATE, (short) 0, -1);
        answer(Errors.NONE, (short) 1, -1);
        answer(Errors.INVALID_TXN_STATE, (short) 1, -1);
        assertThatThrownBy(txn::beginTransaction)
                .isInstanceOf(StellflowException.class)
                .hasMessageContaining("BeginTransaction for transactional.id=tx refused");
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(calls.calls).containsExactly("init 5000", "begin 1000/0", "init 5000", "begin 1000/1");
    }

    @Test
    void closeAbortsAnOpenTransactionAndNothingElse() {
        ready();
        txn.abortOnClose(); // READY: nothing open, nothing sent
        assertThat(calls.calls).containsExactly("init 5000");
        begun(4);
        answer(Errors.NONE, (short) 0, -1);
        txn.abortOnClose();
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(calls.calls).endsWith("end abort 4 1000/0");
        assertThat(batches.calls).endsWith("failUnsent", "flush");
    }

    @Test
    void anAbortAtCloseThatFailsIsLoggedNotThrown() {
        ready();
        begun(6);
        answer(Errors.COORDINATOR_NOT_AVAILABLE, (short) 0, -1); // End abort not confirmed in max.block.ms
        txn.abortOnClose();
        assertThat(calls.calls).endsWith("end abort 6 1000/0");
        assertThat(txn.state()).isEqualTo(State.ABORTABLE_ERROR);
        answer(Errors.PRODUCER_FENCED, (short) 0, -1);
        txn.abortOnClose(); // ABORTABLE_ERROR: tried again; fenced now, still no exception
        assertThat(txn.state()).isEqualTo(State.FATAL_ERROR);
        txn.abortOnClose(); // FATAL_ERROR: nothing to abort
        assertThat(calls.calls).hasSize(4);
    }

    @Test
    void aRecordFailingDuringTheCommitFlushMakesItAbortableAndAbortRecovers() throws Exception {
        ready();
        begun(3);
        batches.duringFlush = () -> txn.batchFailed(Errors.INVALID_TXN_STATE);
        assertThatThrownBy(txn::commitTransaction)
                .isInstanceOf(StellflowException.class)
                .hasMessageContaining("call abortTransaction");
        assertThat(txn.state()).isEqualTo(State.ABORTABLE_ERROR);
        assertThat(txn.unsentError()).isNotNull();
        assertThat(txn.unsentError().errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        // Only abort helps: begin, commit and send are refused with the error.
        assertThatThrownBy(txn::beginTransaction).hasMessageContaining("call abortTransaction");
        assertThatThrownBy(txn::commitTransaction).hasMessageContaining("call abortTransaction");
        assertThat(txn.checkSend().errorCode()).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(calls.calls).doesNotContain("end commit 3 1000/0");

        batches.duringFlush = () -> {};
        batches.resetNeeded = true; // the failed batch left a hole in its partition's sequences
        answer(Errors.NONE, (short) 0, -1); // End abort
        answer(Errors.NONE, (short) 1, -1); // InitProducerId again: the next epoch
        txn.abortTransaction();
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(txn.unsentError()).isNull();
        assertThat(calls.calls).endsWith("end abort 3 1000/0", "init 5000");
        assertThat(batches.calls).endsWith("failUnsent", "flush", "id 1000/1");
        assertThat(batches.unsentErrors.get(0))
                .isInstanceOf(TransactionAbortedException.class)
                .hasMessageContaining("sequence 3");
        begun(4);
        assertThat(calls.calls).endsWith("begin 1000/1");
    }

    /**
     * From the start of an abort until it ends, the sender fails whatever of the transaction it
     * still holds (a retry, the halves of a batch being split) instead of sending it: the unsent
     * error is the abort's {@link TransactionAbortedException}, the one {@code failUnsent} got, while
     * the abort waits for the records in flight; READY clears it.
     */
    @Test
    void anAbortsUnsentErrorIsTheAbortFromItsStartUntilItEnds() throws Exception {
        ready();
        begun(5);
        List<StellflowException> duringFlush = new ArrayList<>();
        batches.duringFlush = () -> duringFlush.add(txn.unsentError());
        answer(Errors.NONE, (short) 0, -1);
        txn.abortTransaction();
        assertThat(duringFlush)
                .singleElement()
                .isInstanceOf(TransactionAbortedException.class)
                .isSameAs(batches.unsentErrors.get(0));
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(txn.unsentError()).isNull();
    }

    @Test
    void anAbortWithoutAHoleKeepsTheEpoch() throws Exception {
        ready();
        begun(1);
        answer(Errors.NONE, (short) 0, -1);
        txn.abortTransaction();
        assertThat(txn.state()).isEqualTo(State.READY);
        assertThat(calls.calls).containsExactly("init 5000", "begin 1000/0", "end abort 1 1000/0");
    }

    @Test
    void beingFencedIsFatalEverywhereAfter() throws Exception {
        ready();
        begun(1);
        answer(Errors.PRODUCER_FENCED, (short) 0, -1);
        assertThatThrownBy(txn::commitTransaction)
                .isInstanceOf(ProducerFencedException.class)
                .hasMessageContaining("EndTransaction(commit) for transactional.id=tx was answered PRODUCER_FENCED");
        assertThat(txn.state()).isEqualTo(State.FATAL_ERROR);
        assertThatThrownBy(txn::abortTransaction).isInstanceOf(ProducerFencedException.class);
        assertThatThrownBy(txn::beginTransaction).isInstanceOf(ProducerFencedException.class);
        assertThat(txn.checkSend()).isInstanceOf(ProducerFencedException.class);
        assertThat(txn.unsentError()).isInstanceOf(ProducerFencedException.class);
    }

    @Test
    void aProduceAnsweredInvalidProducerEpochFencesTheProducer() {
        ready();
        begun(1);
        txn.batchFailed(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(txn.state()).isEqualTo(State.FATAL_ERROR);
        assertThatThrownBy(txn::commitTransaction).isInstanceOf(ProducerFencedException.class);
    }

    /** A producer whose commit of transaction 5 threw because its End got no answer (state COMMITTING). */
    private ProducerTransactions committingAfterAnUnansweredEnd() throws Exception {
        ProducerTransactions t = withFirstEndTimingOut();
        answer(Errors.NONE, (short) 0, -1);
        t.initTransactions();
        answer(Errors.NONE, (short) 0, 5);
        t.beginTransaction();
        assertThatThrownBy(t::commitTransaction).isInstanceOf(StellflowException.class);
        return t;
    }

    @Test
    void anEndThatCouldNotBeConfirmedIsSentAgainWithTheSameSequence() throws Exception {
        ProducerTransactions t = committingAfterAnUnansweredEnd();
        assertThat(t.state()).isEqualTo(State.COMMITTING);
        answer(Errors.NONE, (short) 0, -1);
        t.commitTransaction();
        assertThat(t.state()).isEqualTo(State.READY);
        assertThat(calls.calls).endsWith("end timed out", "end commit 5 1000/0");
    }

    /**
     * Kafka's rule: a commit whose End was not confirmed may already have committed at the
     * coordinator, so only the commit may be retried. An abort there would be answered
     * INVALID_TXN_STATE (the coordinator refuses the other outcome) and leave the producer
     * ABORTABLE_ERROR, where neither a commit nor an abort can ever learn the real outcome.
     */
    @Test
    void anAbortAfterAnUnconfirmedCommitIsRefusedSoTheCommitCanBeRetried() throws Exception {
        ProducerTransactions t = committingAfterAnUnansweredEnd();
        answer(Errors.INVALID_TXN_STATE, (short) 0, -1); // what the coordinator answers if it committed
        assertThatThrownBy(t::abortTransaction)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("commitTransaction");
        assertThat(t.state()).isEqualTo(State.COMMITTING);
        assertThat(calls.calls).doesNotContain("end abort 5 1000/0");
        calls.answers.clear();
        answer(Errors.NONE, (short) 0, -1);
        t.commitTransaction();
        assertThat(t.state()).isEqualTo(State.READY);
    }

    /** A state machine over {@link #calls} whose first EndTransaction gives up (max.block.ms) by throwing. */
    private ProducerTransactions withFirstEndTimingOut() {
        ProducerTransactions.Calls failing = new ProducerTransactions.Calls() {
            int ends;

            @Override
            public Answer initProducerId(int timeoutMs) {
                return calls.initProducerId(timeoutMs);
            }

            @Override
            public Answer beginTransaction(long producerId, short epoch) {
                return calls.beginTransaction(producerId, epoch);
            }

            @Override
            public Answer endTransaction(long producerId, short epoch, boolean commit, long sequence) {
                if (ends++ == 0) {
                    calls.calls.add("end timed out");
                    throw new StellflowException(StellflowException.NETWORK_ERROR, "timed out");
                }
                return calls.endTransaction(producerId, epoch, commit, sequence);
            }
        };
        return new ProducerTransactions(
                "tx", 5000, failing, batches, ProducerTransactions.TransactionalOffsetSender.UNAVAILABLE);
    }

    @Test
    void sendOffsetsChecksItsArgumentsAndTheStateThenUsesTheSeam() {
        ready();
        begun(2);
        assertThatThrownBy(() -> txn.sendOffsetsToTransaction(Map.of(), ""))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> txn.sendOffsetsToTransaction(Map.of(new TopicPartition("t", 0), 5L), "g"))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("TxnOffsetCommit not available");
        List<String> sent = new ArrayList<>();
        txn.offsetSender((id, pid, epoch, seq, group, offsets) ->
                sent.add(id + " " + pid + "/" + epoch + " seq " + seq + " " + group + " " + offsets));
        txn.sendOffsetsToTransaction(Map.of(new TopicPartition("t", 0), 5L), "g");
        assertThat(sent).containsExactly("tx 1000/0 seq 2 g {t-0=5}");
        txn.offsetSender((id, pid, epoch, seq, group, offsets) -> {
            throw new StellflowException(Errors.PRODUCER_FENCED, "fenced");
        });
        assertThatThrownBy(() -> txn.sendOffsetsToTransaction(Map.of(new TopicPartition("t", 0), 6L), "g"))
                .isInstanceOf(ProducerFencedException.class);
        assertThat(txn.state()).isEqualTo(State.FATAL_ERROR);
    }
}
