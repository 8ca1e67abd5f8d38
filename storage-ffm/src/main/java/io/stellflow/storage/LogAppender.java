package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes whole batches at the end of one log: gives each batch its offsets relative to the segment
 * it lands in, rolls to a new segment when the active one is full or old ({@link
 * LogSegment#fits}, {@link LogSegment#isDueToRoll}), writes the batches that fit as one gathered
 * run per segment, publishes each run to readers ({@link LogSegments#publishEnd}) and then lets the
 * flush policy run ({@link LogFlusher#appended}).
 *
 * <p>Input shape: a RecordBatchSet of whole, validated batches in {@code records[start, end)}.
 * Bytes 0-3 of each batch (baseOffsetDelta) are overwritten in place with the batch's base offset
 * minus the segment's base offset; as leader, bytes 8-11 (partitionLeaderEpoch) too. The buffer is
 * neither released nor retained.
 *
 * <p>Thread-safety: confined to the owning log's write lock. No allocation per batch.
 *
 * <p>Errors: {@link IOException} from the segment files. A run that fails is cut back off its
 * segment (best effort, a second failure is suppressed into the first); runs published before stay
 * readable. The caller marks the log failed.
 */
final class LogAppender {
    /** The roll event keeps the category it always had: the log's. */
    private static final Logger LOG = LoggerFactory.getLogger(UnifiedLog.class);

    private final Path dir;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final LogEnvironment env;

    /**
     * The batches' real max timestamps of an append that brought none (follower, or a leader caller
     * that did not validate with them). Reused, grows to the largest append's batch count.
     */
    private final BatchMaxTimestamps readMaxTimestamps = new BatchMaxTimestamps(64);

    LogAppender(Path dir, LogSegments segments, LogFlusher flusher, LogEnvironment env) {
        this.dir = dir;
        this.segments = segments;
        this.flusher = flusher;
        this.env = env;
    }

    /**
     * True when the batches in {@code records[start, end)}, whose absolute base offsets are {@code
     * fetchOffset + baseOffsetDelta} (a Fetch v0 record set), continue a log ending at {@code
     * endOffset}: the first starts at it and each next one right after the previous one's last
     * offset, or, with {@code gapsAllowed} (a compacted log), at or after those offsets.
     */
    static boolean continuesLog(
            ByteBuf records, int start, int end, long fetchOffset, long endOffset, boolean gapsAllowed) {
        long expected = endOffset;
        for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
            long base = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
            if (gapsAllowed ? base < expected : base != expected) {
                return false;
            }
            expected = base + RecordBatchLayout.lastOffsetDelta(records, p) + 1;
        }
        return true;
    }

    /**
     * Appends {@code records[start, end)}. Leader ({@code stampEpoch}): offsets assigned
     * consecutively from the log end offset, {@code leaderEpoch} stamped into every batch. Follower:
     * each batch's base is {@code fetchOffset + its bytes 0-3} (checked by {@link #continuesLog})
     * and its epoch is kept. {@code maxTimestamps} holds the real largest record timestamp of each
     * batch, in order: what the time index, the segment's max timestamp and retention use; null:
     * read here from the records ({@link RecordTimestamps}, one walk of the record lengths).
     */
    void append(
            ByteBuf records,
            int start,
            int end,
            int leaderEpoch,
            boolean stampEpoch,
            long fetchOffset,
            LogConfig cfg,
            BatchMaxTimestamps maxTimestamps)
            throws IOException {
        BatchMaxTimestamps maxima = maxTimestamps;
        if (maxima == null) {
            maxima = readMaxTimestamps;
            maxima.clear();
            for (int p = start; p < end; p += RecordBatchLayout.batchSize(records, p)) {
                maxima.add(RecordTimestamps.maxOf(records, p));
            }
        }
        LogSegment seg = segments.active();
        long next = segments.endOffset();
        if (seg.isDueToRoll(env.nowMs(), cfg.segmentMs())) {
            seg = roll(next, cfg);
        }
        int runStart = start;
        int runFirstBatch = 0;
        int runBytes = 0;
        int runBatches = 0;
        long recordsAppended = 0;
        int lastEpoch = leaderEpoch;
        int p = start;
        while (p < end) {
            int size = RecordBatchLayout.batchSize(records, p);
            if (!stampEpoch) {
                next = fetchOffset + RecordBatchLayout.baseOffsetDelta(records, p);
            }
            long last = next + RecordBatchLayout.lastOffsetDelta(records, p);
            if (!seg.fits(runBytes + size, runBatches + 1, last, cfg.segmentBytes())) {
                if (runBatches > 0) {
                    commitRun(seg, records, runStart, runBytes, next, lastEpoch, maxima, runFirstBatch);
                }
                seg = roll(next, cfg);
                runFirstBatch += runBatches;
                runStart = p;
                runBytes = 0;
                runBatches = 0;
            }
            RecordBatchLayout.setBaseOffsetDelta(records, p, (int) (next - seg.baseOffset));
            if (stampEpoch) {
                RecordBatchLayout.setPartitionLeaderEpoch(records, p, leaderEpoch);
            } else {
                lastEpoch = RecordBatchLayout.partitionLeaderEpoch(records, p);
            }
            runBytes += size;
            runBatches++;
            recordsAppended += RecordBatchLayout.recordCount(records, p);
            next = last + 1;
            p += size;
        }
        commitRun(seg, records, runStart, runBytes, next, lastEpoch, maxima, runFirstBatch);
        flusher.appended(recordsAppended, segments);
    }

    private void commitRun(
            LogSegment seg,
            ByteBuf records,
            int runStart,
            int runBytes,
            long nextOffset,
            int epoch,
            BatchMaxTimestamps maxTimestamps,
            int firstBatch)
            throws IOException {
        int before = seg.sizeBytes();
        try {
            seg.append(records, runStart, runBytes, env.nowMs(), maxTimestamps, firstBatch);
        } catch (IOException e) {
            try {
                seg.truncateTo(before);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        segments.publishEnd(nextOffset, epoch);
    }

    private LogSegment roll(long baseOffset, LogConfig cfg) throws IOException {
        LogSegment next = segments.roll(dir, baseOffset, cfg, env.nowMs());
        env.metrics().segmentRolled();
        LOG.debug("Rolled {} to new segment at base offset {}", dir, baseOffset);
        return next;
    }
}
