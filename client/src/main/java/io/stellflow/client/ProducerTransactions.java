package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional producer's state machine ({@code transactional.id}; {@code docs/exactly-once.md},
 * "Our producer: transactions"), with Kafka's states:
 *
 * <pre>
 * UNINITIALIZED --initTransactions--> READY --beginTransaction--> IN_TRANSACTION
 * IN_TRANSACTION --commitTransaction--> COMMITTING --(flushed, End commit)--> READY
 * IN_TRANSACTION, ABORTABLE_ERROR --abortTransaction--> ABORTING --(unsent failed, End abort)--> READY
 * IN_TRANSACTION, COMMITTING --a record fails--> ABORTABLE_ERROR (only abortTransaction helps)
 * any --fenced (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH)--> FATAL_ERROR (only close helps)
 * </pre>
 *
 * <p>BeginTransaction v1 answers the transaction's sequence ({@link #transactionSequence}), which
 * every Produce v2 of the transaction and its EndTransaction carry, so a delayed request of this
 * transaction can neither join nor end the next one. Implicit begin: once a transaction ended at a
 * coordinator that speaks EndTransaction v2, the next one begins locally with the last sequence + 1
 * (the coordinator begins it on its first registration or its End); the first transaction after each
 * InitProducerId begins with BeginTransaction, to learn the sequence. A transaction begun locally
 * that sent nothing (no record, no offsets) commits or aborts without a request. A commit or abort
 * whose End could not be confirmed within {@code max.block.ms} throws and leaves the state
 * COMMITTING or ABORTING: calling the same method again sends the same End (the coordinator answers
 * a repeated End of its completed transaction again). After an abort that left a hole in a partition's sequences (a batch failed),
 * InitProducerId is sent again: the epoch goes up and every partition's sequences start at 0. A
 * Begin answered {@code INVALID_TXN_STATE} (its earlier attempt ran, the answer was lost) takes a new
 * epoch and begins again; {@link #abortOnClose} aborts a transaction left open at close.
 *
 * <p>Thread-safety: the public operations are called by application threads, one at a time (as
 * Kafka's; concurrent calls get {@link IllegalStateException} from the state checks); {@link
 * #batchFailed} comes from the client's I/O thread, the sender or a thread that compressed the batch. State changes are short synchronized sections;
 * nothing blocks while holding the monitor.
 */
final class ProducerTransactions {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerTransactions.class);

    /** Kafka's transaction states. */
    enum State {
        UNINITIALIZED,
        READY,
        IN_TRANSACTION,
        COMMITTING,
        ABORTING,
        ABORTABLE_ERROR,
        FATAL_ERROR
    }

    /** One coordinator answer: the code, the producer id and epoch (Init), the transaction sequence (Begin). */
    record Answer(short errorCode, long producerId, short epoch, long transactionSequence) {}

    /** The coordinator's requests; {@link TransactionCoordinatorCalls} over the network. */
    interface Calls {
        /** InitProducerId v1 with {@code transaction.timeout.ms}, retried while retriable. */
        Answer initProducerId(int transactionTimeoutMs);

        /** BeginTransaction v1, retried while retriable. */
        Answer beginTransaction(long producerId, short epoch);

        /** EndTransaction v2 (v1 with a coordinator that speaks no v2), retried while retriable. */
        Answer endTransaction(long producerId, short epoch, boolean commit, long transactionSequence);

        /**
         * Whether the coordinator that answered the last {@link #endTransaction} spoke EndTransaction
         * v2: it begins the next transaction implicitly, on the first registration of its sequence
         * (or completes it empty on its End), so no BeginTransaction is needed. False before any End.
         */
        default boolean beginsImplicitly() {
            return false;
        }
    }

    /** What the state machine needs of the sender ({@link ProducerSender}). */
    interface Batches {
        /** Sets the producer id and epoch; every partition starts at sequence 0. */
        void producerId(long producerId, short epoch);

        /** Sends everything and waits until each batch is acknowledged or failed. */
        void flush() throws InterruptedException;

        /** Fails every batch not sent yet with {@code error}; returns how many. */
        int failUnsent(StellflowException error);

        /** Whether a failed batch left a hole in the sequences (a new epoch is needed). */
        boolean producerIdResetNeeded();
    }

    /**
     * The seam for transactional offset commits (TxnOffsetCommit, apiKey 31, built beside this):
     * {@link StellflowProducer#sendOffsetsToTransaction} checks the state and calls it. Until it is
     * wired, {@link #UNAVAILABLE} throws {@code UnsupportedOperationException}.
     */
    @FunctionalInterface
    interface TransactionalOffsetSender {
        /**
         * Commits {@code offsets} (the next offset to read, per partition) of {@code groupId} within
         * the transaction; they become visible when it commits. Blocks until answered.
         *
         * @throws StellflowException with the coordinator's code on failure
         */
        void send(
                String transactionalId,
                long producerId,
                short epoch,
                long transactionSequence,
                String groupId,
                Map<TopicPartition, Long> offsets);

        /** Not wired yet. */
        TransactionalOffsetSender UNAVAILABLE = (id, pid, epoch, seq, group, offsets) -> {
            throw new UnsupportedOperationException("TxnOffsetCommit not available");
        };
    }

    private final String transactionalId;
    private final int transactionTimeoutMs;
    private final Calls calls;
    private final Batches batches;
    private volatile TransactionalOffsetSender offsets;

    private State state = State.UNINITIALIZED;
    private long producerId = -1;
    private short epoch = -1;
    private volatile long transactionSequence = -1;
    /**
     * Whether the next Begin is local (no BeginTransaction): the last End succeeded at a coordinator
     * that speaks EndTransaction v2 and no InitProducerId came since. Guarded by this.
     */
    private boolean implicitBegin;
    /** The sequence of the last transaction whose End succeeded (-1 none since Init). Guarded by this. */
    private long lastEndedSequence = -1;
    /**
     * Whether a request carrying the open transaction's sequence may have left this client
     * (BeginTransaction, a record handed to the sender, TxnOffsetCommit): then its End must be sent.
     * False only for a transaction begun locally that sent nothing. Guarded by this.
     */
    private boolean sequenceUsed;
    /** Whether the open transaction began locally (no BeginTransaction was sent for it). Guarded by this. */
    private boolean begunLocally;
    /** Why the state is ABORTABLE_ERROR or FATAL_ERROR. */
    private StellflowException error;
    /** See {@link #unsentError}; null while records may be sent (IN_TRANSACTION, COMMITTING, READY). */
    private volatile StellflowException unsentError;

    ProducerTransactions(
            String transactionalId,
            int transactionTimeoutMs,
            Calls calls,
            Batches batches,
            TransactionalOffsetSender offsets) {
        this.transactionalId = transactionalId;
        this.transactionTimeoutMs = transactionTimeoutMs;
        this.calls = calls;
        this.batches = batches;
        this.offsets = offsets;
    }

    /** Plugs in the TxnOffsetCommit call ({@link TransactionalOffsetSender}). */
    void offsetSender(TransactionalOffsetSender sender) {
        this.offsets = sender;
    }

    synchronized State state() {
        return state;
    }

    /** The sequence of the open transaction, for Produce v2 (-1 before the first Begin). */
    long transactionSequence() {
        return transactionSequence;
    }

    /** InitProducerId: the id and a new epoch (fencing older instances of the id). */
    void initTransactions() {
        enter(State.UNINITIALIZED, State.UNINITIALIZED, "initTransactions");
        init();
        synchronized (this) {
            state = State.READY;
        }
    }

    /**
     * Opens the next transaction. After a transaction ended at a coordinator that speaks
     * EndTransaction v2 ({@link Calls#beginsImplicitly}), locally: its sequence is the last ended
     * one + 1, and the coordinator begins it on its first registration (or its End); no request is
     * sent. Otherwise (the first transaction after InitProducerId, or an older coordinator)
     * BeginTransaction v1, which also tells the sequence: in READY every
     * transaction of this producer has ended, so {@code INVALID_TXN_STATE} (the coordinator has one
     * open) means a Begin of ours ran there and its answer was lost (the call retried it after a
     * timeout or a dropped connection): InitProducerId is sent once (a new epoch, which aborts that
     * transaction and fences its requests still on the way), then Begin again.
     */
    void beginTransaction() {
        enter(State.READY, State.READY, "beginTransaction");
        synchronized (this) {
            if (implicitBegin) {
                transactionSequence = lastEndedSequence + 1;
                sequenceUsed = false;
                begunLocally = true;
                state = State.IN_TRANSACTION;
                return;
            }
        }
        Answer a = calls.beginTransaction(producerId, epoch);
        if (a.errorCode() == Errors.INVALID_TXN_STATE) {
            LOG.info(
                    "BeginTransaction for transactional.id={} answered INVALID_TXN_STATE: a transaction of"
                            + " producer {} epoch {} is open at the coordinator (an earlier Begin whose answer"
                            + " was lost); taking a new epoch, which aborts it",
                    transactionalId,
                    producerId,
                    epoch);
            init();
            a = calls.beginTransaction(producerId, epoch);
        }
        if (a.errorCode() != Errors.NONE) {
            throw failed("BeginTransaction", a.errorCode(), false);
        }
        synchronized (this) {
            transactionSequence = a.transactionSequence();
            sequenceUsed = true;
            begunLocally = false;
            state = State.IN_TRANSACTION;
        }
    }

    /**
     * Flushes, then EndTransaction v2 (v1 to an older coordinator) commit. A record of the transaction that failed makes it
     * ABORTABLE_ERROR and throws (the application must abort); fenced: FATAL_ERROR.
     */
    void commitTransaction() throws InterruptedException {
        synchronized (this) {
            if (state != State.COMMITTING) { // COMMITTING: a retry after an End that was not confirmed
                enter(State.IN_TRANSACTION, State.COMMITTING, "commitTransaction");
            }
        }
        batches.flush();
        synchronized (this) {
            if (state != State.COMMITTING) {
                throw error; // a batch failed during the flush: ABORTABLE_ERROR or FATAL_ERROR
            }
        }
        if (!endsLocally()) {
            Answer a = calls.endTransaction(producerId, epoch, true, transactionSequence);
            if (a.errorCode() != Errors.NONE) {
                throw failed("EndTransaction(commit)", a.errorCode(), true);
            }
            ended();
        }
        synchronized (this) {
            state = State.READY;
        }
    }

    /**
     * Fails the transaction's unsent records with {@link TransactionAbortedException}, waits for those
     * in flight, then EndTransaction v2 abort; a new epoch when a failed batch left a sequence hole.
     * Until the abort ends ({@link #unsentError}) the sender fails with the same exception whatever
     * of the transaction comes back to it (a retry, the halves of a batch refused as too large, one
     * being split when the abort began): nothing of it is sent after the abort began, and the wait
     * covers those too.
     */
    void abortTransaction() throws InterruptedException {
        StellflowException aborted;
        synchronized (this) {
            if (state == State.FATAL_ERROR) {
                throw error;
            }
            if (state == State.COMMITTING) {
                // The commit's End may have run at the coordinator (only its answer is missing), which
                // then refuses an abort with INVALID_TXN_STATE for good: only the commit may be retried.
                throw new IllegalStateException("abortTransaction in state COMMITTING (transactional.id="
                        + transactionalId + "): a commit is under way or its End was not confirmed and may"
                        + " have committed; call commitTransaction again");
            }
            if (state != State.IN_TRANSACTION && state != State.ABORTABLE_ERROR && state != State.ABORTING) {
                throw new IllegalStateException("abortTransaction in state " + state + " (transactional.id="
                        + transactionalId + "): no transaction is open");
            }
            state = State.ABORTING;
            // From here until READY the sender fails every record of the transaction it still holds
            // instead of sending it: a retried batch, the halves of one refused as too large.
            unsentError = new TransactionAbortedException("the transaction of transactional.id=" + transactionalId
                    + " (sequence " + transactionSequence + ") was aborted before this record was sent");
            aborted = unsentError;
        }
        batches.failUnsent(aborted);
        batches.flush();
        boolean newEpoch = false;
        if (!endsLocally()) {
            Answer a = calls.endTransaction(producerId, epoch, false, transactionSequence);
            if (a.errorCode() == Errors.INVALID_TXN_STATE && begunLocally()) {
                // The coordinator never began this locally begun transaction: it moved to a broker
                // without EndTransaction v2 (an upgrade or downgrade under way), which neither begins
                // on registration nor ends sequence + 1. A new epoch aborts whatever the id has open
                // and fences this transaction's requests still on the way; the next Begin is explicit.
                LOG.info(
                        "EndTransaction(abort) of the locally begun transaction {} of transactional.id={} answered"
                                + " INVALID_TXN_STATE (its coordinator does not begin transactions implicitly);"
                                + " taking a new epoch",
                        transactionSequence,
                        transactionalId);
                newEpoch = true;
            } else if (a.errorCode() != Errors.NONE) {
                throw failed("EndTransaction(abort)", a.errorCode(), true);
            } else {
                ended();
            }
        }
        if (newEpoch || batches.producerIdResetNeeded()) {
            init(); // a sequence hole (a failed batch), or a coordinator that never began it: a new epoch
        }
        synchronized (this) {
            state = State.READY;
            unsentError = null;
        }
    }

    /**
     * Whether the open transaction ends without a request: begun locally and nothing carrying its
     * sequence left this client, so the coordinator never saw it and the next transaction reuses
     * the sequence.
     */
    private synchronized boolean endsLocally() {
        return !sequenceUsed;
    }

    private synchronized boolean begunLocally() {
        return begunLocally;
    }

    /**
     * The End of the open transaction succeeded: its sequence is the last ended one, and the next
     * Begin is local when the coordinator spoke EndTransaction v2. The caller sets READY.
     */
    private void ended() {
        boolean implicit = calls.beginsImplicitly();
        synchronized (this) {
            lastEndedSequence = transactionSequence;
            implicitBegin = implicit;
        }
    }

    /**
     * {@code close()} with time to wait: a transaction left open (IN_TRANSACTION or ABORTABLE_ERROR) is
     * aborted, as Kafka's producer does on a graceful close, so its partitions' last stable offsets
     * move now instead of after {@code transaction.timeout.ms}. A commit or abort still unconfirmed
     * (COMMITTING, ABORTING) is left as it is. Never throws: an abort that fails is logged (WARN)
     * and the coordinator aborts the transaction at its timeout.
     */
    void abortOnClose() {
        State now;
        synchronized (this) {
            now = state;
        }
        if (now != State.IN_TRANSACTION && now != State.ABORTABLE_ERROR) {
            return;
        }
        try {
            abortTransaction();
            LOG.info("close: aborted the open transaction of transactional.id={}", transactionalId);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warn("close: interrupted while aborting the open transaction of transactional.id={}", transactionalId);
        } catch (RuntimeException e) {
            LOG.warn(
                    "close: the open transaction of transactional.id={} could not be aborted ({}); the"
                            + " coordinator aborts it after transaction.timeout.ms",
                    transactionalId,
                    e.getMessage());
        }
    }

    /** {@code sendOffsetsToTransaction}: the state checks, then the {@link TransactionalOffsetSender}. */
    void sendOffsetsToTransaction(Map<TopicPartition, Long> offsetsToCommit, String groupId) {
        if (offsetsToCommit == null || groupId == null || groupId.isEmpty()) {
            throw new IllegalArgumentException("sendOffsetsToTransaction needs offsets and a non-empty groupId, got "
                    + offsetsToCommit + " and " + groupId);
        }
        enter(State.IN_TRANSACTION, State.IN_TRANSACTION, "sendOffsetsToTransaction");
        if (offsetsToCommit.isEmpty()) {
            return;
        }
        synchronized (this) {
            sequenceUsed = true; // a TxnOffsetCommit registers the group's partition: the transaction exists
        }
        try {
            offsets.send(transactionalId, producerId, epoch, transactionSequence, groupId, offsetsToCommit);
        } catch (StellflowException e) {
            throw failed("TxnOffsetCommit", e.errorCode(), true);
        }
    }

    /**
     * Whether a record may be sent now: null in IN_TRANSACTION; the error in ABORTABLE_ERROR or
     * FATAL_ERROR (given to the record's callback).
     *
     * @throws IllegalStateException outside a transaction
     */
    synchronized StellflowException checkSend() {
        return switch (state) {
            case IN_TRANSACTION -> {
                sequenceUsed = true; // the record may go out in a Produce carrying the sequence
                yield null;
            }
            case ABORTABLE_ERROR -> unsentError; // "not sent: the transaction can only be aborted since ..."
            case FATAL_ERROR -> error;
            default ->
                throw new IllegalStateException("send in state " + state + " (transactional.id=" + transactionalId
                        + "): call " + (state == State.UNINITIALIZED ? "initTransactions" : "beginTransaction")
                        + " first");
        };
    }

    /** A batch failed with {@code code} (I/O thread): the transaction can only abort, or is fenced. */
    void batchFailed(short code) {
        synchronized (this) {
            if (state == State.IN_TRANSACTION || state == State.COMMITTING) {
                if (fenced(code)) {
                    error = new ProducerFencedException(fencedMessage("a Produce", code), null);
                    state = State.FATAL_ERROR;
                    unsentError = error;
                } else {
                    abortable(new StellflowException(
                            code,
                            "a record of the transaction of transactional.id=" + transactionalId
                                    + " failed; call abortTransaction"));
                }
            }
        }
    }

    /**
     * Non-null while the transaction cannot commit (ABORTABLE_ERROR, FATAL_ERROR) and while it aborts
     * (ABORTING, a {@link TransactionAbortedException}, until READY): the sender fails the records not
     * sent yet with it instead of sending them, the halves of a batch refused as too large included.
     * Read by the sender under its lock (a volatile, no monitor), so a drain either saw it or came
     * before the abort's own {@code failUnsent}.
     */
    StellflowException unsentError() {
        return unsentError;
    }

    private void abortable(StellflowException e) {
        error = e;
        state = State.ABORTABLE_ERROR;
        unsentError = new StellflowException(
                e.errorCode(), "not sent: the transaction can only be aborted since " + e.reason(), e);
    }

    private void init() {
        Answer a = calls.initProducerId(transactionTimeoutMs);
        if (a.errorCode() != Errors.NONE) {
            throw failed("InitProducerId", a.errorCode(), false);
        }
        synchronized (this) {
            producerId = a.producerId();
            epoch = a.epoch();
            implicitBegin = false; // a new epoch: the coordinator's sequence is learnt from a Begin again
            lastEndedSequence = -1;
        }
        batches.producerId(a.producerId(), a.epoch());
    }

    /** Checks the state is {@code expected} (FATAL and ABORTABLE errors are thrown) and moves to {@code next}. */
    private synchronized void enter(State expected, State next, String what) {
        if (state == State.FATAL_ERROR || (state == State.ABORTABLE_ERROR && expected != State.UNINITIALIZED)) {
            throw error;
        }
        if (state != expected) {
            throw new IllegalStateException(
                    what + " in state " + state + " (transactional.id=" + transactionalId + "), needs " + expected);
        }
        state = next;
    }

    /**
     * The exception of a refused call: fenced codes make the producer FATAL_ERROR; {@code
     * inTransaction}: other codes make the transaction ABORTABLE_ERROR; else the state goes back.
     */
    private StellflowException failed(String what, short code, boolean inTransaction) {
        synchronized (this) {
            if (fenced(code)) {
                error = new ProducerFencedException(fencedMessage(what, code), null);
                state = State.FATAL_ERROR;
                unsentError = error;
                return error;
            }
            StellflowException e =
                    new StellflowException(code, what + " for transactional.id=" + transactionalId + " refused");
            if (inTransaction) {
                abortable(e);
            } // else (Init, Begin): the state is still the one before the call
            return e;
        }
    }

    private String fencedMessage(String what, short code) {
        return what + " for transactional.id=" + transactionalId + " was answered " + Errors.name(code)
                + ": another producer with this transactional.id took over (or the transaction timed out);"
                + " close this producer";
    }

    private static boolean fenced(short code) {
        return code == Errors.PRODUCER_FENCED || code == Errors.INVALID_PRODUCER_EPOCH;
    }
}
