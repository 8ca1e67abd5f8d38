package io.stellflow.storage;

/**
 * Hooks for the storage metrics of {@code spec/metrics.md} ("Broker: storage"): the log reports
 * events and durations, the caller records them (histograms, counters). Gauges are read from the
 * log itself ({@link UnifiedLog#activeSegmentSizeBytes}, {@link UnifiedLog#logStartOffset},
 * {@link UnifiedLog#logEndOffset}).
 *
 * <p>Contract for implementations: called on the log's writer thread (or the loading thread), while
 * the log holds its lock, so they must be fast and must not call back into the log; arguments are
 * primitives, so the hot path does not allocate.
 */
public interface LogMetrics {
    /** Does nothing. */
    LogMetrics NOOP = new LogMetrics() {};

    /** {@code stellflow.log.append.latency}: one append call, nanoseconds; leader or follower. */
    default void append(long nanos, boolean leader) {}

    /** {@code stellflow.log.flush.latency}: one flush (fsync of the changed segments), nanoseconds. */
    default void flush(long nanos) {}

    /** {@code stellflow.log.segment.roll.count}: a new active segment. */
    default void segmentRolled() {}

    /** {@code stellflow.log.recovery.time}: opening (and recovering if needed) one log, nanoseconds. */
    default void logLoaded(long nanos, boolean clean) {}

    /** {@code stellflow.log.rebuild.index.count}: a segment's offset and time indexes rebuilt from its log. */
    default void indexRebuilt() {}

    /** {@code stellflow.log.cleanup.segment.count}: segments removed by retention. */
    default void segmentsDeleted(int count) {}
}
