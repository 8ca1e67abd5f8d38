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
 * Validates a segment's log from its first byte, rebuilds its offset and time indexes, and finds the
 * first invalid byte; {@link #recoverSegment} truncates the log there, {@link #scan} leaves that to the
 * caller ({@link LogLoader} first moves a corrupt tail to quarantine) and can also say whether a
 * whole valid batch follows the invalid bytes (corruption rather than a torn tail).
 *
 * <p>A batch is valid when: a whole 57-byte header remains; {@code batchLength >= 78} and the batch
 * fits in the file; magic is 1; the CRC-32C of bytes 17..end matches; {@code lastOffsetDelta >= 0}
 * and {@code 1 <= recordCount <= lastOffsetDelta + 1} (fewer records in a compacted batch, see {@link
 * LogCleaner}); its base offset ({@code segmentBase + baseOffsetDelta}) is &gt;=
 * the previous batch's last offset + 1 (and &gt;= the segment base); its last offset ({@code base +
 * lastOffsetDelta}) is below the next segment's base offset and at most {@code segmentBase +
 * Integer.MAX_VALUE} (what {@link LogSegment#fits} lets an append put in a segment); its {@code
 * partitionLeaderEpoch} is &gt;= 0 (every append stores a leader's epoch: stamped by {@link
 * UnifiedLog#appendAsLeader} or copied from the leader's batch). The CRC does not cover the base
 * offset delta nor the leader epoch, so only these bounds catch a damaged one: without the offset
 * bounds, a batch claiming offsets of a later segment was kept and reads of those offsets went to the
 * later segment and found nothing; without the epoch bound, a batch with a negative epoch was kept
 * as the last one while the epoch cache (which records no negative epoch) named the one before as
 * the latest (both found by {@code RecoveryFuzzTest}).
 *
 * <p>How it reads: the file is read sequentially in chunks of {@value #CHUNK_BYTES} bytes into one
 * direct buffer (off-heap, from a confined {@link Arena} freed when the scan ends), and every batch
 * is checked in place: header fields by absolute reads, the CRC-32C by {@link CRC32C#update(ByteBuffer)}
 * over the batch's slice of the buffer (the JDK intrinsic reads the direct memory; no copy into the
 * heap). A batch cut by the chunk end is read again from its first byte with the next chunk; a
 * batch larger than the buffer grows it (to the batch size, at most 2 GiB). One {@code pread} per
 * chunk, no allocation per batch. Before this, each batch was read twice through a heap buffer
 * (header, then the whole batch): 0.70 GB/s on a 1 GiB log in {@code RecoveryScanBench}
 * (docs/performance-storage.md). The time index takes each batch's real largest record timestamp
 * from the records in the buffer ({@link RecordTimestamps}), never the header's maxTimestamp alone.
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

    /**
     * What a {@link #scan} found, before anything was cut.
     *
     * @param validBytes bytes from the file start that hold whole valid batches (the cut position)
     * @param fileBytes the file's size in bytes when scanned
     * @param nextOffset the offset after the last valid batch (or the scan's minimum)
     * @param lastLeaderEpoch the epoch of the last valid batch, -1 when none
     * @param reason why the batch at {@code validBytes} is invalid; null when the whole file is valid
     * @param validBatchAfter file position of the first whole valid batch found after {@code
     *     validBytes} ({@link #NONE_AFTER} when none or not looked for): valid data after invalid
     *     data is corruption, not a torn tail
     */
    record Scanned(
            int validBytes, long fileBytes, long nextOffset, int lastLeaderEpoch, String reason, long validBatchAfter) {
        /** True when bytes follow the valid prefix (a torn tail or corruption). */
        boolean hasInvalidTail() {
            return fileBytes > validBytes;
        }

        /** Bytes after the valid prefix. */
        long invalidBytes() {
            return fileBytes - validBytes;
        }
    }

    /** {@link Scanned#validBatchAfter} when no valid batch follows the invalid one. */
    static final long NONE_AFTER = -1L;

    /** The {@code nextSegmentBase} of {@link #scan} for the last segment of the log: no such bound. */
    static final long NO_NEXT_SEGMENT = Long.MAX_VALUE;

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
        Scanned s = scan(segment, minNextOffset, NO_NEXT_SEGMENT, checkCrc, epochs, false);
        cut(segment, s);
        return new Result(s.validBytes(), s.nextOffset(), s.lastLeaderEpoch(), s.invalidBytes());
    }

    /**
     * Validates and indexes like {@link #recoverSegment} but cuts nothing: the caller decides what
     * happens to an invalid tail (copy it to quarantine first) and then calls {@link #cut}.
     *
     * @param minNextOffset as for {@link #recoverSegment}
     * @param nextSegmentBase the base offset of the segment after this one ({@link #NO_NEXT_SEGMENT}
     *     for the last): a batch holding an offset at or above it is invalid
     * @param checkCrc as for {@link #recoverSegment}
     * @param epochs as for {@link #recoverSegment}
     * @param lookPastInvalid also search the bytes after the first invalid batch for a whole valid
     *     batch ({@link Scanned#validBatchAfter}): every file position is tried as a batch start
     *     (magic, lengths, counts, CRC-32C), stopping at the first match; bytes of a torn tail are
     *     few, so this is cheap where it is asked for (the last segment)
     */
    static Scanned scan(
            LogSegment segment,
            long minNextOffset,
            long nextSegmentBase,
            boolean checkCrc,
            BatchEpochs epochs,
            boolean lookPastInvalid)
            throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            return new Scan(segment, arena, nextSegmentBase).run(minNextOffset, checkCrc, epochs, lookPastInvalid);
        }
    }

    /**
     * Ends the recovery of a scanned segment: truncates it at {@code s.validBytes()} (WARN with the
     * file, position, reason and dropped byte count) when bytes follow, else marks the size committed.
     */
    static void cut(LogSegment segment, Scanned s) throws IOException {
        if (s.hasInvalidTail()) {
            LOG.warn(
                    "Recovery of {}: invalid data at position {} ({}), truncating it and dropping {} bytes",
                    segment.logFile,
                    s.validBytes(),
                    s.reason() == null ? "segment larger than 2 GiB" : s.reason(),
                    s.invalidBytes());
            segment.truncateTo(s.validBytes());
        } else {
            segment.recovered(s.validBytes());
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
        /** Every offset of a valid batch is below this: the next segment's base, or base + 2^31. */
        private final long offsetLimit;

        private final CRC32C crc = new CRC32C();
        private ByteBuffer buf;
        /** File position of buf[0]. */
        private long bufStart;
        /** Valid bytes in buf from 0. */
        private int bufFill;

        Scan(LogSegment segment, Arena arena, long nextSegmentBase) throws IOException {
            this.segment = segment;
            this.arena = arena;
            this.limit = Math.min(segment.log.size(), Integer.MAX_VALUE);
            this.offsetLimit = Math.min(nextSegmentBase, segment.baseOffset + Integer.MAX_VALUE + 1L);
            this.buf = allocate((int) Math.max(RecordBatchLayout.HEADER_SIZE, Math.min(CHUNK_BYTES, limit)));
        }

        private ByteBuffer allocate(int bytes) {
            return arena.allocate(bytes, 8).asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        }

        Scanned run(long minNextOffset, boolean checkCrc, BatchEpochs epochs, boolean lookPastInvalid)
                throws IOException {
            long fileSize = segment.log.size();
            long nextOffset = Math.max(minNextOffset, segment.baseOffset);
            int lastEpoch = -1;
            int position = 0;
            String reason = null;
            while (position < limit) {
                reason = invalidAt(position, nextOffset, checkCrc);
                if (reason != null) {
                    break;
                }
                int at = ensure(position, RecordBatchLayout.HEADER_SIZE);
                int size = RecordBatchLayout.LOG_OVERHEAD + buf.getInt(at + RecordBatchLayout.BATCH_LENGTH_OFFSET);
                at = ensure(position, size); // whole batch: the index takes its records' real max
                long base = segment.baseOffset + buf.getInt(at + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                int lastOffsetDelta = buf.getInt(at + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                int epoch = buf.getInt(at + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
                long maxTimestamp = RecordTimestamps.maxOf(buf, at, size);
                segment.indexBatch((int) (base - segment.baseOffset), position, size, maxTimestamp);
                epochs.onBatch(epoch, base);
                nextOffset = base + lastOffsetDelta + 1;
                lastEpoch = epoch;
                position += size;
            }
            long after = NONE_AFTER;
            if (lookPastInvalid && reason != null) {
                for (long p = position + 1L; p <= limit - RecordBatchLayout.HEADER_SIZE; p++) {
                    if (invalidAt(p, segment.baseOffset, true) == null) {
                        after = p;
                        break;
                    }
                }
            }
            return new Scanned(position, fileSize, nextOffset, lastEpoch, reason, after);
        }

        /**
         * Why the bytes at file {@code position} are not a whole valid batch whose base offset is
         * &gt;= {@code minBase} and whose last offset is below {@link #offsetLimit} (class comment),
         * or null when they are one.
         */
        private String invalidAt(long position, long minBase, boolean checkCrc) throws IOException {
            if (limit - position < RecordBatchLayout.HEADER_SIZE) {
                return "partial batch header";
            }
            int at = ensure(position, RecordBatchLayout.HEADER_SIZE);
            byte magic = buf.get(at + RecordBatchLayout.MAGIC_OFFSET);
            int batchLength = buf.getInt(at + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            long size = RecordBatchLayout.LOG_OVERHEAD + (long) batchLength;
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH || position + size > limit) {
                return "batchLength " + batchLength + " out of bounds";
            }
            if (magic != RecordBatchLayout.MAGIC) {
                return "magic " + magic;
            }
            int lastOffsetDelta = buf.getInt(at + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            int recordCount = buf.getInt(at + RecordBatchLayout.RECORD_COUNT_OFFSET);
            long base = segment.baseOffset + buf.getInt(at + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            if (lastOffsetDelta < 0 || recordCount < 1 || recordCount > lastOffsetDelta + 1L) {
                return "lastOffsetDelta " + lastOffsetDelta + " with recordCount " + recordCount;
            }
            int epoch = buf.getInt(at + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
            if (epoch < 0) {
                return "partitionLeaderEpoch " + epoch;
            }
            if (base < minBase) {
                return "base offset " + base + " below expected " + minBase;
            }
            if (base + lastOffsetDelta >= offsetLimit) {
                return "last offset " + (base + lastOffsetDelta) + " not below the segment's limit " + offsetLimit;
            }
            if (checkCrc) {
                at = ensure(position, (int) size);
                if (crcOf(at, (int) size) != buf.getInt(at + RecordBatchLayout.CRC_OFFSET)) {
                    return "CRC-32C mismatch";
                }
            }
            return null;
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
