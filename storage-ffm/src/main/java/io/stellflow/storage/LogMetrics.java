package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Hooks for the storage metrics of {@code docs/spec/metrics.md} ("Broker: storage"): the log
 * reports events and durations, the caller records them (histograms, counters). Gauges are read
 * from the log itself ({@link UnifiedLog#activeSegmentSizeBytes}, {@link
 * UnifiedLog#logStartOffset}, {@link UnifiedLog#logEndOffset}).
 *
 * <p>Contract for implementations: called on the log's writer thread (or the loading thread), while
 * the log holds its lock, so they must be fast and must not call back into the log; the per-append
 * hooks take primitives only, so the hot path does not allocate. The lifecycle hooks ({@link
 * #logRecovered}, {@link #logQuarantined}, {@link #diskFull}) are rare (once per recovered or
 * quarantining open of a log, once per full episode of a log) and name the partition directory.
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

    /**
     * A log opened without its clean shutdown marker and with segments on disk was recovered
     * ({@link LogLoader}): called once per recovered log, after the scan, before the log serves
     * anything. Not called for a clean open or a new (empty) directory.
     *
     * @param dir the partition directory ({@code <topic>-<partition>})
     * @param segmentsRecovered segments validated batch by batch (the one holding the checkpointed
     *     recovery point and every later one that was reached)
     * @param droppedBytes bytes removed from the log: a torn tail cut, or the corrupt tail and later
     *     segments moved to quarantine ({@link #logQuarantined}; records cannot be counted: their
     *     headers are what failed)
     * @param segmentsQuarantined whole segments after the corrupt one moved to quarantine
     * @param logEndOffset the log end offset after recovery
     */
    default void logRecovered(
            Path dir, int segmentsRecovered, long droppedBytes, int segmentsQuarantined, long logEndOffset) {}

    /**
     * Opening a log found corruption and moved the unreadable part to a quarantine directory
     * ({@link Quarantined}); the log ends before it. Called at most once per open, before the log
     * serves anything, clean or unclean open alike.
     */
    default void logQuarantined(Quarantined quarantined) {}

    /**
     * A write of the log failed because its file system is full ({@code ENOSPC} or {@code EDQUOT},
     * {@link StorageErrors#isNoSpace}): the failing call throws {@code cause} to its caller (the
     * write is an error, nothing is acknowledged). Called once per full episode of a log: the first
     * failure after the log was opened or after its last successful append.
     *
     * @param dir the partition directory
     * @param operation {@code append}, {@code flush} or {@code checkpoint}
     * @param cause the I/O error
     */
    default void diskFull(Path dir, String operation, IOException cause) {}

    /**
     * {@code stellflow.log.background.error.count}: a periodic task of the {@link LogManager}
     * ({@code checkpoint}, {@code compaction}, {@code retention}) failed on a log again, after the
     * first failure of its episode (which the manager logs, {@link
     * io.stellflow.server.common.file.FailureEpisode}). Called on the task's thread, without a log's
     * lock held, a few times per task period at most.
     */
    default void backgroundTaskFailedAgain(String task) {}
}
