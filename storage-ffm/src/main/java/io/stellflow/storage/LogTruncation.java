package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes records from either end of one log, keeping the segment list, the leader-epoch history
 * and the checkpoints in step. From the end: {@link #truncateTo} (a follower diverged) and {@link
 * #truncateFully} (restart empty at an offset). From the start: {@link #raiseStartOffset}
 * (delete-records) and {@link #deleteOldSegments} (retention, rules in {@link Retention}). Removed
 * segments go through {@link SegmentDisposal}: renamed at once, deleted {@code
 * file.delete.delay.ms} later. The contracts are those of the {@link UnifiedLog} methods of the same
 * names.
 *
 * <p>Thread-safety: confined to the owning log's write lock; {@link #count} from any thread.
 *
 * <p>Errors: {@link IOException} from the files or the checkpoints, passed on; the owning log then
 * refuses writes until reopened (after a failed truncation files and memory may disagree).
 */
final class LogTruncation {
    /** The truncation and retention events keep the category they always had: the log's. */
    private static final Logger LOG = LoggerFactory.getLogger(UnifiedLog.class);

    private final Path dir;
    private final LogSegments segments;
    private final LeaderEpochCache epochCache;
    private final LogFlusher flusher;
    private final LogEnvironment env;

    /** Bumped by every truncation from the end; a compaction spanning one swaps nothing. */
    private volatile long count;

    LogTruncation(Path dir, LogSegments segments, LeaderEpochCache epochCache, LogFlusher flusher, LogEnvironment env) {
        this.dir = dir;
        this.segments = segments;
        this.epochCache = epochCache;
        this.flusher = flusher;
        this.env = env;
    }

    /** Truncations from the end so far (the swap of {@link LogCompaction}). Volatile read. */
    long count() {
        return count;
    }

    /** The log was reloaded in place ({@link UnifiedLog#reopen}): counts as a truncation for compaction. */
    void reloaded() {
        count++;
    }

    /** {@link UnifiedLog#truncateTo}: returns the log end offset afterwards. */
    long truncateTo(long offset, LogConfig config) throws IOException {
        long endOffset = segments.endOffset();
        if (offset >= endOffset) {
            return endOffset;
        }
        if (offset <= segments.startOffset()) {
            truncateFully(offset, config);
            return offset;
        }
        count++;
        // The segment holding offset - 1; >= 0 since offset > log start offset >= the first base.
        int keep = segments.floorIndex(offset - 1);
        LogSegment target = segments.snapshot()[keep];
        LogSegment.Cut cut = target.findCut(offset);
        long newEnd = cut == null ? LogLoader.scanTailNextOffset(target) : cut.baseOffset();
        segments.cutEnd(newEnd); // readers stop below the cut first
        for (LogSegment removed : segments.keepFirst(keep + 1)) {
            SegmentDisposal.delete(env.scheduler(), removed, config.fileDeleteDelayMs());
        }
        target.truncateAt(cut == null ? target.sizeBytes() : cut.position(), cut == null ? -1 : cut.baseOffset());
        epochCache.truncateFromEnd(newEnd);
        epochCache.flush();
        segments.latestEpoch(epochCache.latestEpoch());
        flusher.truncated(newEnd, segments.startOffset());
        LOG.info("Truncated {} to offset {} (requested {})", dir, newEnd, offset);
        return newEnd;
    }

    /** {@link UnifiedLog#truncateFullyAndStartAt}. */
    void truncateFully(long newOffset, LogConfig config) throws IOException {
        count++;
        for (LogSegment s : segments.snapshot()) {
            s.renameForDeletion(); // frees the names: the new segment may reuse a base offset
        }
        LogSegment fresh = LogSegment.create(dir, newOffset, config, env.nowMs());
        LogSegment[] old = segments.reset(fresh); // before the LEO, so no reader pairs a new LEO with old data
        segments.publishEnd(newOffset, -1);
        segments.startOffset(newOffset);
        flusher.restartedAt(newOffset);
        for (LogSegment s : old) {
            SegmentDisposal.deleteRenamed(env.scheduler(), s, config.fileDeleteDelayMs());
        }
        epochCache.clear();
        epochCache.flush();
        flusher.writeCheckpoints(newOffset);
        LOG.info("Truncated {} fully; the log now starts at offset {}", dir, newOffset);
    }

    /** {@link UnifiedLog#maybeIncrementLogStartOffset}. */
    LogStartOffsetResult raiseStartOffset(long newStartOffset, long highWatermark) throws IOException {
        if (newStartOffset > Math.min(highWatermark, segments.endOffset())) {
            return LogStartOffsetResult.BEYOND_HIGH_WATERMARK;
        }
        if (newStartOffset <= segments.startOffset()) {
            return LogStartOffsetResult.UNCHANGED;
        }
        segments.startOffset(newStartOffset);
        epochCache.truncateFromStart(newStartOffset);
        epochCache.flush();
        flusher.writeCheckpoints(newStartOffset);
        return LogStartOffsetResult.INCREMENTED;
    }

    /** {@link UnifiedLog#deleteOldSegments}: returns the number of segments deleted. */
    int deleteOldSegments(long highWatermark, LogConfig config) throws IOException {
        long startOffset = segments.startOffset();
        int deletable = Retention.deletablePrefix(
                segments.snapshot(), config, env.nowMs(), Math.min(highWatermark, segments.endOffset()), startOffset);
        if (deletable == 0) {
            return 0;
        }
        LogSegment[] deleted = segments.dropFirst(deletable);
        long firstBase = segments.snapshot()[0].baseOffset;
        if (firstBase > startOffset) {
            startOffset = firstBase;
            segments.startOffset(startOffset);
            epochCache.truncateFromStart(startOffset);
            epochCache.flush();
        }
        for (LogSegment s : deleted) {
            SegmentDisposal.delete(env.scheduler(), s, config.fileDeleteDelayMs());
        }
        env.metrics().segmentsDeleted(deletable);
        flusher.writeCheckpoints(startOffset);
        LOG.info("Retention deleted {} segment(s) of {}; log start offset {}", deletable, dir, startOffset);
        return deletable;
    }
}
