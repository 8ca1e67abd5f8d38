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
 * OffsetDelete response v0 (apiKey 24, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | topics[]: topic string, partitions[]: partition int32, errorCode int16
 * </pre>
 *
 * Worked example ("t" partition 1 is assigned to a member): {@code 0000 00000001 0001 74 00000001
 * 00000001 0030}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 *
 * @param errorCode the group-level code (GROUP_ID_NOT_FOUND, NOT_COORDINATOR, ...); topics empty then
 * @param topics one entry per request topic and partition, in request order
 */
public record OffsetDeleteResponse(short errorCode, List<OffsetDeleteTopicResponse> topics) implements ApiMessage {

    public OffsetDeleteResponse {
        topics = List.copyOf(topics);
    }

    /** One topic's results. */
    public record OffsetDeleteTopicResponse(String topic, List<OffsetDeletePartitionResponse> partitions) {
        public OffsetDeleteTopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * One partition's result.
     *
     * @param errorCode 0, or GROUP_SUBSCRIBED_TO_TOPIC for a partition a member is assigned
     */
    public record OffsetDeletePartitionResponse(int partition, short errorCode) {}

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeShort(r.errorCode());
            });
        });
    }

    public static OffsetDeleteResponse read(ByteBuf body) {
        short errorCode = readInt16(body, "errorCode");
        List<OffsetDeleteTopicResponse> topics = readArray(
                body,
                "topics",
                b -> new OffsetDeleteTopicResponse(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new OffsetDeletePartitionResponse(
                                        readInt32(p, "partition"), readInt16(p, "errorCode")))));
        ensureFullyRead(body, "OffsetDeleteResponse");
        return new OffsetDeleteResponse(errorCode, topics);
    }
}
