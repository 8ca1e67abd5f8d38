package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt32Array;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeInt32Array;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * CreateTopic request v0 (apiKey 50, spec §6.14). Only topic and partitionCount matter for
 * CreateTopic; fields 3-7 are ignored (the Go SDK sends -1, -1, -1 and empty arrays).
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation; partitionCount <= 0 is a body-level error left to the broker.
 */
public record CreateTopicRequest(
        String topic,
        int partitionCount,
        int partition,
        int leaderId,
        int leaderEpoch,
        List<Integer> replicaNodes,
        List<Integer> isrNodes)
        implements ApiMessage {

    public CreateTopicRequest {
        replicaNodes = List.copyOf(replicaNodes);
        isrNodes = List.copyOf(isrNodes);
    }

    /** A request as the Go SDK sends it: fields 3-7 set to -1 and empty. */
    public static CreateTopicRequest of(String topic, int partitionCount) {
        return new CreateTopicRequest(topic, partitionCount, -1, -1, -1, List.of(), List.of());
    }

    @Override
    public void write(ByteBuf out) {
        writeString(out, topic, "topic");
        out.writeInt(partitionCount);
        out.writeInt(partition);
        out.writeInt(leaderId);
        out.writeInt(leaderEpoch);
        writeInt32Array(out, replicaNodes);
        writeInt32Array(out, isrNodes);
    }

    public static CreateTopicRequest read(ByteBuf body) {
        CreateTopicRequest r = new CreateTopicRequest(
                readString(body, "topic"),
                readInt32(body, "partitionCount"),
                readInt32(body, "partition"),
                readInt32(body, "leaderId"),
                readInt32(body, "leaderEpoch"),
                readInt32Array(body, "replicaNodes"),
                readInt32Array(body, "isrNodes"));
        ensureFullyRead(body, "CreateTopicRequest");
        return r;
    }
}
