package io.stellflow.broker.fetch;

import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.BatchVisitor;
import io.stellflow.storage.UnifiedLog;
import java.nio.channels.FileChannel;
import java.util.Arrays;

/**
 * Records the batches {@link UnifiedLog#read} visits (channel, file position, size, base offset)
 * so that the Fetch evaluation can decide on limits before it emits anything. Reused across the
 * partitions of one evaluation: arrays grow, nothing is allocated per batch.
 *
 * <p>In single-segment mode (Fetch v1) only batches of the first visited segment that follow each
 * other in its file are kept; later ones are ignored (the client fetches them next time), so the
 * kept batches are one contiguous file range.
 *
 * <p>For a consumer ({@link #reset(boolean)} with true) control batches (transaction markers) are
 * left out (decision 9.l of {@code docs/spec/wire-protocol.md}); the data batches around them keep
 * their own file regions. In single-segment mode a skipped marker after kept batches ends the
 * collection (the kept batches stay one contiguous range). When only markers were visited, {@link
 * #skippedThrough} says where the caller reads on.
 *
 * <p>Thread-safety: confined to the evaluating thread.
 */
final class BatchCollector implements BatchVisitor {
    private final boolean singleSegment;
    private FileChannel[] channels = new FileChannel[16];
    private long[] positions = new long[16];
    private int[] sizes = new int[16];
    private long[] baseOffsets = new long[16];
    private long[] lastOffsets = new long[16];
    private short[] attributes = new short[16];
    private int compressedCount;
    private int count;
    private int totalBytes;
    private long records;
    private boolean closed;
    private boolean skipControl;
    private long skippedThrough = -1;
    private long lastOffset = -1;

    BatchCollector(boolean singleSegment) {
        this.singleSegment = singleSegment;
    }

    void reset() {
        reset(false);
    }

    /** Empties the collector; {@code skipControl}: leave control batches out (consumer fetch). */
    void reset(boolean skipControl) {
        this.skipControl = skipControl;
        skippedThrough = -1;
        lastOffset = -1;
        Arrays.fill(channels, 0, count, null);
        count = 0;
        compressedCount = 0;
        totalBytes = 0;
        records = 0;
        closed = false;
    }

    @Override
    public void batch(FileChannel channel, long filePosition, int sizeInBytes, long baseOffset, long lastOffset) {
        batch(channel, filePosition, sizeInBytes, baseOffset, lastOffset, (short) 0);
    }

    @Override
    public void batch(
            FileChannel channel,
            long filePosition,
            int sizeInBytes,
            long baseOffset,
            long lastOffset,
            short batchAttributes) {
        if (closed) {
            return;
        }
        if (skipControl && (batchAttributes & RecordBatchLayout.CONTROL_FLAG_MASK) != 0) {
            if (count == 0) {
                skippedThrough = lastOffset;
            } else if (singleSegment) {
                closed = true;
            }
            return;
        }
        if (singleSegment && count > 0) {
            int last = count - 1;
            if (channel != channels[last] || filePosition != positions[last] + sizes[last]) {
                closed = true;
                return;
            }
        }
        if (count == channels.length) {
            int n = count * 2;
            channels = Arrays.copyOf(channels, n);
            positions = Arrays.copyOf(positions, n);
            sizes = Arrays.copyOf(sizes, n);
            baseOffsets = Arrays.copyOf(baseOffsets, n);
            lastOffsets = Arrays.copyOf(lastOffsets, n);
            attributes = Arrays.copyOf(attributes, n);
        }
        channels[count] = channel;
        positions[count] = filePosition;
        sizes[count] = sizeInBytes;
        baseOffsets[count] = baseOffset;
        lastOffsets[count] = lastOffset;
        attributes[count] = batchAttributes;
        if ((batchAttributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            compressedCount++;
        }
        count++;
        totalBytes += sizeInBytes;
        records += lastOffset - baseOffset + 1;
        this.lastOffset = lastOffset;
    }

    /**
     * Keeps only the first {@code n} collected batches (a Fetch v0 whose decompressed batches
     * reached a limit before all were written; the rest is fetched next time).
     */
    void keepFirst(int n) {
        if (n < 0 || n > count) {
            throw new IllegalArgumentException("keepFirst " + n + " of " + count + " batches");
        }
        for (int i = n; i < count; i++) {
            channels[i] = null;
            totalBytes -= sizes[i];
            records -= lastOffsets[i] - baseOffsets[i] + 1;
            if ((attributes[i] & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
                compressedCount--;
            }
        }
        count = n;
        lastOffset = n == 0 ? -1 : lastOffsets[n - 1];
    }

    /**
     * The last offset of the last control batch skipped before any batch was kept, -1 if none:
     * with nothing kept, the caller reads again from the offset after it (so a consumer at a marker
     * offset still gets the data after it).
     */
    long skippedThrough() {
        return skippedThrough;
    }

    /** The last offset of the last kept batch, -1 when none is kept. */
    long lastOffset() {
        return lastOffset;
    }

    /** Records in the collected batches (their offset spans; a compacted batch counts its gaps). */
    long records() {
        return records;
    }

    int count() {
        return count;
    }

    int totalBytes() {
        return totalBytes;
    }

    FileChannel channel(int i) {
        return channels[i];
    }

    long position(int i) {
        return positions[i];
    }

    int size(int i) {
        return sizes[i];
    }

    long baseOffset(int i) {
        return baseOffsets[i];
    }

    /** Last offset of batch {@code i}. */
    long lastOffset(int i) {
        return lastOffsets[i];
    }

    /** Codec id of batch {@code i} (attribute bits 0-2; 0 = none). */
    int codec(int i) {
        return attributes[i] & RecordBatchLayout.COMPRESSION_CODEC_MASK;
    }

    /** Whether a collected batch is compressed. */
    boolean anyCompressed() {
        return compressedCount > 0;
    }
}
