package io.stellflow.storage;

import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
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
 * <p>How it reads: the file is read sequentially in chunks of {@value #CHUNK_BYTES} bytes into one
 * direct buffer (off-heap, from a confined {@link Arena} freed when the scan ends), and every batch
 * is checked in place: header fields by absolute reads, the CRC-32C by {@link CRC32C#update(ByteBuffer)}
 * over the batch's slice of the buffer (the JDK intrinsic reads the direct memory; no copy into the
 * heap). A batch cut by the chunk end is read again from its first byte with the next chunk; a
 * batch larger than the buffer grows it (to the batch size, at most 2 GiB). One {@code pread} per
 * chunk, no allocation per batch. Before this, each batch was read twice through a heap buffer
 * (header, then the whole batch): 0.70 GB/s on a 1 GiB log in {@code RecoveryScanBench}
 * (docs/performance-storage.md).
 *
 * <p>Thread-safety: called only while the log is being opened, by the opening thread.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

    /**
     * 1 MiB: one syscall per MiB (~1,000 per GiB), several 16 KiB producer batches per chunk, and
     * small enough to stay in a core's L2 between the copy and the CRC pass.
     */
    static final int CHUNK_BYTES = 1 << 20;

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
        try (Arena arena = Arena.ofConfined()) {
            return new Scan(segment, arena).run(minNextOffset, checkCrc, epochs);
        }
    }

    /** Told the leader epoch and base offset of every valid batch, in order (rebuilds the epoch cache). */
    @FunctionalInterface
    interface BatchEpochs {
        BatchEpochs IGNORE = (epoch, baseOffset) -> {};

        void onBatch(int leaderEpoch, long baseOffset);
    }

    /** One segment's scan: the chunk buffer and which file bytes it holds. */
    private static final class Scan {
        private final LogSegment segment;
        private final Arena arena;
        private final long limit;
        private final CRC32C crc = new CRC32C();
        private ByteBuffer buf;
        /** File position of buf[0]. */
        private long bufStart;
        /** Valid bytes in buf from 0. */
        private int bufFill;

        Scan(LogSegment segment, Arena arena) throws IOException {
            this.segment = segment;
            this.arena = arena;
            this.limit = Math.min(segment.log.size(), Integer.MAX_VALUE);
            this.buf = allocate((int) Math.max(RecordBatchLayout.HEADER_SIZE, Math.min(CHUNK_BYTES, limit)));
        }

        private ByteBuffer allocate(int bytes) {
            return arena.allocate(bytes, 8).asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        }

        Result run(long minNextOffset, boolean checkCrc, BatchEpochs epochs) throws IOException {
            long fileSize = segment.log.size();
            long nextOffset = Math.max(minNextOffset, segment.baseOffset);
            int lastEpoch = -1;
            int position = 0;
            String reason = null;
            while (position < limit) {
                if (limit - position < RecordBatchLayout.HEADER_SIZE) {
                    reason = "partial batch header";
                    break;
                }
                int at = ensure(position, RecordBatchLayout.HEADER_SIZE);
                int batchLength = buf.getInt(at + RecordBatchLayout.BATCH_LENGTH_OFFSET);
                long size = RecordBatchLayout.LOG_OVERHEAD + (long) batchLength;
                if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH || position + size > limit) {
                    reason = "batchLength " + batchLength + " out of bounds";
                    break;
                }
                byte magic = buf.get(at + RecordBatchLayout.MAGIC_OFFSET);
                if (magic != RecordBatchLayout.MAGIC) {
                    reason = "magic " + magic;
                    break;
                }
                int lastOffsetDelta = buf.getInt(at + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                int recordCount = buf.getInt(at + RecordBatchLayout.RECORD_COUNT_OFFSET);
                long base = segment.baseOffset + buf.getInt(at + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                if (lastOffsetDelta < 0 || recordCount < 1 || recordCount > lastOffsetDelta + 1L) {
                    reason = "lastOffsetDelta " + lastOffsetDelta + " with recordCount " + recordCount;
                    break;
                }
                if (base < nextOffset) {
                    reason = "base offset " + base + " below expected " + nextOffset;
                    break;
                }
                int epoch = buf.getInt(at + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
                long maxTimestamp = buf.getLong(at + RecordBatchLayout.MAX_TIMESTAMP_OFFSET);
                if (checkCrc) {
                    at = ensure(position, (int) size);
                    if (crcOf(at, (int) size) != buf.getInt(at + RecordBatchLayout.CRC_OFFSET)) {
                        reason = "CRC-32C mismatch";
                        break;
                    }
                }
                segment.indexBatch((int) (base - segment.baseOffset), position, (int) size, maxTimestamp);
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

        /** CRC-32C of bytes 17..size of the batch at buffer index {@code at}. */
        private int crcOf(int at, int size) {
            crc.reset();
            buf.limit(at + size).position(at + RecordBatchLayout.CRC_START_OFFSET);
            crc.update(buf);
            buf.clear();
            return (int) crc.getValue();
        }

        /**
         * Makes file bytes [position, position + length) available in the buffer (the caller checked
         * they are below the limit) and returns the buffer index of {@code position}. Refills from
         * {@code position} with a whole chunk when they are not all there, growing the buffer for a
         * batch larger than it.
         */
        private int ensure(long position, int length) throws IOException {
            if (position >= bufStart && position + length <= bufStart + bufFill) {
                return (int) (position - bufStart);
            }
            if (length > buf.capacity()) {
                buf = allocate(Math.max(length, (int) Math.min(Integer.MAX_VALUE - 8, 2L * buf.capacity())));
            }
            int want = (int) Math.min(buf.capacity(), limit - position);
            buf.clear().limit(want);
            while (buf.hasRemaining()) {
                int n = segment.log.read(buf, position + buf.position());
                if (n < 0) {
                    throw new EOFException(
                            "unexpected end of " + segment.logFile + " at " + (position + buf.position()));
                }
            }
            buf.clear();
            bufStart = position;
            bufFill = want;
            return 0;
        }
    }
}
