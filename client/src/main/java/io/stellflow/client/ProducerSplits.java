package io.stellflow.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batches the broker refused alone with {@code MESSAGE_TOO_LARGE} that the producer splits in
 * two by record count, as Kafka's producer does ({@link ProducerSender} hands them over): the I/O
 * thread that got the refusal only notes the batch ({@link #deferLocked}); the sender thread builds
 * its halves outside the lock and puts them at its place ({@link #complete}); its partition sends
 * nothing meanwhile ({@link ProducerPartitionQueue#splitsPending}).
 *
 * <p>Between the refusal and the moment the halves take the batch's place the producer's state may
 * change, and {@link #complete} decides under the lock what the halves are worth then: a
 * transaction that can no longer commit (its abort began, it became abortable or was fenced) gets
 * none sent, its batch fails with the transaction's error; a batch in doubt whose producer id or
 * epoch is no longer the producer's fails with its outcome unknown, never stored twice; otherwise
 * the halves replace it ({@link ProducerAccumulator#splitLocked}). A batch waiting here is counted
 * incomplete, so a flush, a transaction's abort or a close waits for it, and no longer.
 *
 * <p>Errors: a batch whose halves cannot be built (its own bytes unreadable, a bug, or no memory)
 * fails with the refusal's code; the producer goes on.
 *
 * <p>Thread-safety: the waiting batches are guarded by the accumulator's lock ({@code ...Locked}
 * methods); {@link #complete} runs on the sender thread and takes the lock itself.
 */
final class ProducerSplits {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerSplits.class);

    /** A batch refused alone as too large, waiting for the sender thread to build its halves. */
    record Pending(
            ProducerPartitionQueue q,
            TopicPartition tp,
            ProducerBatch batch,
            short code,
            Throwable err,
            String sizeAsSent) {}

    private final long deliveryTimeoutNs;
    private final ProducerAccumulator accumulator;
    /** {@code enable.idempotence}: the producer id and sequences; null when off. */
    private final ProducerIdempotence idempotence;

    private final ClientMetrics metrics;
    private final ReentrantLock lock;
    /** Refused batches the sender thread has not taken yet ({@link #takeLocked}); guarded by {@link #lock}. */
    private final List<Pending> waiting = new ArrayList<>();

    /** Tests only ({@link #builtHook(Consumer)}); a no-op otherwise. */
    private volatile Consumer<TopicPartition> builtHook = tp -> {};

    /** @param idempotence the producer id and sequences with {@code enable.idempotence}; null when off */
    ProducerSplits(
            ProducerConfig config,
            ProducerAccumulator accumulator,
            ProducerIdempotence idempotence,
            ClientMetrics metrics) {
        this.deliveryTimeoutNs = TimeUnit.MILLISECONDS.toNanos(config.deliveryTimeoutMs());
        this.accumulator = accumulator;
        this.idempotence = idempotence;
        this.metrics = metrics;
        this.lock = accumulator.lock;
    }

    /**
     * Tests only: {@code hook} runs on the sender thread, outside the lock, each time a refused
     * batch's halves are built and before {@link #complete} decides on them, so a test can hold a
     * split in flight while it changes the producer's state.
     */
    void builtHook(Consumer<TopicPartition> hook) {
        this.builtHook = hook;
    }

    /**
     * Whether {@code b}, refused alone with MESSAGE_TOO_LARGE, is split in two rather than failed:
     * it holds more than one record and {@code delivery.timeout.ms} is not used up. A split is not a
     * retry (as in Kafka's producer): it does not use up {@code retries}; halving ends it, at one
     * record.
     *
     * <p>With idempotence, a batch an earlier attempt of which got no verdict (a broker restart, a
     * timeout: {@link ProducerBatch#mayBeAppended}) is split too: its parts keep its sequences
     * ({@link ProducerIdempotence#split}). The refusal says it is too large now, so unless the
     * leader's limits changed between the attempts it was never appended; if it was, the leader
     * refuses the parts as out of order (their sequences are not the next ones), and they fail,
     * never stamped anew ({@link ProducerBatch#partOfMaybeAppended}): stored once, never twice. Its
     * stamp is the producer's current one at the refusal (a reset waits for every request and
     * split, and a batch is stamped anew when drained); whether it still is when its halves take its
     * place is decided then ({@link #complete}).
     */
    boolean splittable(ProducerBatch b, long nowNs) {
        return b.recordCount() > 1 && nowNs - b.createdNs < deliveryTimeoutNs;
    }

    /**
     * Notes {@code b}, refused alone as too large, for the sender thread, which builds its halves
     * outside the lock ({@link #complete}); the partition sends nothing meanwhile ({@link
     * ProducerPartitionQueue#splitsPending}). Halving converges: a part refused again is halved
     * again, down to one record, which then fails ({@link ProduceErrors#produceFailure}). Called
     * under the lock, on the thread of the response.
     */
    void deferLocked(ProducerPartitionQueue q, TopicPartition tp, ProducerBatch b, short code, Throwable err) {
        String sizeAsSent = ProduceErrors.sizeAsSent(b);
        b.refusedAsTooLarge =
                ProduceErrors.cause(err, code, ProduceErrors.refusedTooLarge(tp, sizeAsSent, b.recordCount()));
        q.splitsPending++;
        q.retrying = true; // the halves go after this partition's requests in flight came back
        waiting.add(new Pending(q, tp, b, code, err, sizeAsSent));
    }

    /** The refused batches waiting for the sender thread, now its to {@link #complete}. Called under the lock. */
    List<Pending> takeLocked() {
        if (waiting.isEmpty()) {
            return List.of();
        }
        List<Pending> taken = new ArrayList<>(waiting);
        waiting.clear();
        return taken;
    }

    /** Refused batches not yet taken by the sender thread. Called under the lock. */
    int waitingLocked() {
        return waiting.size();
    }

    /**
     * Moves the refused batches not yet taken to {@code out} (a transaction that can only abort:
     * they are unsent, the caller fails them); a stamped one leaves a hole in its partition's
     * sequences. Those the sender thread is building fail in {@link #complete}. Called under the lock.
     */
    void takeUnsentLocked(List<ProducerBatch> out) {
        for (Pending s : waiting) {
            s.q().splitsPending--;
            if (idempotence != null) {
                idempotence.failed(s.batch(), s.q().sequences);
            }
            out.add(s.batch());
        }
        waiting.clear();
    }

    /**
     * Splits the batches {@link #takeLocked} handed over: builds each one's halves without the lock
     * (decoding, and for a compressed batch decompressing, its records: the costly part), then,
     * under the lock, decides what they are worth now:
     *
     * <ul>
     *   <li>{@code txn} can no longer commit ({@link ProducerTransactions#unsentError}: its abort
     *       began, it became abortable or was fenced): the batch is unsent and fails with that error,
     *       as the abort's {@code failUnsent} fails the rest; nothing of it is sent after the abort
     *       began, and the abort, whose flush counts the batch, waits for this and no longer;
     *   <li>the producer was closed forcefully ({@link ProducerAccumulator#forceClose}): the batch
     *       fails with "producer is closed forcefully" after its refusal as too large (the cause),
     *       its halves never queued;
     *   <li>with idempotence, its producer id or epoch is no longer the producer's and it may be in
     *       the log under that old stamp ({@link ProducerIdempotence#mustFailAfterReset}): it fails
     *       with its outcome unknown, as a reset fails such a batch waiting in its queue, since its
     *       halves stamped anew could store its records a second time;
     *   <li>otherwise the halves take its place ({@link ProducerAccumulator#splitLocked}): under its
     *       current stamp they keep its sequences; under an older one, not in doubt, they are
     *       stamped anew when drained, in order (as Kafka's producer re-stamps a batch after a
     *       reset). Counted as a retry and a split.
     * </ul>
     *
     * Callbacks run here, outside the lock. Sender thread only.
     *
     * @param txn the transactions of a {@code transactional.id} producer; null otherwise
     */
    void complete(List<Pending> splits, ProducerTransactions txn) {
        List<Runnable> completions = new ArrayList<>();
        List<ProducerBatch> done = new ArrayList<>();
        for (Pending s : splits) {
            ProducerBatch[] halves = null;
            Throwable failure = null;
            try {
                halves = s.batch().halves(accumulator.batchBuffers());
            } catch (RuntimeException | OutOfMemoryError e) {
                failure = e; // a bug, or no memory for the parts: this batch fails, the producer goes on
            }
            builtHook.accept(s.tp());
            lock.lock();
            try {
                s.q().splitsPending--;
                StellflowException txnError = txn == null ? null : txn.unsentError();
                StellflowException error = txnError;
                if (error == null && accumulator.forcedCloseLocked()) {
                    error = ProduceErrors.closedForcefully(s.batch(), false); // the sender ends after this round
                }
                if (error == null && halves == null) {
                    LOG.error(
                            "splitting a refused batch of {} failed; its {} records fail",
                            s.tp(),
                            s.batch().recordCount(),
                            failure);
                    error = ProduceErrors.cause(
                            s.err(), s.code(), ProduceErrors.produceFailure(s.tp(), s.code(), s.batch()));
                } else if (error == null && idempotence != null && idempotence.mustFailAfterReset(s.batch())) {
                    error = ProduceErrors.outcomeUnknown(s.batch());
                }
                if (error == null) {
                    putHalvesLocked(s, halves);
                } else {
                    release(halves);
                    if (idempotence != null) {
                        idempotence.failed(s.batch(), s.q().sequences);
                    }
                    if (txn != null && txnError == null) {
                        txn.batchFailed(error.errorCode()); // a record of the transaction is lost
                    }
                    metrics.sendFailed(ClientMetrics.result(error.errorCode(), false));
                    ProducerBatch b = s.batch();
                    StellflowException e = error;
                    completions.add(() -> b.fail(e));
                    done.add(b);
                }
                accumulator.wakeSenderLocked();
            } finally {
                lock.unlock();
            }
        }
        try {
            completions.forEach(Runnable::run);
        } finally {
            accumulator.finish(done);
        }
    }

    /** Gives back the buffers of halves that will not be used (null: none were built). */
    private static void release(ProducerBatch[] halves) {
        if (halves != null) {
            for (ProducerBatch h : halves) {
                h.release();
            }
        }
    }

    /** Puts the halves of {@code s} at its place ({@link ProducerAccumulator#splitLocked}). Called under the lock. */
    private void putHalvesLocked(Pending s, ProducerBatch[] halves) {
        int records = s.batch().recordCount();
        int first = accumulator.splitLocked(s.q(), s.batch(), halves);
        metrics.retried();
        metrics.batchSplit();
        if (ProducerSender.warnDue(s.q(), System.nanoTime())) {
            LOG.warn(
                    "produce to {} refused with {}: a batch of {} is larger than {} (or grows past it"
                            + " when the topic's compression.type recompresses it); split its {} records"
                            + " into {} + {} and sending them again (lower batch.size to avoid splits)",
                    s.tp(),
                    ProduceErrors.codeName(s.code()),
                    s.sizeAsSent(),
                    ProduceErrors.LIMIT,
                    records,
                    first,
                    records - first);
        }
    }
}
