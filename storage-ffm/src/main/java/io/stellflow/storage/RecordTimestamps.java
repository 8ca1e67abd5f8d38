package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.ByteBuffer;

/**
 * The real largest record timestamp of a stored batch ({@code docs/spec/wire-protocol.md} decision
 * 9.s): the maximum of {@code baseTimestamp + timestampDelta} over its records, read by a walk of the
 * record lengths (§7.4), not the header's {@code maxTimestamp}, which the public SDKs set equal to
 * {@code baseTimestamp}. For the paths that did not validate the records themselves: follower
 * appends, recovery and index checks, truncation. The leader's append takes the maxima its
 * validation computed ({@link io.stellflow.protocol.record.BatchMaxTimestamps}).
 *
 * <p>A compressed batch (decision 9.o): its records are a codec's container, not walked here; its
 * header's maxTimestamp is taken (our producer sets it to the records' real maximum).
 *
 * <p>Records that do not walk (a length out of the batch; never written by a leader, which
 * validates them): the maximum of the records walked so far and the header's maxTimestamp, the best
 * known; a time lookup reaching such a batch fails on it anyway ({@link TimestampSearch}).
 *
 * <p>Cost: one int and one long read per record, no allocation. Thread-safety: stateless.
 */
final class RecordTimestamps {
    /** Record field offsets relative to the record start (§7.4). */
    static final int RECORD_TIMESTAMP_DELTA_OFFSET = 5;

    private RecordTimestamps() {}

    /** Largest record timestamp of the whole batch at {@code buf[batchStart]} (framing checked by the caller). */
    static long maxOf(ByteBuf buf, int batchStart) {
        if ((buf.getShort(batchStart + RecordBatchLayout.ATTRIBUTES_OFFSET) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                != 0) {
            return buf.getLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET);
        }
        int end = batchStart + RecordBatchLayout.batchSize(buf, batchStart);
        int count = buf.getInt(batchStart + RecordBatchLayout.RECORD_COUNT_OFFSET);
        long maxDelta = Long.MIN_VALUE;
        int p = batchStart + RecordBatchLayout.RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            int length = end - p < RecordBatchLayout.MIN_RECORD_SIZE ? -1 : buf.getInt(p);
            if (length < RecordBatchLayout.MIN_RECORD_LENGTH
                    || length > end - p - RecordBatchLayout.RECORD_LENGTH_SIZE) {
                return unwalkable(
                        buf.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET),
                        i,
                        maxDelta,
                        buf.getLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET));
            }
            maxDelta = Math.max(maxDelta, buf.getLong(p + RECORD_TIMESTAMP_DELTA_OFFSET));
            p += RecordBatchLayout.RECORD_LENGTH_SIZE + length;
        }
        return buf.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET) + maxDelta;
    }

    /**
     * As {@link #maxOf(ByteBuf, int)} for a batch held whole in {@code buf[batchStart, batchStart +
     * size)} (absolute reads; position and limit untouched).
     */
    static long maxOf(ByteBuffer buf, int batchStart, int size) {
        if ((buf.getShort(batchStart + RecordBatchLayout.ATTRIBUTES_OFFSET) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                != 0) {
            return buf.getLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET);
        }
        int end = batchStart + size;
        int count = buf.getInt(batchStart + RecordBatchLayout.RECORD_COUNT_OFFSET);
        long maxDelta = Long.MIN_VALUE;
        int p = batchStart + RecordBatchLayout.RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            int length = end - p < RecordBatchLayout.MIN_RECORD_SIZE ? -1 : buf.getInt(p);
            if (length < RecordBatchLayout.MIN_RECORD_LENGTH
                    || length > end - p - RecordBatchLayout.RECORD_LENGTH_SIZE) {
                return unwalkable(
                        buf.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET),
                        i,
                        maxDelta,
                        buf.getLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET));
            }
            maxDelta = Math.max(maxDelta, buf.getLong(p + RECORD_TIMESTAMP_DELTA_OFFSET));
            p += RecordBatchLayout.RECORD_LENGTH_SIZE + length;
        }
        return buf.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET) + maxDelta;
    }

    private static long unwalkable(long baseTimestampMs, int walked, long maxDelta, long headerMaxTimestampMs) {
        return walked == 0 ? headerMaxTimestampMs : Math.max(headerMaxTimestampMs, baseTimestampMs + maxDelta);
    }
}
