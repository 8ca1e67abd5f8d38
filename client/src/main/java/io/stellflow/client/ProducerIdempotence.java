package io.stellflow.client;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.ArrayDeque;

/**
 * The idempotent producer's identity and sequences ({@code enable.idempotence}, spec §6.3 step 6 and
 * §6.12; {@code docs/exactly-once.md}, "Our producer"): the producer id and epoch from
 * InitProducerId, and per partition the next sequence and the stamped batches not yet completed.
 *
 * <p>A batch is stamped with the id, the epoch and its partition's next sequence when it is first
 * drained into a request ({@link #stamp}), and keeps them for every retry: the broker answers an
 * exact retry of an appended batch with its original offset. Each outcome of a stamped batch is
 * classified by {@link #onResult}:
 *
 * <ul>
 *   <li>{@code OUT_OF_ORDER_SEQUENCE_NUMBER} while an earlier batch of the partition is not completed
 *       (retried or still in flight) is the broker seeing the later batch first: retried, in order
 *       after the earlier one;
 *   <li>{@code MESSAGE_TOO_LARGE} for a batch of several records is a definite refusal: the sender
 *       splits it, and its halves take its sequence range and its place ({@link #split});
 *   <li>{@code OUT_OF_ORDER_SEQUENCE_NUMBER} with no earlier batch outstanding, {@code
 *       INVALID_PRODUCER_EPOCH}, or any other final failure of a stamped batch leaves a hole in the
 *       partition's sequences: the batch fails, and the producer takes a new producer id ({@link
 *       #resetNeeded}; v0 InitProducerId cannot bump the epoch of an id, so a new id with epoch 0 is
 *       the bump) once no request is in flight; the later batches of that partition are stamped
 *       again under the new id, except those that may already be in the log.
 * </ul>
 *
 * <p>A batch with an attempt that got no verdict (no answer, {@code REQUEST_TIMED_OUT}, {@code
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND}: {@link ProducerBatch#mayBeAppended}) may be in the log under its
 * stamp; only its stamp makes a retry recognisable as one. Stamped anew under the next producer id it
 * would be appended a second time, so at the reset such a batch fails instead ({@link
 * #mustFailAfterReset}; its records may be stored once, never twice), as Kafka's producer fails a
 * batch sent under an older producer id and epoch. The leader's {@code OUT_OF_ORDER_SEQUENCE_NUMBER}
 * for it settles it as not appended (an appended one would be answered as a duplicate with its
 * offset).
 *
 * <p>Thread-safety: guarded by the producer's accumulator lock ({@link ProducerAccumulator#lock}).
 */
final class ProducerIdempotence {
    /** What the sender does with a stamped batch after a response or a failed request. */
    enum Outcome {
        /** Acknowledged (a first append or an exact retry): complete it with the answered offset. */
        COMPLETE,
        /** Send it again, keeping its stamp, in sequence order after the partition's earlier batches. */
        RETRY,
        /** Its sequence is void (a hole before it, or an old producer id): send it again, stamped anew. */
        RESTAMP,
        /** Fail it with the error. */
        FAIL
    }

    /** One partition's sequences. */
    static final class Partition {
        /** Base sequence of the next batch stamped under the current producer id. */
        int nextSequence;

        /** Stamped under the current id and not completed, in sequence order. */
        final ArrayDeque<ProducerBatch> outstanding = new ArrayDeque<>();

        /** A stamped batch failed for good: the later sequences of this id are void until the reset. */
        boolean hole;

        /** Batches stamped on this partition so far (any producer id): each stamp's place in that order. */
        long stamps;
    }

    /**
     * The most batches a partition stamps from its oldest outstanding batch on, that batch included: 5,
     * the batches per producer the broker keeps to answer a retry with the original offset (spec
     * §6.12, as Kafka's {@code max.in.flight.requests.per.connection} limit for idempotence). Answers
     * of later batches may come back while an earlier one's is lost; without this bound the producer
     * would go on sending, the broker would forget the earlier batch, and its retry would get {@code
     * OUT_OF_ORDER_SEQUENCE_NUMBER} although it was appended.
     */
    static final int RETRY_WINDOW_BATCHES = 5;

    private long producerId = -1;
    private short epoch = -1;
    private boolean initInFlight;
    private boolean resetNeeded;
    private long initRetryAfterNs;
    private int initAttempts;

    long producerId() {
        return producerId;
    }

    short epoch() {
        return epoch;
    }

    /** True when batches may be stamped and sent: an id is known and no reset is pending. */
    boolean ready() {
        return producerId >= 0 && !resetNeeded;
    }

    /**
     * Nanoseconds until the sender has something to do for the id while {@link #ready()} is false:
     * the end of a failed InitProducerId's back-off, or {@link Long#MAX_VALUE} when an answer will
     * wake it (InitProducerId in flight, or a reset waiting for the requests in flight).
     */
    long initWaitNs(long nowNs) {
        if (initInFlight || resetNeeded || nowNs >= initRetryAfterNs) {
            return Long.MAX_VALUE;
        }
        return initRetryAfterNs - nowNs;
    }

    /** True when a reset waits for the requests in flight to come back. */
    boolean resetNeeded() {
        return resetNeeded;
    }

    /**
     * Whether the sender should send InitProducerId now: no id yet or a reset pending, none in
     * flight, no request of any partition in flight (a reset must not race answers of the old id),
     * and the back-off of the previous failure over. Marks one as in flight when true.
     */
    boolean startInit(long nowNs, int requestsInFlight) {
        if (ready() || initInFlight || requestsInFlight > 0 || nowNs < initRetryAfterNs) {
            return false;
        }
        initInFlight = true;
        return true;
    }

    /** A new producer id: every partition starts again at sequence 0. */
    void initialized(long producerId, short epoch, Iterable<Partition> partitions) {
        initInFlight = false;
        initAttempts = 0;
        resetNeeded = false;
        this.producerId = producerId;
        this.epoch = epoch;
        for (Partition p : partitions) {
            p.nextSequence = 0;
            p.outstanding.clear();
            p.hole = false;
        }
    }

    /** InitProducerId failed retriably: the next attempt waits this attempt's back-off. */
    void initFailed(long nowNs, long backoffNs) {
        initInFlight = false;
        initAttempts++;
        initRetryAfterNs = nowNs + backoffNs;
    }

    /**
     * Whether InitProducerId is tried again after {@code code}: the retriable codes, and those a
     * broker answers while it cannot reach the controller for a block of ids ({@code
     * COORDINATOR_NOT_AVAILABLE}, {@code docs/exactly-once.md}) or while coordinators move ({@code
     * NOT_COORDINATOR}), which the error table does not mark retriable for other APIs.
     */
    static boolean initRetriable(short code) {
        return StellflowException.isRetriable(code)
                || code == Errors.COORDINATOR_NOT_AVAILABLE
                || code == Errors.NOT_COORDINATOR;
    }

    /** Attempts of InitProducerId that failed since the last success (for the back-off). */
    int initAttempts() {
        return initAttempts;
    }

    /**
     * Stamps {@code b} (sealed, being drained) with the current id and the partition's next sequence,
     * unless it already carries them (a retry keeps its sequence). Needs {@link #ready()}.
     */
    void stamp(ProducerBatch b, Partition p) {
        if (b.producerId == producerId && b.producerEpoch == epoch) {
            return;
        }
        if (mustFailAfterReset(b)) {
            throw new IllegalStateException("batch of " + b.tp + " may be in the log under producer id " + b.producerId
                    + " epoch " + b.producerEpoch + ": it must fail, not be stamped anew");
        }
        b.stampProducer(producerId, epoch, p.nextSequence);
        // Sequences wrap to 0 after Integer.MAX_VALUE, as Kafka's do (spec §6.12 counts records).
        p.nextSequence = (int) ((p.nextSequence + (long) b.recordCount()) & Integer.MAX_VALUE);
        b.stampIndex = p.stamps++;
        p.outstanding.addLast(b);
    }

    /**
     * Whether {@code b} may be sent now on partition {@code p}: only while it is among the first
     * {@link #RETRY_WINDOW_BATCHES} batches stamped from the partition's oldest outstanding one on, so
     * every retry stays among the batches the broker remembers. A new batch is counted as the next
     * stamp; a batch stamped under the current id (a retry) by its own place, which is always inside
     * the window unless a {@link #split} made room for a part before it (then it waits for the
     * oldest to complete).
     */
    boolean maySend(ProducerBatch b, Partition p) {
        ProducerBatch oldest = p.outstanding.peekFirst();
        if (b.producerId == producerId && b.producerEpoch == epoch) {
            return oldest == null || b.stampIndex - oldest.stampIndex < RETRY_WINDOW_BATCHES;
        }
        return oldest == null || p.stamps - oldest.stampIndex < RETRY_WINDOW_BATCHES;
    }

    /**
     * {@code b}, refused as too large (MESSAGE_TOO_LARGE: nothing appended), is replaced by its
     * sealed parts {@code first} and {@code second} ({@link ProducerBatch#halves}). When {@code b}
     * holds a stamp of the current id they take its sequence range, {@code first} from {@code b}'s
     * base sequence S, {@code second} from S + {@code first}'s records, and its place in {@code p}'s
     * outstanding batches, so they count as stamped (a retry keeps its stamp) and the partition's
     * later batches, refused OUT_OF_ORDER_SEQUENCE_NUMBER meanwhile, are retried after them. Else
     * (no stamp, or an old one) they stay unstamped and are stamped when drained, as new batches.
     *
     * <p>The retry window: the broker sees two batches where it would have seen one, so {@code
     * second} takes the stamp place after {@code b}'s and every later outstanding batch, and the
     * partition's next stamp, move one place on. The window ({@link #maySend}) then still spans
     * {@link #RETRY_WINDOW_BATCHES} batches as the broker counts them; a batch pushed out of it
     * waits for the oldest to complete instead of going out beyond what the broker remembers.
     */
    void split(ProducerBatch b, ProducerBatch first, ProducerBatch second, Partition p) {
        if (b.producerId != producerId || b.producerEpoch != epoch || !p.outstanding.contains(b)) {
            return;
        }
        first.stampProducer(producerId, epoch, b.baseSequence);
        second.stampProducer(
                producerId, epoch, (int) ((b.baseSequence + (long) first.recordCount()) & Integer.MAX_VALUE));
        int n = p.outstanding.size();
        boolean after = false;
        for (int i = 0; i < n; i++) {
            ProducerBatch o = p.outstanding.pollFirst();
            if (o == b) {
                first.stampIndex = b.stampIndex;
                second.stampIndex = b.stampIndex + 1;
                p.outstanding.addLast(first);
                p.outstanding.addLast(second);
                after = true;
            } else {
                if (after) {
                    o.stampIndex++;
                }
                p.outstanding.addLast(o);
            }
        }
        p.stamps++;
    }

    /**
     * Classifies the outcome {@code code} of the stamped batch {@code b} of partition {@code p} and
     * updates the sequences.
     *
     * @param retriesLeft whether {@code retries} allows another attempt of {@code b}
     */
    Outcome onResult(ProducerBatch b, Partition p, short code, boolean retriesLeft) {
        boolean current = b.producerId == producerId && b.producerEpoch == epoch;
        if (code == Errors.NONE) {
            p.outstanding.remove(b);
            return Outcome.COMPLETE;
        }
        if (outcomeUnknown(code)) {
            b.mayBeAppended = true;
        } else if (code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) {
            // The leader has no such batch: an appended one is answered as a duplicate. A part of a
            // batch that may be in the log whole stays in doubt (ProducerBatch#partOfMaybeAppended).
            b.mayBeAppended = b.partOfMaybeAppended;
        }
        boolean sequenceError = code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER || code == Errors.INVALID_PRODUCER_EPOCH;
        if (sequenceError && (!current || p.hole) && retriesLeft && !b.mayBeAppended) {
            p.outstanding.remove(b);
            return Outcome.RESTAMP;
        }
        if (code == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER && current && p.outstanding.peekFirst() != b && retriesLeft) {
            return Outcome.RETRY;
        }
        if (!sequenceError && StellflowException.isRetriable(code) && retriesLeft) {
            return Outcome.RETRY;
        }
        failed(b, p);
        return Outcome.FAIL;
    }

    /**
     * Whether a produce answer {@code code} leaves the attempt's outcome unknown: no answer ({@link
     * StellflowException#NETWORK_ERROR}, a client-side timeout), or the leader appended it and could
     * not confirm its replication ({@code REQUEST_TIMED_OUT}, {@code
     * NOT_ENOUGH_REPLICAS_AFTER_APPEND}), or an answer without the partition ({@code
     * UNKNOWN_SERVER_ERROR}).
     */
    static boolean outcomeUnknown(short code) {
        return code == StellflowException.NETWORK_ERROR
                || code == Errors.REQUEST_TIMED_OUT
                || code == Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
                || code == Errors.UNKNOWN_SERVER_ERROR;
    }

    /**
     * Whether {@code b}, waiting to be sent, must fail rather than be stamped under the current
     * producer id: it carries an older stamp under which it may already be in the log ({@link
     * ProducerBatch#mayBeAppended}), so a copy under a new id would be a duplicate.
     */
    boolean mustFailAfterReset(ProducerBatch b) {
        return b.mayBeAppended
                && b.producerId != RecordBatchLayout.NO_PRODUCER_ID
                && (b.producerId != producerId || b.producerEpoch != epoch);
    }

    /** A stamped batch that will not be sent again (failed or expired): its hole needs a new id. */
    void failed(ProducerBatch b, Partition p) {
        if (p.outstanding.remove(b) && b.producerId == producerId && b.producerEpoch == epoch) {
            p.hole = true;
            resetNeeded = true;
        }
    }
}
