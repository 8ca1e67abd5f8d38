package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readBool;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeBool;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * Metadata request v0 (apiKey 1, {@code docs/spec/wire-protocol.md} §6.2). An empty {@code topics}
 * list means all topics. The three bools are ignored by the broker in v0 but must be 0 or 1 on the
 * wire.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST for a null topic
 * or any strict decoding violation.
 */
public record MetadataRequest(
        List<String> topics,
        boolean includeClusterAuthorizedOperations,
        boolean includeTopicAuthorizedOperations,
        boolean allowAutoTopicCreation)
        implements ApiMessage {

    public MetadataRequest {
        topics = List.copyOf(topics);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, topics, "topic");
        writeBool(out, includeClusterAuthorizedOperations);
        writeBool(out, includeTopicAuthorizedOperations);
        writeBool(out, allowAutoTopicCreation);
    }

    public static MetadataRequest read(ByteBuf body) {
        List<String> topics = readStringArray(body, "topic");
        boolean cluster = readBool(body, "includeClusterAuthorizedOperations");
        boolean topic = readBool(body, "includeTopicAuthorizedOperations");
        boolean auto = readBool(body, "allowAutoTopicCreation");
        ensureFullyRead(body, "MetadataRequest");
        return new MetadataRequest(topics, cluster, topic, auto);
    }
}
