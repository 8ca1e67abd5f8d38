package io.stellflow.broker.transaction;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.coordinator.CoordinatorShard;
import io.stellflow.broker.transaction.TransactionRecords.TransactionValue;
import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction state machine of one {@code __transaction_state} partition: every transactional id
 * that hashes to it ({@link io.stellflow.broker.coordinator.GroupPartitioner}), its producer id and
 * epoch, its {@link TransactionState} and its current transaction (sequence, partitions, start). A
 * {@link CoordinatorShard}: commands apply their record to memory and return it, the runtime appends
 * it and answers once it is committed; time comes in as {@code nowMs} from the runtime's injected
 * clock, so the class is pure (no I/O, no system clock) and tested by driving time.
 *
 * <p>Rules (spec §6.12-6.13, {@code docs/exactly-once.md}): InitProducerId binds a producer id on first
 * use (epoch 0) and bumps the epoch on each later call, fencing older instances; at epoch {@link
 * #LAST_INIT_EPOCH} the id takes a new producer id with epoch 0. An open transaction is aborted first
 * (its ABORT markers carry the bumped epoch), then the init runs again. Begin opens a transaction and
 * adds 1 to the transaction sequence; End moves it to PREPARE_COMMIT or PREPARE_ABORT and returns the
 * markers to write; {@link #completeTransaction} records COMPLETE_* once they are written. Implicit
 * begin (EndTransaction v2 producers, KIP-890 part 2): while the id is idle, a registration of
 * sequence + 1 opens that transaction in the same write, and an End of sequence + 1 completes it
 * empty; either takes the sequence, so each is accepted once (while PREPARE_*: {@code
 * CONCURRENT_TRANSACTIONS}). Errors:
 * Begin while a transaction is open or End with none: {@code INVALID_TXN_STATE}; while PREPARE_* is
 * completing: {@code CONCURRENT_TRANSACTIONS}; an older epoch: {@code PRODUCER_FENCED}; a producer id
 * not bound to the id (or an epoch never handed out): {@code INVALID_REQUEST}.
 *
 * <p>{@link #poll}, every {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}: an
 * ONGOING transaction older than its timeout is aborted with the epoch bumped (the vanished producer
 * is fenced); an idle id unchanged for {@code transactional.id.expiration.ms} is deleted (tombstone).
 *
 * <p>Bound (issue #20): InitProducerId for an id this partition does not know is answered {@code
 * COORDINATOR_NOT_AVAILABLE} (retriable; nothing changes, nothing is written) while the ids of every
 * {@code __transaction_state} partition loaded on this broker number {@code
 * transactional.id.max.per.broker} or more. Ids already known go on; expired ids ({@link #poll}) free
 * room. The bound is checked only before a command writes: {@link #replay} never refuses, so a new
 * leader rebuilds exactly what the log holds, whatever its own count.
 *
 * <p>Claims: a command that hands out markers (End, InitProducerId, {@link #claimCompletions}) marks
 * the transaction as being completed in memory, so nobody else sends them. That mark is only true
 * while its command's caller holds the answer: a command whose write is not committed in time fails,
 * its answer is lost, and the caller releases its claims ({@link #claimAs}, {@link #releaseClaim}).
 *
 * <p>Thread-safety: confined to the runtime thread that owns the partition.
 */
public final class TransactionStateMachine implements CoordinatorShard {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionStateMachine.class);

    /** At most one WARN about the full id table per this many ms (a refused client retries). */
    private static final long WARN_INTERVAL_MS = 60_000;

    private static final AtomicLong lastWarnMs = new AtomicLong(Long.MIN_VALUE / 2);

    /** The last epoch InitProducerId hands out; the next call takes a new producer id at epoch 0. */
    public static final short LAST_INIT_EPOCH = Short.MAX_VALUE - 1;

    /**
     * The answer of {@link #initProducerId}.
     *
     * @param completeFirst non-null when a transaction of the id must be completed first (write these
     *     markers, then {@link #completeTransaction}, then call InitProducerId again); the other fields
     *     are then -1
     */
    public record InitResult(
            short errorCode, long producerId, short producerEpoch, TransactionMarkerRequest completeFirst) {
        static InitResult error(short code) {
            return new InitResult(code, -1L, (short) -1, null);
        }
    }

    /**
     * The answer of Begin, End, {@link #registerPartition} and {@link #completeTransaction}.
     *
     * @param state the id's state after the command (null on error)
     * @param transactionSequence the sequence of the current transaction (-1 on error)
     * @param markers non-null after an End that must write markers before {@link #completeTransaction}
     */
    public record TxnResult(
            short errorCode, TransactionState state, long transactionSequence, TransactionMarkerRequest markers) {
        static TxnResult error(short code) {
            return new TxnResult(code, null, -1L, null);
        }
    }

    /** One transactional id's state; {@code completing} is memory only (false after a load). */
    private static final class Txn {
        long producerId;
        short epoch;
        TransactionState state;
        int timeoutMs;
        long sequence;
        long startMs;
        long updateMs;
        final TreeSet<TransactionPartition> partitions = new TreeSet<>();
        /** Markers of the PREPARE state were handed out and have not come back yet. */
        boolean completing;
        /** The claim id ({@link TransactionStateMachine#claimAs}) of the command that set {@code completing}. */
        long claim;

        TransactionValue value() {
            return new TransactionValue(producerId, epoch, state, timeoutMs, sequence, startMs, updateMs, partitions);
        }
    }

    private final TransactionCoordinatorConfig config;
    private final int coordinatorEpoch;
    /** Transactional ids of every shard loaded on this broker (this one's included). */
    private final LongSupplier brokerIds;

    private final Map<String, Txn> txns = new HashMap<>();
    private long nextPollMs = Long.MAX_VALUE;
    /** Stamped on the transactions claimed by the commands that follow ({@link #claimAs}). */
    private long claimId;

    /**
     * @param config timeouts, expiration, cleanup interval
     * @param coordinatorEpoch the leader epoch of the partition this shard was made for (carried in
     *     markers)
     */
    public TransactionStateMachine(TransactionCoordinatorConfig config, int coordinatorEpoch) {
        this(config, coordinatorEpoch, null);
    }

    /**
     * @param config timeouts, expiration, cleanup interval, {@code transactional.id.max.per.broker}
     * @param coordinatorEpoch the leader epoch of the partition this shard was made for (carried in
     *     markers)
     * @param brokerIds the transactional ids of every shard loaded on this broker, this one's
     *     included, read on this shard's thread before a new id is taken (a sum of the shards' {@link
     *     #entryCount}); null: this shard's alone
     */
    public TransactionStateMachine(TransactionCoordinatorConfig config, int coordinatorEpoch, LongSupplier brokerIds) {
        this.config = config;
        this.coordinatorEpoch = coordinatorEpoch;
        this.brokerIds = brokerIds != null ? brokerIds : this::entryCount;
    }

    // ---------------------------------------------------------------- commands

    /**
     * InitProducerId with a transactional id (spec §6.12).
     *
     * @param candidateProducerId a fresh producer id to bind if one is needed (first use, epoch
     *     exhausted), or -1 when none could be had (then such a call answers {@code
     *     COORDINATOR_NOT_AVAILABLE})
     */
    public CoordinatorResult<InitResult> initProducerId(String transactionalId, long candidateProducerId, long nowMs) {
        return initProducerId(transactionalId, candidateProducerId, -1, nowMs);
    }

    /**
     * InitProducerId v1: as {@link #initProducerId(String, long, long)}, with the producer's
     * transaction timeout.
     *
     * @param transactionTimeoutMs the producer's {@code transaction.timeout.ms}, or -1 for {@code
     *     transaction.default.timeout.ms}; outside 1..{@code transaction.max.timeout.ms} (and not -1)
     *     it is answered {@code INVALID_REQUEST} and nothing changes
     */
    public CoordinatorResult<InitResult> initProducerId(
            String transactionalId, long candidateProducerId, int transactionTimeoutMs, long nowMs) {
        if (transactionTimeoutMs != -1 && (transactionTimeoutMs < 1 || transactionTimeoutMs > config.maxTimeoutMs())) {
            return CoordinatorResult.of(InitResult.error(Errors.INVALID_REQUEST));
        }
        int timeoutMs = transactionTimeoutMs == -1 ? config.defaultTimeoutMs() : transactionTimeoutMs;
        Txn t = txns.get(transactionalId);
        if (t == null) {
            long ids = brokerIds.getAsLong();
            if (ids >= config.maxTransactionalIds()) {
                warnFull(ids, nowMs);
                return CoordinatorResult.of(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
            }
            if (candidateProducerId < 0) {
                return CoordinatorResult.of(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
            }
            t = new Txn();
            t.producerId = candidateProducerId;
            t.epoch = 0;
            t.state = TransactionState.EMPTY;
            t.timeoutMs = timeoutMs;
            t.sequence = 0;
            t.startMs = -1;
            t.updateMs = nowMs;
            txns.put(transactionalId, t);
            return write(transactionalId, t, new InitResult(Errors.NONE, t.producerId, t.epoch, null));
        }
        if (t.state == TransactionState.ONGOING && !t.partitions.isEmpty()) {
            // The old instance's transaction is aborted under a higher epoch, fencing its late writes.
            t.epoch = bumped(t.epoch);
            t.state = TransactionState.PREPARE_ABORT;
            t.updateMs = nowMs;
            claim(t);
            return write(transactionalId, t, new InitResult(Errors.NONE, -1L, (short) -1, markers(transactionalId, t)));
        }
        if (t.state.isPreparing()) {
            if (t.completing) {
                return CoordinatorResult.of(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
            }
            // Written again, as a claim of claimCompletions: the markers go out once it is committed.
            claim(t);
            return write(transactionalId, t, new InitResult(Errors.NONE, -1L, (short) -1, markers(transactionalId, t)));
        }
        // Idle, or ONGOING with no partition (nothing written: no marker needed).
        if (t.epoch >= LAST_INIT_EPOCH) {
            if (candidateProducerId < 0) {
                return CoordinatorResult.of(InitResult.error(Errors.COORDINATOR_NOT_AVAILABLE));
            }
            t.producerId = candidateProducerId;
            t.epoch = 0;
        } else {
            t.epoch++;
        }
        t.state = TransactionState.EMPTY;
        t.partitions.clear();
        t.timeoutMs = timeoutMs;
        t.updateMs = nowMs;
        return write(transactionalId, t, new InitResult(Errors.NONE, t.producerId, t.epoch, null));
    }

    /** BeginTransaction (spec §6.13): opens a transaction, sequence + 1. */
    public CoordinatorResult<TxnResult> beginTransaction(
            String transactionalId, long producerId, short epoch, long nowMs) {
        Txn t = txns.get(transactionalId);
        short code = check(t, producerId, epoch, Errors.PRODUCER_FENCED);
        if (code != Errors.NONE) {
            return CoordinatorResult.of(TxnResult.error(code));
        }
        if (t.state == TransactionState.ONGOING) {
            return CoordinatorResult.of(TxnResult.error(Errors.INVALID_TXN_STATE));
        }
        if (t.state.isPreparing()) {
            return CoordinatorResult.of(TxnResult.error(Errors.CONCURRENT_TRANSACTIONS));
        }
        t.state = TransactionState.ONGOING;
        t.sequence++;
        t.partitions.clear();
        t.startMs = nowMs;
        t.updateMs = nowMs;
        return write(transactionalId, t, new TxnResult(Errors.NONE, t.state, t.sequence, null));
    }

    /**
     * EndTransaction (spec §6.13). An open transaction with partitions moves to PREPARE_* and the
     * result carries its markers; one without partitions completes at once. A repeated End of a
     * completed transaction with the same outcome answers it again (a client's retry).
     */
    public CoordinatorResult<TxnResult> endTransaction(
            String transactionalId, long producerId, short epoch, boolean commit, long nowMs) {
        return endTransaction(transactionalId, producerId, epoch, commit, -1L, nowMs);
    }

    /**
     * EndTransaction v1: as {@link #endTransaction(String, long, short, boolean, long)}, for the
     * transaction of {@code transactionSequence} only: another sequence than the id's current
     * transaction's is {@code INVALID_TXN_STATE} and changes nothing (a late End of an earlier
     * transaction can neither commit nor abort the next one); -1 does not check (v0). Sequence + 1
     * while the id is idle (EMPTY, COMPLETE_*) ends a transaction its producer began implicitly and
     * none of whose requests arrived (EndTransaction v2): it completes empty in one write (COMPLETE_*,
     * sequence + 1, no partitions, no markers), so a delayed registration of that sequence is refused
     * afterwards; while PREPARE_*: {@code CONCURRENT_TRANSACTIONS}.
     */
    public CoordinatorResult<TxnResult> endTransaction(
            String transactionalId,
            long producerId,
            short epoch,
            boolean commit,
            long transactionSequence,
            long nowMs) {
        Txn t = txns.get(transactionalId);
        short code = check(t, producerId, epoch, Errors.PRODUCER_FENCED);
        if (code != Errors.NONE) {
            return CoordinatorResult.of(TxnResult.error(code));
        }
        TransactionState prepare = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
        TransactionState complete = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
        if (transactionSequence >= 0 && transactionSequence == t.sequence + 1 && t.state != TransactionState.ONGOING) {
            if (t.state.isPreparing()) {
                return CoordinatorResult.of(TxnResult.error(Errors.CONCURRENT_TRANSACTIONS));
            }
            // Implicit begin: a transaction the producer began without asking, none of whose
            // requests reached this coordinator, ends empty; the sequence is taken, so a delayed
            // registration of it is refused from now on.
            t.sequence++;
            t.state = complete;
            t.partitions.clear();
            t.startMs = nowMs;
            t.updateMs = nowMs;
            return write(transactionalId, t, new TxnResult(Errors.NONE, t.state, t.sequence, null));
        }
        if (transactionSequence >= 0 && transactionSequence != t.sequence) {
            return CoordinatorResult.of(TxnResult.error(Errors.INVALID_TXN_STATE));
        }
        switch (t.state) {
            case ONGOING -> {
                t.updateMs = nowMs;
                if (t.partitions.isEmpty()) {
                    t.state = complete;
                    return write(transactionalId, t, new TxnResult(Errors.NONE, t.state, t.sequence, null));
                }
                t.state = prepare;
                claim(t);
                return write(
                        transactionalId,
                        t,
                        new TxnResult(Errors.NONE, t.state, t.sequence, markers(transactionalId, t)));
            }
            case PREPARE_COMMIT, PREPARE_ABORT -> {
                return CoordinatorResult.of(TxnResult.error(
                        t.state == prepare ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE));
            }
            case COMPLETE_COMMIT, COMPLETE_ABORT -> {
                return CoordinatorResult.of(
                        t.state == complete
                                ? new TxnResult(Errors.NONE, t.state, t.sequence, null)
                                : TxnResult.error(Errors.INVALID_TXN_STATE));
            }
            default -> {
                return CoordinatorResult.of(TxnResult.error(Errors.INVALID_TXN_STATE));
            }
        }
    }

    /**
     * The partition leader registers {@code partition} before the first transactional append to it
     * (the KIP-890 defence: an append for a transaction the coordinator does not know is refused).
     *
     * @param transactionSequence the sequence the leader expects, or -1 when it does not know it (a v0
     *     producer's Produce carries none)
     * <p>Implicit begin: {@code transactionSequence} = the id's sequence + 1 while the id is idle
     * (EMPTY, COMPLETE_*) opens that transaction in the same write (ONGOING, sequence + 1, only
     * {@code partition}, started now, so {@code transaction.timeout.ms} counts from here); while
     * PREPARE_* it is {@code CONCURRENT_TRANSACTIONS} (retriable: the previous transaction is still
     * completing). -1 never begins anything (v0 producers need BeginTransaction).
     *
     * @return {@code NONE} with the transaction's sequence; {@code INVALID_TXN_STATE} when the id has
     *     no ONGOING transaction (or not the one of {@code transactionSequence}); {@code
     *     INVALID_PRODUCER_EPOCH} for an older epoch (what Produce answers a fenced producer); {@code
     *     INVALID_REQUEST} for a producer id not bound to the id or an epoch never handed out
     */
    public CoordinatorResult<TxnResult> registerPartition(
            String transactionalId,
            long producerId,
            short epoch,
            long transactionSequence,
            TransactionPartition partition,
            long nowMs) {
        Txn t = txns.get(transactionalId);
        if (t == null) {
            return CoordinatorResult.of(TxnResult.error(Errors.INVALID_TXN_STATE));
        }
        short code = check(t, producerId, epoch, Errors.INVALID_PRODUCER_EPOCH);
        if (code != Errors.NONE) {
            return CoordinatorResult.of(TxnResult.error(code));
        }
        if (transactionSequence >= 0 && transactionSequence == t.sequence + 1 && t.state != TransactionState.ONGOING) {
            if (t.state.isPreparing()) {
                return CoordinatorResult.of(TxnResult.error(Errors.CONCURRENT_TRANSACTIONS));
            }
            // Implicit begin (KIP-890 part 2): the first registration of the next transaction opens
            // it in the same write, with its timeout counted from now.
            t.state = TransactionState.ONGOING;
            t.sequence++;
            t.partitions.clear();
            t.partitions.add(partition);
            t.startMs = nowMs;
            t.updateMs = nowMs;
            return write(transactionalId, t, new TxnResult(Errors.NONE, t.state, t.sequence, null));
        }
        if (t.state != TransactionState.ONGOING || (transactionSequence >= 0 && transactionSequence != t.sequence)) {
            return CoordinatorResult.of(TxnResult.error(Errors.INVALID_TXN_STATE));
        }
        TxnResult ok = new TxnResult(Errors.NONE, t.state, t.sequence, null);
        if (!t.partitions.add(partition)) {
            return CoordinatorResult.of(ok);
        }
        t.updateMs = nowMs;
        return write(transactionalId, t, ok);
    }

    /**
     * Records COMPLETE_COMMIT or COMPLETE_ABORT once the markers of the PREPARE state of {@code
     * transactionSequence} are written. A no-op (null state) when the id moved on meanwhile.
     */
    public CoordinatorResult<TxnResult> completeTransaction(
            String transactionalId, long producerId, long transactionSequence, long nowMs) {
        Txn t = txns.get(transactionalId);
        if (t == null || t.producerId != producerId || t.sequence != transactionSequence || !t.state.isPreparing()) {
            return CoordinatorResult.of(TxnResult.error(Errors.NONE));
        }
        t.state = t.state == TransactionState.PREPARE_COMMIT
                ? TransactionState.COMPLETE_COMMIT
                : TransactionState.COMPLETE_ABORT;
        t.completing = false;
        t.updateMs = nowMs;
        return write(transactionalId, t, new TxnResult(Errors.NONE, t.state, t.sequence, null));
    }

    /** The markers of {@code transactionSequence} could not be written: a later sweep hands them out again. */
    public CoordinatorResult<Void> releaseCompletion(
            String transactionalId, long producerId, long transactionSequence) {
        Txn t = txns.get(transactionalId);
        if (t != null && t.producerId == producerId && t.sequence == transactionSequence) {
            t.completing = false;
        }
        return CoordinatorResult.of(null);
    }

    /**
     * The markers of every PREPARE_* transaction whose markers are not being written now (after a
     * load, a timeout abort, a failed write or a released claim), each marked as being written.
     * The claimed transactions' records are written again, unchanged, so that the answer comes only
     * once the high watermark has passed them, and with them the PREPARE record each claim rests on:
     * a PREPARE record still above the high watermark (its End's write failed, or a new leader
     * loaded its whole log) may yet be lost with a leader change, and markers must never be sent for
     * an outcome that the next coordinator may not know. No record when nothing is claimed.
     */
    public CoordinatorResult<List<TransactionMarkerRequest>> claimCompletions() {
        List<TransactionMarkerRequest> out = new ArrayList<>();
        List<CoordinatorRecord> records = new ArrayList<>();
        for (Map.Entry<String, Txn> e : txns.entrySet()) {
            Txn t = e.getValue();
            if (t.state.isPreparing() && !t.completing) {
                claim(t);
                out.add(markers(e.getKey(), t));
                records.add(TransactionRecords.record(e.getKey(), t.value()));
            }
        }
        return new CoordinatorResult<>(records, out);
    }

    /**
     * Stamps {@code claimId} on the transactions that the commands run after this call claim (End,
     * InitProducerId, {@link #claimCompletions}), until the next call: the caller that never gets a
     * command's answer (its write was not committed in time, or the ISR fell below {@code
     * min.insync.replicas}) releases that command's claims with {@link #releaseClaim}. Writes nothing.
     */
    public void claimAs(long claimId) {
        this.claimId = claimId;
    }

    /**
     * Releases the claims stamped {@code claimId} ({@link #claimAs}) whose transaction is still in
     * PREPARE: the command that claimed them failed, so nobody writes their markers, and the next
     * {@link #claimCompletions} hands them out again. Writes nothing.
     *
     * @return how many were released
     */
    public CoordinatorResult<Integer> releaseClaim(long claimId) {
        int released = 0;
        for (Txn t : txns.values()) {
            if (t.completing && t.claim == claimId && t.state.isPreparing()) {
                t.completing = false;
                released++;
            }
        }
        return CoordinatorResult.of(released);
    }

    /** The stored state of {@code transactionalId}, or null when unknown (tests, tools). */
    public TransactionValue describe(String transactionalId) {
        Txn t = txns.get(transactionalId);
        return t == null ? null : t.value();
    }

    // ---------------------------------------------------------------- CoordinatorShard

    @Override
    public void replay(long offset, byte[] key, byte[] value) {
        TransactionRecords.Decoded d = TransactionRecords.decode(key, value);
        if (d.value() == null) {
            txns.remove(d.transactionalId());
            return;
        }
        TransactionValue v = d.value();
        Txn t = new Txn();
        t.producerId = v.producerId();
        t.epoch = v.producerEpoch();
        t.state = v.state();
        t.timeoutMs = v.timeoutMs();
        t.sequence = v.transactionSequence();
        t.startMs = v.startTimestampMs();
        t.updateMs = v.lastUpdateTimestampMs();
        t.partitions.addAll(v.partitions());
        txns.put(d.transactionalId(), t);
    }

    @Override
    public void onLoaded(long nowMs) {
        nextPollMs = nowMs; // timeouts that passed while no one coordinated are handled at once
    }

    @Override
    public CoordinatorResult<Void> poll(long nowMs) {
        if (nowMs < nextPollMs) {
            return CoordinatorResult.of(null);
        }
        nextPollMs = nowMs + config.cleanupIntervalMs();
        List<CoordinatorRecord> records = new ArrayList<>();
        var it = txns.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Txn> e = it.next();
            Txn t = e.getValue();
            if (t.state == TransactionState.ONGOING && nowMs - t.startMs > t.timeoutMs) {
                t.epoch = bumped(t.epoch);
                t.state = t.partitions.isEmpty() ? TransactionState.COMPLETE_ABORT : TransactionState.PREPARE_ABORT;
                t.completing = false; // the next claim hands its markers out
                t.updateMs = nowMs;
                records.add(TransactionRecords.record(e.getKey(), t.value()));
            } else if (t.state.isIdle() && nowMs - t.updateMs >= config.idExpirationMs()) {
                it.remove();
                records.add(TransactionRecords.tombstone(e.getKey()));
            }
        }
        return new CoordinatorResult<>(records, null);
    }

    @Override
    public long nextDeadlineMs() {
        return nextPollMs;
    }

    @Override
    public long entryCount() {
        return txns.size();
    }

    // ---------------------------------------------------------------- helpers

    /** NONE, or the code for an unknown id / unbound producer id / wrong epoch. */
    private static short check(Txn t, long producerId, short epoch, short staleEpochCode) {
        if (t == null || t.producerId != producerId) {
            return Errors.INVALID_REQUEST;
        }
        if (epoch < t.epoch) {
            return staleEpochCode;
        }
        return epoch == t.epoch ? Errors.NONE : Errors.INVALID_REQUEST;
    }

    private void warnFull(long ids, long nowMs) {
        long last = lastWarnMs.get();
        if (nowMs - last >= WARN_INTERVAL_MS && lastWarnMs.compareAndSet(last, nowMs)) {
            LOG.warn(
                    "InitProducerId for a new transactional id refused with COORDINATOR_NOT_AVAILABLE: the "
                            + "coordinator keeps {} transactional ids, transactional.id.max.per.broker is {}; new ids "
                            + "are refused until ids expire (transactional.id.expiration.ms); known ids go on",
                    ids,
                    config.maxTransactionalIds());
        }
    }

    /** The epoch after a fencing abort: +1, at most Short.MAX_VALUE (never handed to a client). */
    private static short bumped(short epoch) {
        return epoch == Short.MAX_VALUE ? epoch : (short) (epoch + 1);
    }

    /** Marks {@code t}'s markers as being written by the current command's caller. */
    private void claim(Txn t) {
        t.completing = true;
        t.claim = claimId;
    }

    private TransactionMarkerRequest markers(String transactionalId, Txn t) {
        return new TransactionMarkerRequest(
                transactionalId,
                List.copyOf(t.partitions),
                t.producerId,
                t.epoch,
                t.state == TransactionState.PREPARE_COMMIT,
                coordinatorEpoch,
                t.sequence);
    }

    private static <T> CoordinatorResult<T> write(String transactionalId, Txn t, T response) {
        return new CoordinatorResult<>(List.of(TransactionRecords.record(transactionalId, t.value())), response);
    }

    // ---------------------------------------------------------------- queries (transactions tool)

    /** Every transactional id of this partition (read-only; ListTransactions). */
    public List<TransactionView> transactions() {
        List<TransactionView> out = new ArrayList<>(txns.size());
        for (Map.Entry<String, Txn> e : txns.entrySet()) {
            out.add(view(e.getKey(), e.getValue()));
        }
        return out;
    }

    /** {@code transactionalId}'s state, or null when this partition has no such id (read-only). */
    public TransactionView transactionView(String transactionalId) {
        Txn t = txns.get(transactionalId);
        return t == null ? null : view(transactionalId, t);
    }

    private static TransactionView view(String id, Txn t) {
        return new TransactionView(
                id, t.producerId, t.epoch, t.state, t.timeoutMs, t.startMs, t.sequence, List.copyOf(t.partitions));
    }
}
