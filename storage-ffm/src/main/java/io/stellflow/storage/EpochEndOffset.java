package io.stellflow.storage;

/**
 * Answer to "where did leader epoch e end?" (Kafka's OffsetsForLeaderEpoch), from {@link
 * UnifiedLog#endOffsetForEpoch}.
 *
 * <p>Thread-safety: immutable.
 *
 * @param leaderEpoch the largest epoch &lt;= the requested one that wrote to the log, -1 if unknown
 * @param endOffset the first offset after that epoch's records (the log end offset for the latest
 *     epoch), -1 if unknown
 */
public record EpochEndOffset(int leaderEpoch, long endOffset) {
    /** No such epoch in the history (above the latest, or the history is empty). */
    public static final EpochEndOffset UNDEFINED = new EpochEndOffset(-1, -1L);
}
