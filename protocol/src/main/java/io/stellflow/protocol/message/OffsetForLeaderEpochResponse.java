package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * OffsetForLeaderEpoch response v0 (apiKey 100, {@code docs/protocol-additions.md}): per partition
 * the largest epoch &lt;= the requested one that the leader's log knows and the offset where it ends
 * (the start offset of the next higher epoch, or the leader's log end offset when that epoch is the
 * leader's latest).
 *
 * <p>Layout (big-endian, after the 12-byte response header):
 *
 * <pre>
 * topics                   int32   count, then per topic (request order):
 *   topic                  string  byte-identical to the request
 *   partitions             int32   count, then per partition (request order, never omitted):
 *     partition            int32
 *     errorCode            int16   0, FENCED_LEADER_EPOCH (40), UNKNOWN_LEADER_EPOCH (41),
 *                                  NOT_LEADER_OR_FOLLOWER (9), UNKNOWN_TOPIC_OR_PARTITION (10), ...
 *     leaderEpoch          int32   the epoch the answer is for; -1 = undefined (or on error)
 *     endOffset            int64   first offset after that epoch's records; -1 = undefined (or on error)
 * </pre>
 *
 * <p>Worked example (golden test {@code OffsetForLeaderEpochTest}): the leader's epoch 3 ended at
 * offset 120 (epoch 4 started there); body of 34 bytes:
 *
 * <pre>
 * 00000001 0006 6f7264657273     1 topic, "orders"
 * 00000001 00000000 0000         1 partition, partition 0, errorCode 0
 * 00000003 0000000000000078      leaderEpoch 3, endOffset 120
 * </pre>
 *
 * <p>Immutable, thread-safe. {@link #read} throws {@link io.stellflow.protocol.ProtocolException}
 * INVALID_REQUEST on any strict decoding violation.
 *
 * @param topics per topic, in request order
 */
public record OffsetForLeaderEpochResponse(List<Topic> topics) implements ApiMessage {
    /** leaderEpoch and endOffset of an undefined answer (or of an error). */
    public static final int UNDEFINED_EPOCH = -1;

    /** endOffset of an undefined answer (or of an error). */
    public static final long UNDEFINED_OFFSET = -1L;

    public OffsetForLeaderEpochResponse {
        topics = List.copyOf(topics);
    }

    /**
     * @param topic topic name as requested
     * @param partitions per partition, in request order
     */
    public record Topic(String topic, List<EpochEndOffset> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * @param partition partition id
     * @param errorCode 0 or the partition's error
     * @param leaderEpoch the epoch the end offset is for, or {@link #UNDEFINED_EPOCH}
     * @param endOffset the first offset after that epoch, or {@link #UNDEFINED_OFFSET}
     */
    public record EpochEndOffset(int partition, short errorCode, int leaderEpoch, long endOffset) {
        /** An error answer: epoch and offset undefined. */
        public static EpochEndOffset error(int partition, short errorCode) {
            return new EpochEndOffset(partition, errorCode, UNDEFINED_EPOCH, UNDEFINED_OFFSET);
        }
    }

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, e) -> {
                p.writeInt(e.partition());
                p.writeShort(e.errorCode());
                p.writeInt(e.leaderEpoch());
                p.writeLong(e.endOffset());
            });
        });
    }

    /**
     * Strict decode of a whole body.
     *
     * @throws io.stellflow.protocol.ProtocolException when malformed or with bytes left
     */
    public static OffsetForLeaderEpochResponse read(ByteBuf body) {
        List<Topic> topics = readArray(
                body,
                "topics",
                b -> new Topic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new EpochEndOffset(
                                        readInt32(p, "partition"),
                                        readInt16(p, "errorCode"),
                                        readInt32(p, "leaderEpoch"),
                                        readInt64(p, "endOffset")))));
        ensureFullyRead(body, "OffsetForLeaderEpochResponse");
        return new OffsetForLeaderEpochResponse(topics);
    }
}
