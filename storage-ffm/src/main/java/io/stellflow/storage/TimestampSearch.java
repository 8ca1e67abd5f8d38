package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * ListOffsets by timestamp ({@code docs/spec/wire-protocol.md} §6.5): the first record in offset
 * order whose timestamp is &gt;= a target, at record granularity.
 *
 * <p>A batch header's maxTimestamp is never trusted ({@code docs/spec/wire-protocol.md} decision
 * 9.s: both public SDKs send it equal to baseTimestamp whatever the records say). What the search
 * skips by comes from the records: the append computes each batch's real largest record timestamp
 * and builds the segment's max timestamp and its time index from those. Per segment: skipped whole
 * when its max timestamp is below the target; otherwise the time index gives the batch before
 * which no record can match, the offset index turns it into a file position, and from there every
 * batch is read whole and its records scanned, until the first record at or after the target. The
 * scan is bounded by the time index: about {@code log.index.interval.bytes} of log between two
 * entries when timestamps grow with offsets.
 *
 * <p>Thread-safety: stateless; runs concurrently with appends on the segments array and the upper
 * bound the caller read.
 */
final class TimestampSearch {
    /**
     * Record field offsets relative to the record start ({@code docs/spec/wire-protocol.md} §7.4).
     */
    private static final int RECORD_LENGTH_OFFSET = 0;

    private static final int RECORD_TIMESTAMP_DELTA_OFFSET = RecordTimestamps.RECORD_TIMESTAMP_DELTA_OFFSET;
    private static final int RECORD_OFFSET_DELTA_OFFSET = 13;

    /** Returned by {@link #scanRecords} when it reached the upper bound before a match. */
    private static final TimestampOffset PAST_UPPER_BOUND = new TimestampOffset(-1, -1);

    private TimestampSearch() {}

    /**
     * The first record with timestamp &gt;= targetMs and startOffset &lt;= offset &lt; upper, or null.
     *
     * @throws IOException on I/O failure or a stored batch whose records do not parse (naming the file)
     */
    static TimestampOffset search(LogSegment[] segs, long targetMs, long startOffset, long upper) throws IOException {
        ByteBuffer hdr = ByteBuffer.allocate(LogSegment.TIME_HEADER_BYTES);
        ByteBuffer batch = ByteBuffer.allocate(0);
        StoredBatchCodecs codecs = null; // made at the first compressed batch, closed at the end
        try {
            for (int i = 0; i < segs.length; i++) {
                LogSegment s = segs[i];
                if (s.baseOffset >= upper) {
                    return null;
                }
                boolean belowStart = i + 1 < segs.length && segs[i + 1].baseOffset <= startOffset;
                if (belowStart || s.maxTimestampMs() < targetMs) {
                    continue;
                }
                int end = s.sizeBytes();
                int pos = Math.max(s.timeLookup(targetMs), s.lookup(startOffset));
                while (pos < end) {
                    hdr.clear();
                    s.readFully(hdr, pos);
                    int size = RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
                    long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                    long last = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                    if (base >= upper) {
                        return null;
                    }
                    if (last >= startOffset) { // the header's maxTimestamp says nothing: read the records
                        batch = readBatch(s, pos, size, batch);
                        ByteBuffer records = batch;
                        int recordsSize = size;
                        if (isCompressed(batch)) {
                            codecs = codecs != null ? codecs : new StoredBatchCodecs();
                            records = decompressed(batch, size, codecs, s, pos);
                            recordsSize = records.limit();
                        }
                        TimestampOffset found =
                                scanRecords(records, recordsSize, base, startOffset, upper, targetMs, s, pos);
                        if (found == PAST_UPPER_BOUND) {
                            return null;
                        }
                        if (found != null) {
                            return found;
                        }
                    }
                    pos += size;
                }
            }
            return null;
        } finally {
            if (codecs != null) {
                codecs.close();
            }
        }
    }

    /**
     * The record with the largest timestamp among offsets {@code [startOffset, upper)} (the first one
     * on ties), or null when the range is empty (ListOffsets MAX_TIMESTAMP). Sealed segments inside
     * the range answer from their max timestamp (the records' real one); the segments holding {@code
     * startOffset} or {@code upper} are walked batch by batch, each read whole for its records' real
     * max (batches ending at or past {@code upper} are not considered). Then {@link #search} for that
     * timestamp finds the record.
     */
    static TimestampOffset maxTimestamp(LogSegment[] segs, long startOffset, long upper) throws IOException {
        long best = Long.MIN_VALUE;
        ByteBuffer hdr = ByteBuffer.allocate(LogSegment.TIME_HEADER_BYTES);
        ByteBuffer batch = ByteBuffer.allocate(0);
        for (int i = 0; i < segs.length && segs[i].baseOffset < upper; i++) {
            LogSegment s = segs[i];
            boolean belowStart = i + 1 < segs.length && segs[i + 1].baseOffset <= startOffset;
            if (belowStart) {
                continue;
            }
            if (s.baseOffset >= startOffset && i + 1 < segs.length && segs[i + 1].baseOffset <= upper) {
                best = Math.max(best, s.maxTimestampMs());
                continue;
            }
            int end = s.sizeBytes();
            for (int pos = 0; pos < end; ) {
                hdr.clear();
                s.readFully(hdr, pos);
                long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                long last = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                if (last >= upper) {
                    break;
                }
                int size = RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
                if (last >= startOffset) {
                    batch = readBatch(s, pos, size, batch);
                    if (isCompressed(batch)) {
                        try (StoredBatchCodecs codecs = new StoredBatchCodecs()) {
                            ByteBuffer records = decompressed(batch, size, codecs, s, pos);
                            best = Math.max(best, RecordTimestamps.maxOf(records, 0, records.limit()));
                        }
                    } else {
                        best = Math.max(best, RecordTimestamps.maxOf(batch, 0, size));
                    }
                }
                pos += size;
            }
        }
        return best == Long.MIN_VALUE ? null : search(segs, best, startOffset, upper);
    }

    private static boolean isCompressed(ByteBuffer batch) {
        return (batch.getShort(RecordBatchLayout.ATTRIBUTES_OFFSET) & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0;
    }

    /**
     * The compressed batch in {@code batch[0, size)} decompressed (decision 9.o: its records are a
     * codec's container), as a buffer valid until the next use of {@code codecs}.
     */
    private static ByteBuffer decompressed(ByteBuffer batch, int size, StoredBatchCodecs codecs, LogSegment s, int pos)
            throws IOException {
        ByteBuf plain = codecs.decompress(
                Unpooled.wrappedBuffer(batch.duplicate().clear().limit(size)), s, pos);
        return plain.nioBuffer(0, plain.readableBytes());
    }

    /** Reads the {@code size}-byte batch at {@code pos} into {@code reuse}, or a larger buffer it returns. */
    private static ByteBuffer readBatch(LogSegment s, int pos, int size, ByteBuffer reuse) throws IOException {
        if (size < RecordBatchLayout.HEADER_SIZE || (long) pos + size > s.sizeBytes()) {
            throw new IOException("corrupt batch at " + s.logFile + ":" + pos + ": size " + size);
        }
        ByteBuffer batch = reuse.capacity() < size ? ByteBuffer.allocate(size) : reuse;
        batch.clear().limit(size);
        s.readFully(batch, pos);
        return batch;
    }

    /**
     * The first record of {@code batch} at or after startOffset with timestamp &gt;= targetMs, {@link
     * #PAST_UPPER_BOUND} when a record at or past {@code upper} comes first, or null when none matches.
     */
    private static TimestampOffset scanRecords(
            ByteBuffer batch,
            int size,
            long base,
            long startOffset,
            long upper,
            long targetMs,
            LogSegment s,
            int batchPos)
            throws IOException {
        long baseTimestamp = batch.getLong(RecordBatchLayout.BASE_TIMESTAMP_OFFSET);
        int count = batch.getInt(RecordBatchLayout.RECORD_COUNT_OFFSET);
        int p = RecordBatchLayout.RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            if (p + 4 > size) {
                throw new IOException(
                        "corrupt batch at " + s.logFile + ":" + batchPos + ": record " + i + " truncated");
            }
            int length = batch.getInt(p + RECORD_LENGTH_OFFSET);
            if (length < RecordBatchLayout.MIN_RECORD_LENGTH || p + 4L + length > size) {
                throw new IOException(
                        "corrupt batch at " + s.logFile + ":" + batchPos + ": record " + i + " length " + length);
            }
            long offset = base + batch.getInt(p + RECORD_OFFSET_DELTA_OFFSET);
            if (offset >= upper) {
                return PAST_UPPER_BOUND;
            }
            long ts = baseTimestamp + batch.getLong(p + RECORD_TIMESTAMP_DELTA_OFFSET);
            if (ts >= targetMs && offset >= startOffset) {
                return new TimestampOffset(ts, offset);
            }
            p += 4 + length;
        }
        return null;
    }
}
