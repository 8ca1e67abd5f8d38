package io.stellflow.client;

/**
 * The fetch state of one partition assigned to a {@link StellflowConsumer}: its position, the
 * offset its next Fetch asks for, the fetch epoch a Fetch answer must carry to count, and when a
 * failed Fetch may be retried.
 *
 * <p>Thread-safety: confined to the consumer's application thread.
 */
final class ConsumerPartitionState {
    /** The next offset {@link StellflowConsumer#poll} returns; -1 when unknown. */
    long position = -1;
    /** The offset the next Fetch asks for: at or past {@link #position}. */
    long fetchPosition = -1;
    /** The last answer's HW (LSO at read_committed); -1 before one (metrics: consumer lag). */
    long visibleEnd = -1;

    int epoch;
    boolean fetchInFlight;
    long retryAfterNs;

    void moveTo(long offset) {
        position = offset;
        fetchPosition = offset;
    }
}
