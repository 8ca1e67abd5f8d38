package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.LOG_OVERHEAD;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORDS_OFFSET;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORD_LENGTH_SIZE;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.WireReader;
import java.util.ArrayList;
import java.util.List;

/**
 * Consumer-side reader of a RecordBatchSet from a Fetch v0 response ({@code
 * docs/spec/wire-protocol.md} §6.4, §7.2). Every batch is checked like {@link
 * RecordBatchValidator#validateFetched} does (framing, magic, CRC, attributes, counts, record
 * structure; batches of a compacted log with fewer records than {@code lastOffsetDelta + 1} and
 * gaps in the offsetDeltas are legal), then its records are copied out as {@link DecodedRecord}s
 * with {@code offset = fetchOffset + baseOffsetDelta + offsetDelta}. Records below fetchOffset are
 * not dropped (spec §6.4: the SDKs hand them to the application too).
 *
 * <p>Errors: throws {@link ProtocolException} with INVALID_RECORD for a truncated or malformed batch,
 * CORRUPT_MESSAGE for a CRC mismatch, FEATURE_NOT_ENABLED for a compressed batch (unless a {@link
 * RecordBatchDecompressor} is given). The buffer's indexes
 * and reference count are untouched. Thread-safety: stateless. Allocates (one object per record):
 * consumer side only.
 */
public final class RecordBatchReader {
    private RecordBatchReader() {}

    /**
     * Receives decoded records in offset order (see {@link #decode(ByteBuf, long, RecordSink)}). The
     * arrays and the header list are fresh per record and owned by the sink.
     */
    @FunctionalInterface
    public interface RecordSink {
        /**
         * @param offset the record's absolute offset
         * @param timestampMs baseTimestamp + timestampDelta (epoch ms)
         * @param key key bytes or null
         * @param value value bytes or null
         * @param headers the record's headers; an immutable empty list when it has none
         */
        void accept(long offset, long timestampMs, byte[] key, byte[] value, List<Header> headers);
    }

    /**
     * Decides, from a batch's header alone, whether its records are handed out (the consumer's
     * read_committed filter). Called once per batch in offset order, before the batch is validated.
     * A set made by {@link RecordBatchDecompressor#expandAll} had every batch validated as it was
     * expanded, the ones a gate skips included ({@link #decodeExpanded}).
     */
    @FunctionalInterface
    public interface BatchGate {
        /** Decode and hand out the batch's records. */
        int DELIVER = 0;
        /** Leave the batch out unread (not validated, not decoded); go on with the next one. */
        int SKIP = 1;
        /** Stop before this batch: it and every later batch of the set are left out. */
        int STOP = 2;

        /**
         * @param producerId the batch's producerId (-1: none)
         * @param baseOffset the batch's absolute base offset
         * @param lastOffset the batch's absolute last offset (base + lastOffsetDelta)
         * @return {@link #DELIVER}, {@link #SKIP} or {@link #STOP}
         */
        int admit(long producerId, long baseOffset, long lastOffset);
    }

    /** Decodes every record between readerIndex and writerIndex; an empty set gives an empty list. */
    public static List<DecodedRecord> decode(ByteBuf recordSet, long fetchOffset) {
        return decode(recordSet, fetchOffset, true);
    }

    /**
     * As {@link #decode(ByteBuf, long)}; {@code checkCrc} false skips each batch's CRC-32C check (a
     * writer reading back batches it sealed itself, perhaps without a CRC yet: {@link
     * RecordBatchBuilder#close(boolean)}).
     */
    public static List<DecodedRecord> decode(ByteBuf recordSet, long fetchOffset, boolean checkCrc) {
        List<DecodedRecord> records = new ArrayList<>();
        decode(
                recordSet,
                fetchOffset,
                checkCrc,
                (offset, timestampMs, key, value, headers) ->
                        records.add(new DecodedRecord(offset, timestampMs, key, value, headers)));
        return records;
    }

    /**
     * Validates and decodes every record between readerIndex and writerIndex into {@code sink}, in
     * order, without an intermediate list (the consumer's path: one record object per record is the
     * only allocation besides the key and value arrays). Batch by batch: a batch is validated as a
     * whole before any of its records reaches the sink, so on an exception the sink has seen exactly
     * the records of the batches before the bad one.
     *
     * @param baseOffset what the batches' baseOffsetDelta counts from (v0: fetchOffset; Fetch v1:
     *     recordsBaseOffset)
     * @throws ProtocolException as {@link #decode(ByteBuf, long)}
     */
    public static void decode(ByteBuf recordSet, long baseOffset, RecordSink sink) {
        decode(recordSet, baseOffset, true, sink);
    }

    /**
     * As {@link #decode(ByteBuf, long, RecordSink)}; {@code checkCrc} false skips the CRC-32C check
     * of each batch (the consumer's {@code check.crcs=false}): everything else is still validated, so
     * a damaged batch may still fail with INVALID_RECORD, or hand out damaged key or value bytes.
     */
    public static void decode(ByteBuf recordSet, long baseOffset, boolean checkCrc, RecordSink sink) {
        decode(recordSet, baseOffset, checkCrc, null, sink);
    }

    /**
     * As {@link #decode(ByteBuf, long, boolean, RecordSink)}, and compressed batches (decision 9.o)
     * are expanded by {@code decompressor} (null: refused with FEATURE_NOT_ENABLED as before): the
     * CRC-32C is checked on the compressed bytes as sent, then the expanded batch is validated and
     * decoded as an uncompressed one. A malformed or over-cap stream throws INVALID_RECORD naming the
     * batch's base offset, the codec and the reason.
     */
    public static void decode(
            ByteBuf recordSet,
            long baseOffset,
            boolean checkCrc,
            RecordBatchDecompressor decompressor,
            RecordSink sink) {
        decode(recordSet, baseOffset, checkCrc, decompressor, null, sink);
    }

    /**
     * As {@link #decode(ByteBuf, long, boolean, RecordBatchDecompressor, RecordSink)}; each framed
     * batch is first shown to {@code gate} (null: every batch is delivered), which may skip it unread
     * or end the walk before it. Allocates nothing beyond what the delivered records need.
     */
    public static void decode(
            ByteBuf recordSet,
            long baseOffset,
            boolean checkCrc,
            RecordBatchDecompressor decompressor,
            BatchGate gate,
            RecordSink sink) {
        if (recordSet == null) {
            return;
        }
        long fetchOffset = baseOffset;
        int end = recordSet.writerIndex();
        for (int pos = recordSet.readerIndex(); pos < end; ) {
            int batchLength = RecordBatchValidator.framedBatchLength(recordSet, pos, end);
            if (batchLength < 0) {
                throw new ProtocolException(
                        Errors.INVALID_RECORD,
                        "truncated or malformed batch at byte " + (pos - recordSet.readerIndex()));
            }
            if (gate != null) {
                int verdict = admit(gate, recordSet, pos, fetchOffset);
                if (verdict == BatchGate.STOP) {
                    return;
                }
                if (verdict == BatchGate.SKIP) {
                    pos += LOG_OVERHEAD + batchLength;
                    continue;
                }
            }
            if (decompressor != null
                    && (RecordBatchLayout.attributes(recordSet, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
                decodeCompressed(recordSet, pos, fetchOffset, checkCrc, decompressor, sink);
                pos += LOG_OVERHEAD + batchLength;
                continue;
            }
            short code = RecordBatchValidator.validateBatch(recordSet, pos, true, true, checkCrc);
            if (code != Errors.NONE) {
                throw new ProtocolException(
                        code, "invalid batch at byte " + (pos - recordSet.readerIndex()) + ": " + Errors.name(code));
            }
            decodeBatch(recordSet, pos, fetchOffset, sink);
            pos += LOG_OVERHEAD + batchLength;
        }
    }

    /**
     * Decodes a set that {@link RecordBatchDecompressor#expandAll} returned (not -1), as {@link
     * #decode(ByteBuf, long, boolean, RecordBatchDecompressor, BatchGate, RecordSink)} decodes the set
     * it was made from, without validating its batches again: {@code expandAll} checked every one of
     * them as it wrote it. Only for such a set, unchanged since: on any other bytes the result is
     * undefined (an {@link IndexOutOfBoundsException} or wrong records).
     *
     * @throws ProtocolException INVALID_RECORD for a batch that is not framed (a bug: expandAll frames every batch)
     */
    public static void decodeExpanded(ByteBuf expandedSet, long baseOffset, BatchGate gate, RecordSink sink) {
        int end = expandedSet.writerIndex();
        for (int pos = expandedSet.readerIndex(); pos < end; ) {
            int batchLength = RecordBatchValidator.framedBatchLength(expandedSet, pos, end);
            if (batchLength < 0) {
                throw new ProtocolException(Errors.INVALID_RECORD, "expanded set not framed at byte " + pos);
            }
            int verdict = gate == null ? BatchGate.DELIVER : admit(gate, expandedSet, pos, baseOffset);
            if (verdict == BatchGate.STOP) {
                return;
            }
            if (verdict == BatchGate.DELIVER) {
                decodeBatch(expandedSet, pos, baseOffset, sink);
            }
            pos += LOG_OVERHEAD + batchLength;
        }
    }

    /**
     * The offset after the last record of the last complete batch, read from the batch headers
     * alone (no CRC check, no record walk: cheap enough to run before the records are decoded, so
     * the next Fetch can be sent first); -1 when the set holds no complete batch. A malformed set
     * gives the offset after the last well-framed batch before it ({@link #decode} reports the
     * error).
     *
     * @param baseOffset as in {@link #decode(ByteBuf, long, RecordSink)}
     */
    public static long nextOffset(ByteBuf recordSet, long baseOffset) {
        return nextOffset(recordSet, baseOffset, null);
    }

    /**
     * As {@link #nextOffset(ByteBuf, long)} with {@code gate} (null: none) shown every batch in
     * order: a batch it stops at gives that batch's base offset (the next Fetch starts there), a
     * skipped one counts as read. {@code gate} must decide the same way for the same calls as in
     * {@link #decode(ByteBuf, long, boolean, RecordBatchDecompressor, BatchGate, RecordSink)}.
     */
    public static long nextOffset(ByteBuf recordSet, long baseOffset, BatchGate gate) {
        if (recordSet == null) {
            return -1L;
        }
        long next = -1L;
        int end = recordSet.writerIndex();
        for (int pos = recordSet.readerIndex(); pos < end; ) {
            int batchLength = RecordBatchValidator.framedBatchLength(recordSet, pos, end);
            if (batchLength < 0) {
                break;
            }
            if (gate != null && admit(gate, recordSet, pos, baseOffset) == BatchGate.STOP) {
                return baseOffset + RecordBatchLayout.baseOffsetDelta(recordSet, pos);
            }
            next = baseOffset
                    + RecordBatchLayout.baseOffsetDelta(recordSet, pos)
                    + RecordBatchLayout.lastOffsetDelta(recordSet, pos)
                    + 1;
            pos += LOG_OVERHEAD + batchLength;
        }
        return next;
    }

    private static int admit(BatchGate gate, ByteBuf set, int pos, long baseOffset) {
        long base = baseOffset + RecordBatchLayout.baseOffsetDelta(set, pos);
        return gate.admit(
                RecordBatchLayout.producerId(set, pos), base, base + RecordBatchLayout.lastOffsetDelta(set, pos));
    }

    private static void decodeCompressed(
            ByteBuf buf,
            int pos,
            long fetchOffset,
            boolean checkCrc,
            RecordBatchDecompressor decompressor,
            RecordSink sink) {
        long batchOffset = fetchOffset + RecordBatchLayout.baseOffsetDelta(buf, pos);
        short code = Errors.NONE;
        if (RecordBatchLayout.magic(buf, pos) != RecordBatchLayout.MAGIC) {
            code = Errors.INVALID_RECORD;
        } else if (checkCrc && RecordBatchLayout.computeCrc(buf, pos) != RecordBatchLayout.crc(buf, pos)) {
            code = Errors.CORRUPT_MESSAGE;
        }
        if (code != Errors.NONE) {
            throw new ProtocolException(
                    code, "invalid compressed batch at offset " + batchOffset + ": " + Errors.name(code));
        }
        ByteBuf expanded;
        try {
            expanded = decompressor.expand(buf, pos);
        } catch (ProtocolException e) {
            throw new ProtocolException(
                    e.errorCode(), "compressed batch at offset " + batchOffset + ": " + e.getMessage());
        }
        code = RecordBatchValidator.validateBatch(expanded, 0, true, true, false);
        if (code != Errors.NONE) {
            throw new ProtocolException(
                    code, "compressed batch at offset " + batchOffset + " holds invalid records: " + Errors.name(code));
        }
        decodeBatch(expanded, 0, fetchOffset, sink);
    }

    private static void decodeBatch(ByteBuf buf, int batchStart, long fetchOffset, RecordSink into) {
        long baseOffset = fetchOffset + RecordBatchLayout.baseOffsetDelta(buf, batchStart);
        long baseTimestamp = RecordBatchLayout.baseTimestamp(buf, batchStart);
        int count = RecordBatchLayout.recordCount(buf, batchStart);
        int p = batchStart + RECORDS_OFFSET;
        for (int i = 0; i < count; i++) {
            int length = buf.getInt(p);
            int recordEnd = p + RECORD_LENGTH_SIZE + length;
            p += RECORD_LENGTH_SIZE + 1; // length, attributes
            long timestampDelta = buf.getLong(p);
            p += 8;
            int offsetDelta = buf.getInt(p);
            p += 4;
            byte[] key = bytesAt(buf, p);
            p += 4 + (key == null ? 0 : key.length);
            byte[] value = bytesAt(buf, p);
            p += 4 + (value == null ? 0 : value.length);
            int headerCount = buf.getInt(p);
            p += 4;
            List<Header> headers = headerCount == 0 ? List.of() : new ArrayList<>(headerCount);
            for (int h = 0; h < headerCount; h++) {
                int keyLength = buf.getShort(p);
                String headerKey = keyLength < 0 ? null : WireReader.decodeUtf8(buf, p + 2, keyLength, "header key");
                p += 2 + Math.max(keyLength, 0);
                byte[] headerValue = bytesAt(buf, p);
                p += 4 + (headerValue == null ? 0 : headerValue.length);
                headers.add(new Header(headerKey, headerValue));
            }
            into.accept(baseOffset + offsetDelta, baseTimestamp + timestampDelta, key, value, headers);
            p = recordEnd;
        }
    }

    private static byte[] bytesAt(ByteBuf buf, int p) {
        int len = buf.getInt(p);
        if (len < 0) {
            return null;
        }
        byte[] bytes = new byte[len];
        buf.getBytes(p + 4, bytes);
        return bytes;
    }
}
