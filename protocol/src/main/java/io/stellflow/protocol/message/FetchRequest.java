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
 * Fetch request v0 (apiKey 3, {@code docs/spec/wire-protocol.md} §6.4), v1 (same body; the response
 * is {@link FetchResponseV1}) and v2 (ours, {@code docs/protocol-additions.md}: a follower also
 * sends its broker epoch, so that its leader can tell a restarted follower from the process it
 * last heard). replicaId -1 is a consumer, >= 0 a follower. Byte limits (maxBytes,
 * partitionMaxBytes) are soft caps in bytes; maxWaitMs is the long-poll ceiling in ms.
 *
 * <pre>
 * replicaId int32 | v2: replicaEpoch int64 | maxWaitMs int32 | minBytes int32 | maxBytes int32
 *   | isolationLevel int8 | sessionId int32 | topicPartitions[] (as v0)
 * </pre>
 *
 * Worked example, v2 head of follower 2 at broker epoch 300: {@code 00000002 000000000000012c ...}
 * (v0/v1: {@code 00000002 ...}).
 *
 * <p>Immutable, thread-safe. {@link #read} is strict and enforces the §6.4 ranges: replicaId >= -1,
 * maxWaitMs >= 0, minBytes >= 0, maxBytes > 0, isolationLevel 0 or 1, partitionMaxBytes > 0,
 * non-empty topic and partition arrays; v2 adds replicaEpoch >= -1 and -1 for a consumer;
 * violations throw ProtocolException INVALID_REQUEST.
 *
 * @param replicaEpoch v2: the follower's broker epoch (its registration with the controller); -1
 *     for a consumer and in v0/v1 (unknown)
 */
public record FetchRequest(
        int replicaId,
        int maxWaitMs,
        int minBytes,
        int maxBytes,
        byte isolationLevel,
        int sessionId,
        List<FetchTopic> topicPartitions,
        long replicaEpoch)
        implements ApiMessage {

    /** The version that carries {@link #replicaEpoch} (responses as v1). */
    public static final short VERSION_REPLICA_EPOCH = 2;

    /** replicaEpoch when unknown (a consumer, v0 and v1). */
    public static final long NO_REPLICA_EPOCH = -1L;

    /** replicaId of a consumer. */
    public static final int CONSUMER_REPLICA_ID = -1;
    /** isolationLevel read_uncommitted. */
    public static final byte READ_UNCOMMITTED = 0;
    /** isolationLevel read_committed. */
    public static final byte READ_COMMITTED = 1;

    public FetchRequest {
        topicPartitions = List.copyOf(topicPartitions);
    }

    /** A request without a replica epoch (a consumer's, or any v0/v1 one). */
    public FetchRequest(
            int replicaId,
            int maxWaitMs,
            int minBytes,
            int maxBytes,
            byte isolationLevel,
            int sessionId,
            List<FetchTopic> topicPartitions) {
        this(replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, topicPartitions, NO_REPLICA_EPOCH);
    }

    public record FetchTopic(String topic, List<FetchPartition> partitions) {
        public FetchTopic {
            partitions = List.copyOf(partitions);
        }
    }

    /** currentLeaderEpoch -1 = do not check; logStartOffset -1 = unknown. */
    public record FetchPartition(
            int partition, int currentLeaderEpoch, long fetchOffset, long logStartOffset, int partitionMaxBytes) {}

    /** Writes the v0/v1 layout (no replica epoch). */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /** Writes the layout of {@code version} (0, 1 or 2; only 2 carries {@link #replicaEpoch}). */
    public void write(ByteBuf out, short version) {
        out.writeInt(replicaId);
        if (version >= VERSION_REPLICA_EPOCH) {
            out.writeLong(replicaEpoch);
        }
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

    /** Reads a v0/v1 request. */
    public static FetchRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /** Reads a request of {@code version} (0, 1 or 2; only 2 carries {@link #replicaEpoch}). */
    public static FetchRequest read(ByteBuf body, short version) {
        int replicaId = readInt32(body, "replicaId");
        long replicaEpoch = version >= VERSION_REPLICA_EPOCH ? readInt64(body, "replicaEpoch") : NO_REPLICA_EPOCH;
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
        check(replicaEpoch >= -1 && (replicaId >= 0 || replicaEpoch == -1), "replicaEpoch", replicaEpoch);
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
        return new FetchRequest(
                replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, topics, replicaEpoch);
    }

    private static void check(boolean ok, String field, long value) {
        if (!ok) {
            throw new ProtocolException(Errors.INVALID_REQUEST, field + " " + value + " out of range (spec 6.4)");
        }
    }
}
