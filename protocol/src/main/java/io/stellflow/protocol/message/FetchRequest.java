package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readInt8;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.List;

/**
 * Fetch request v0 (apiKey 3, {@code docs/spec/wire-protocol.md} §6.4). replicaId -1 is a consumer,
 * >= 0 a follower. Byte limits (maxBytes, partitionMaxBytes) are soft caps in bytes; maxWaitMs is
 * the long-poll ceiling in ms.
 *
 * <p>Immutable, thread-safe. {@link #read} is strict and enforces the §6.4 ranges: replicaId >= -1,
 * maxWaitMs >= 0, minBytes >= 0, maxBytes > 0, isolationLevel 0 or 1, partitionMaxBytes > 0,
 * non-empty topic and partition arrays; violations throw ProtocolException INVALID_REQUEST.
 */
public record FetchRequest(
        int replicaId,
        int maxWaitMs,
        int minBytes,
        int maxBytes,
        byte isolationLevel,
        int sessionId,
        List<FetchTopic> topicPartitions)
        implements ApiMessage {

    /** replicaId of a consumer. */
    public static final int CONSUMER_REPLICA_ID = -1;
    /** isolationLevel read_uncommitted. */
    public static final byte READ_UNCOMMITTED = 0;
    /** isolationLevel read_committed. */
    public static final byte READ_COMMITTED = 1;

    public FetchRequest {
        topicPartitions = List.copyOf(topicPartitions);
    }

    public record FetchTopic(String topic, List<FetchPartition> partitions) {
        public FetchTopic {
            partitions = List.copyOf(partitions);
        }
    }

    /** currentLeaderEpoch -1 = do not check; logStartOffset -1 = unknown. */
    public record FetchPartition(
            int partition, int currentLeaderEpoch, long fetchOffset, long logStartOffset, int partitionMaxBytes) {}

    @Override
    public void write(ByteBuf out) {
        out.writeInt(replicaId);
        out.writeInt(maxWaitMs);
        out.writeInt(minBytes);
        out.writeInt(maxBytes);
        out.writeByte(isolationLevel);
        out.writeInt(sessionId);
        writeArray(out, topicPartitions, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, fp) -> {
                p.writeInt(fp.partition());
                p.writeInt(fp.currentLeaderEpoch());
                p.writeLong(fp.fetchOffset());
                p.writeLong(fp.logStartOffset());
                p.writeInt(fp.partitionMaxBytes());
            });
        });
    }

    public static FetchRequest read(ByteBuf body) {
        int replicaId = readInt32(body, "replicaId");
        int maxWaitMs = readInt32(body, "maxWaitMs");
        int minBytes = readInt32(body, "minBytes");
        int maxBytes = readInt32(body, "maxBytes");
        byte isolationLevel = readInt8(body, "isolationLevel");
        int sessionId = readInt32(body, "sessionId");
        List<FetchTopic> topics = readArray(
                body,
                "topicPartitions",
                b -> new FetchTopic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new FetchPartition(
                                        readInt32(p, "partition"),
                                        readInt32(p, "currentLeaderEpoch"),
                                        readInt64(p, "fetchOffset"),
                                        readInt64(p, "logStartOffset"),
                                        readInt32(p, "partitionMaxBytes")))));
        ensureFullyRead(body, "FetchRequest");
        check(replicaId >= -1, "replicaId", replicaId);
        check(maxWaitMs >= 0, "maxWaitMs", maxWaitMs);
        check(minBytes >= 0, "minBytes", minBytes);
        check(maxBytes > 0, "maxBytes", maxBytes);
        check(isolationLevel == READ_UNCOMMITTED || isolationLevel == READ_COMMITTED, "isolationLevel", isolationLevel);
        check(!topics.isEmpty(), "topicPartitions count", 0);
        for (FetchTopic t : topics) {
            check(!t.partitions().isEmpty(), "partitions count of " + t.topic(), 0);
            for (FetchPartition p : t.partitions()) {
                check(p.partitionMaxBytes() > 0, "partitionMaxBytes", p.partitionMaxBytes());
            }
        }
        return new FetchRequest(replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, topics);
    }

    private static void check(boolean ok, String field, long value) {
        if (!ok) {
            throw new ProtocolException(Errors.INVALID_REQUEST, field + " " + value + " out of range (spec 6.4)");
        }
    }
}
