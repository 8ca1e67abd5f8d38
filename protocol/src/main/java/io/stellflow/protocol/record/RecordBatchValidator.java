package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.LOG_OVERHEAD;
import static io.stellflow.protocol.record.RecordBatchLayout.MIN_BATCH_LENGTH;
import static io.stellflow.protocol.record.RecordBatchLayout.MIN_RECORD_LENGTH;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORDS_OFFSET;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORD_LENGTH_SIZE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Leader-side validation of a RecordBatchSet on Produce, {@code docs/spec/wire-protocol.md} §7.7
 * steps 1-7 plus the one-batch size limit of step 8 ({@code MESSAGE_TOO_LARGE}). The first failure
 * decides; checks run in spec step order: the framing walk over all batches (step 2), then steps
 * 3-7 batch by batch, then sizes.
 *
 * <p>Returns {@link Errors#NONE} or the first error code: {@link Errors#INVALID_RECORD} (structure,
 * magic, attributes, counts, records), {@link Errors#CORRUPT_MESSAGE} (CRC mismatch), {@link
 * Errors#FEATURE_NOT_ENABLED} (compression codecs 1-4 when the caller gives no {@link
 * CompressedRecordsValidator}; with one, a compressed batch's records are validated by streaming
 * decompression, decision 9.o), {@link
 * Errors#MESSAGE_TOO_LARGE} (one batch larger than maxBatchBytes). The partition-level
 * RECORD_LIST_TOO_LARGE check is the broker's.
 *
 * <p>Fetched data ({@link #validateFetched}, used by {@link RecordBatchReader}) may come from a
 * compacted log: a compacted batch keeps its header offsets but lost records, so {@code recordCount
 * <= lastOffsetDelta + 1} and each record's {@code offsetDelta} is its original one (strictly
 * increasing, within {@code 0..lastOffsetDelta}). Produce validation still requires {@code
 * recordCount == lastOffsetDelta + 1} and {@code offsetDelta == index} (spec §7.7 step 6-7).
 *
 * <p>The record walk of step 7 also reads each record's timestampDelta: {@link #validate(ByteBuf,
 * int, boolean, BatchMaxTimestamps)} hands each batch's real largest record timestamp to the
 * append, since the header's maxTimestamp is only a hint (decision 9.s).
 *
 * <p>Allocates an NIO view of the record set per call (a set that is not one region, such as a
 * composite of several buffers, is copied to the heap instead) and one slice per batch for its CRC;
 * {@link #validateBatch(ByteBuf, int, boolean, boolean, boolean)}, the reader's per-batch entry, takes a view
 * (or copy) of that batch alone. Never changes the buffer's indexes or reference count.
 * Thread-safety: stateless; concurrent calls on the same buffer are safe as long as nobody writes to
 * it.
 */
public final class RecordBatchValidator {
    private static final int MAX_SUPPORTED_CODEC_NUMBER = 4;

    private RecordBatchValidator() {}

    /**
     * Validates a whole RecordBatchSet between readerIndex and writerIndex without changing indexes,
     * for a non-transactional Produce (a batch with the isTransactional bit set is INVALID_RECORD).
     *
     * @param recordSet the partition's {@code records}; null gives INVALID_RECORD
     * @param maxBatchBytes largest whole batch (8 + batchLength) in bytes
     */
    public static short validate(ByteBuf recordSet, int maxBatchBytes) {
        return validate(recordSet, maxBatchBytes, false);
    }

    /**
     * As {@link #validate(ByteBuf, int)}; {@code transactionalIdPresent} says whether the Produce
     * request carried a non-null transactionalId, which a batch with the isTransactional bit requires
     * ({@code docs/spec/wire-protocol.md} §7.5).
     */
    public static short validate(ByteBuf recordSet, int maxBatchBytes, boolean transactionalIdPresent) {
        return validate(recordSet, maxBatchBytes, transactionalIdPresent, false, null, null);
    }

    /**
     * As {@link #validate(ByteBuf, int, boolean)}, and on {@link Errors#NONE} appends to {@code
     * maxTimestamps} the real largest record timestamp of every batch, in order ({@code
     * baseTimestamp + timestampDelta} over its records, read in the record walk step 7 does anyway:
     * no second walk, no allocation per record). Whatever the result, {@code maxTimestamps} holds no
     * entry of this set when it is not {@link Errors#NONE}.
     *
     * @param maxTimestamps where the per-batch maxima go (decision 9.s of {@code
     *     docs/spec/wire-protocol.md}: the header's maxTimestamp is only a hint)
     */
    public static short validate(
            ByteBuf recordSet, int maxBatchBytes, boolean transactionalIdPresent, BatchMaxTimestamps maxTimestamps) {
        return validate(recordSet, maxBatchBytes, transactionalIdPresent, maxTimestamps, null);
    }

    /**
     * As {@link #validate(ByteBuf, int, boolean, BatchMaxTimestamps)}, and a batch compressed with
     * codec 1-4 has its records validated by {@code compressed} (decision 9.o: streaming
     * decompression under its cap) instead of being refused with {@link Errors#FEATURE_NOT_ENABLED}.
     * After a refusal, {@code compressed.outcome()} tells whether a compressed batch caused it.
     *
     * @param compressed the calling thread's validator; null refuses compressed batches as before
     */
    public static short validate(
            ByteBuf recordSet,
            int maxBatchBytes,
            boolean transactionalIdPresent,
            BatchMaxTimestamps maxTimestamps,
            CompressedRecordsValidator compressed) {
        int before = maxTimestamps.size();
        short code = validate(recordSet, maxBatchBytes, transactionalIdPresent, false, maxTimestamps, compressed);
        if (code != Errors.NONE) {
            maxTimestamps.truncate(before);
        }
        return code;
    }

    /**
     * Validates fetched data (a Fetch response's records, or what a follower copies): as {@link
     * #validate(ByteBuf, int, boolean)} with a transactionalId assumed present, except that
     * compacted batches are legal (see the class javadoc).
     *
     * @param maxBatchBytes largest whole batch (8 + batchLength) in bytes
     */
    public static short validateFetched(ByteBuf recordSet, int maxBatchBytes) {
        return validate(recordSet, maxBatchBytes, true, true, null, null);
    }

    private static short validate(
            ByteBuf recordSet,
            int maxBatchBytes,
            boolean transactionalIdPresent,
            boolean compactedAllowed,
            BatchMaxTimestamps maxTimestamps,
            CompressedRecordsValidator compressed) {
        if (compressed != null) {
            compressed.clearOutcome();
        }
        if (recordSet == null || !recordSet.isReadable()) {
            return Errors.INVALID_RECORD; // step 1
        }
        ByteBuffer b = view(recordSet, recordSet.readerIndex(), recordSet.readableBytes());
        int end = b.limit();
        for (int pos = 0; pos < end; ) { // step 2
            int batchLength = framedBatchLength(b, pos, end);
            if (batchLength < 0) {
                return Errors.INVALID_RECORD;
            }
            pos += LOG_OVERHEAD + batchLength;
        }
        for (int pos = 0; pos < end; ) { // steps 3-7
            short code =
                    validateBatch(b, pos, transactionalIdPresent, compactedAllowed, true, maxTimestamps, compressed);
            if (code != Errors.NONE) {
                return code;
            }
            pos += batchSize(b, pos);
        }
        for (int pos = 0; pos < end; ) { // step 8, one batch
            int size = batchSize(b, pos);
            if (size > maxBatchBytes) {
                return Errors.MESSAGE_TOO_LARGE;
            }
            pos += size;
        }
        return Errors.NONE;
    }

    /**
     * {@code length} bytes of {@code buf} at {@code index} as one big-endian NIO buffer whose index 0
     * is {@code index}: a view sharing the memory when {@code buf} is one region (always on the
     * broker's produce and replication paths), else a heap copy. Every read of the validation then
     * goes through this one {@link ByteBuffer} class, instead of compiling each {@link ByteBuf} read for
     * every buffer class seen (pooled, slice, leak-detector wrapper, composite).
     */
    private static ByteBuffer view(ByteBuf buf, int index, int length) {
        if (buf.nioBufferCount() == 1) {
            return buf.nioBuffer(index, length).order(ByteOrder.BIG_ENDIAN);
        }
        ByteBuffer copy = ByteBuffer.allocate(length);
        buf.getBytes(index, copy);
        return copy.flip();
    }

    /** Total record count of an already validated set (sum of recordCount); no index change. */
    public static int totalRecordCount(ByteBuf recordSet) {
        int total = 0;
        int end = recordSet.writerIndex();
        for (int pos = recordSet.readerIndex(); pos < end; pos += RecordBatchLayout.batchSize(recordSet, pos)) {
            total += RecordBatchLayout.recordCount(recordSet, pos);
        }
        return total;
    }

    /** Number of batches in an already validated set; no index change. */
    public static int batchCount(ByteBuf recordSet) {
        int count = 0;
        int end = recordSet.writerIndex();
        for (int pos = recordSet.readerIndex(); pos < end; pos += RecordBatchLayout.batchSize(recordSet, pos)) {
            count++;
        }
        return count;
    }

    /**
     * Step 2 for the batch at {@code pos}: returns its batchLength if 8 bytes remain, batchLength >=
     * 78 and the whole batch fits before {@code end}; otherwise -1.
     */
    static int framedBatchLength(ByteBuf buf, int pos, int end) {
        return end - pos < LOG_OVERHEAD ? -1 : framed(RecordBatchLayout.batchLength(buf, pos), end - pos);
    }

    private static int framedBatchLength(ByteBuffer b, int pos, int end) {
        return end - pos < LOG_OVERHEAD ? -1 : framed(b.getInt(pos + RecordBatchLayout.BATCH_LENGTH_OFFSET), end - pos);
    }

    private static int framed(int batchLength, int remaining) {
        return batchLength < MIN_BATCH_LENGTH || batchLength > remaining - LOG_OVERHEAD ? -1 : batchLength;
    }

    private static int batchSize(ByteBuffer b, int batchStart) {
        return LOG_OVERHEAD + b.getInt(batchStart + RecordBatchLayout.BATCH_LENGTH_OFFSET);
    }

    /**
     * Steps 3-7 for one batch whose framing (step 2) already passed; {@code compactedAllowed} accepts
     * fetched compacted batches (class javadoc).
     */
    static short validateBatch(ByteBuf buf, int batchStart, boolean transactionalIdPresent, boolean compactedAllowed) {
        return validateBatch(buf, batchStart, transactionalIdPresent, compactedAllowed, true);
    }

    /** As {@link #validateBatch(ByteBuf, int, boolean, boolean)}; {@code checkCrc} false skips step 4. */
    static short validateBatch(
            ByteBuf buf, int batchStart, boolean transactionalIdPresent, boolean compactedAllowed, boolean checkCrc) {
        ByteBuffer b = view(buf, batchStart, RecordBatchLayout.batchSize(buf, batchStart));
        return validateBatch(b, 0, transactionalIdPresent, compactedAllowed, checkCrc, null, null);
    }

    /** Steps 3-7 for one batch; on success adds its real max record timestamp to {@code maxTimestamps} (if not null). */
    private static short validateBatch(
            ByteBuffer b,
            int batchStart,
            boolean transactionalIdPresent,
            boolean compactedAllowed,
            boolean checkCrc,
            BatchMaxTimestamps maxTimestamps,
            CompressedRecordsValidator compressed) {
        if (b.get(batchStart + RecordBatchLayout.MAGIC_OFFSET) != RecordBatchLayout.MAGIC) {
            return Errors.INVALID_RECORD; // step 3
        }
        int batchLength = b.getInt(batchStart + RecordBatchLayout.BATCH_LENGTH_OFFSET);
        if (checkCrc
                && Crc32c.compute(
                                b,
                                batchStart + RecordBatchLayout.CRC_START_OFFSET,
                                RecordBatchLayout.crcCoveredBytes(batchLength))
                        != b.getInt(batchStart + RecordBatchLayout.CRC_OFFSET)) {
            return Errors.CORRUPT_MESSAGE; // step 4
        }
        int attributes = Short.toUnsignedInt(b.getShort(batchStart + RecordBatchLayout.ATTRIBUTES_OFFSET)); // step 5
        int codec = attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK;
        int forbidden = RecordBatchLayout.TIMESTAMP_TYPE_MASK
                | RecordBatchLayout.CONTROL_FLAG_MASK
                | RecordBatchLayout.RESERVED_ATTRIBUTES_MASK;
        if (codec > MAX_SUPPORTED_CODEC_NUMBER || (attributes & forbidden) != 0) {
            return Errors.INVALID_RECORD;
        }
        long producerId = b.getLong(batchStart + RecordBatchLayout.PRODUCER_ID_OFFSET);
        if ((attributes & RecordBatchLayout.TRANSACTIONAL_FLAG_MASK) != 0
                && (producerId < 0 || !transactionalIdPresent)) {
            return Errors.INVALID_RECORD;
        }
        if (codec != 0 && compressed == null) {
            return Errors.FEATURE_NOT_ENABLED; // decision 9.o: this caller decompresses no codec
        }
        int recordCount = b.getInt(batchStart + RecordBatchLayout.RECORD_COUNT_OFFSET); // step 6
        int lastOffsetDelta = b.getInt(batchStart + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
        boolean countOk = compactedAllowed ? recordCount <= lastOffsetDelta + 1L : lastOffsetDelta == recordCount - 1;
        if (recordCount < 1 || !countOk) {
            return Errors.INVALID_RECORD;
        }
        if (b.getLong(batchStart + RecordBatchLayout.MAX_TIMESTAMP_OFFSET)
                < b.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET)) {
            return Errors.INVALID_RECORD;
        }
        short epoch = b.getShort(batchStart + RecordBatchLayout.PRODUCER_EPOCH_OFFSET);
        int sequence = b.getInt(batchStart + RecordBatchLayout.BASE_SEQUENCE_OFFSET);
        boolean plain = producerId == RecordBatchLayout.NO_PRODUCER_ID
                && epoch == RecordBatchLayout.NO_PRODUCER_EPOCH
                && sequence == RecordBatchLayout.NO_SEQUENCE;
        boolean idempotent = producerId >= 0 && epoch >= 0 && sequence >= 0;
        if (!plain && !idempotent) {
            return Errors.INVALID_RECORD;
        }
        int batchEnd = batchStart + LOG_OVERHEAD + batchLength;
        if (codec != 0) { // step 7 of a compressed batch, decision 9.o
            ByteBuffer section = b.slice(batchStart + RECORDS_OFFSET, batchEnd - batchStart - RECORDS_OFFSET);
            return compressed.validate(
                    Unpooled.wrappedBuffer(section),
                    CompressionType.forId(codec),
                    recordCount,
                    b.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET),
                    maxTimestamps);
        }
        return validateRecords(
                b,
                batchStart + RECORDS_OFFSET,
                batchEnd,
                recordCount,
                compactedAllowed ? lastOffsetDelta : -1,
                b.getLong(batchStart + RecordBatchLayout.BASE_TIMESTAMP_OFFSET),
                maxTimestamps);
    }

    /**
     * Step 7. {@code compactedLastOffsetDelta} &lt; 0: offsetDelta must equal the record index;
     * otherwise it must increase strictly and stay within 0..compactedLastOffsetDelta. On success
     * adds {@code baseTimestampMs} plus the largest timestampDelta, read in the same walk, to {@code
     * maxTimestamps} if not null (decision 9.s).
     */
    private static short validateRecords(
            ByteBuffer buf,
            int pos,
            int batchEnd,
            int recordCount,
            int compactedLastOffsetDelta,
            long baseTimestampMs,
            BatchMaxTimestamps maxTimestamps) {
        long previousDelta = -1;
        long maxTimestampDelta = Long.MIN_VALUE; // recordCount >= 1 (step 6): at least one record sets it
        for (int index = 0; index < recordCount; index++) {
            if (batchEnd - pos < RECORD_LENGTH_SIZE) {
                return Errors.INVALID_RECORD;
            }
            int length = buf.getInt(pos);
            if (length < MIN_RECORD_LENGTH || length > batchEnd - pos - RECORD_LENGTH_SIZE) {
                return Errors.INVALID_RECORD;
            }
            int recordEnd = pos + RECORD_LENGTH_SIZE + length;
            int p = pos + RECORD_LENGTH_SIZE;
            if (buf.get(p) != 0) {
                return Errors.INVALID_RECORD; // record attributes
            }
            maxTimestampDelta = Math.max(maxTimestampDelta, buf.getLong(p + 1));
            p += 1 + 8; // attributes, timestampDelta
            int offsetDelta = buf.getInt(p);
            boolean deltaOk = compactedLastOffsetDelta < 0
                    ? offsetDelta == index
                    : offsetDelta > previousDelta && offsetDelta <= compactedLastOffsetDelta;
            if (!deltaOk) {
                return Errors.INVALID_RECORD; // offsetDelta
            }
            previousDelta = offsetDelta;
            p = skipNullableBytes(buf, p + 4, recordEnd); // key
            p = skipNullableBytes(buf, p, recordEnd); // value
            p = skipHeaders(buf, p, recordEnd);
            if (p != recordEnd) {
                return Errors.INVALID_RECORD; // also covers p == -1
            }
            pos = recordEnd;
        }
        if (pos != batchEnd) {
            return Errors.INVALID_RECORD;
        }
        if (maxTimestamps != null) {
            maxTimestamps.add(baseTimestampMs + maxTimestampDelta);
        }
        return Errors.NONE;
    }

    /** Returns the index after a nullable-bytes field at {@code p}, or -1 if it is invalid or overruns. */
    private static int skipNullableBytes(ByteBuffer buf, int p, int limit) {
        if (p < 0 || limit - p < 4) {
            return -1;
        }
        int len = buf.getInt(p);
        if (len < -1 || len > limit - p - 4) {
            return -1;
        }
        return p + 4 + Math.max(len, 0);
    }

    private static int skipHeaders(ByteBuffer buf, int p, int limit) {
        if (p < 0 || limit - p < 4) {
            return -1;
        }
        int count = buf.getInt(p);
        if (count < 0) {
            return -1;
        }
        p += 4;
        for (int i = 0; i < count; i++) {
            if (limit - p < 2) {
                return -1;
            }
            int keyLength = buf.getShort(p);
            if (keyLength < -1 || keyLength > limit - p - 2) {
                return -1;
            }
            if (keyLength > 0 && !Utf8.isValid(buf, p + 2, keyLength)) {
                return -1;
            }
            p = skipNullableBytes(buf, p + 2 + Math.max(keyLength, 0), limit);
            if (p < 0) {
                return -1;
            }
        }
        return p;
    }
}
