package io.stellflow.protocol.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.record.RecordBatchLayout;

/**
 * Byte layout of a Fetch response body (apiKey 3), v0 ({@code docs/spec/wire-protocol.md} §6.4,
 * frozen: the public SDKs speak it) and v1 (Stellflow's own version, docs/protocol-additions.md;
 * advertised as Fetch [0, 1]). All integers big-endian; the body follows the 12-byte response
 * header. This is the one description of these bytes: {@link FetchResponseEncoder} writes them on
 * the broker's hot path, {@link FetchResponse} and {@link FetchResponseV1} are the reference codecs
 * (the clients decode with them).
 *
 * <pre>
 * body (offsets from the body start)
 *  0  sessionId              int32   always 0 (no fetch sessions)
 *  4  responses              int32   count, then per topic, in request order:
 *       topic                string  int16 length N + N bytes UTF-8, byte-identical to the request
 *       partitions           int32   count, then per partition, in request order (never omitted):
 *
 * partition entry (offsets from the entry start; abortedTransactions count 0, which is all this
 * broker sends: each aborted transaction, producerId int64 + firstOffset int64, moves the later
 * fields 16 bytes on)
 *                               v0                                 v1
 *  0  partition            int32                                   same
 *  4  errorCode            int16                                   same
 *  6  highWatermark        int64  -1 if unknown                    same
 * 14  logStartOffset       int64  -1 if unknown                    same
 * 22  lastStableOffset     int64  -1 if unknown                    same
 * 30  abortedTransactions  int32  count                            same
 * 34  records length       int32  (nullable; sent &gt;= 0)       34 recordsBaseOffset int64 (-1 without records)
 * 38  records              whole batches, bytes 0-3 rewritten   42 records length int32 (&gt;= 0, never -1)
 *                                                              46 records: stored batches untouched
 * </pre>
 *
 * <p><b>Offsets.</b> v0: the SDKs compute a record's offset as {@code fetchOffset +
 * batch.baseOffsetDelta + record.offsetDelta}, so the sender rewrites every batch's bytes 0-3 to
 * {@link #v0BaseOffsetDelta batchBaseOffset - fetchOffset} (negative when the fetch starts inside the
 * first batch; bytes 0-11 are outside the CRC). A zero-copy sender writes these {@value
 * #V0_BATCH_PREFIX_BYTES} bytes itself, then the batch from its byte 4 on as a file region. v1: the
 * records are one segment's stored batches, contiguous and untouched (one file region), and a
 * record's offset is {@code recordsBaseOffset + baseOffsetDelta + offsetDelta} with {@link
 * #v1RecordsBaseOffset recordsBaseOffset} = the segment's base offset. In both versions the first
 * batch may start before {@code fetchOffset} (the client skips those records).
 *
 * <p><b>Worked example</b> (golden G7, spec §10): partition 0 of {@code orders}, HW = LSO = 102, log
 * start 0, two one-record batches stored at offsets 100 and 101 (stored baseOffsetDelta 0 and 1 in a
 * segment based at 100), fetched at offset 100. The v0 entry is 38 + 288 bytes:
 *
 * <pre>
 *  00000000 0000 0000000000000066 0000000000000000 0000000000000066 00000000 00000120 | 00000000 ... | 00000001 ...
 *  partition errorCode  HW 102       logStart 0      LSO 102       aborted 0 len 288   delta 0         delta 1
 * </pre>
 *
 * and the v1 entry ({@code FetchResponseV1Test}'s golden) inserts {@code 0000000000000064}
 * (recordsBaseOffset 100) before the same length; the batches keep their stored deltas 0 and 1, so
 * the offsets are again 100 + 0 + 0 and 100 + 1 + 0. A fetch that starts inside a batch (spec
 * §6.4's third example): a segment based at 100 holds batches 103-106 and 107; a fetch at 105 gets
 * both batches, v0 with deltas -2 and 2 (105 - 2 = 103), v1 with recordsBaseOffset 100 and the stored
 * deltas 3 and 7; either way the records decode to offsets 103-107 (Stellflow's client skips 103
 * and 104, the SDKs hand them out again).
 *
 * <p>Thread-safety: stateless.
 */
public final class FetchResponseLayout {
    /** Fetch v0: the frozen layout of {@code docs/spec/wire-protocol.md} §6.4. */
    public static final short VERSION_0 = 0;
    /** Fetch v1: {@code recordsBaseOffset} added, stored batches untouched. */
    public static final short VERSION_1 = FetchResponseV1.VERSION;
    /** Fetch v2: the request carries the follower's broker epoch; the response is v1's. */
    public static final short VERSION_2 = FetchRequest.VERSION_REPLICA_EPOCH;

    /** Body offset of sessionId. */
    public static final int SESSION_ID_OFFSET = 0;
    /** Body offset of the responses (topics) count. */
    public static final int RESPONSES_COUNT_OFFSET = 4;
    /** Body bytes before the first topic: sessionId + responses count. */
    public static final int BODY_HEADER_BYTES = 8;
    /** The only sessionId the broker sends. */
    public static final int SESSION_ID = 0;

    /** Entry offset of partition. */
    public static final int PARTITION_OFFSET = 0;
    /** Entry offset of errorCode. */
    public static final int ERROR_CODE_OFFSET = 4;
    /** Entry offset of highWatermark. */
    public static final int HIGH_WATERMARK_OFFSET = 6;
    /** Entry offset of logStartOffset. */
    public static final int LOG_START_OFFSET_OFFSET = 14;
    /** Entry offset of lastStableOffset. */
    public static final int LAST_STABLE_OFFSET_OFFSET = 22;
    /** Entry offset of the abortedTransactions count. */
    public static final int ABORTED_TRANSACTIONS_COUNT_OFFSET = 30;
    /** Size of one aborted transaction: producerId int64 + firstOffset int64. */
    public static final int ABORTED_TRANSACTION_BYTES = 16;
    /** v1 entry offset of recordsBaseOffset (abortedTransactions count 0). */
    public static final int V1_RECORDS_BASE_OFFSET_OFFSET = 34;
    /** Size of the v1 recordsBaseOffset field. */
    public static final int RECORDS_BASE_OFFSET_BYTES = 8;
    /** v0 entry offset of the records length (abortedTransactions count 0). */
    public static final int V0_RECORDS_LENGTH_OFFSET = 34;
    /** v1 entry offset of the records length (abortedTransactions count 0). */
    public static final int V1_RECORDS_LENGTH_OFFSET = V1_RECORDS_BASE_OFFSET_OFFSET + RECORDS_BASE_OFFSET_BYTES;
    /** Size of the records length field. */
    public static final int RECORDS_LENGTH_BYTES = 4;
    /** v0 partition entry bytes before the records: 4 + 2 + 8 + 8 + 8 + 4 + 4. */
    public static final int V0_PARTITION_ENVELOPE_BYTES = V0_RECORDS_LENGTH_OFFSET + RECORDS_LENGTH_BYTES;
    /** v1 partition entry bytes before the records: v0's plus recordsBaseOffset. */
    public static final int V1_PARTITION_ENVELOPE_BYTES = V1_RECORDS_LENGTH_OFFSET + RECORDS_LENGTH_BYTES;

    /** recordsBaseOffset when a v1 partition returns no records. */
    public static final long NO_RECORDS_BASE_OFFSET = -1L;

    /**
     * Bytes of each batch a v0 zero-copy sender writes itself: the rewritten baseOffsetDelta (batch
     * bytes 0-3); the file region starts at batch byte {@value}.
     */
    public static final int V0_BATCH_PREFIX_BYTES = RecordBatchLayout.BATCH_LENGTH_OFFSET;

    private FetchResponseLayout() {}

    /** Whether this layout describes {@code version} (0, 1, or 2 as 1). */
    public static boolean supports(short version) {
        return version >= VERSION_0 && version <= VERSION_2;
    }

    /** Partition entry bytes before the records in {@code version}. */
    public static int partitionEnvelopeBytes(short version) {
        return version >= VERSION_1 ? V1_PARTITION_ENVELOPE_BYTES : V0_PARTITION_ENVELOPE_BYTES;
    }

    /** Entry offset of the records length in {@code version} (abortedTransactions count 0). */
    public static int recordsLengthOffset(short version) {
        return version >= VERSION_1 ? V1_RECORDS_LENGTH_OFFSET : V0_RECORDS_LENGTH_OFFSET;
    }

    /** Bytes of a topic entry before its first partition: the name (int16 + UTF-8) and the count. */
    public static int topicHeaderBytes(String topic) {
        return 2 + ByteBufUtil.utf8Bytes(topic) + 4;
    }

    /**
     * The v0 baseOffsetDelta of a batch ({@code docs/spec/wire-protocol.md} §6.4 step 5): {@code
     * batchBaseOffset - fetchOffset}.
     *
     * @throws ArithmeticException if the difference does not fit an int32 (a bug: a partition's data
     *     never spans 2^31 offsets from the fetch offset within one response)
     */
    public static int v0BaseOffsetDelta(long batchBaseOffset, long fetchOffset) {
        return Math.toIntExact(batchBaseOffset - fetchOffset);
    }

    /**
     * The v1 recordsBaseOffset: the absolute offset the stored baseOffsetDeltas count from, found
     * from the first batch's base offset and its stored baseOffsetDelta.
     */
    public static long v1RecordsBaseOffset(long firstBatchBaseOffset, int storedBaseOffsetDelta) {
        return firstBatchBaseOffset - storedBaseOffsetDelta;
    }

    /**
     * Checks a whole response body (readable bytes of {@code body}, indexes untouched) against this
     * layout, without decoding: counts and lengths in range, records framed as whole batches (each 8
     * + batchLength bytes, the last ending exactly at the records end), v1 recordsBaseOffset -1
     * exactly when there are no records, no bytes left over. No allocation unless it throws.
     *
     * @return the number of partition entries
     * @throws ProtocolException INVALID_REQUEST naming the first violation and its body offset
     */
    public static int validate(ByteBuf body, short version) {
        if (!supports(version)) {
            throw new IllegalArgumentException("Fetch response version " + version + " has no layout");
        }
        int start = body.readerIndex();
        int end = body.writerIndex();
        int at = start;
        at = need(body, at, end, BODY_HEADER_BYTES, "sessionId and responses count", start);
        int topics = count(body, at - 4, "responses count", start);
        int partitions = 0;
        for (int t = 0; t < topics; t++) {
            at = need(body, at, end, 2, "topic length", start);
            int nameBytes = body.getShort(at - 2);
            if (nameBytes < 0) {
                throw invalid("topic length " + nameBytes, at - 2, start);
            }
            at = need(body, at, end, nameBytes + 4, "topic name and partitions count", start);
            int n = count(body, at - 4, "partitions count", start);
            for (int p = 0; p < n; p++, partitions++) {
                int entry = at;
                at = need(body, at, end, ABORTED_TRANSACTIONS_COUNT_OFFSET + 4, "partition entry", start);
                int aborted = count(body, at - 4, "abortedTransactions count", start);
                at = need(body, at, end, (long) aborted * ABORTED_TRANSACTION_BYTES, "abortedTransactions", start);
                long recordsBase = NO_RECORDS_BASE_OFFSET;
                if (version >= VERSION_1) {
                    at = need(body, at, end, RECORDS_BASE_OFFSET_BYTES, "recordsBaseOffset", start);
                    recordsBase = body.getLong(at - RECORDS_BASE_OFFSET_BYTES);
                }
                at = need(body, at, end, RECORDS_LENGTH_BYTES, "records length", start);
                int length = body.getInt(at - RECORDS_LENGTH_BYTES);
                if (length < (version >= VERSION_1 ? 0 : -1)) {
                    throw invalid("records length " + length, at - RECORDS_LENGTH_BYTES, start);
                }
                if (version >= VERSION_1 && (length == 0) != (recordsBase == NO_RECORDS_BASE_OFFSET)) {
                    throw invalid(
                            "recordsBaseOffset " + recordsBase + " with " + length + " records bytes", entry, start);
                }
                int records = at;
                at = need(body, at, end, Math.max(0, length), "records", start);
                checkWholeBatches(body, records, at, start);
            }
        }
        if (at != end) {
            throw invalid((end - at) + " bytes after the last field", at, start);
        }
        return partitions;
    }

    private static void checkWholeBatches(ByteBuf body, int from, int to, int start) {
        int at = from;
        while (at < to) {
            if (to - at < RecordBatchLayout.LOG_OVERHEAD) {
                throw invalid("a batch header cut at the records end", at, start);
            }
            int length = RecordBatchLayout.batchLength(body, at);
            if (length < 0 || (long) to - at - RecordBatchLayout.LOG_OVERHEAD < length) {
                throw invalid("batchLength " + length + " past the records end", at, start);
            }
            at += RecordBatchLayout.LOG_OVERHEAD + length;
        }
    }

    private static int need(ByteBuf body, int at, int end, long bytes, String what, int start) {
        if (end - at < bytes) {
            throw invalid(what + ": body ends early (need " + bytes + " bytes, have " + (end - at) + ")", at, start);
        }
        return at + (int) bytes;
    }

    private static int count(ByteBuf body, int index, String what, int start) {
        int n = body.getInt(index);
        if (n < 0) {
            throw invalid(what + " " + n, index, start);
        }
        return n;
    }

    private static ProtocolException invalid(String what, int index, int start) {
        return new ProtocolException(
                Errors.INVALID_REQUEST, "Fetch response: " + what + " at body offset " + (index - start));
    }
}
