package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;

/**
 * Fetch v1 (apiKey 3, apiVersion 1): Stellflow's own version for its client (and later followers),
 * advertised as Fetch [0, 1] in ApiVersions. v0 stays byte-exact (spec §6.4) for the public SDKs.
 *
 * <p><b>Why.</b> v0 forces the broker to rewrite bytes 0-3 of every batch to {@code batchBaseOffset
 * - fetchOffset}, so each batch costs a 4-byte patch plus a separate file region. v1 sends a
 * partition's stored batches untouched, as ONE file range, and instead tells the client which
 * absolute offset the stored relative offsets count from.
 *
 * <p><b>Request v1</b>: byte-identical to the v0 request body (spec §6.4), with header apiVersion 1.
 *
 * <p><b>Response v1</b> (big-endian, after the 12-byte response header; differences from v0 marked *):
 *
 * <pre>
 * sessionId               int32   always 0
 * responses               int32   count, then per topic (request order):
 *   topic                 string  int16 length + UTF-8, byte-identical to the request
 *   partitions            int32   count, then per partition (request order):
 *     partition           int32
 *     errorCode           int16
 *     highWatermark       int64   -1 if unknown
 *     logStartOffset      int64   -1 if unknown
 *     lastStableOffset    int64   -1 if unknown
 *     abortedTransactions int32   count (0 at isolationLevel 0), entries of producerId int64, firstOffset int64
 *   * recordsBaseOffset   int64   absolute offset the batches' baseOffsetDelta count from; -1 when
 *                                 records is empty
 *     records             int32 length (&gt;= 0, never -1) + bytes: whole stored RecordBatches, all from
 *                                 ONE log segment, contiguous, bytes exactly as stored: bytes 0-3 =
 *                                 batchBaseOffset - recordsBaseOffset (the segment's base offset),
 *                                 bytes 8-11 = the leader epoch stamped at append, CRC unchanged
 * </pre>
 *
 * <p>A record's absolute offset is {@code recordsBaseOffset + baseOffsetDelta + offsetDelta}. As in
 * v0 the first batch may start before {@code fetchOffset} (the client skips those records). A
 * partition returns fewer bytes than v0 would when its data continues in the next segment (the rest
 * comes with the next Fetch). Limits, errors and long-poll are as in v0.
 *
 * <p>Worked example: segment base 0 holds batches [0-2] [3-6] [7]; Fetch v1 at fetchOffset 5 returns
 * recordsBaseOffset 0 and the batches [3-6] [7] with stored baseOffsetDelta 3 and 7 (v0 would send
 * -2 and 2 with the same offsets resulting); the record with offsetDelta 2 in the first batch is at
 * 0 + 3 + 2 = 5. Partition entry size: 4 + 2 + 8 + 8 + 8 + 4 + {@value #RECORDS_BASE_OFFSET_SIZE} + 4
 * = {@value #PARTITION_ENVELOPE_BYTES} bytes plus records.
 *
 * <p>The reference codec (read and write, golden-tested) is {@link
 * io.stellflow.protocol.message.FetchResponseV1}; the client decodes with it.
 */
public final class FetchV1Layout {
    /** The apiVersion of this layout. */
    public static final short VERSION = 1;

    /** Size of the recordsBaseOffset field. */
    public static final int RECORDS_BASE_OFFSET_SIZE = 8;

    /** Partition entry bytes before the records bytes. */
    public static final int PARTITION_ENVELOPE_BYTES = 4 + 2 + 8 + 8 + 8 + 4 + RECORDS_BASE_OFFSET_SIZE + 4;

    /** recordsBaseOffset when a partition returns no records. */
    public static final long NO_RECORDS_BASE_OFFSET = -1L;

    private FetchV1Layout() {}

    /**
     * Writes a partition entry up to and including an empty records length (recordsBaseOffset -1, no
     * aborted transactions); returns the index of the records length field.
     */
    public static int writePartitionHeader(
            ByteBuf out, int partition, short errorCode, long highWatermark, long logStartOffset, long lastStable) {
        out.writeInt(partition);
        out.writeShort(errorCode);
        out.writeLong(highWatermark);
        out.writeLong(logStartOffset);
        out.writeLong(lastStable);
        out.writeInt(0);
        out.writeLong(NO_RECORDS_BASE_OFFSET);
        int lengthIndex = out.writerIndex();
        out.writeInt(0);
        return lengthIndex;
    }
}
