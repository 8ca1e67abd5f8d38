package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readBool;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt32Array;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeBool;
import static io.stellflow.protocol.WireWriter.writeInt32Array;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * Metadata response v0 ({@code docs/spec/wire-protocol.md} §6.2): cluster id, controller id (-1 if
 * not among {@code brokers}), live brokers and per-topic partition metadata.
 *
 * <p>Immutable, thread-safe. {@link #write} throws IllegalArgumentException for a null {@code host}
 * or {@code topic} (fields typed string). {@link #read} throws ProtocolException INVALID_REQUEST on
 * any strict decoding violation.
 */
public record MetadataResponse(
        String clusterId,
        int controllerId,
        List<Broker> brokers,
        List<TopicMetadata> topics,
        int clusterAuthorizedOperations)
        implements ApiMessage {

    public MetadataResponse {
        brokers = List.copyOf(brokers);
        topics = List.copyOf(topics);
    }

    /** A live broker: advertised host (never null) and data-plane port; rack null if unknown. */
    public record Broker(int brokerId, String host, int port, String rack) {}

    /** One topic; partitions in ascending partition id. */
    public record TopicMetadata(
            short errorCode,
            String topic,
            boolean isInternal,
            List<PartitionMetadata> partitions,
            int topicAuthorizedOperations) {
        public TopicMetadata {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition: leaderId -1 when there is no leader; the node lists are broker ids. */
    public record PartitionMetadata(
            short errorCode,
            int partition,
            int leaderId,
            int leaderEpoch,
            List<Integer> replicaNodes,
            List<Integer> isrNodes,
            List<Integer> offlineReplicaNodes) {
        public PartitionMetadata {
            replicaNodes = List.copyOf(replicaNodes);
            isrNodes = List.copyOf(isrNodes);
            offlineReplicaNodes = List.copyOf(offlineReplicaNodes);
        }
    }

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, clusterId);
        out.writeInt(controllerId);
        writeArray(out, brokers, (b, broker) -> {
            b.writeInt(broker.brokerId());
            writeString(b, broker.host(), "host");
            b.writeInt(broker.port());
            writeNullableString(b, broker.rack());
        });
        writeArray(out, topics, MetadataResponse::writeTopic);
        out.writeInt(clusterAuthorizedOperations);
    }

    private static void writeTopic(ByteBuf b, TopicMetadata t) {
        b.writeShort(t.errorCode());
        writeString(b, t.topic(), "topic");
        writeBool(b, t.isInternal());
        writeArray(b, t.partitions(), (p, pm) -> {
            p.writeShort(pm.errorCode());
            p.writeInt(pm.partition());
            p.writeInt(pm.leaderId());
            p.writeInt(pm.leaderEpoch());
            writeInt32Array(p, pm.replicaNodes());
            writeInt32Array(p, pm.isrNodes());
            writeInt32Array(p, pm.offlineReplicaNodes());
        });
        b.writeInt(t.topicAuthorizedOperations());
    }

    public static MetadataResponse read(ByteBuf body) {
        String clusterId = readNullableString(body, "clusterId");
        int controllerId = readInt32(body, "controllerId");
        List<Broker> brokers = readArray(
                body,
                "brokers",
                b -> new Broker(
                        readInt32(b, "brokerId"),
                        readString(b, "host"),
                        readInt32(b, "port"),
                        readNullableString(b, "rack")));
        List<TopicMetadata> topics = readArray(body, "topics", MetadataResponse::readTopic);
        int clusterOps = readInt32(body, "clusterAuthorizedOperations");
        ensureFullyRead(body, "MetadataResponse");
        return new MetadataResponse(clusterId, controllerId, brokers, topics, clusterOps);
    }

    private static TopicMetadata readTopic(ByteBuf b) {
        short errorCode = readInt16(b, "errorCode");
        String topic = readString(b, "topic");
        boolean internal = readBool(b, "isInternal");
        List<PartitionMetadata> partitions = readArray(
                b,
                "partitions",
                p -> new PartitionMetadata(
                        readInt16(p, "errorCode"),
                        readInt32(p, "partition"),
                        readInt32(p, "leaderId"),
                        readInt32(p, "leaderEpoch"),
                        readInt32Array(p, "replicaNodes"),
                        readInt32Array(p, "isrNodes"),
                        readInt32Array(p, "offlineReplicaNodes")));
        int ops = readInt32(b, "topicAuthorizedOperations");
        return new TopicMetadata(errorCode, topic, internal, partitions, ops);
    }
}
