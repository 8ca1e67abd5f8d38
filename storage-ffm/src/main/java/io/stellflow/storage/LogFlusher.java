package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Path;

/**
 * When one log's segments reach the disk, and what is known to be there: applies the {@code
 * flush.messages} / {@code flush.ms} policy ({@link FlushPolicy}) after each append, fsyncs the
 * segments, keeps the recovery point (the offset below which everything is fsynced) and writes the
 * {@value LogLoader#RECOVERY_POINT_FILE} and {@value LogLoader#LOG_START_OFFSET_FILE} checkpoints
 * ({@link Checkpoints}, atomic and durable) when they changed since their last write.
 *
 * <p>Time: {@code flush.ms} and the flush latency ({@link LogMetrics#flush}, ns) are measured on the
 * environment's monotonic clock ({@link LogEnvironment#nanoClock()}), so tests drive them.
 *
 * <p>Thread-safety: confined to the owning log's write lock.
 *
 * <p>Errors: {@link IOException} from an fsync or a checkpoint write, passed on unchanged; a failed
 * flush leaves the recovery point where it was.
 */
final class LogFlusher {
    private final Path dir;
    private final LogEnvironment env;
    private final FlushPolicy policy;
    private long recoveryPoint;
    private long checkpointedRecoveryPoint = -1;
    private long checkpointedLogStartOffset = -1;

    /**
     * @param dir the partition directory (where the checkpoint files are)
     * @param recoveryPoint the recovery point as loaded
     */
    LogFlusher(Path dir, LogConfig config, LogEnvironment env, long recoveryPoint) {
        this.dir = dir;
        this.env = env;
        this.policy = new FlushPolicy(config, env.nowNs());
        this.recoveryPoint = recoveryPoint;
    }

    /**
     * The log was reloaded in place ({@link UnifiedLog#reopen}): the recovery point is the loaded
     * one, and both checkpoints are written again at the next {@link #writeCheckpoints}.
     */
    void reloaded(long loadedRecoveryPoint) {
        recoveryPoint = loadedRecoveryPoint;
        checkpointedRecoveryPoint = -1;
        checkpointedLogStartOffset = -1;
    }

    /** A topic config change: the flush policy takes the new values (counts since the last flush stay). */
    void reconfigure(LogConfig config) {
        policy.reconfigure(config);
    }

    /** {@code records} were just appended to {@code segments}: flushes them if the policy says so. */
    void appended(long records, LogSegments segments) throws IOException {
        if (policy.recordAppended(records, env.nowNs())) {
            flush(segments);
        }
    }

    /** fsyncs every segment's log and indexes that changed and raises the recovery point to the log end. */
    void flush(LogSegments segments) throws IOException {
        long startNs = env.nowNs();
        long endOffset = segments.endOffset();
        for (LogSegment s : segments.snapshot()) {
            s.flush();
        }
        long endNs = env.nowNs();
        env.metrics().flush(endNs - startNs);
        policy.flushed(endNs);
        recoveryPoint = endOffset;
    }

    /** Offset below which everything is fsynced (in memory; {@link #writeCheckpoints} persists it). */
    long recoveryPoint() {
        return recoveryPoint;
    }

    /**
     * The log was truncated to {@code newEndOffset}: a recovery point above it is lowered and
     * checkpointed at once (a stale, higher one would make the next open trust unflushed data).
     */
    void truncated(long newEndOffset, long logStartOffset) throws IOException {
        if (recoveryPoint > newEndOffset) {
            recoveryPoint = newEndOffset;
            writeCheckpoints(logStartOffset);
        }
    }

    /** The log restarted empty at {@code offset}: nothing below it is left to recover. */
    void restartedAt(long offset) {
        recoveryPoint = offset;
    }

    /** Writes the recovery-point and log-start-offset checkpoints, each only if it changed since its last write. */
    void writeCheckpoints(long logStartOffset) throws IOException {
        if (recoveryPoint != checkpointedRecoveryPoint) {
            Checkpoints.writeOffset(dir.resolve(LogLoader.RECOVERY_POINT_FILE), recoveryPoint);
            checkpointedRecoveryPoint = recoveryPoint;
        }
        if (logStartOffset != checkpointedLogStartOffset) {
            Checkpoints.writeOffset(dir.resolve(LogLoader.LOG_START_OFFSET_FILE), logStartOffset);
            checkpointedLogStartOffset = logStartOffset;
        }
    }
}
