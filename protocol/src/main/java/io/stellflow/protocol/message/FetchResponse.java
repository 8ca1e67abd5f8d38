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
import java.util.List;

/**
 * Fetch response v0 ({@code docs/spec/wire-protocol.md} §6.4): one entry per request topic and
 * partition, in request order, never omitted. Offsets (highWatermark, logStartOffset,
 * lastStableOffset) are "next offset" bounds, -1 if unknown. The bytes are {@link
 * FetchResponseLayout}'s; this record is the reference codec (the clients decode with it, tests
 * encode with it); the broker writes its responses with {@link FetchResponseEncoder}, which {@code
 * FetchResponseEncoderTest} checks against this class.
 *
 * <p>Buffer ownership: {@link #write} copies the readable bytes of each {@code records} buffer without
 * consuming or releasing it, and writes a null {@code records} as length 0 (the broker always sends
 * non-null). On {@link #read}, {@code records} is a slice of the body buffer (no copy, no retain),
 * null only if the wire length is -1. Immutable record; {@link #read} throws ProtocolException
 * INVALID_REQUEST on any strict decoding violation.
 */
public record FetchResponse(int sessionId, List<FetchableTopicResponse> responses) implements ApiMessage {

    public FetchResponse {
        responses = List.copyOf(responses);
    }

    public record FetchableTopicResponse(String topic, List<PartitionData> partitions) {
        public FetchableTopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition's answer; {@code records} is a RecordBatchSet with baseOffsetDelta rewritten. */
    public record PartitionData(
            int partition,
            short errorCode,
            long highWatermark,
            long logStartOffset,
            long lastStableOffset,
            List<AbortedTransaction> abortedTransactions,
            ByteBuf records) {
        public PartitionData {
            abortedTransactions = List.copyOf(abortedTransactions);
        }
    }

    public record AbortedTransaction(long producerId, long firstOffset) {}

    @Override
    public void write(ByteBuf out) {
        out.writeInt(sessionId);
        writeArray(out, responses, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), FetchResponse::writePartition);
        });
    }

    private static void writePartition(ByteBuf p, PartitionData d) {
        writePartitionPrefix(p, d);
        ByteBuf records = d.records();
        if (records == null) {
            p.writeInt(0);
        } else {
            p.writeInt(records.readableBytes());
            p.writeBytes(records, records.readerIndex(), records.readableBytes());
        }
    }

    private static void writePartitionPrefix(ByteBuf p, PartitionData d) {
        p.writeInt(d.partition());
        p.writeShort(d.errorCode());
        p.writeLong(d.highWatermark());
        p.writeLong(d.logStartOffset());
        p.writeLong(d.lastStableOffset());
        writeArray(p, d.abortedTransactions(), (a, t) -> {
            a.writeLong(t.producerId());
            a.writeLong(t.firstOffset());
        });
    }

    public static FetchResponse read(ByteBuf body) {
        int sessionId = readInt32(body, "sessionId");
        List<FetchableTopicResponse> responses = readArray(
                body,
                "responses",
                b -> new FetchableTopicResponse(
                        readString(b, "topic"), readArray(b, "partitions", FetchResponse::readPartition)));
        ensureFullyRead(body, "FetchResponse");
        return new FetchResponse(sessionId, responses);
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
                readNullableBytes(p, "records"));
    }
}
