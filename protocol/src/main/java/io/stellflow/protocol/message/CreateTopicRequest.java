package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt32Array;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeInt32Array;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * CreateTopic request v0 (apiKey 50, {@code docs/spec/wire-protocol.md} §6.14) and v1. Only topic
 * and partitionCount matter for CreateTopic v0; fields 3-7 are ignored (the Go SDK sends -1, -1, -1
 * and empty arrays). v1 (our Java admin client, advertised by brokers of a cluster) appends field
 * 8, {@code replicationFactor} (int16; -1 = the broker's {@code default.replication.factor}).
 * DeleteTopic (apiKey 51, §6.15) uses the same v0 layout with only {@code topic} read.
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
        List<Integer> isrNodes,
        short replicationFactor)
        implements ApiMessage {

    /** The version that carries {@link #replicationFactor}. */
    public static final short VERSION_WITH_REPLICATION_FACTOR = 1;

    /** {@link #replicationFactor} when the broker's default applies. */
    public static final short DEFAULT_REPLICATION_FACTOR = -1;

    public CreateTopicRequest {
        replicaNodes = List.copyOf(replicaNodes);
        isrNodes = List.copyOf(isrNodes);
    }

    /** A v0 request (replication factor: the broker's default). */
    public CreateTopicRequest(
            String topic,
            int partitionCount,
            int partition,
            int leaderId,
            int leaderEpoch,
            List<Integer> replicaNodes,
            List<Integer> isrNodes) {
        this(
                topic,
                partitionCount,
                partition,
                leaderId,
                leaderEpoch,
                replicaNodes,
                isrNodes,
                DEFAULT_REPLICATION_FACTOR);
    }

    /** A request with a replication factor (sent as v1). */
    public static CreateTopicRequest of(String topic, int partitionCount, short replicationFactor) {
        return new CreateTopicRequest(topic, partitionCount, -1, -1, -1, List.of(), List.of(), replicationFactor);
    }

    /** Writes the v0 fields, then {@code replicationFactor} when {@code version >= 1}. */
    public void write(ByteBuf out, short version) {
        write(out);
        if (version >= VERSION_WITH_REPLICATION_FACTOR) {
            out.writeShort(replicationFactor);
        }
    }

    /**
     * Reads a request of {@code version} (0 or 1).
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static CreateTopicRequest read(ByteBuf body, short version) {
        if (version < VERSION_WITH_REPLICATION_FACTOR) {
            return read(body);
        }
        CreateTopicRequest r = new CreateTopicRequest(
                readString(body, "topic"),
                readInt32(body, "partitionCount"),
                readInt32(body, "partition"),
                readInt32(body, "leaderId"),
                readInt32(body, "leaderEpoch"),
                readInt32Array(body, "replicaNodes"),
                readInt32Array(body, "isrNodes"),
                readInt16(body, "replicationFactor"));
        ensureFullyRead(body, "CreateTopicRequest");
        return r;
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
