package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One partition's log: a directory of {@link LogSegment}s named by their 20-digit base offset, plus
 * the checkpoint files {@value LogLoader#RECOVERY_POINT_FILE}, {@value
 * LogLoader#LOG_START_OFFSET_FILE} and {@value LeaderEpochCache#FILE_NAME} (format and atomic write:
 * {@link Checkpoints}).
 *
 * <p>Storage format: each stored batch is the RecordBatch ({@code docs/spec/wire-protocol.md} §7)
 * as produced, with bytes 0-3 (baseOffsetDelta) = batch base offset - segment base offset and bytes
 * 8-11 (partitionLeaderEpoch) = the epoch passed to {@link #appendAsLeader} (or as stamped by the
 * leader, for {@link #appendAsFollower}). Bytes 17.. (covered by the CRC) are never changed by an
 * append; {@link #compact} rewrites batches of sealed segments (records removed, original offsets
 * kept through offsetDelta, so {@code recordCount} may be below {@code lastOffsetDelta + 1}; CRC
 * recomputed; format in {@link LogCleaner}). A file {@value
 * #CLEAN_SHUTDOWN_FILE} in the directory marks a clean {@link #close}; without it, {@link #open}
 * validates every batch from the segment holding the checkpointed recovery point on (CRC-32C
 * included), truncates at the first invalid byte and rebuilds those indexes ({@link LogLoader}).
 *
 * <p>Offsets: the log holds offsets [{@link #logStartOffset}, {@link #logEndOffset}). The recovery
 * point is the offset below which everything is known to be fsynced; {@link #flush} raises it to the
 * log end offset and {@link #checkpoint} persists it (with the log start offset), which bounds the
 * recovery work after a crash.
 *
 * <p>Parts, each confined to the write lock unless it says otherwise: {@link LogSegments} (the
 * segment list and the offset range, published to lock-free readers), {@link LogAppendPaths} (the
 * leader, follower and control appends: checks, producer state, epochs), {@link LogAppender} (places
 * batches into segments and rolls), {@link LogTruncation} (removes records from either end:
 * divergence, full truncation, delete-records, retention), {@link LogFlusher} (flush policy,
 * recovery point, checkpoints), {@link LogCompaction} (cleaning and the swap of cleaned segments),
 * {@link LogProducerState} (idempotent producers' sequences, their snapshots and their rebuild
 * after open, reopen and truncation), {@link LogLifecycle} (the closed and failed state; reopen and
 * close); {@link LogLoader} opens and recovers, {@link BatchReads} and {@link TimestampSearch} read.
 * This class holds the lock, the parts and the public contract.
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
 * appends (the file may hold a partial write) until it is closed and opened again, or {@link
 * #reopen reopened} in place, which recovers it.
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

    /** {@link #appendIdempotentAsLeader}: a gap or overlap in the producer's sequences; nothing written. */
    public static final long OUT_OF_ORDER_SEQUENCE = -4L;

    /** {@link #appendIdempotentAsLeader}: the producer's epoch is older than the partition's; nothing written. */
    public static final long INVALID_PRODUCER_EPOCH = -5L;

    /** {@link #appendIdempotentAsLeader}: a new producer id while the partition keeps its maximum; nothing written. */
    public static final long TOO_MANY_PRODUCER_IDS = -6L;

    /** Transactional append or marker of another transaction ({@link LogTransactions}); nothing written. */
    public static final long INVALID_TXN_STATE = -7L;

    /** A marker of a deposed coordinator ({@link LogTransactions#appendMarker}); nothing written. */
    public static final long TRANSACTION_COORDINATOR_FENCED = -8L;

    /**
     * {@link #appendIdempotentAsLeader}: a new producer id while the broker's logs keep {@code
     * producer.id.max.per.broker} ids together ({@link BrokerProducerIds}); nothing written.
     */
    public static final long TOO_MANY_PRODUCER_IDS_ON_BROKER = -9L;

    private final Path dir;
    /** Replaced by {@link #updateConfig} (a topic config change); readers take one snapshot per use. */
    private volatile LogConfig config;

    private final LogEnvironment env;
    private final ReentrantLock writeLock = new ReentrantLock();

    /** Runs {@link #compact} and swaps the cleaned segments in, under {@link #writeLock}. */
    private final LogCompaction compaction;

    /** The segments, the start and end offsets and the latest epoch, published to lock-free readers. */
    private final LogSegments segments;

    /** Writes batches at the end, rolling segments ({@link #appendAsLeader}, {@link #appendAsFollower}). */
    private final LogAppender appender;

    /** Flush policy, recovery point and checkpoints. Guarded by writeLock. */
    private final LogFlusher flusher;

    /** Truncation from either end: divergence, full truncation, delete-records, retention. */
    private final LogTruncation truncation;

    private final LeaderEpochCache epochCache;

    /** Idempotent producers' sequences and offsets, with their snapshots. Guarded by writeLock. */
    private final LogProducerState producers;

    /** Closed, failed (and why), released by a failed reopen; reopen, crash and close. */
    private final LogLifecycle lifecycle;

    /** The leader, follower and control appends ({@link #appendAsLeader}, {@link #appendAsFollower}). */
    private final LogAppendPaths appends;

    private UnifiedLog(Path dir, LogConfig config, LogEnvironment env, LogLoader.Loaded loaded) {
        this.dir = dir;
        this.config = config;
        this.env = env;
        this.segments = new LogSegments(
                loaded.segments(), loaded.logStartOffset(), loaded.logEndOffset(), loaded.latestLeaderEpoch());
        this.epochCache = loaded.epochCache();
        this.flusher = new LogFlusher(dir, config, env, loaded.recoveryPoint());
        this.appender = new LogAppender(dir, segments, flusher, env);
        this.truncation = new LogTruncation(dir, segments, epochCache, flusher, env);
        this.producers = new LogProducerState(this, dir, env);
        this.lifecycle = new LogLifecycle(this, writeLock, segments, epochCache, flusher, truncation, producers, env);
        this.appends = new LogAppendPaths(this, writeLock, segments, appender, epochCache, producers, lifecycle, env);
        this.compaction = new LogCompaction(this, writeLock, segments, truncation, lifecycle, env);
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
        UnifiedLog log = new UnifiedLog(partitionDir, config, env, LogLoader.load(partitionDir, config, env));
        try {
            log.producers.load(log, log.logEndOffset());
        } catch (IOException | RuntimeException e) {
            log.crashForTesting(); // releases the files without writing a clean-shutdown marker
            throw e;
        }
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
        return appendAsLeader(records, leaderEpoch, null);
    }

    /**
     * As {@link #appendAsLeader(ByteBuf, int)}, with the real largest record timestamp of every batch
     * as {@link io.stellflow.protocol.record.RecordBatchValidator} computed them while validating
     * ({@code docs/spec/wire-protocol.md} decision 9.s): they feed the time index, the segment's max
     * timestamp and time retention, so the append does not walk the records again.
     *
     * @param maxTimestamps one entry per batch of {@code records}, in order; null: the log reads them
     *     from the records itself
     * @throws IllegalArgumentException also when {@code maxTimestamps} does not hold one entry per batch
     */
    public long appendAsLeader(ByteBuf records, int leaderEpoch, BatchMaxTimestamps maxTimestamps) throws IOException {
        return appends.leaderAppend(records, leaderEpoch, maxTimestamps, false, -1);
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
        return appends.followerAppend(records, fetchOffset);
    }

    /**
     * Appends ONE validated batch of an idempotent producer (producerId &gt;= 0) as {@link
     * #appendAsLeader(ByteBuf, int, BatchMaxTimestamps)} does, after checking its producer id, epoch
     * and sequences ({@link ProducerStateManager}, {@code docs/spec/wire-protocol.md} §6.12). An
     * exact retry of one of the producer's last 5 batches (same epoch and sequences, and the same
     * keys, values and headers as the stored batch; timestamps may differ) writes nothing and
     * returns the offset the stored batch got. The content is compared with the stored batch, or
     * with the digest the producer state took just before retention or compaction could remove it,
     * so also after they did; a remembered batch with neither digest nor stored bytes answers {@link
     * #OUT_OF_ORDER_SEQUENCE}, never a duplicate.
     *
     * @return the base offset (new or original), or {@link #OUT_OF_ORDER_SEQUENCE} (also a reused
     *     sequence with other content), {@link #INVALID_PRODUCER_EPOCH}, {@link
     *     #TOO_MANY_PRODUCER_IDS}, {@link #TOO_MANY_PRODUCER_IDS_ON_BROKER}; nothing is written on a
     *     negative result
     * @throws IOException as {@link #appendAsLeader}
     * @throws IllegalArgumentException {@code batch} is not exactly one batch or has no producer id
     */
    public long appendIdempotentAsLeader(ByteBuf batch, int leaderEpoch, BatchMaxTimestamps maxTimestamps)
            throws IOException {
        return appends.leaderAppend(batch, leaderEpoch, maxTimestamps, true, -1);
    }

    /**
     * As {@link #appendIdempotentAsLeader}, for a batch of a transaction (whatever its
     * isTransactional bit says): when the producer has no open transaction in this log, a BEGIN
     * marker is appended right before the batch ({@link LogTransactions}). Also returns {@link
     * #INVALID_TXN_STATE} when the producer's open transaction has another {@code
     * transactionSequence} (&gt;= 0).
     */
    public long appendTransactionalAsLeader(
            ByteBuf batch, int leaderEpoch, BatchMaxTimestamps maxTimestamps, long transactionSequence)
            throws IOException {
        return appends.leaderAppend(batch, leaderEpoch, maxTimestamps, true, Math.max(transactionSequence, 0));
    }

    /**
     * As {@link #appendTransactionalAsLeader} for ONE batch built by the coordinator that owns this
     * log (the group coordinator's transactional offsets in {@code __consumer_offsets}): the batch's
     * baseSequence is stamped here, under the write lock, with the producer's next sequence in this
     * log (0 for a producer id new here or at a higher epoch) and its CRC rewritten, since only the
     * log knows its producer state (Kafka skips the check for coordinator appends instead; stamping
     * keeps one rule for every batch with a producer id). Returns as {@link
     * #appendTransactionalAsLeader}: the base offset, {@link #INVALID_PRODUCER_EPOCH} for an epoch
     * older than the producer's, {@link #INVALID_TXN_STATE}, {@link #TOO_MANY_PRODUCER_IDS}, {@link
     * #TOO_MANY_PRODUCER_IDS_ON_BROKER}.
     *
     * @param batch one uncompressed or compressed batch with producerId and producerEpoch set; its
     *     baseSequence and CRC are overwritten
     */
    public long appendCoordinatorTransactional(ByteBuf batch, int leaderEpoch, long transactionSequence)
            throws IOException {
        return appends.coordinatorTransactional(batch, leaderEpoch, transactionSequence);
    }

    /**
     * Appends the coordinator's COMMIT ({@code commit}) or ABORT marker for {@code producerId}
     * ({@link LogTransactions#appendMarker}): returns its offset, or {@link
     * #INVALID_PRODUCER_EPOCH} for an epoch older than the producer's, {@link #INVALID_TXN_STATE}
     * for a transactionSequence below the open transaction's, {@link
     * #TRANSACTION_COORDINATOR_FENCED} for a coordinatorEpoch below an earlier marker's (nothing
     * written). Errors as {@link #appendAsLeader}.
     */
    public long appendTransactionMarker(
            long producerId,
            short producerEpoch,
            boolean commit,
            int coordinatorEpoch,
            long transactionSequence,
            int leaderEpoch)
            throws IOException {
        return producers.transactions.appendMarker(
                producerId, producerEpoch, commit, coordinatorEpoch, transactionSequence, leaderEpoch, env.nowMs());
    }

    /** Under the write lock: appends one control batch of {@link LogTransactions}; returns its offset. */
    long appendControl(ByteBuf batch, int leaderEpoch) throws IOException {
        return appends.appendControl(batch, leaderEpoch);
    }

    /**
     * The first offset of the oldest open transaction, {@link
     * ProducerStateManager#NO_OPEN_TRANSACTION} when none is: the last stable offset is the minimum
     * of this and the high watermark. Volatile read; any thread.
     */
    public long firstUnstableOffset() {
        return producers.transactions.firstUnstableOffset();
    }

    /**
     * Every producer id this log keeps state for, ascending (DescribeProducers, {@code
     * docs/exactly-once.md}, "The transactions tool"). Takes the write lock briefly; any thread.
     */
    public List<ActiveProducer> activeProducers() {
        writeLock.lock();
        try {
            return producers.state.activeProducers();
        } finally {
            writeLock.unlock();
        }
    }

    /** Aborted transactions overlapping [{@code fromOffset}, {@code upperExclusive}) ({@link AbortedTxnIndex#overlapping}). Any thread. */
    public List<AbortedTxn> abortedTransactions(long fromOffset, long upperExclusive) {
        return producers.transactions.overlapping(fromOffset, upperExclusive);
    }

    /** Base offset of the active segment. */
    long activeSegmentBaseOffset() {
        return segments.active().baseOffset;
    }

    /** Where the last producer-state load started replaying the log (tests). */
    long producerStateReplayedFrom() {
        return producers.replayedFrom;
    }

    /**
     * The base offsets of the live producers' newest batches, ascending (compaction keeps them
     * whole: {@link LogCleaner}). Takes the write lock briefly.
     */
    long[] producersLastBatchBaseOffsets() {
        writeLock.lock();
        try {
            return producers.state.lastBatchBaseOffsets();
        } finally {
            writeLock.unlock();
        }
    }

    /** The idempotent-producer state (tests; read under {@link #writeLock}). */
    ProducerStateManager producerState() {
        return producers.state;
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
            lifecycle.checkWritable();
            long before = segments.endOffset();
            long end = truncation.truncateTo(offset, config);
            if (end != before) {
                producers.load(this, end); // batches were removed: rebuild without them
            }
            return end;
        } catch (IOException e) {
            lifecycle.fail(e); // files and memory may disagree now: refuse writes until reopened
            throw e;
        } finally {
            writeLock.unlock();
        }
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
            lifecycle.checkWritable();
            // Snapshots first: a crash in between must not leave one whose state the new log lacks.
            producers.deleteSnapshots();
            truncation.truncateFully(newOffset, config);
        } catch (IOException e) {
            lifecycle.fail(e); // files and memory may disagree now: refuse writes until reopened
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Delete-records: raises the log start offset to {@code newLogStartOffset}, never past {@code
     * highWatermark} (nor the log end offset). Records below it become invisible to {@link
     * #offsetForTimestamp} and count as deleted; their segments are removed by the next {@link
     * #deleteOldSegments}. Writes the {@value LogLoader#LOG_START_OFFSET_FILE} checkpoint before
     * returning INCREMENTED. The producer state is kept (a retry of a batch below the new start is
     * compared with the stored batch, which stays readable until its segment is deleted, and after
     * that with the digest taken just before).
     */
    public LogStartOffsetResult maybeIncrementLogStartOffset(long newLogStartOffset, long highWatermark)
            throws IOException {
        writeLock.lock();
        try {
            lifecycle.checkWritable();
            return truncation.raiseStartOffset(newLogStartOffset, highWatermark);
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
     * <p>Time rule: a segment's retention time is its largest record timestamp (computed from the
     * records at append, not taken from batch headers: decision 9.s), capped by the
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
            lifecycle.checkWritable();
            producers.state.removeExpired(env.nowMs());
            producers.digestBeforeRemoval(segments.active().baseOffset, segments.endOffset());
            return truncation.deleteOldSegments(highWatermark, config);
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
        if (config.cleanupPolicy().compact()) {
            // The cleaner only rewrites segments sealed now: their remembered batches' digests first.
            writeLock.lock();
            try {
                lifecycle.checkWritable();
                producers.digestBeforeRemoval(segments.active().baseOffset, segments.endOffset());
            } finally {
                writeLock.unlock();
            }
        }
        return compaction.run(highWatermark);
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
            if (lifecycle.isClosed()) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            flusher.writeCheckpoints(segments.startOffset());
        } catch (IOException e) {
            lifecycle.writeFailed("checkpoint", e);
            throw e;
        } finally {
            writeLock.unlock();
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
        long upper = Math.min(maxOffsetExclusive, segments.endOffset()); // volatile LEO read first
        LogSegment[] segs = segments.snapshot(); // then the segments: at least as new as the LEO
        return BatchReads.visit(segs, fetchOffset, maxBytes, upper, minOneBatch, visitor);
    }

    /**
     * Convenience: copies what read() visits into {@code out} (at its writerIndex, growing it as
     * needed), rewriting each batch's bytes 0-3 (baseOffsetDelta) to (baseOffset - fetchOffset) as
     * Fetch v0 requires ({@code docs/spec/wire-protocol.md} §6.4 step 5). All other bytes are as
     * stored (bytes 8-11 = the leader epoch of the append). Returns bytes copied. On an IOException
     * {@code out} may hold a partial copy.
     */
    public int readInto(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, ByteBuf out)
            throws IOException {
        return read(fetchOffset, maxBytes, maxOffsetExclusive, minOneBatch, BatchReads.copyingInto(out, fetchOffset));
    }

    /**
     * First record (record granularity, {@code docs/spec/wire-protocol.md} §6.5) in offset order
     * with timestamp &gt;= targetMs and offset &lt; maxOffsetExclusive, or null. Segments whose max
     * record timestamp is below targetMs are skipped; in a candidate segment the time index gives
     * where to start and the records of each batch from there are scanned: a header's maxTimestamp
     * is never trusted (decision 9.s of {@code docs/spec/wire-protocol.md}, {@link TimestampSearch}).
     * Records below the log start offset are not considered. Runs concurrently with appends.
     *
     * @throws IOException on I/O failure or a stored batch whose records do not parse
     */
    public TimestampOffset offsetForTimestamp(long targetMs, long maxOffsetExclusive) throws IOException {
        long upper = Math.min(maxOffsetExclusive, segments.endOffset());
        LogSegment[] segs = segments.snapshot();
        return TimestampSearch.search(segs, targetMs, segments.startOffset(), upper);
    }

    /**
     * The record with the largest timestamp (the first one on ties) among offsets from the log start
     * offset up to {@code maxOffsetExclusive} (and the log end offset), or null when there is none:
     * ListOffsets MAX_TIMESTAMP. Runs concurrently with appends.
     */
    public TimestampOffset offsetOfMaxTimestamp(long maxOffsetExclusive) throws IOException {
        long upper = Math.min(maxOffsetExclusive, segments.endOffset());
        LogSegment[] segs = segments.snapshot();
        return TimestampSearch.maxTimestamp(segs, segments.startOffset(), upper);
    }

    /**
     * The lock every write of this log holds (see the class comment). A caller that must make a
     * decision and a write atomic holds it around both: the broker's {@code Partition} holds it for
     * its leadership check and the append, and for role changes. Reentrant: the log's own methods
     * take it again. Lock order: a caller's own locks before this one; nothing is locked while
     * holding it but the log's internals. Held for one write: microseconds for an append; a retention
     * check or a compaction's start also hashes the idempotent producers' remembered batches of
     * sealed segments not hashed yet (at most 5 per producer id); up to an index rebuild for a
     * compaction swap (a scan of one segment).
     */
    public Lock writeLock() {
        return writeLock;
    }

    /** The offset the next appended record will get. Volatile read; any thread. */
    public long logEndOffset() {
        return segments.endOffset();
    }

    /**
     * The first offset of the log: the first segment's base until {@link
     * #maybeIncrementLogStartOffset} or retention raises it. Volatile read; any thread.
     */
    public long logStartOffset() {
        return segments.startOffset();
    }

    /**
     * The latest epoch of the leader-epoch cache, -1 if the log is empty: the epoch of the last
     * appended batch, except after a recovery that lost batches below an empty last segment (the
     * log end offset stays at that segment's base, see {@link LogLoader}): the epochs that began in
     * that gap stay, like its offsets. Any thread.
     */
    public int latestLeaderEpoch() {
        return segments.latestEpoch();
    }

    /** Where {@code leaderEpoch} ended ({@link EpochEndOffset}). Any thread. */
    public EpochEndOffset endOffsetForEpoch(int leaderEpoch) {
        return epochCache.endOffsetFor(leaderEpoch, segments.endOffset());
    }

    /** Offset below which everything is fsynced (in memory; {@link #checkpoint} persists it). */
    public long recoveryPoint() {
        writeLock.lock();
        try {
            return flusher.recoveryPoint();
        } finally {
            writeLock.unlock();
        }
    }

    /** Bytes of the active segment's {@code .log} (gauge {@code stellflow.log.segment.active.size}). Any thread. */
    public long activeSegmentSizeBytes() {
        return segments.activeSizeBytes();
    }

    /** Total bytes of all segment files ({@code .log} only). Any thread. */
    public long sizeInBytes() {
        return segments.sizeBytes();
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
            flusher.reconfigure(newConfig);
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
        return segments.snapshot();
    }

    /** The current segments, oldest first (a snapshot; {@link LogCompaction}). */
    LogSegment[] segments() {
        return segments.snapshot();
    }

    /** Truncations so far; a compaction spanning a change swaps nothing ({@link LogCompaction}). */
    long truncationCount() {
        return truncation.count();
    }

    /** True once {@link #close} (or a simulated crash) ran. */
    boolean isClosed() {
        return lifecycle.isClosed();
    }

    /** The leader-epoch history (tests). */
    LeaderEpochCache epochCacheForTesting() {
        return epochCache;
    }

    /** Number of segments (diagnostics and tests). */
    public int segmentCount() {
        return segments.count();
    }

    /** fsyncs every segment's log and indexes that changed and raises the recovery point. Blocks writes. */
    public void flush() throws IOException {
        writeLock.lock();
        try {
            if (lifecycle.isClosed()) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            flusher.flush(segments);
        } catch (IOException e) {
            lifecycle.writeFailed("flush", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Reopens this log in place, as a restart would, without closing it for the objects that hold it
     * (a partition, the log manager, readers): releases every segment's files and mappings without
     * flushing or trimming them, loads the directory again with {@link LogLoader} (no clean shutdown
     * marker, so the segments from the checkpointed recovery point on are validated and a torn tail
     * is cut, as after a crash) and swaps the loaded segments, offsets, recovery point and leader
     * epoch history in. The log takes appends again: this is how a log whose write failed because
     * the file system was full recovers once space is free (issue #23). Works whether or not a write
     * failed; the next full episode reports {@link LogMetrics#diskFull} again.
     *
     * <p>Readers that picked a segment before the swap may fail with {@link ClosedChannelException}
     * (as when racing with {@link #close}); readers after it see the loaded log. The log end offset
     * is at least every published one: bytes a failed append wrote before a published end offset
     * are whole, only an unpublished tail can be cut.
     *
     * <p>Blocks every write for the load (a scan of the segments from the recovery point on).
     *
     * @return the log end offset after the reload
     * @throws IOException loading failed (for example the disk is full again): the log stays failed,
     *     refuses appends, and its reads fail until a later {@code reopen} succeeds
     * @throws IllegalStateException the log is closed
     */
    public long reopen() throws IOException {
        return lifecycle.reopen();
    }

    /**
     * Simulates a process crash for tests: releases files and mappings without flushing, trimming
     * the indexes, writing checkpoints or the clean shutdown marker.
     */
    void crashForTesting() throws IOException {
        lifecycle.crash();
    }

    /**
     * Clean shutdown: flushes, trims and unmaps indexes, closes files, writes the checkpoints and the
     * clean shutdown marker (not after a failed append, so the next open recovers). Idempotent.
     */
    @Override
    public void close() throws IOException {
        lifecycle.close();
    }
}
