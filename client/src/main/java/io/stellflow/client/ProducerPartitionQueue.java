package io.stellflow.client;

import java.util.ArrayDeque;

/**
 * One partition's queue in the producer's accumulator ({@link ProducerAccumulator}): its batches in send
 * order, its requests in flight, its retry state and, with {@code enable.idempotence}, its sequences.
 *
 * <p>Thread-safety: guarded by the producer's accumulator lock.
 */
final class ProducerPartitionQueue {
    final ArrayDeque<ProducerBatch> batches = new ArrayDeque<>();
    /** Requests in flight that carry batches of this partition. */
    int inFlight;
    /** A batch came back for retry: send nothing until inFlight is 0, then resend in order. */
    boolean retrying;
    /** Sequence of the next new batch. */
    long nextSequence;
    /** When this partition last logged a retry WARN; 0 = never. */
    long lastRetryWarnNs;
    /** Estimated compressed / uncompressed size of this partition's next batch (1 until one is compressed). */
    double compressionRatio = 1.0;
    /**
     * Batches up to this {@link ProducerBatch#sequence} go one per request, and one request at a
     * time: they, or parts of them, were in a request the broker refused as too large
     * (MESSAGE_TOO_LARGE names no batch, so a refused batch is split only when it went alone; and
     * a part refused again must not have later records appended before its own). -1: none.
     */
    long soloThroughSequence = -1;
    /** A request holding a batch up to {@link #soloThroughSequence} is in flight: send nothing more. */
    boolean soloInFlight;
    /**
     * Batches of this partition refused as too large whose halves the sender thread is building
     * ({@link ProducerSplits}): the partition sends nothing until they are in the queue.
     */
    int splitsPending;
    /** With {@code enable.idempotence}: this partition's sequences; else null. */
    final ProducerIdempotence.Partition sequences;

    ProducerPartitionQueue(boolean idempotent) {
        sequences = idempotent ? new ProducerIdempotence.Partition() : null;
    }

    /**
     * Puts a batch back at its place in send order, by ({@link ProducerBatch#sequence}, {@link
     * ProducerBatch#splitIndex}): the parts of a split batch go where it was, in record order (the
     * queue is kept sorted).
     */
    void requeue(ProducerBatch b) {
        if (batches.isEmpty() || sendsBefore(b, batches.peekFirst())) {
            batches.addFirst(b);
            return;
        }
        ArrayDeque<ProducerBatch> later = new ArrayDeque<>();
        while (!batches.isEmpty() && sendsBefore(b, batches.peekLast())) {
            later.addFirst(batches.pollLast());
        }
        batches.addLast(b);
        batches.addAll(later);
    }

    /** Whether {@code a} goes before {@code b} in the partition's send order. */
    static boolean sendsBefore(ProducerBatch a, ProducerBatch b) {
        return a.sequence != b.sequence ? a.sequence < b.sequence : a.splitIndex < b.splitIndex;
    }
}
