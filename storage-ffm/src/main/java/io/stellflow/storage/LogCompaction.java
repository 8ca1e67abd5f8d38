package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compaction orchestration for one {@link UnifiedLog} ({@link UnifiedLog#compact}): picks the
 * cleanable range, builds the key -> last offset map ({@link LogCleaner#buildOffsetMap}), writes a
 * cleaned copy of each segment ({@link LogCleaner#writeCleaned}) and swaps it into the log's segment
 * list under the log's write lock ({@link #swapCleaned}).
 *
 * <p>Rules: the cleanable range is the sealed segments entirely below {@code min(highWatermark,
 * log end offset, first open transaction's offset)}; never the active segment. Records of aborted
 * transactions never supersede others (as in Kafka's cleaner): they are left out of the key map. Only the last record per key is kept; a tombstone
 * (null value) that is the last for its key is also removed once its segment was last modified
 * (last append; cleaning keeps the time) {@link LogConfig#deleteRetentionMs()} or more ago. The
 * newest batch of every producer id in the log's producer state is kept whole ({@link LogCleaner}).
 * Nothing
 * is done when fewer than {@link LogConfig#minCleanableDirtyRatio()} of the keyed records in the
 * range are superseded (this ratio counts records, not Kafka's dirty bytes after the last cleaned
 * offset) and no segment is old enough for its tombstones to go (then every segment is read again;
 * those without anything to remove are left as they are).
 *
 * <p>Swap protocol, per segment, oldest first: {@code <base>.log.cleaned} is written and fsynced
 * without blocking appends or reads; then, under the write lock, it is renamed to {@code
 * <base>.log.swap} (the commit point, directory fsynced), the old indexes are deleted, the swap file
 * is renamed over {@code <base>.log} (directory fsynced), and the new segment is opened with rebuilt
 * indexes (a scan of that segment while appends wait) and published. A crash before the commit
 * point leaves a {@code .cleaned} file that the next open deletes (the old segment stays); after it,
 * the next open finishes the rename and rebuilds the indexes ({@link LogLoader}). A segment
 * truncated, deleted or grown meanwhile is skipped.
 *
 * <p>Thread-safety: {@link #run} may be called from any thread; runs are serialized by a lock that
 * is taken before the log's write lock and never while holding it. Owns only that lock; the
 * segment list it swaps into, the truncation count and the failed state belong to the log.
 */
final class LogCompaction {
    private static final Logger LOG = LoggerFactory.getLogger(LogCompaction.class);

    private final UnifiedLog log;
    private final LogEnvironment env;
    private final ReentrantLock cleanerLock = new ReentrantLock();

    /** The log's write lock, its segment list, truncation count and failed state: for the swap. */
    private final ReentrantLock writeLock;

    private final LogSegments segments;
    private final LogTruncation truncation;
    private final LogLifecycle lifecycle;

    /** Reads the log's current {@link UnifiedLog#config()} at each use (it may change at runtime). */
    LogCompaction(
            UnifiedLog log,
            ReentrantLock writeLock,
            LogSegments segments,
            LogTruncation truncation,
            LogLifecycle lifecycle,
            LogEnvironment env) {
        this.log = log;
        this.env = env;
        this.writeLock = writeLock;
        this.segments = segments;
        this.truncation = truncation;
        this.lifecycle = lifecycle;
    }

    /** One compaction pass up to {@code highWatermark}; see the class javadoc. */
    CompactionResult run(long highWatermark) throws IOException {
        if (!log.config().cleanupPolicy().compact()) {
            return CompactionResult.NONE;
        }
        cleanerLock.lock();
        try {
            if (log.isClosed()) {
                throw new IllegalStateException("log " + log.dir() + " is closed");
            }
            long truncationsAtStart = log.truncationCount();
            LogSegment[] segs = log.segments();
            // Never past the first open transaction: its records may still abort, and one entered in
            // the key map would make compaction remove the value it would supersede.
            long upper = Math.min(Math.min(highWatermark, log.logEndOffset()), log.firstUnstableOffset());
            int n = 0;
            while (n < segs.length - 1 && segs[n + 1].baseOffset <= upper) {
                n++;
            }
            if (n == 0) {
                return CompactionResult.NONE;
            }
            LogSegment[] cleanable = Arrays.copyOf(segs, n);
            // Read before the segments: a batch appended later lands in the active segment, never here.
            long[] keep = log.producersLastBatchBaseOffsets();
            int[] sizes = new int[n];
            for (int i = 0; i < n; i++) {
                sizes[i] = cleanable[i].sizeBytes();
            }
            List<AbortedTxn> aborted = log.abortedTransactions(cleanable[0].baseOffset, segs[n].baseOffset);
            LogCleaner.OffsetMap map = LogCleaner.buildOffsetMap(cleanable, sizes, aborted);
            double ratio = map.dirtyRatio();
            if (ratio < log.config().minCleanableDirtyRatio() && !anyTombstoneExpired(cleanable)) {
                return new CompactionResult(0, 0, 0, 0, ratio);
            }
            return cleanAll(cleanable, sizes, map, keep, ratio, truncationsAtStart);
        } finally {
            cleanerLock.unlock();
        }
    }

    private CompactionResult cleanAll(
            LogSegment[] cleanable,
            int[] sizes,
            LogCleaner.OffsetMap map,
            long[] keep,
            double ratio,
            long truncationsAtStart)
            throws IOException {
        int cleaned = 0;
        long removed = 0;
        long before = 0;
        long after = 0;
        for (int i = 0; i < cleanable.length; i++) {
            LogSegment s = cleanable[i];
            long modifiedMs = s.lastAppendTimeMs();
            boolean dropTombstones = env.nowMs() - modifiedMs >= log.config().deleteRetentionMs();
            LogCleaner.Cleaned c = LogCleaner.writeCleaned(s, sizes[i], map, keep, dropTombstones, modifiedMs);
            if (c == null) {
                continue;
            }
            if (swapCleaned(s, sizes[i], c, truncationsAtStart)) {
                cleaned++;
                removed += c.recordsRemoved();
                before += sizes[i];
                after += c.sizeBytes();
            }
        }
        if (cleaned > 0) {
            LOG.info(
                    "Compacted {} segment(s) of {}: {} record(s) removed, {} -> {} bytes",
                    cleaned,
                    log.dir(),
                    removed,
                    before,
                    after);
        }
        return new CompactionResult(cleaned, removed, before, after, ratio);
    }

    /**
     * Swaps the cleaned file {@code c} in for the sealed segment {@code old} (the swap protocol
     * above), under the log's write lock. Returns false (and deletes {@code c}) when {@code old} changed since it
     * was cleaned: truncated (the truncation count moved from {@code truncationsAtStart}), deleted,
     * now the active segment, or resized; also when the log is closed or failed.
     */
    private boolean swapCleaned(LogSegment old, int sizeAtClean, LogCleaner.Cleaned c, long truncationsAtStart)
            throws IOException {
        writeLock.lock();
        try {
            int at = segments.indexOf(old);
            if (lifecycle.isClosed()
                    || lifecycle.isFailed()
                    || truncation.count() != truncationsAtStart
                    || at < 0
                    || at == segments.count() - 1
                    || old.sizeBytes() != sizeAtClean) {
                Files.deleteIfExists(c.file());
                return false;
            }
            Path swap = old.logFile.resolveSibling(old.logFile.getFileName() + LogCleaner.SWAP_SUFFIX);
            Files.move(c.file(), swap, StandardCopyOption.ATOMIC_MOVE);
            Checkpoints.fsyncDir(log.dir()); // commit point
            try {
                segments.replace(
                        at,
                        LogLoader.completeSwap(
                                log.dir(), old.baseOffset, log.config())); // new readers use the new file
            } catch (IOException | RuntimeException e) {
                lifecycle.fail(e);
                throw e;
            }
            SegmentDisposal.abandon(env.scheduler(), old, log.config().fileDeleteDelayMs());
            return true;
        } finally {
            writeLock.unlock();
        }
    }

    private boolean anyTombstoneExpired(LogSegment[] cleanable) {
        long now = env.nowMs();
        for (LogSegment s : cleanable) {
            if (now - s.lastAppendTimeMs() >= log.config().deleteRetentionMs()) {
                return true;
            }
        }
        return false;
    }
}
