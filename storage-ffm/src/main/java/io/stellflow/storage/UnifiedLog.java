package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One partition's log: a directory of {@link LogSegment}s named by their 20-digit base offset, plus
 * the checkpoint files {@value LogLoader#RECOVERY_POINT_FILE}, {@value
 * LogLoader#LOG_START_OFFSET_FILE} and {@value LeaderEpochCache#FILE_NAME} (format and atomic write:
 * {@link Checkpoints}).
 *
 * <p>Storage format: each stored batch is the RecordBatch (wire spec §7) as produced, with bytes 0-3
 * (baseOffsetDelta) = batch base offset - segment base offset and bytes 8-11 (partitionLeaderEpoch) =
 * the epoch passed to {@link #appendAsLeader} (or as stamped by the leader, for {@link
 * #appendAsFollower}). Bytes 17.. (covered by the CRC) are never changed by an append; {@link
 * #compact} rewrites batches of sealed segments (records removed, original offsets kept through
 * offsetDelta, so {@code recordCount} may be below {@code lastOffsetDelta + 1}; CRC recomputed;
 * format in {@link LogCleaner}). A file {@value
 * #CLEAN_SHUTDOWN_FILE} in the directory marks a clean {@link #close}; without it, {@link #open}
 * validates every batch from the segment holding the checkpointed recovery point on (CRC-32C
 * included), truncates at the first invalid byte and rebuilds those indexes ({@link LogLoader}).
 *
 * <p>Offsets: the log holds offsets [{@link #logStartOffset}, {@link #logEndOffset}). The recovery
 * point is the offset below which everything is known to be fsynced; {@link #flush} raises it to the
 * log end offset and {@link #checkpoint} persists it (with the log start offset), which bounds the
 * recovery work after a crash.
 *
 * <p>Thread-safety: any thread. Every write (append, truncation, retention, log start offset,
 * compaction swap, flush, checkpoint, config change, close) holds the log's {@link #writeLock};
 * reads ({@link #read}, {@link #offsetForTimestamp}, {@link #endOffsetForEpoch}) take no lock and
 * see only whole batches (the volatile log end offset is published after the bytes and index
 * entries). Reads racing with {@link #close} may fail with {@link ClosedChannelException}, with
 * {@link #truncateTo} with an {@link IOException} or return batches it removes; segments removed by
 * retention or truncation stay readable for {@link LogConfig#fileDeleteDelayMs()}.
 *
 * <p>Errors: {@link IOException} for I/O failures; after a failed append the log refuses further
 * appends (the file may hold a partial write) until it is closed and reopened, which recovers it.
 * An append, flush or checkpoint that fails because the file system is full ({@link
 * StorageErrors#isNoSpace}) also calls {@link LogMetrics#diskFull}, once per full episode.
 * A record set that is not a well-formed batch sequence is a caller bug: {@link
 * IllegalArgumentException}. Use after close: {@link IllegalStateException} for writes. Expected
 * outcomes are return values ({@link #OFFSET_MISMATCH}, {@link LogStartOffsetResult}).
 *
 * <p>Durability: by default nothing is fsynced until {@link #flush} or {@link #close} (OS page
 * cache, as Kafka); {@link LogConfig#flushMessages()} / {@link LogConfig#flushMs()} make appends
 * flush after that many records / that much time since the last flush. Checkpoint files are always
 * written durably (temp file, fsync, rename, fsync directory).
 */
public final class UnifiedLog implements AutoCloseable {
    /** Present in the partition directory only after a clean {@link #close}. */
    public static final String CLEAN_SHUTDOWN_FILE = ".clean-shutdown";

    /**
     * Returned by {@link #appendAsFollower} (instead of the log end offset, which is &gt;= 0) when the
     * records do not continue the log end offset: nothing was written, refetch from {@link
     * #logEndOffset}. -2, distinct from every other negative offset code of the append and
     * replication path (docs/ownership.md, "Return codes"); -1 means "unknown" there.
     */
    public static final long OFFSET_MISMATCH = -2L;

    private static final Logger LOG = LoggerFactory.getLogger(UnifiedLog.class);

    private final Path dir;
    /** Replaced by {@link #updateConfig} (a topic config change); readers take one snapshot per use. */
    private volatile LogConfig config;

    private final LogEnvironment env;
    private final ReentrantLock writeLock = new ReentrantLock();

    /** Runs {@link #compact}; it swaps cleaned segments in only through {@link #swapCleaned}. */
    private final LogCompaction compaction;

    /** Bumped (under the write lock) by every truncation; a compaction spanning one swaps nothing. */
    private volatile long truncations;

    /** Copy-on-write, ordered by base offset; published before the LEO that needs it. */
    private volatile LogSegment[] segments;

    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile int latestLeaderEpoch;
    private volatile boolean closed;
    private LeaderEpochCache epochCache;

    /** Guarded by writeLock. */
    private boolean failed;

    /**
     * Guarded by writeLock: {@link LogMetrics#diskFull} was called since the log was opened or last
     * appended successfully (one report per full episode).
     */
    private boolean diskFullReported;

    private final FlushPolicy flushPolicy;
    private long recoveryPoint;
    private long checkpointedRecoveryPoint = -1;
    private long checkpointedLogStartOffset = -1;

    private UnifiedLog(Path dir, LogConfig config, LogEnvironment env) {
        this.dir = dir;
        this.config = config;
        this.env = env;
        this.compaction = new LogCompaction(this, env);
        this.flushPolicy = new FlushPolicy(config, System.nanoTime());
    }

    /** {@link #open(Path, LogConfig, LogEnvironment)} with the system clock and deletion thread. */
    public static UnifiedLog open(Path partitionDir, LogConfig config) throws IOException {
        return open(partitionDir, config, LogEnvironment.system());
    }

    /**
     * Opens (creating if needed) or recovers the log in {@code partitionDir} ({@link LogLoader}).
     * Without a clean shutdown marker the segments from the one holding the checkpointed recovery
     * point on are validated and truncated at the first invalid byte (a WARN names the file and the
     * dropped bytes), later segments are deleted, their indexes rebuilt. Trusted segments keep their
     * indexes unless these fail the sanity checks.
     */
    public static UnifiedLog open(Path partitionDir, LogConfig config, LogEnvironment env) throws IOException {
        Files.createDirectories(partitionDir);
        UnifiedLog log = new UnifiedLog(partitionDir, config, env);
        LogLoader.Loaded loaded = LogLoader.load(partitionDir, config, env);
        log.segments = loaded.segments();
        log.logEndOffset = loaded.logEndOffset();
        log.logStartOffset = loaded.logStartOffset();
        log.latestLeaderEpoch = loaded.latestLeaderEpoch();
        log.recoveryPoint = loaded.recoveryPoint();
        log.epochCache = loaded.epochCache();
        return log;
    }

    /**
     * {@code records} = a VALIDATED RecordBatchSet (readerIndex..writerIndex). Assigns consecutive
     * offsets from LEO to every record of every batch, stamps partitionLeaderEpoch, writes all
     * batches. Returns the base offset (offset of the first record). A new epoch is recorded in the
     * leader-epoch checkpoint (durably) before the batches are written.
     *
     * <p>Buffer ownership: does not release {@code records} and does not move its reader or writer
     * index, but OVERWRITES bytes 0-3 (baseOffsetDelta, now relative to the segment base) and 8-11
     * (partitionLeaderEpoch) of every batch in place. The buffer is not retained after return.
     *
     * <p>Blocks while another write, flush or close runs. May roll to a new segment before any batch
     * (segment full, index full, offsets beyond int32 relative to the base, or {@link
     * LogConfig#segmentMs()} elapsed).
     *
     * @throws IOException the write (or a policy fsync) failed: do not acknowledge; some of the
     *     batches may already be readable (as in Kafka, a retry can duplicate them); the log refuses
     *     further appends until it is closed and reopened, which recovers it
     * @throws IllegalArgumentException {@code records} is empty or not a sequence of whole batches
     * @throws InvalidRecordException the log is compacted ({@link LogConfig#cleanupPolicy()}) and a
     *     record has a null key (uncompressed batches are checked): nothing is written, the log
     *     stays writable; the broker answers INVALID_RECORD
     * @throws IllegalStateException the log is closed
     */
    public long appendAsLeader(ByteBuf records, int leaderEpoch) throws IOException {
        int start = records.readerIndex();
        int end = records.writerIndex();
        RecordSets.checkWholeBatches(records, start, end);
        if (config.cleanupPolicy().compact() && LogCleaner.hasNullKey(records, start, end)) {
            throw new InvalidRecordException("a record with a null key on compacted log " + dir);
        }
        writeLock.lock();
        try {
            checkWritable();
            long startNanos = System.nanoTime();
            long first = logEndOffset;
            if (epochCache.assign(leaderEpoch, first)) {
                epochCache.flush();
            }
            guardedAppend(records, start, end, leaderEpoch, true, 0);
            env.metrics().append(System.nanoTime() - startNanos, true);
            diskFullReported = false;
            return first;
        } catch (IOException e) {
            writeFailed("append", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Appends batches copied from the leader, keeping their offsets and leader epochs.
     *
     * <p>Input: a VALIDATED RecordBatchSet as a Fetch v0 response carries it: each batch's bytes 0-3
     * hold {@code batchBaseOffset - fetchOffset}, so batch i's absolute base offset is {@code
     * fetchOffset + baseOffsetDelta_i}. The first batch must start exactly at the log end offset and
     * each next batch right after the previous one's last offset; otherwise nothing is written and
     * {@link #OFFSET_MISMATCH} is returned (a stale or overlapping fetch: the caller refetches from
     * {@link #logEndOffset}). On a compacted log ({@link LogConfig#cleanupPolicy()} with {@code
     * compact}) gaps are accepted and kept (a batch may start after the log end offset or after the
     * previous batch's last offset + 1): a compacted leader ({@link #compact}) drops batches whose
     * records were all removed; the log end offset then jumps to the last batch's last offset + 1. Batches with fewer records than {@code
     * lastOffsetDelta + 1} (compacted, see {@link LogCleaner}) are stored as they are. Every batch's leader epoch (bytes 8-11) is kept and recorded in the
     * leader-epoch cache where it changes. Bytes 0-3 are overwritten in place (relative to the
     * segment base); the buffer is neither released nor retained.
     *
     * @return the log end offset after the append, or {@link #OFFSET_MISMATCH}
     * @throws IOException as for {@link #appendAsLeader}
     * @throws IllegalArgumentException {@code records} is empty or not a sequence of whole batches
     * @throws IllegalStateException the log is closed
     */
    public long appendAsFollower(ByteBuf records, long fetchOffset) throws IOException {
        int start = records.readerIndex();
        int end = records.writerIndex();
        RecordSets.checkWholeBatches(records, start, end);
        writeLock.lock();
        try {
            checkWritable();
            long startNanos = System.nanoTime();
            long expected = logEndOffset;
            boolean gapsAllowed = config.cleanupPolicy().compact();
            for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
                long base = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
                if (gapsAllowed ? base < expected : base != expected) {
                    return OFFSET_MISMATCH;
                }
                expected = base + RecordBatchLayout.lastOffsetDelta(records, p) + 1;
            }
            boolean epochsChanged = false;
            for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
                long base = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
                epochsChanged |= epochCache.assign(RecordBatchLayout.partitionLeaderEpoch(records, p), base);
            }
            if (epochsChanged) {
                epochCache.flush();
            }
            guardedAppend(records, start, end, 0, false, fetchOffset);
            env.metrics().append(System.nanoTime() - startNanos, false);
            diskFullReported = false;
            return logEndOffset;
        } catch (IOException e) {
            writeFailed("append", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Reports a write that failed because the file system is full, once per full episode ({@link
     * LogMetrics#diskFull}). Under the write lock.
     */
    private void writeFailed(String operation, IOException e) {
        if (!diskFullReported && StorageErrors.isNoSpace(e)) {
            diskFullReported = true;
            env.metrics().diskFull(dir, operation, e);
        }
    }

    private void checkWritable() throws IOException {
        if (closed) {
            throw new IllegalStateException("log " + dir + " is closed");
        }
        if (failed) {
            throw new IOException("log " + dir + " had a failed write; reopen it to recover");
        }
    }

    private long guardedAppend(
            ByteBuf records, int start, int end, int leaderEpoch, boolean stampEpoch, long fetchOffset)
            throws IOException {
        try {
            return appendLocked(records, start, end, leaderEpoch, stampEpoch, fetchOffset);
        } catch (IOException e) {
            failed = true;
            throw e;
        }
    }

    /**
     * Leader ({@code stampEpoch}): offsets assigned consecutively from the LEO. Follower: each batch's
     * base is {@code fetchOffset + its bytes 0-3} (checked by the caller: increasing, gaps allowed).
     */
    private long appendLocked(
            ByteBuf records, int start, int end, int leaderEpoch, boolean stampEpoch, long fetchOffset)
            throws IOException {
        LogSegment seg = segments[segments.length - 1];
        long first = logEndOffset;
        long next = first;
        LogConfig cfg = config; // one volatile read per append
        if (seg.isDueToRoll(env.nowMs(), cfg.segmentMs())) {
            seg = roll(seg, next);
        }
        int runStart = start;
        int runBytes = 0;
        int runBatches = 0;
        long recordsAppended = 0;
        int lastEpoch = leaderEpoch;
        int p = start;
        while (p < end) {
            int batchLength = records.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            int lastOffsetDelta = records.getInt(p + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            int size = RecordBatchLayout.LOG_OVERHEAD + batchLength;
            if (!stampEpoch) {
                next = fetchOffset + records.getInt(p + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            }
            long last = next + lastOffsetDelta;
            if (!seg.fits(runBytes + size, runBatches + 1, last, cfg.segmentBytes())) {
                if (runBatches > 0) {
                    commitRun(seg, records, runStart, runBytes, next, lastEpoch);
                }
                seg = roll(seg, next);
                runStart = p;
                runBytes = 0;
                runBatches = 0;
            }
            records.setInt(p + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET, (int) (next - seg.baseOffset));
            if (stampEpoch) {
                records.setInt(p + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET, leaderEpoch);
            } else {
                lastEpoch = records.getInt(p + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
            }
            runBytes += size;
            runBatches++;
            recordsAppended += records.getInt(p + RecordBatchLayout.RECORD_COUNT_OFFSET);
            next = last + 1;
            p += size;
        }
        commitRun(seg, records, runStart, runBytes, next, lastEpoch);
        maybeFlush(recordsAppended);
        return first;
    }

    private void commitRun(LogSegment seg, ByteBuf records, int runStart, int runBytes, long nextOffset, int epoch)
            throws IOException {
        int before = seg.sizeBytes();
        try {
            seg.append(records, runStart, runBytes, env.nowMs());
        } catch (IOException e) {
            try {
                seg.truncateTo(before);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        latestLeaderEpoch = epoch;
        logEndOffset = nextOffset; // volatile: publishes the run to readers
    }

    private LogSegment roll(LogSegment current, long baseOffset) throws IOException {
        current.seal();
        LogSegment next = LogSegment.create(dir, baseOffset, config, env.nowMs());
        LogSegment[] old = segments;
        LogSegment[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = next;
        segments = grown; // volatile: published before any LEO inside the new segment
        env.metrics().segmentRolled();
        LOG.debug("Rolled {} to new segment at base offset {}", dir, baseOffset);
        return next;
    }

    private void maybeFlush(long recordsAppended) throws IOException {
        if (flushPolicy.recordAppended(recordsAppended, System.nanoTime())) {
            flushLocked();
        }
    }

    private void flushLocked() throws IOException {
        long startNanos = System.nanoTime();
        long leo = logEndOffset;
        for (LogSegment s : segments) {
            s.flush();
        }
        env.metrics().flush(System.nanoTime() - startNanos);
        flushPolicy.flushed(System.nanoTime());
        recoveryPoint = leo;
    }

    /**
     * Removes every batch holding an offset &gt;= {@code offset} (a follower diverged from the
     * leader): later segments are deleted (after {@link LogConfig#fileDeleteDelayMs()}), the segment
     * holding {@code offset} is cut at the first such batch and becomes the active segment, leader
     * epochs starting at or after the new end are forgotten. When {@code offset} falls inside a
     * batch that whole batch goes, so the new log end offset is that batch's base offset; for an
     * offset on a batch boundary (what epoch-based truncation gives) it is exactly {@code offset}.
     * An offset at or above the log end offset changes nothing; one at or below the log start offset
     * empties the log as {@link #truncateFullyAndStartAt}.
     *
     * @return the log end offset afterwards
     * @throws IOException I/O failure (the log may then be partly truncated; reopen it)
     * @throws IllegalStateException the log is closed
     */
    public long truncateTo(long offset) throws IOException {
        writeLock.lock();
        try {
            checkWritable();
            return truncateToLocked(offset);
        } catch (IOException e) {
            failed = true; // files and memory may disagree now: refuse writes until reopened
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    private long truncateToLocked(long offset) throws IOException {
        if (offset >= logEndOffset) {
            return logEndOffset;
        }
        if (offset <= logStartOffset) {
            truncateFullyLocked(offset);
            return offset;
        }
        truncations++;
        LogSegment[] segs = segments;
        int keep = segs.length - 1;
        while (segs[keep].baseOffset >= offset) {
            keep--; // stops at 0: offset > logStartOffset >= segs[0].baseOffset
        }
        LogSegment target = segs[keep];
        LogSegment.Cut cut = target.findCut(offset);
        long newEnd = cut == null ? LogLoader.scanTailNextOffset(target) : cut.baseOffset();
        logEndOffset = newEnd; // volatile: readers stop below the cut first
        segments = Arrays.copyOf(segs, keep + 1);
        for (int i = keep + 1; i < segs.length; i++) {
            SegmentDisposal.delete(env.scheduler(), segs[i], config.fileDeleteDelayMs());
        }
        target.truncateAt(cut == null ? target.sizeBytes() : cut.position(), cut == null ? -1 : cut.baseOffset());
        epochCache.truncateFromEnd(newEnd);
        epochCache.flush();
        latestLeaderEpoch = epochCache.latestEpoch();
        if (recoveryPoint > newEnd) {
            recoveryPoint = newEnd;
            writeCheckpointsLocked(); // a stale, higher recovery point would trust unflushed data
        }
        LOG.info("Truncated {} to offset {} (requested {})", dir, newEnd, offset);
        return newEnd;
    }

    /**
     * Deletes all segments (after {@link LogConfig#fileDeleteDelayMs()}) and restarts the log empty
     * at {@code newOffset}: log start offset = log end offset = recovery point = {@code newOffset},
     * leader-epoch history cleared; the checkpoints are written before returning.
     *
     * @throws IllegalArgumentException {@code newOffset} is negative
     * @throws IllegalStateException the log is closed
     */
    public void truncateFullyAndStartAt(long newOffset) throws IOException {
        if (newOffset < 0) {
            throw new IllegalArgumentException("negative offset " + newOffset + " for " + dir);
        }
        writeLock.lock();
        try {
            checkWritable();
            truncateFullyLocked(newOffset);
        } catch (IOException e) {
            failed = true; // files and memory may disagree now: refuse writes until reopened
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    private void truncateFullyLocked(long newOffset) throws IOException {
        truncations++;
        LogSegment[] old = segments;
        for (LogSegment s : old) {
            s.renameForDeletion(); // frees the names: the new segment may reuse a base offset
        }
        LogSegment fresh = LogSegment.create(dir, newOffset, config, env.nowMs());
        segments = new LogSegment[] {fresh}; // volatile: before the LEO, so no reader pairs a new LEO with old data
        logEndOffset = newOffset;
        logStartOffset = newOffset;
        recoveryPoint = newOffset;
        latestLeaderEpoch = -1;
        for (LogSegment s : old) {
            SegmentDisposal.deleteRenamed(env.scheduler(), s, config.fileDeleteDelayMs());
        }
        epochCache.clear();
        epochCache.flush();
        writeCheckpointsLocked();
        LOG.info("Truncated {} fully; the log now starts at offset {}", dir, newOffset);
    }

    /**
     * Delete-records: raises the log start offset to {@code newLogStartOffset}, never past {@code
     * highWatermark} (nor the log end offset). Records below it become invisible to {@link
     * #offsetForTimestamp} and count as deleted; their segments are removed by the next {@link
     * #deleteOldSegments}. Writes the {@value LogLoader#LOG_START_OFFSET_FILE} checkpoint before
     * returning INCREMENTED.
     */
    public LogStartOffsetResult maybeIncrementLogStartOffset(long newLogStartOffset, long highWatermark)
            throws IOException {
        writeLock.lock();
        try {
            checkWritable();
            if (newLogStartOffset > Math.min(highWatermark, logEndOffset)) {
                return LogStartOffsetResult.BEYOND_HIGH_WATERMARK;
            }
            if (newLogStartOffset <= logStartOffset) {
                return LogStartOffsetResult.UNCHANGED;
            }
            logStartOffset = newLogStartOffset;
            epochCache.truncateFromStart(newLogStartOffset);
            epochCache.flush();
            writeCheckpointsLocked();
            return LogStartOffsetResult.INCREMENTED;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Retention: deletes the oldest sealed segments that are entirely below {@code highWatermark}
     * and (a) entirely below the log start offset, or (b) older than {@link LogConfig#retentionMs()},
     * or (c) not needed to keep the log at {@link LogConfig#retentionBytes()} or more. Stops at the
     * first segment that qualifies for none (deletion is always a prefix), and never deletes the
     * active segment or a segment holding an offset &gt;= {@code highWatermark}.
     *
     * <p>Time rule: a segment's retention time is its largest batch maxTimestamp, capped by the
     * wall-clock time of its last append (the {@code .log} file's mtime after a restart); a segment
     * without timestamps uses the last append time. The cap means a record stamped in the future
     * cannot keep a segment forever (it expires {@code retention.ms} after its last append at the
     * latest); the max timestamp comes from a time index that is rebuilt when found damaged, so a
     * zero-filled index never makes a segment look old. Deleted segments are renamed to {@code
     * .deleted} at once (readers in flight keep their open file) and removed after {@link
     * LogConfig#fileDeleteDelayMs()}; the log start offset moves up to the new first segment.
     *
     * @return the number of segments deleted
     * @throws IllegalStateException the log is closed
     */
    public int deleteOldSegments(long highWatermark) throws IOException {
        writeLock.lock();
        try {
            checkWritable();
            LogSegment[] segs = segments;
            int count = Retention.deletablePrefix(
                    segs, config, env.nowMs(), Math.min(highWatermark, logEndOffset), logStartOffset);
            if (count == 0) {
                return 0;
            }
            LogSegment[] kept = Arrays.copyOfRange(segs, count, segs.length);
            segments = kept;
            if (kept[0].baseOffset > logStartOffset) {
                logStartOffset = kept[0].baseOffset;
                epochCache.truncateFromStart(logStartOffset);
                epochCache.flush();
            }
            for (int i = 0; i < count; i++) {
                SegmentDisposal.delete(env.scheduler(), segs[i], config.fileDeleteDelayMs());
            }
            env.metrics().segmentsDeleted(count);
            writeCheckpointsLocked();
            LOG.info("Retention deleted {} segment(s) of {}; log start offset {}", count, dir, logStartOffset);
            return count;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Compaction ({@link LogConfig#cleanupPolicy()} {@code compact} or {@code compact,delete};
     * otherwise returns {@link CompactionResult#NONE}): keeps, in the sealed segments entirely below
     * {@code highWatermark} (never the active segment), only the last record per key, and drops a
     * tombstone that is the last for its key once its segment was last modified {@link
     * LogConfig#deleteRetentionMs()} or more ago. Offsets are kept (removed records leave gaps; format
     * in {@link LogCleaner}). Cleaned files are written without blocking appends or reads and swapped
     * in under the write lock; a crash at any point is completed or rolled back by {@link #open}.
     * Rules, thresholds and the swap protocol: {@link LogCompaction}. With {@code compact,delete}
     * call {@link #deleteOldSegments} too: retention is separate.
     *
     * <p>Concurrency: one compaction at a time per log (others wait). Readers that started before a
     * swap keep reading the old file, closed {@link LogConfig#fileDeleteDelayMs()} after the swap.
     *
     * @throws IOException reading or writing failed; if it failed after a commit point the log
     *     refuses further writes until reopened (which completes the swap)
     * @throws IllegalStateException the log is closed
     */
    public CompactionResult compact(long highWatermark) throws IOException {
        return compaction.run(highWatermark);
    }

    /**
     * Swaps the cleaned file {@code c} in for the sealed segment {@code old} ({@link LogCompaction}),
     * under the write lock. Returns false (and deletes {@code c}) when {@code old} changed since it
     * was cleaned: truncated (the truncation count moved from {@code truncationsAtStart}), deleted,
     * now the active segment, or resized; also when the log is closed or failed.
     */
    boolean swapCleaned(LogSegment old, int sizeAtClean, LogCleaner.Cleaned c, long truncationsAtStart)
            throws IOException {
        writeLock.lock();
        try {
            LogSegment[] segs = segments;
            int at = Arrays.asList(segs).indexOf(old); // LogSegment keeps identity equals
            if (closed
                    || failed
                    || truncations != truncationsAtStart
                    || at < 0
                    || at == segs.length - 1
                    || old.sizeBytes() != sizeAtClean) {
                Files.deleteIfExists(c.file());
                return false;
            }
            Path swap = old.logFile.resolveSibling(old.logFile.getFileName() + LogCleaner.SWAP_SUFFIX);
            Files.move(c.file(), swap, StandardCopyOption.ATOMIC_MOVE);
            Checkpoints.fsyncDir(dir); // commit point
            try {
                LogSegment fresh = LogLoader.completeSwap(dir, old.baseOffset, config);
                LogSegment[] replaced = segs.clone();
                replaced[at] = fresh;
                segments = replaced; // volatile: new readers use the new file
            } catch (IOException | RuntimeException e) {
                failed = true;
                throw e;
            }
            SegmentDisposal.abandon(env.scheduler(), old, config.fileDeleteDelayMs());
            return true;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Writes the {@value LogLoader#RECOVERY_POINT_FILE} and {@value LogLoader#LOG_START_OFFSET_FILE}
     * checkpoints (each only if changed since its last write), atomically. Call periodically (a log
     * manager does); {@link #close} does it too.
     *
     * @throws IllegalStateException the log is closed
     */
    public void checkpoint() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            writeCheckpointsLocked();
        } catch (IOException e) {
            writeFailed("checkpoint", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    private void writeCheckpointsLocked() throws IOException {
        if (recoveryPoint != checkpointedRecoveryPoint) {
            Checkpoints.writeOffset(dir.resolve(LogLoader.RECOVERY_POINT_FILE), recoveryPoint);
            checkpointedRecoveryPoint = recoveryPoint;
        }
        long start = logStartOffset;
        if (start != checkpointedLogStartOffset) {
            Checkpoints.writeOffset(dir.resolve(LogLoader.LOG_START_OFFSET_FILE), start);
            checkpointedLogStartOffset = start;
        }
    }

    /**
     * Visits whole batches whose last offset &gt;= fetchOffset, in order, while their last offset &lt;
     * maxOffsetExclusive (and &lt; the log end offset read at the start), stopping before a batch that
     * would take the total past maxBytes, except the first batch when minOneBatch. Returns bytes
     * visited. Runs concurrently with appends; the visitor is called on the calling thread with the
     * segment's channel, which it may read positionally (it must not change the channel's position
     * or write to it).
     */
    public int read(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, BatchVisitor visitor)
            throws IOException {
        long upper = Math.min(maxOffsetExclusive, logEndOffset); // volatile LEO read first
        LogSegment[] segs = segments; // then the segments: at least as new as the LEO
        return BatchReads.visit(segs, fetchOffset, maxBytes, upper, minOneBatch, visitor);
    }

    /**
     * Convenience: copies what read() visits into {@code out} (at its writerIndex, growing it as
     * needed), rewriting each batch's bytes 0-3 (baseOffsetDelta) to (baseOffset - fetchOffset) as
     * Fetch v0 requires (spec §6.4 step 5). All other bytes are as stored (bytes 8-11 = the leader
     * epoch of the append). Returns bytes copied. On an IOException {@code out} may hold a partial
     * copy.
     */
    public int readInto(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, ByteBuf out)
            throws IOException {
        return read(fetchOffset, maxBytes, maxOffsetExclusive, minOneBatch, BatchReads.copyingInto(out, fetchOffset));
    }

    /**
     * First record (record granularity, spec §6.5) in offset order with timestamp &gt;= targetMs and
     * offset &lt; maxOffsetExclusive, or null. Segments whose max timestamp is below targetMs are
     * skipped; in a candidate segment the time index gives where to start, batches whose
     * maxTimestamp is below targetMs are skipped by their header, and the first candidate batch's
     * records are scanned. Records below the log start offset are not considered. Runs concurrently
     * with appends.
     *
     * @throws IOException on I/O failure or a stored batch whose records do not parse
     */
    public TimestampOffset offsetForTimestamp(long targetMs, long maxOffsetExclusive) throws IOException {
        long upper = Math.min(maxOffsetExclusive, logEndOffset);
        LogSegment[] segs = segments;
        return TimestampSearch.search(segs, targetMs, logStartOffset(), upper);
    }

    /**
     * The record with the largest timestamp (the first one on ties) among offsets from the log start
     * offset up to {@code maxOffsetExclusive} (and the log end offset), or null when there is none:
     * ListOffsets MAX_TIMESTAMP. Runs concurrently with appends.
     */
    public TimestampOffset offsetOfMaxTimestamp(long maxOffsetExclusive) throws IOException {
        long upper = Math.min(maxOffsetExclusive, logEndOffset);
        LogSegment[] segs = segments;
        return TimestampSearch.maxTimestamp(segs, logStartOffset, upper);
    }

    /**
     * The lock every write of this log holds (see the class comment). A caller that must make a
     * decision and a write atomic holds it around both: the broker's {@code Partition} holds it for
     * its leadership check and the append, and for role changes. Reentrant: the log's own methods
     * take it again. Lock order: a caller's own locks before this one; nothing is locked while
     * holding it but the log's internals. Held for one write: microseconds for an append, up to an
     * index rebuild for a compaction swap (a scan of one segment).
     */
    public Lock writeLock() {
        return writeLock;
    }

    /** The offset the next appended record will get. Volatile read; any thread. */
    public long logEndOffset() {
        return logEndOffset;
    }

    /**
     * The first offset of the log: the first segment's base until {@link
     * #maybeIncrementLogStartOffset} or retention raises it. Volatile read; any thread.
     */
    public long logStartOffset() {
        return logStartOffset;
    }

    /** The epoch of the last appended batch, -1 if the log is empty. Any thread. */
    public int latestLeaderEpoch() {
        return latestLeaderEpoch;
    }

    /** Where {@code leaderEpoch} ended ({@link EpochEndOffset}). Any thread. */
    public EpochEndOffset endOffsetForEpoch(int leaderEpoch) {
        return epochCache.endOffsetFor(leaderEpoch, logEndOffset);
    }

    /** Offset below which everything is fsynced (in memory; {@link #checkpoint} persists it). */
    public long recoveryPoint() {
        writeLock.lock();
        try {
            return recoveryPoint;
        } finally {
            writeLock.unlock();
        }
    }

    /** Bytes of the active segment's {@code .log} (gauge {@code stellflow.log.segment.active.size}). Any thread. */
    public long activeSegmentSizeBytes() {
        LogSegment[] segs = segments;
        return segs[segs.length - 1].sizeBytes();
    }

    /** Total bytes of all segment files ({@code .log} only). Any thread. */
    public long sizeInBytes() {
        long total = 0;
        for (LogSegment s : segments) {
            total += s.sizeBytes();
        }
        return total;
    }

    /** The partition directory. */
    public Path dir() {
        return dir;
    }

    /** The current configuration (as opened, or as last {@link #updateConfig updated}). */
    public LogConfig config() {
        return config;
    }

    /**
     * Replaces the configuration (a topic config override changed): the next append rolls at the new
     * {@code segment.bytes}/{@code segment.ms} and new segments get the new index sizes; retention,
     * compaction, the null-key check and the flush policy use it from their next run. Segments
     * already written are not rewritten. Waits for a running write.
     */
    public void updateConfig(LogConfig newConfig) {
        writeLock.lock();
        try {
            config = Objects.requireNonNull(newConfig, "newConfig");
            flushPolicy.reconfigure(newConfig);
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * False when {@link #appendAsLeader} would reject {@code records} with {@link
     * InvalidRecordException}: the log is compacted and a record has a null key. Lets a caller that
     * merges several requests into one append reject only the offending one. Reads only; any thread.
     */
    public boolean acceptsKeys(ByteBuf records) {
        return !config.cleanupPolicy().compact()
                || !LogCleaner.hasNullKey(records, records.readerIndex(), records.writerIndex());
    }

    /** The segments, oldest first (tests). */
    LogSegment[] segmentsForTesting() {
        return segments;
    }

    /** The current segments, oldest first (a snapshot; {@link LogCompaction}). */
    LogSegment[] segments() {
        return segments;
    }

    /** Truncations so far; a compaction spanning a change swaps nothing ({@link #swapCleaned}). */
    long truncationCount() {
        return truncations;
    }

    /** True once {@link #close} (or a simulated crash) ran. */
    boolean isClosed() {
        return closed;
    }

    /** The leader-epoch history (tests). */
    LeaderEpochCache epochCacheForTesting() {
        return epochCache;
    }

    /** Number of segments (diagnostics and tests). */
    public int segmentCount() {
        return segments.length;
    }

    /** fsyncs every segment's log and indexes that changed and raises the recovery point. Blocks writes. */
    public void flush() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            flushLocked();
        } catch (IOException e) {
            writeFailed("flush", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Simulates a process crash for tests: releases files and mappings without flushing, trimming
     * the indexes, writing checkpoints or the clean shutdown marker.
     */
    void crashForTesting() throws IOException {
        writeLock.lock();
        try {
            closed = true;
            for (LogSegment s : segments) {
                s.abandon();
            }
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Clean shutdown: flushes, trims and unmaps indexes, closes files, writes the checkpoints and the
     * clean shutdown marker (not after a failed append, so the next open recovers). Idempotent.
     */
    @Override
    public void close() throws IOException {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            IOException error = null;
            try {
                flushLocked();
            } catch (IOException e) {
                error = e;
            }
            for (LogSegment s : segments) {
                try {
                    s.close();
                } catch (IOException e) {
                    if (error == null) {
                        error = e;
                    } else {
                        error.addSuppressed(e);
                    }
                }
            }
            if (error != null) {
                throw error;
            }
            if (!failed) {
                writeCheckpointsLocked();
                LogLoader.writeCleanShutdownMarker(dir);
            }
        } finally {
            writeLock.unlock();
        }
    }
}
