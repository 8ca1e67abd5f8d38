package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.List;

/**
 * OffsetForLeaderEpoch request v0 (apiKey 100, Stellflow's replication range, {@code
 * docs/protocol-additions.md}): a follower asks the partition leader where a leader epoch ends in the
 * leader's log, before it truncates its own log and fetches (Kafka's KIP-101/KIP-279 idea).
 *
 * <p>Layout (big-endian, after the v2 request header):
 *
 * <pre>
 * replicaId                int32   the asking follower's broker id (&gt;= 0); -1 = a tool, not a replica
 * topics                   int32   count (&gt;= 1), then per topic:
 *   topic                  string  int16 length + UTF-8
 *   partitions             int32   count (&gt;= 1), then per partition:
 *     partition            int32
 *     currentLeaderEpoch   int32   the leader epoch the follower believes current; -1 = do not check
 *     leaderEpoch          int32   the epoch whose end offset is asked (the follower's latest epoch)
 * </pre>
 *
 * <p>Worked example (golden test {@code OffsetForLeaderEpochTest}): broker 2 asks for topic
 * "orders" partition 0, current epoch 5, where epoch 3 ends; body of 32 bytes:
 *
 * <pre>
 * 00000002                       replicaId 2
 * 00000001 0006 6f7264657273     1 topic, "orders"
 * 00000001 00000000              1 partition, partition 0
 * 00000005 00000003              currentLeaderEpoch 5, leaderEpoch 3
 * </pre>
 *
 * <p>Immutable, thread-safe. {@link #read} is strict: a replicaId below -1 or an empty topic or
 * partition array throws {@link ProtocolException} INVALID_REQUEST (header-only answer), as do the
 * {@code docs/spec/wire-protocol.md} §2 decoding violations.
 *
 * @param replicaId the asking broker's id, or -1
 * @param topics per topic, its partitions
 */
public record OffsetForLeaderEpochRequest(int replicaId, List<Topic> topics) implements ApiMessage {
    /** The only version. */
    public static final short VERSION = 0;

    /** currentLeaderEpoch that skips the epoch check. */
    public static final int NO_EPOCH_CHECK = -1;

    public OffsetForLeaderEpochRequest {
        topics = List.copyOf(topics);
    }

    /**
     * @param topic topic name
     * @param partitions its partitions
     */
    public record Topic(String topic, List<PartitionEpoch> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * @param partition partition id
     * @param currentLeaderEpoch the epoch the asker believes current, or {@link #NO_EPOCH_CHECK}
     * @param leaderEpoch the epoch whose end offset is asked
     */
    public record PartitionEpoch(int partition, int currentLeaderEpoch, int leaderEpoch) {}

    @Override
    public void write(ByteBuf out) {
        out.writeInt(replicaId);
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, e) -> {
                p.writeInt(e.partition());
                p.writeInt(e.currentLeaderEpoch());
                p.writeInt(e.leaderEpoch());
            });
        });
    }

    /**
     * Strict decode of a whole body.
     *
     * @throws ProtocolException INVALID_REQUEST when malformed, with bytes left, a replicaId below -1 or
     *     an empty array
     */
    public static OffsetForLeaderEpochRequest read(ByteBuf body) {
        int replicaId = readInt32(body, "replicaId");
        List<Topic> topics = readArray(
                body,
                "topics",
                b -> new Topic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new PartitionEpoch(
                                        readInt32(p, "partition"),
                                        readInt32(p, "currentLeaderEpoch"),
                                        readInt32(p, "leaderEpoch")))));
        ensureFullyRead(body, "OffsetForLeaderEpochRequest");
        if (replicaId < -1) {
            throw new ProtocolException(Errors.INVALID_REQUEST, "replicaId " + replicaId + " < -1");
        }
        if (topics.isEmpty()) {
            throw new ProtocolException(Errors.INVALID_REQUEST, "no topics");
        }
        for (Topic t : topics) {
            if (t.partitions().isEmpty()) {
                throw new ProtocolException(Errors.INVALID_REQUEST, "no partitions for topic " + t.topic());
            }
        }
        return new OffsetForLeaderEpochRequest(replicaId, topics);
    }
}
