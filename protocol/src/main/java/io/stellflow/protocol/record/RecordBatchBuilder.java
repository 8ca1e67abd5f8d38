package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.HEADER_SIZE;
import static io.stellflow.protocol.record.RecordBatchLayout.LOG_OVERHEAD;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.WireWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Client-side writer of one uncompressed magic-1 batch ({@code docs/spec/wire-protocol.md} §7.1,
 * §7.4), written straight into {@code out} from its writerIndex at construction: baseOffsetDelta 0,
 * partitionLeaderEpoch -1, attributes 0, producerId/epoch/baseSequence -1, offsetDelta = index,
 * timestampDelta = record time minus baseTimestampMs. {@link #close()} fills batchLength,
 * lastOffsetDelta, maxTimestamp, recordCount and the CRC.
 *
 * <p>Not thread-safe: confined to the thread that builds the batch. {@code out} must not be written
 * by anyone else until {@link #close()}. The builder never releases {@code out} nor the key/value
 * buffers it is given (their bytes are copied, their indexes untouched). Misuse (append after close, a
 * header key longer than 32767 UTF-8 bytes) throws IllegalStateException / IllegalArgumentException.
 *
 * <p>A record from arrays without headers (what the producer appends) is written through one NIO view
 * of {@code out}'s memory ({@link #view}) with absolute puts: one {@link ByteBuffer} class at every
 * call site instead of ten {@link ByteBuf} calls per record, each of which the JIT otherwise compiles
 * for every {@code ByteBuf} class it has seen ({@code out} is sometimes a leak detector's wrapper),
 * and recompiles when a new one shows up. The bytes are the same either way.
 */
public final class RecordBatchBuilder {
    private final ByteBuf out;
    private final int batchStart;
    private final long baseTimestampMs;
    private long maxTimestampMs;
    private int recordCount;
    private boolean closed;
    /**
     * {@code out}'s memory from index 0 to its capacity, big-endian, sharing its bytes; null when
     * {@code out} is not one contiguous region. Made again when {@code out}'s capacity changed (a grown
     * buffer may have moved).
     */
    private ByteBuffer view;

    /** Starts a batch at {@code out}'s writerIndex; all timestamps are ms since the epoch. */
    public RecordBatchBuilder(ByteBuf out, long baseTimestampMs) {
        this.out = out;
        this.batchStart = out.writerIndex();
        this.baseTimestampMs = baseTimestampMs;
        this.maxTimestampMs = baseTimestampMs;
        out.writeInt(0); // baseOffsetDelta
        out.writeInt(0); // batchLength, filled by close()
        out.writeInt(-1); // partitionLeaderEpoch
        out.writeByte(RecordBatchLayout.MAGIC);
        out.writeInt(0); // crc, filled by close()
        out.writeShort(0); // attributes
        out.writeInt(0); // lastOffsetDelta, filled by close()
        out.writeLong(baseTimestampMs);
        out.writeLong(baseTimestampMs); // maxTimestamp, filled by close()
        out.writeLong(RecordBatchLayout.NO_PRODUCER_ID);
        out.writeShort(RecordBatchLayout.NO_PRODUCER_EPOCH);
        out.writeInt(RecordBatchLayout.NO_SEQUENCE);
        out.writeInt(0); // recordCount, filled by close()
        makeView();
    }

    private void makeView() {
        view = out.nioBufferCount() == 1 ? out.nioBuffer(0, out.capacity()).order(ByteOrder.BIG_ENDIAN) : null;
    }

    /** Appends a record; null key or value is written as length -1, null headers as none. */
    public void append(long timestampMs, byte[] key, byte[] value, List<Header> headers) {
        if ((headers == null || headers.isEmpty()) && appendToView(timestampMs, key, value)) {
            return;
        }
        int lengthIndex = beginRecord(timestampMs);
        WireWriter.writeNullableBytes(out, key);
        WireWriter.writeNullableBytes(out, value);
        endRecord(lengthIndex, headers);
    }

    /** Appends a record without headers. */
    public void append(long timestampMs, byte[] key, byte[] value) {
        append(timestampMs, key, value, null);
    }

    /** Appends a record from buffers (their readable bytes; not consumed, not released). */
    public void append(long timestampMs, ByteBuf key, ByteBuf value, List<Header> headers) {
        int lengthIndex = beginRecord(timestampMs);
        WireWriter.writeNullableBytes(out, key);
        WireWriter.writeNullableBytes(out, value);
        endRecord(lengthIndex, headers);
    }

    /**
     * Writes a record without headers through {@link #view} (same bytes as beginRecord, two
     * writeNullableBytes and endRecord); false, with nothing written, when there is no view.
     */
    private boolean appendToView(long timestampMs, byte[] key, byte[] value) {
        if (closed) {
            throw new IllegalStateException("batch already closed");
        }
        int keyBytes = key == null ? 0 : key.length;
        int valueBytes = value == null ? 0 : value.length;
        int size = RecordBatchLayout.MIN_RECORD_SIZE + keyBytes + valueBytes;
        int at = out.writerIndex();
        int capacity = out.capacity();
        if (capacity - at < size) {
            out.ensureWritable(size);
            makeView();
        } else if (view != null && view.capacity() != capacity) {
            makeView(); // out grew in a record written the ByteBuf way
        }
        ByteBuffer v = view;
        if (v == null) {
            return false;
        }
        // length, attributes, timestampDelta, offsetDelta, key, value, header count
        // (docs/spec/wire-protocol.md §7.4, the record layout)
        v.putInt(at, size - RecordBatchLayout.RECORD_LENGTH_SIZE);
        v.put(at + 4, (byte) 0);
        v.putLong(at + 5, timestampMs - baseTimestampMs);
        v.putInt(at + 13, recordCount);
        int p = at + 17;
        v.putInt(p, key == null ? -1 : keyBytes);
        p += 4;
        if (keyBytes > 0) {
            v.put(p, key);
            p += keyBytes;
        }
        v.putInt(p, value == null ? -1 : valueBytes);
        p += 4;
        if (valueBytes > 0) {
            v.put(p, value);
            p += valueBytes;
        }
        v.putInt(p, 0);
        out.writerIndex(at + size);
        maxTimestampMs = Math.max(maxTimestampMs, timestampMs);
        recordCount++;
        return true;
    }

    private int beginRecord(long timestampMs) {
        if (closed) {
            throw new IllegalStateException("batch already closed");
        }
        int lengthIndex = out.writerIndex();
        out.writeInt(0); // length, filled by endRecord
        out.writeByte(0); // attributes
        out.writeLong(timestampMs - baseTimestampMs);
        out.writeInt(recordCount); // offsetDelta
        maxTimestampMs = Math.max(maxTimestampMs, timestampMs);
        return lengthIndex;
    }

    private void endRecord(int lengthIndex, List<Header> headers) {
        if (headers == null) {
            out.writeInt(0);
        } else {
            out.writeInt(headers.size());
            for (int i = 0; i < headers.size(); i++) {
                Header h = headers.get(i);
                WireWriter.writeNullableString(out, h.key());
                WireWriter.writeNullableBytes(out, h.value());
            }
        }
        out.setInt(lengthIndex, out.writerIndex() - lengthIndex - RecordBatchLayout.RECORD_LENGTH_SIZE);
        recordCount++;
    }

    /** Records appended so far. */
    public int recordCount() {
        return recordCount;
    }

    /** Bytes this batch occupies in {@code out} so far (57-byte header included; 0 after an empty close). */
    public int sizeInBytes() {
        return closed && recordCount == 0 ? 0 : out.writerIndex() - batchStart;
    }

    /** True once {@link #close()} has run. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Finishes the batch: fills batchLength, lastOffsetDelta, maxTimestamp, recordCount and the CRC.
     * A batch without records is not valid on the wire, so closing an empty builder removes its header
     * from {@code out} (writerIndex goes back to the start). Idempotent.
     */
    public void close() {
        close(true);
    }

    /**
     * As {@link #close()}; {@code withCrc} false leaves the CRC field 0 for a writer that rewrites
     * the header later and computes the CRC then (the producer stamps an idempotent batch's producer
     * fields at send time, and compresses a batch into a new one with its own CRC): one CRC-32C pass
     * over the batch instead of two. Such a batch is not valid on the wire until that CRC is written.
     * Idempotent (the first call decides).
     */
    public void close(boolean withCrc) {
        if (closed) {
            return;
        }
        closed = true;
        if (recordCount == 0) {
            out.writerIndex(batchStart);
            return;
        }
        int batchLength = out.writerIndex() - batchStart - LOG_OVERHEAD;
        out.setInt(batchStart + RecordBatchLayout.BATCH_LENGTH_OFFSET, batchLength);
        out.setInt(batchStart + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, recordCount - 1);
        out.setLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET, maxTimestampMs);
        out.setInt(batchStart + RecordBatchLayout.RECORD_COUNT_OFFSET, recordCount);
        out.setInt(
                batchStart + RecordBatchLayout.CRC_OFFSET, withCrc ? RecordBatchLayout.computeCrc(out, batchStart) : 0);
    }

    /**
     * Bytes one record with these fields adds to a batch (length prefix included); for batch.size
     * decisions before appending.
     */
    public static int recordSizeInBytes(int keyBytes, int valueBytes, List<Header> headers) {
        int size = RecordBatchLayout.MIN_RECORD_SIZE + Math.max(keyBytes, 0) + Math.max(valueBytes, 0);
        if (headers != null) {
            for (int i = 0; i < headers.size(); i++) {
                Header h = headers.get(i);
                size += 2 + (h.key() == null ? 0 : ByteBufUtil.utf8Bytes(h.key()));
                size += 4 + (h.value() == null ? 0 : h.value().length);
            }
        }
        return size;
    }

    /** Size of an empty batch header in bytes (57); a batch is this plus its records. */
    public static int batchOverheadBytes() {
        return HEADER_SIZE;
    }
}
