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
 * CreateTopic response v0 (spec §6.14). topic must equal the requested name. On success one entry per
 * partition 0..partitionCount-1; on a topic-level error a single entry {@code {-1, errorCode, -1}}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record CreateTopicResponse(String topic, List<CreateTopicPartition> partitions) implements ApiMessage {

    public CreateTopicResponse {
        partitions = List.copyOf(partitions);
    }

    /** partition -1 marks a topic-level error entry; leaderEpoch -1 on error. */
    public record CreateTopicPartition(int partition, short errorCode, int leaderEpoch) {}

    @Override
    public void write(ByteBuf out) {
        writeString(out, topic, "topic");
        writeArray(out, partitions, (b, p) -> {
            b.writeInt(p.partition());
            b.writeShort(p.errorCode());
            b.writeInt(p.leaderEpoch());
        });
    }

    public static CreateTopicResponse read(ByteBuf body) {
        String topic = readString(body, "topic");
        List<CreateTopicPartition> partitions = readArray(
                body,
                "partitions",
                b -> new CreateTopicPartition(
                        readInt32(b, "partition"), readInt16(b, "errorCode"), readInt32(b, "leaderEpoch")));
        ensureFullyRead(body, "CreateTopicResponse");
        return new CreateTopicResponse(topic, partitions);
    }
}
