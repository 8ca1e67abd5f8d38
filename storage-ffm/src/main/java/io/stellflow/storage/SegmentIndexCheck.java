package io.stellflow.storage;

import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Load-time sanity checks deciding whether a trusted segment's {@code .index} and {@code .timeindex}
 * may be used as found, or must be rebuilt from the log. Never trusted: a file whose size is not a
 * whole number of entries or exceeds the preallocated size (checked when opening), entries that do
 * not strictly increase (a zero-filled preallocated tail never does), entries pointing outside the
 * log, an offset index whose last entry is not a batch start or that misses entries at the tail, a
 * time index whose last entry does not equal the max timestamp of the batch it names, or whose last
 * entry is below a batch timestamp in the tail. A batch's max timestamp is always its records' real
 * one ({@link RecordTimestamps}, decision 9.s of {@code docs/spec/wire-protocol.md}): an index
 * written from headers (before 9.s was implemented) fails here, and is rebuilt, where the batches
 * checked understate their maximum; earlier entries are not compared with the records.
 *
 * <p>Cost: a binary-search-free pass over the entries plus a walk of at most about {@code
 * log.index.interval.bytes} of batches (the tail after the last offset index entry, each read whole
 * for its records' timestamps) and one such walk of headers to the batch named by the last time
 * entry, read whole.
 *
 * <p>Thread-safety: called by the opening thread only.
 */
final class SegmentIndexCheck {
    /** What a trusted pair of indexes says about the segment. */
    record Verdict(long maxTimestampMs, int relativeOffsetOfMaxTimestamp) {}

    /** What the walk of the tail after the last offset index entry found. */
    private record Tail(long lastBatchRelativeOffset, long maxTimestampMs) {}

    private SegmentIndexCheck() {}

    /** The verdict when both indexes can be trusted, null when they must be rebuilt. */
    static Verdict check(LogSegment s, OffsetIndex idx, TimeIndex tidx, int indexIntervalBytes) throws IOException {
        if (!idx.isConsistentWith(s.sizeBytes()) || !lastIndexEntryIsABatchStart(s, idx)) {
            return null;
        }
        Tail tail = walkTail(s, idx, indexIntervalBytes);
        if (tail == null || !tidx.isConsistentWith(tail.lastBatchRelativeOffset())) {
            return null;
        }
        int n = tidx.entries();
        if (n == 0) {
            // Legitimate only when no batch carries a timestamp: check the first batch and the tail.
            boolean none = tail.maxTimestampMs() <= TimeIndex.NO_TIMESTAMP
                    && (s.sizeBytes() == 0 || batchMaxTimestampAt(s, idx, 0) <= TimeIndex.NO_TIMESTAMP);
            return none ? new Verdict(TimeIndex.NO_TIMESTAMP, 0) : null;
        }
        long lastTs = tidx.timestampAt(n - 1);
        int lastRel = tidx.relativeOffsetAt(n - 1);
        if (batchMaxTimestampAt(s, idx, lastRel) != lastTs || tail.maxTimestampMs() > lastTs) {
            return null;
        }
        return new Verdict(lastTs, lastRel);
    }

    private static boolean lastIndexEntryIsABatchStart(LogSegment s, OffsetIndex idx) throws IOException {
        int n = idx.entries();
        if (n == 0) {
            return true;
        }
        int pos = idx.positionAt(n - 1);
        ByteBuffer hdr = ByteBuffer.allocate(LogSegment.TIME_HEADER_BYTES);
        if (pos + hdr.capacity() > s.sizeBytes()) {
            return false;
        }
        s.readFully(hdr, pos);
        return hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET) == idx.relativeOffsetAt(n - 1)
                && hdr.get(RecordBatchLayout.MAGIC_OFFSET) == RecordBatchLayout.MAGIC;
    }

    /**
     * Walks the batches after the last offset index entry. Null when the index is short (a batch
     * after the last entry should have had one under the interval rule of {@link LogSegment#indexBatch})
     * or the tail does not walk cleanly to the end of the log.
     */
    private static Tail walkTail(LogSegment s, OffsetIndex idx, int indexIntervalBytes) throws IOException {
        int n = idx.entries();
        boolean full = idx.isFull(); // a full index legitimately misses the tail
        int anchor = n == 0 ? 0 : idx.positionAt(n - 1);
        int pos = anchor;
        int end = s.sizeBytes();
        long lastRel = -1;
        long maxTs = TimeIndex.NO_TIMESTAMP;
        ByteBuffer hdr = ByteBuffer.allocate(LogSegment.TIME_HEADER_BYTES);
        while (pos < end) {
            boolean indexed = n > 0 && pos == anchor;
            if (!full && !indexed && (long) pos - anchor >= indexIntervalBytes) {
                return null;
            }
            if (end - pos < hdr.capacity()) {
                return null;
            }
            hdr.clear();
            s.readFully(hdr, pos);
            int batchLength = hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || (long) pos + RecordBatchLayout.LOG_OVERHEAD + batchLength > end) {
                return null;
            }
            lastRel = hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            maxTs = Math.max(maxTs, s.batchMaxTimestampMs(pos, RecordBatchLayout.LOG_OVERHEAD + batchLength));
            pos += RecordBatchLayout.LOG_OVERHEAD + batchLength;
        }
        return new Tail(lastRel, maxTs);
    }

    /**
     * The real max record timestamp of the batch whose base offset is {@code segmentBase +
     * relativeOffset}, or {@link Long#MIN_VALUE} when no batch starts there.
     */
    private static long batchMaxTimestampAt(LogSegment s, OffsetIndex idx, int relativeOffset) throws IOException {
        int pos = idx.lookup(s.baseOffset + relativeOffset);
        int end = s.sizeBytes();
        ByteBuffer hdr = ByteBuffer.allocate(LogSegment.TIME_HEADER_BYTES);
        while (end - pos >= hdr.capacity()) {
            hdr.clear();
            s.readFully(hdr, pos);
            int rel = hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            int batchLength = hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
            if (rel > relativeOffset
                    || batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || (long) pos + RecordBatchLayout.LOG_OVERHEAD + batchLength > end) {
                break;
            }
            if (rel == relativeOffset) {
                return s.batchMaxTimestampMs(pos, RecordBatchLayout.LOG_OVERHEAD + batchLength);
            }
            pos += RecordBatchLayout.LOG_OVERHEAD + batchLength;
        }
        return Long.MIN_VALUE;
    }
}
