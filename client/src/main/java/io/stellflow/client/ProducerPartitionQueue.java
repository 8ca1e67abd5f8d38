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
    /** With {@code enable.idempotence}: this partition's sequences; else null. */
    final ProducerIdempotence.Partition sequences;

    ProducerPartitionQueue(boolean idempotent) {
        sequences = idempotent ? new ProducerIdempotence.Partition() : null;
    }

    /** Puts a batch back at its place in sequence order (the queue is kept sorted). */
    void requeue(ProducerBatch b) {
        if (batches.isEmpty() || batches.peekFirst().sequence > b.sequence) {
            batches.addFirst(b);
            return;
        }
        ArrayDeque<ProducerBatch> later = new ArrayDeque<>();
        while (!batches.isEmpty() && batches.peekLast().sequence > b.sequence) {
            later.addFirst(batches.pollLast());
        }
        batches.addLast(b);
        batches.addAll(later);
    }
}
