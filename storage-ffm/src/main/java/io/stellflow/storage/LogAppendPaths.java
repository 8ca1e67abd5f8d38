package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The append paths of one {@link UnifiedLog}, around the bytes that {@link LogAppender} places: the
 * leader's (plain, idempotent, transactional, and the coordinator's own transactional batches), the
 * follower's (offsets and epochs kept, {@link UnifiedLog#OFFSET_MISMATCH} for a batch that does not
 * continue the log) and the control batches of {@link LogTransactions}. Each checks that the log
 * takes writes ({@link LogLifecycle}), checks and updates the producer state ({@link
 * LogProducerState}), records new leader epochs ({@link LeaderEpochCache}), appends, and reports the
 * latency ({@link LogMetrics#append}); a failed append marks the log failed. The contracts are those
 * of the {@link UnifiedLog} methods {@code appendAsLeader}, {@code appendIdempotentAsLeader}, {@code
 * appendTransactionalAsLeader}, {@code appendCoordinatorTransactional} and {@code appendAsFollower}.
 *
 * <p>Owns no state of its own: the segments, epochs, producer state and failed state belong to the
 * log. No allocation per append or per batch.
 *
 * <p>Thread-safety: every path takes the owning log's write lock ({@link #appendControl} is called
 * with it held); the checks done before the lock read only the caller's buffer and the log's config.
 */
final class LogAppendPaths {
    private final UnifiedLog log;
    private final Path dir;
    private final LogEnvironment env;
    private final ReentrantLock writeLock;
    private final LogSegments segments;
    private final LogAppender appender;
    private final LeaderEpochCache epochCache;
    private final LogProducerState producers;
    private final LogLifecycle lifecycle;

    LogAppendPaths(
            UnifiedLog log,
            ReentrantLock writeLock,
            LogSegments segments,
            LogAppender appender,
            LeaderEpochCache epochCache,
            LogProducerState producers,
            LogLifecycle lifecycle,
            LogEnvironment env) {
        this.log = log;
        this.dir = log.dir();
        this.env = env;
        this.writeLock = writeLock;
        this.segments = segments;
        this.appender = appender;
        this.epochCache = epochCache;
        this.producers = producers;
        this.lifecycle = lifecycle;
    }

    /** {@link UnifiedLog#appendAsFollower}. */
    long followerAppend(ByteBuf records, long fetchOffset) throws IOException {
        int start = records.readerIndex();
        int end = records.writerIndex();
        RecordSets.checkWholeBatches(records, start, end);
        writeLock.lock();
        try {
            lifecycle.checkWritable();
            long startNs = env.nowNs();
            boolean gapsAllowed = log.config().cleanupPolicy().compact();
            if (!LogAppender.continuesLog(records, start, end, fetchOffset, segments.endOffset(), gapsAllowed)) {
                return UnifiedLog.OFFSET_MISMATCH;
            }
            int idempotent = producers.collectFollower(records, start, end, fetchOffset);
            boolean epochsChanged = false;
            for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
                long base = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
                epochsChanged |= epochCache.assign(RecordBatchLayout.partitionLeaderEpoch(records, p), base);
            }
            if (epochsChanged) {
                epochCache.flush();
            }
            guardedAppend(records, start, end, 0, false, fetchOffset, null);
            producers.followerAppended(records, idempotent, env.nowMs());
            producers.maybeSnapshotAfterRoll(segments.active().baseOffset, segments.endOffset());
            env.metrics().append(env.nowNs() - startNs, false);
            lifecycle.appended();
            return segments.endOffset();
        } catch (IOException e) {
            lifecycle.writeFailed("append", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /** {@link UnifiedLog#appendCoordinatorTransactional}. */
    long coordinatorTransactional(ByteBuf batch, int leaderEpoch, long transactionSequence) throws IOException {
        writeLock.lock();
        try {
            int pos = batch.readerIndex();
            long producerId = RecordBatchLayout.producerId(batch, pos);
            short epoch = RecordBatchLayout.producerEpoch(batch, pos);
            int next = producers.state.epoch(producerId) == epoch
                    ? Math.max(producers.state.nextSequence(producerId), 0)
                    : 0;
            RecordBatchLayout.setProducerFields(batch, pos, producerId, epoch, next);
            return leaderAppend(batch, leaderEpoch, null, true, Math.max(transactionSequence, 0));
        } finally {
            writeLock.unlock();
        }
    }

    /** Under the write lock: appends one control batch of {@link LogTransactions}; returns its offset. */
    long appendControl(ByteBuf batch, int leaderEpoch) throws IOException {
        lifecycle.checkWritable();
        long first = segments.endOffset();
        try {
            if (epochCache.assign(leaderEpoch, first)) {
                epochCache.flush();
            }
            guardedAppend(batch, batch.readerIndex(), batch.writerIndex(), leaderEpoch, true, 0, null);
        } catch (IOException e) {
            lifecycle.writeFailed("append", e);
            throw e;
        }
        return first;
    }

    /**
     * The leader append of {@link UnifiedLog#appendAsLeader(ByteBuf, int, BatchMaxTimestamps)} and,
     * with {@code idempotent}, of {@link UnifiedLog#appendIdempotentAsLeader}: one batch whose
     * producer state is checked first (a retry's original offset or a refusal returned, nothing
     * written) and updated after. A plain append does no producer-state work.
     */
    long leaderAppend(
            ByteBuf records, int leaderEpoch, BatchMaxTimestamps maxTimestamps, boolean idempotent, long txnSequence)
            throws IOException {
        int start = records.readerIndex();
        int end = records.writerIndex();
        int batches = RecordSets.checkWholeBatches(records, start, end);
        if (idempotent) {
            if (batches != 1 || RecordBatchLayout.producerId(records, start) < 0) {
                throw new IllegalArgumentException("not one batch with a producer id for " + dir);
            }
        } else if (maxTimestamps != null && maxTimestamps.size() != batches) {
            throw new IllegalArgumentException(
                    maxTimestamps.size() + " max timestamps for " + batches + " batches in " + dir);
        }
        if (log.config().cleanupPolicy().compact() && LogCleaner.hasNullKey(records, start, end)) {
            throw new InvalidRecordException("a record with a null key on compacted log " + dir);
        }
        writeLock.lock();
        try {
            lifecycle.checkWritable();
            long nowMs = 0;
            if (idempotent) {
                nowMs = env.nowMs();
                long checked = producers.checkLeader(records, start, nowMs);
                if (checked != LogProducerState.APPEND) {
                    return checked; // a retry's original offset, or why the batch is refused
                }
                if (txnSequence >= 0
                        && producers.transactions.beginIfNeeded(records, start, leaderEpoch, txnSequence, nowMs) != 0) {
                    return UnifiedLog.INVALID_TXN_STATE;
                }
            }
            long startNs = env.nowNs();
            long first = segments.endOffset();
            if (epochCache.assign(leaderEpoch, first)) {
                epochCache.flush();
            }
            guardedAppend(records, start, end, leaderEpoch, true, 0, maxTimestamps);
            if (idempotent) {
                producers.leaderAppended(records, start, first, nowMs);
            }
            producers.maybeSnapshotAfterRoll(segments.active().baseOffset, segments.endOffset());
            env.metrics().append(env.nowNs() - startNs, true);
            lifecycle.appended();
            return first;
        } catch (IOException e) {
            lifecycle.writeFailed("append", e);
            throw e;
        } finally {
            writeLock.unlock();
        }
    }

    /** {@code maxTimestamps} null: the appender reads them from the records. */
    private void guardedAppend(
            ByteBuf records,
            int start,
            int end,
            int leaderEpoch,
            boolean stampEpoch,
            long fetchOffset,
            BatchMaxTimestamps maxTimestamps)
            throws IOException {
        try {
            appender.append(records, start, end, leaderEpoch, stampEpoch, fetchOffset, log.config(), maxTimestamps);
        } catch (IOException | RuntimeException | Error e) {
            // Also an Error (a fault in a mapped write): the files and this object may disagree.
            lifecycle.fail(e);
            throw e;
        }
    }
}
