package io.stellflow.broker.coordinator;

/**
 * The state of one coordinator partition (one partition of {@code __consumer_offsets}), owned by
 * one runtime thread: every method is called from that thread only, so implementations need no
 * locks. Time comes in as arguments ({@code nowMs}, from the runtime's injected clock), never from
 * the system clock, so a shard is tested without sockets or sleeps.
 *
 * <p>Life cycle: created empty when this broker becomes the partition's leader; {@link #replay} is
 * called for every record of the partition's log from its log start to its end (load), then {@link
 * #onLoaded}; from then on commands run against it (the command methods are the implementation's
 * own) and {@link #poll} runs at {@link #nextDeadlineMs()} at the latest. It is dropped when the
 * broker stops leading the partition, or reloaded after a failed append.
 */
public interface CoordinatorShard {
    /**
     * Applies one record read from the log during load. Records produced by this shard's own
     * commands are applied when they are produced and are not replayed.
     *
     * @param offset the record's offset in the coordinator partition
     * @param key the record key (never null)
     * @param value the record value, null for a tombstone
     * @throws IllegalArgumentException for a key or value this shard cannot parse; the runtime logs
     *     it once with the offset and skips the record (an unknown record type from a newer broker
     *     must not stop a load)
     */
    void replay(long offset, byte[] key, byte[] value);

    /**
     * Applies one record of a transactional batch (a batch with a producer id: the group
     * coordinator's transactional offsets) read during load. It belongs to that producer's open
     * transaction until {@link #replayMarker} closes it. The default refuses it, as a shard that
     * writes no transactional batches cannot parse one.
     *
     * @throws IllegalArgumentException as {@link #replay}
     */
    default void replayTransactional(long offset, long producerId, short producerEpoch, byte[] key, byte[] value) {
        throw new IllegalArgumentException("a transactional record of producer " + producerId + " at " + offset);
    }

    /**
     * A transaction marker read during load: BEGIN, COMMIT or ABORT ({@code
     * io.stellflow.protocol.record.ControlRecordLayout} types) of {@code producerId}'s transaction
     * with {@code transactionSequence}. The default ignores it.
     */
    default void replayMarker(
            long offset, long producerId, short producerEpoch, short controlType, long transactionSequence) {}

    /** Called once after the last record of the load, before the first command. */
    void onLoaded(long nowMs);

    /**
     * Runs expirations due at {@code nowMs} (sessions, offsets retention) and returns the records
     * they produce (the response is unused).
     */
    CoordinatorResult<Void> poll(long nowMs);

    /** The earliest time {@link #poll} has work to do, in ms of the runtime clock; Long.MAX_VALUE for none. */
    long nextDeadlineMs();

    /**
     * How many entries (for groups: groups) the shard holds, for a gauge: the runtime thread reads it
     * after the load and then at most about once a second, and publishes it for {@link
     * CoordinatorRuntime#loadedEntryCount}. Must be cheap (no allocation); 0 when not counted.
     */
    default long entryCount() {
        return 0;
    }
}
