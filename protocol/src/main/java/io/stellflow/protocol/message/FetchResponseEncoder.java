package io.stellflow.protocol.message;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.WireWriter;
import io.stellflow.protocol.record.RecordBatchLayout;

/**
 * Flyweight writer of a Fetch response body ({@link FetchResponseLayout}, v0 and v1) into a
 * caller-provided {@link ByteBuf}: every field that is not log data. What the log data becomes is
 * the caller's choice: a zero-copy sender keeps only these fields (and the v0 batch prefixes) in a
 * small head buffer and sends the batches as file regions beside it, a copy sender reads the
 * batches into the same buffer between the calls. Both get the same bytes on the wire.
 *
 * <p>Call order for one body: {@link #wrap}, then per topic {@link #topic}, per partition {@link
 * #partition} (written with empty records: length 0, v1 recordsBaseOffset -1), then, for a partition
 * that returns batches, the records (v0 zero-copy: {@link #v0BatchPrefix} before each batch's
 * region; v0 copy: the batch bytes, then {@link #v0RewriteBatchPrefix}; v1: the stored bytes or one
 * region, then {@link #v1RecordsBaseOffset}) and {@link #recordsLength}. {@link #failPartition} turns
 * the current partition back into an error entry with no records after the caller dropped what it had
 * added from {@link #recordsStart}. The topic and partition counts are the caller's promise: it
 * writes exactly that many entries (the request's, in request order, {@code
 * docs/spec/wire-protocol.md} §6.4).
 *
 * <p>No allocation, boxing or lambdas in any call (the encoder holds the buffer, the version and the
 * current entry's index), so one instance per evaluation serves every partition and batch. It never
 * moves the buffer's readerIndex, never releases it, and checks no limits (the caller bounds the
 * response); writes grow the buffer like any {@code writeXxx}.
 *
 * <p>Thread-safety: not thread-safe; confined to the thread building the response.
 */
public final class FetchResponseEncoder {
    private ByteBuf out;
    private short version;
    private int entryStart = -1;
    /** Bytes of the current partition entry's abortedTransactions entries (16 per entry). */
    private int abortedBytes;

    /**
     * Starts a body at {@code out}'s writerIndex: sessionId 0 and the topic count.
     *
     * @param version the request's apiVersion, 0, 1 or 2 (a v2 response is written as v1, its layout)
     * @throws IllegalArgumentException for a version without a layout
     */
    public FetchResponseEncoder wrap(ByteBuf out, short version, int topicCount) {
        if (!FetchResponseLayout.supports(version)) {
            throw new IllegalArgumentException("Fetch response version " + version + " has no layout");
        }
        this.out = out;
        this.version = version > FetchResponseLayout.VERSION_1 ? FetchResponseLayout.VERSION_1 : version;
        this.entryStart = -1;
        out.writeInt(FetchResponseLayout.SESSION_ID);
        out.writeInt(topicCount);
        return this;
    }

    /** The layout version being written (0 or 1; a v2 request is answered in v1's layout). */
    public short version() {
        return version;
    }

    /** Starts a topic entry: its name exactly as requested and how many partition entries follow. */
    public void topic(String topic, int partitionCount) {
        WireWriter.writeString(out, topic, "topic");
        out.writeInt(partitionCount);
    }

    /**
     * Writes a partition entry with no aborted transactions and empty records (v1: recordsBaseOffset
     * -1); it becomes the current entry. Offsets are "next offset" bounds, -1 if unknown.
     */
    public void partition(
            int partition, short errorCode, long highWatermark, long logStartOffset, long lastStableOffset) {
        entryStart = out.writerIndex();
        abortedBytes = 0;
        out.writeInt(partition);
        out.writeShort(errorCode);
        out.writeLong(highWatermark);
        out.writeLong(logStartOffset);
        out.writeLong(lastStableOffset);
        out.writeInt(0); // abortedTransactions: none unless abortedTransactions() follows
        writeEmptyRecords();
    }

    private void writeEmptyRecords() {
        if (version >= FetchResponseLayout.VERSION_1) {
            out.writeLong(FetchResponseLayout.NO_RECORDS_BASE_OFFSET);
        }
        out.writeInt(0);
    }

    /**
     * Sets the current partition's abortedTransactions ({@code docs/spec/wire-protocol.md} §6.4,
     * isolationLevel 1): {@code count} pairs (producerId, firstOffset) from {@code
     * producerIdAndFirstOffset[2i]}, {@code [2i + 1]}. Call right after {@link #partition}, before
     * any records; the fields after the array move by 16 bytes per entry.
     *
     * @throws IllegalStateException if records were added to the entry already
     */
    public void abortedTransactions(long[] producerIdAndFirstOffset, int count) {
        int entry = current();
        if (out.writerIndex() != recordsStart() || abortedBytes != 0) {
            throw new IllegalStateException("aborted transactions after the records of partition entry " + entry);
        }
        out.writerIndex(entry + FetchResponseLayout.ABORTED_TRANSACTIONS_COUNT_OFFSET);
        out.writeInt(count);
        for (int i = 0; i < count; i++) {
            out.writeLong(producerIdAndFirstOffset[2 * i]);
            out.writeLong(producerIdAndFirstOffset[2 * i + 1]);
        }
        abortedBytes = count * FetchResponseLayout.ABORTED_TRANSACTION_BYTES;
        writeEmptyRecords();
    }

    /** Buffer index where the current partition's records start (the end of its entry's fields). */
    public int recordsStart() {
        return current() + abortedBytes + FetchResponseLayout.partitionEnvelopeBytes(version);
    }

    /**
     * v0, zero-copy: writes a batch's rewritten bytes 0-3 ({@link FetchResponseLayout#v0BaseOffsetDelta})
     * at the writerIndex; the caller sends the batch from its byte {@value
     * FetchResponseLayout#V0_BATCH_PREFIX_BYTES} on right after.
     */
    public void v0BatchPrefix(long batchBaseOffset, long fetchOffset) {
        requireVersion(FetchResponseLayout.VERSION_0);
        out.writeInt(FetchResponseLayout.v0BaseOffsetDelta(batchBaseOffset, fetchOffset));
    }

    /** v0, copy: rewrites bytes 0-3 of a whole batch the caller copied into the buffer at {@code batchStart}. */
    public void v0RewriteBatchPrefix(int batchStart, long batchBaseOffset, long fetchOffset) {
        requireVersion(FetchResponseLayout.VERSION_0);
        RecordBatchLayout.setBaseOffsetDelta(
                out, batchStart, FetchResponseLayout.v0BaseOffsetDelta(batchBaseOffset, fetchOffset));
    }

    /**
     * v1: sets the current partition's recordsBaseOffset, the offset its stored batches'
     * baseOffsetDeltas count from ({@link FetchResponseLayout#v1RecordsBaseOffset}).
     */
    public void v1RecordsBaseOffset(long recordsBaseOffset) {
        requireVersion(FetchResponseLayout.VERSION_1);
        out.setLong(current() + abortedBytes + FetchResponseLayout.V1_RECORDS_BASE_OFFSET_OFFSET, recordsBaseOffset);
    }

    /** Sets the current partition's records length: the bytes of its batches, in the buffer or beside it. */
    public void recordsLength(int recordsBytes) {
        out.setInt(current() + abortedBytes + FetchResponseLayout.recordsLengthOffset(version), recordsBytes);
    }

    /**
     * Makes the current partition an error entry without records: {@code errorCode}, records length 0,
     * v1 recordsBaseOffset -1 (the offsets stay). The caller first drops what it added after {@link
     * #recordsStart} (the buffer's writerIndex must be back there).
     *
     * @throws IllegalStateException if the writerIndex is not at {@link #recordsStart}
     */
    public void failPartition(short errorCode) {
        int entry = current();
        if (out.writerIndex() != recordsStart()) {
            throw new IllegalStateException(
                    "writerIndex " + out.writerIndex() + " is not at the records start " + recordsStart());
        }
        out.setShort(entry + FetchResponseLayout.ERROR_CODE_OFFSET, errorCode);
        if (version >= FetchResponseLayout.VERSION_1) {
            out.setLong(
                    entry + abortedBytes + FetchResponseLayout.V1_RECORDS_BASE_OFFSET_OFFSET,
                    FetchResponseLayout.NO_RECORDS_BASE_OFFSET);
        }
        out.setInt(entry + abortedBytes + FetchResponseLayout.recordsLengthOffset(version), 0);
    }

    private int current() {
        if (entryStart < 0) {
            throw new IllegalStateException("no partition entry written yet");
        }
        return entryStart;
    }

    private void requireVersion(short expected) {
        if (version != expected) {
            throw new IllegalStateException(
                    "a Fetch v" + version + " response has no such field (v" + expected + " only)");
        }
    }
}
