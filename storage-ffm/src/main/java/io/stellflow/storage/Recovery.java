package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.EOFException;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Validates a segment's log from its first byte, rebuilds its offset and time indexes, and truncates the log at the
 * first invalid byte.
 *
 * <p>A batch is valid when: a whole 57-byte header remains; {@code batchLength >= 78} and the batch
 * fits in the file; magic is 1; the CRC-32C of bytes 17..end matches; {@code lastOffsetDelta >= 0}
 * and {@code 1 <= recordCount <= lastOffsetDelta + 1} (fewer records in a compacted batch, see {@link
 * LogCleaner}); its base offset ({@code segmentBase + baseOffsetDelta}) is &gt;=
 * the previous batch's last offset + 1 (and &gt;= the segment base).
 *
 * <p>Thread-safety: called only while the log is being opened, by the opening thread.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

    /** Initial read buffer: 64 KiB holds most batches (the Java producer's default batch is 16 KiB). */
    private static final int INITIAL_BUFFER_BYTES = 64 * 1024;

    /** What recovery found in one segment. */
    record Result(int validBytes, long nextOffset, int lastLeaderEpoch, long droppedBytes) {}

    private Recovery() {}

    /**
     * Scans {@code segment} (whose index must have been reset with {@link
     * LogSegment#rebuildIndexStart}), validating every batch and indexing the valid ones. Truncates the
     * log after the last valid batch and logs a WARN with the file and the dropped byte count.
     *
     * @param minNextOffset the smallest base offset the first batch may have (the previous
     *     segment's next offset, or the segment base)
     * @param checkCrc false when the log is trusted (clean shutdown, only the index was bad): the
     *     structure is still checked, CRCs are not
     * @param epochs told the epoch and base offset of each valid batch
     */
    static Result recoverSegment(LogSegment segment, long minNextOffset, boolean checkCrc, BatchEpochs epochs)
            throws IOException {
        ByteBuf buf = Unpooled.buffer(INITIAL_BUFFER_BYTES);
        try {
            return scan(segment, minNextOffset, checkCrc, epochs, buf);
        } finally {
            buf.release();
        }
    }

    /** Told the leader epoch and base offset of every valid batch, in order (rebuilds the epoch cache). */
    @FunctionalInterface
    interface BatchEpochs {
        BatchEpochs IGNORE = (epoch, baseOffset) -> {};

        void onBatch(int leaderEpoch, long baseOffset);
    }

    private static Result scan(
            LogSegment segment, long minNextOffset, boolean checkCrc, BatchEpochs epochs, ByteBuf buf)
            throws IOException {
        long fileSize = segment.log.size();
        long limit = Math.min(fileSize, Integer.MAX_VALUE);
        long nextOffset = Math.max(minNextOffset, segment.baseOffset);
        int lastEpoch = -1;
        int position = 0;
        String reason = null;
        while (position < limit) {
            if (limit - position < RecordBatchLayout.HEADER_SIZE) {
                reason = "partial batch header";
                break;
            }
            read(segment, buf, position, RecordBatchLayout.HEADER_SIZE);
            int batchLength = RecordBatchLayout.batchLength(buf, 0);
            long size = RecordBatchLayout.LOG_OVERHEAD + (long) batchLength;
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH || position + size > limit) {
                reason = "batchLength " + batchLength + " out of bounds";
                break;
            }
            if (RecordBatchLayout.magic(buf, 0) != RecordBatchLayout.MAGIC) {
                reason = "magic " + RecordBatchLayout.magic(buf, 0);
                break;
            }
            int lastOffsetDelta = RecordBatchLayout.lastOffsetDelta(buf, 0);
            int recordCount = RecordBatchLayout.recordCount(buf, 0);
            long base = segment.baseOffset + RecordBatchLayout.baseOffsetDelta(buf, 0);
            if (lastOffsetDelta < 0 || recordCount < 1 || recordCount > lastOffsetDelta + 1L) {
                reason = "lastOffsetDelta " + lastOffsetDelta + " with recordCount " + recordCount;
                break;
            }
            if (base < nextOffset) {
                reason = "base offset " + base + " below expected " + nextOffset;
                break;
            }
            int epoch = RecordBatchLayout.partitionLeaderEpoch(buf, 0);
            if (checkCrc) {
                read(segment, buf, position, (int) size);
                if (RecordBatchLayout.computeCrc(buf, 0) != RecordBatchLayout.crc(buf, 0)) {
                    reason = "CRC-32C mismatch";
                    break;
                }
            }
            segment.indexBatch(
                    (int) (base - segment.baseOffset), position, (int) size, RecordBatchLayout.maxTimestamp(buf, 0));
            epochs.onBatch(epoch, base);
            nextOffset = base + lastOffsetDelta + 1;
            lastEpoch = epoch;
            position += (int) size;
        }
        long dropped = fileSize - position;
        if (dropped > 0) {
            LOG.warn(
                    "Recovery of {}: invalid data at position {} ({}), truncating it and dropping {} bytes",
                    segment.logFile,
                    position,
                    reason == null ? "segment larger than 2 GiB" : reason,
                    dropped);
            segment.truncateTo(position);
        } else {
            segment.recovered(position);
        }
        return new Result(position, nextOffset, lastEpoch, dropped);
    }

    /** Reads {@code length} bytes at {@code position} into buf[0, length), growing it if needed. */
    private static void read(LogSegment segment, ByteBuf buf, long position, int length) throws IOException {
        buf.clear();
        buf.ensureWritable(length);
        int copied = 0;
        while (copied < length) {
            int n = buf.setBytes(copied, segment.log, position + copied, length - copied);
            if (n < 0) {
                throw new EOFException("unexpected end of " + segment.logFile + " at " + (position + copied));
            }
            copied += n;
        }
        buf.writerIndex(length);
    }
}
