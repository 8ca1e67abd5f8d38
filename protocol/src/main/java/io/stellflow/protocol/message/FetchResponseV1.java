package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableBytes;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import java.util.List;

/**
 * Fetch response v1 body: Stellflow's own Fetch version for its client (and later followers),
 * advertised as Fetch [0, 1] in ApiVersions; the request is byte-identical to v0 with header
 * apiVersion 1. Same as the v0 response ({@code docs/spec/wire-protocol.md} §6.4) except that each
 * partition carries {@code recordsBaseOffset} (int64) just before {@code records}: the records are
 * stored batches sent untouched (the broker sends a partition's data as ONE file region instead of
 * patching every batch's bytes 0-3), and a record's offset is {@code recordsBaseOffset +
 * baseOffsetDelta + offsetDelta}.
 *
 * <pre>
 * sessionId               int32   always 0
 * responses               int32   count, then per topic (request order):
 *   topic                 string  int16 length + UTF-8
 *   partitions            int32   count, then per partition (request order):
 *     partition           int32
 *     errorCode           int16
 *     highWatermark       int64   -1 if unknown
 *     logStartOffset      int64   -1 if unknown
 *     lastStableOffset    int64   -1 if unknown
 *     abortedTransactions int32   count, then producerId int64, firstOffset int64 each
 *     recordsBaseOffset   int64   what stored baseOffsetDeltas count from; -1 without records
 *     records             int32 length (&gt;= 0) + whole stored RecordBatches of one segment
 * </pre>
 *
 * <p>Worked example: a segment with base offset 0 holds batches [0-2] [3-6] [7]; a Fetch v1 at
 * offset 5 returns recordsBaseOffset 0 and the batches [3-6] [7] with their stored
 * baseOffsetDelta 3 and 7; the record with offsetDelta 2 in the first batch is at 0 + 3 + 2 = 5
 * (the client skips offsets 3 and 4, below its position). The byte layout, offsets and sizes are
 * {@link FetchResponseLayout}'s; the broker writes it with {@link FetchResponseEncoder} (zero-copy
 * and copy mode alike); this class is the reference codec ({@link #write} copies the records, for
 * tests; the client and the replica fetcher decode with {@link #read}).
 *
 * <p>Buffer ownership and errors as {@link FetchResponse}: {@link #write} copies the readable bytes
 * of {@code records} without consuming or releasing them (null is written as length 0); on {@link
 * #read}, {@code records} is a slice of the body (no copy, no retain). Immutable record; {@link
 * #read} throws {@link io.stellflow.protocol.ProtocolException} on any strict decoding violation.
 *
 * @param sessionId always 0
 * @param responses per topic, in request order
 */
public record FetchResponseV1(int sessionId, List<Topic> responses) implements ApiMessage {
    /** The apiVersion of this layout ({@link FetchResponseLayout#VERSION_1}). */
    public static final short VERSION = 1;

    public FetchResponseV1 {
        responses = List.copyOf(responses);
    }

    /**
     * @param topic the topic name
     * @param partitions per partition, in request order
     */
    public record Topic(String topic, List<PartitionData> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * @param recordsBaseOffset the offset stored baseOffsetDeltas count from; -1 without records
     * @param records whole stored batches (length 0 when none)
     */
    public record PartitionData(
            int partition,
            short errorCode,
            long highWatermark,
            long logStartOffset,
            long lastStableOffset,
            List<AbortedTransaction> abortedTransactions,
            long recordsBaseOffset,
            ByteBuf records) {
        public PartitionData {
            abortedTransactions = List.copyOf(abortedTransactions);
        }
    }

    @Override
    public void write(ByteBuf out) {
        out.writeInt(sessionId);
        writeArray(out, responses, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), FetchResponseV1::writePartition);
        });
    }

    private static void writePartition(ByteBuf p, PartitionData d) {
        p.writeInt(d.partition());
        p.writeShort(d.errorCode());
        p.writeLong(d.highWatermark());
        p.writeLong(d.logStartOffset());
        p.writeLong(d.lastStableOffset());
        writeArray(p, d.abortedTransactions(), (a, t) -> {
            a.writeLong(t.producerId());
            a.writeLong(t.firstOffset());
        });
        p.writeLong(d.recordsBaseOffset());
        ByteBuf records = d.records();
        if (records == null) {
            p.writeInt(0);
        } else {
            p.writeInt(records.readableBytes());
            p.writeBytes(records, records.readerIndex(), records.readableBytes());
        }
    }

    /**
     * Strict decode of a whole body.
     *
     * @throws io.stellflow.protocol.ProtocolException when the body is malformed or has bytes left
     */
    public static FetchResponseV1 read(ByteBuf body) {
        int sessionId = readInt32(body, "sessionId");
        List<Topic> responses = readArray(
                body,
                "responses",
                b -> new Topic(readString(b, "topic"), readArray(b, "partitions", FetchResponseV1::readPartition)));
        ensureFullyRead(body, "FetchResponse v1");
        return new FetchResponseV1(sessionId, responses);
    }

    private static PartitionData readPartition(ByteBuf p) {
        return new PartitionData(
                readInt32(p, "partition"),
                readInt16(p, "errorCode"),
                readInt64(p, "highWatermark"),
                readInt64(p, "logStartOffset"),
                readInt64(p, "lastStableOffset"),
                readArray(
                        p,
                        "abortedTransactions",
                        a -> new AbortedTransaction(readInt64(a, "producerId"), readInt64(a, "firstOffset"))),
                readInt64(p, "recordsBaseOffset"),
                readNullableBytes(p, "records"));
    }
}
