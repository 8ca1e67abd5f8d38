package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * OffsetCommit response v0 and v1 (apiKey 5, {@code docs/spec/wire-protocol.md} §6.6; v1 has the
 * same layout and may carry the group codes from 42, {@code docs/protocol-additions.md}): one entry
 * per request topic and partition, in request order.
 *
 * <pre>
 * topics[]: topic string, partitions[]: partition int32, errorCode int16
 * </pre>
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record OffsetCommitResponse(List<OffsetCommitTopicResponse> topics) implements ApiMessage {

    public OffsetCommitResponse {
        topics = List.copyOf(topics);
    }

    /** One topic's results. */
    public record OffsetCommitTopicResponse(String topic, List<OffsetCommitPartitionResponse> partitions) {
        public OffsetCommitTopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition's result. */
    public record OffsetCommitPartitionResponse(int partition, short errorCode) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeShort(r.errorCode());
            });
        });
    }

    public static OffsetCommitResponse read(ByteBuf body) {
        List<OffsetCommitTopicResponse> topics = readArray(
                body,
                "topics",
                b -> new OffsetCommitTopicResponse(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new OffsetCommitPartitionResponse(
                                        readInt32(p, "partition"), readInt16(p, "errorCode")))));
        ensureFullyRead(body, "OffsetCommitResponse");
        return new OffsetCommitResponse(topics);
    }
}
