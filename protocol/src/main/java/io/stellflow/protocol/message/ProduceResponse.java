package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * Produce response v0 ({@code docs/spec/wire-protocol.md} §6.3): one entry per request topic and
 * partition, in request order. baseOffset is the offset of the first record written (-1 on error);
 * logAppendTimeMs is always -1 in v0.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record ProduceResponse(List<TopicResponse> responses) implements ApiMessage {

    public ProduceResponse {
        responses = List.copyOf(responses);
    }

    public record TopicResponse(String topic, List<PartitionResponse> partitions) {
        public TopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    public record PartitionResponse(
            int partition,
            short errorCode,
            long baseOffset,
            int currentLeaderEpoch,
            long logAppendTimeMs,
            long logStartOffset) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, responses, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeShort(r.errorCode());
                p.writeLong(r.baseOffset());
                p.writeInt(r.currentLeaderEpoch());
                p.writeLong(r.logAppendTimeMs());
                p.writeLong(r.logStartOffset());
            });
        });
    }

    public static ProduceResponse read(ByteBuf body) {
        List<TopicResponse> responses = readArray(
                body,
                "responses",
                b -> new TopicResponse(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new PartitionResponse(
                                        readInt32(p, "partition"),
                                        readInt16(p, "errorCode"),
                                        readInt64(p, "baseOffset"),
                                        readInt32(p, "currentLeaderEpoch"),
                                        readInt64(p, "logAppendTimeMs"),
                                        readInt64(p, "logStartOffset")))));
        ensureFullyRead(body, "ProduceResponse");
        return new ProduceResponse(responses);
    }
}
