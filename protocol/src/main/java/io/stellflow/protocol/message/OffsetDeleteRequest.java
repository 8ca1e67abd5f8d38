package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * OffsetDelete request v0 (apiKey 24, {@code docs/protocol-additions.md}): removes a group's
 * committed offsets of some partitions.
 *
 * <pre>
 * groupId string | topics TopicPartitions[] (topic string, partitions int32[])
 * </pre>
 *
 * Worked example (group "g", "t" partition 1): {@code 0001 67 00000001 0001 74 00000001 00000001}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record OffsetDeleteRequest(String groupId, List<TopicPartitions> topics) implements ApiMessage {

    public OffsetDeleteRequest {
        topics = List.copyOf(topics);
    }

    @Override
    public void write(ByteBuf out) {
        writeString(out, groupId, "groupId");
        TopicPartitions.writeList(out, topics);
    }

    public static OffsetDeleteRequest read(ByteBuf body) {
        OffsetDeleteRequest r =
                new OffsetDeleteRequest(readString(body, "groupId"), TopicPartitions.readList(body, "topics"));
        ensureFullyRead(body, "OffsetDeleteRequest");
        return r;
    }
}
