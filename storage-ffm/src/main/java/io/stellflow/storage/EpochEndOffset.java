package io.stellflow.storage;

/**
 * Answer to "where did leader epoch e end?" (Kafka's OffsetsForLeaderEpoch), from {@link
 * UnifiedLog#endOffsetForEpoch}.
 *
 * <p>Thread-safety: immutable.
 *
 * @param leaderEpoch the largest epoch &lt;= the requested one that wrote to the log, or {@link
 *     #UNDEFINED_EPOCH}
 * @param endOffset the first offset after that epoch's records (the log end offset for the latest
 *     epoch), or {@link #UNDEFINED_END_OFFSET}
 */
public record EpochEndOffset(int leaderEpoch, long endOffset) {
    /** {@link #leaderEpoch}: no epoch (the wire's UNDEFINED_EPOCH of OffsetForLeaderEpoch). */
    public static final int UNDEFINED_EPOCH = -1;

    /** {@link #endOffset}: no end offset (the wire's UNDEFINED_OFFSET of OffsetForLeaderEpoch). */
    public static final long UNDEFINED_END_OFFSET = -1L;

    /** No such epoch in the history (above the latest, or the history is empty). */
    public static final EpochEndOffset UNDEFINED = new EpochEndOffset(UNDEFINED_EPOCH, UNDEFINED_END_OFFSET);
}
