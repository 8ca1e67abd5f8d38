package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * OffsetCommit request (apiKey 5): v0 is {@code docs/spec/wire-protocol.md} §6.6, v1 ({@code
 * docs/protocol-additions.md}) inserts {@code memberId} and {@code memberEpoch} after {@code
 * groupId} so the coordinator can fence a commit per partition by member epoch.
 *
 * <pre>
 * v0: groupId string | topics[]: topic string, partitions[]: partition int32, offset int64, metadata nullable string
 * v1: groupId string | memberId nullable string | memberEpoch int32 | topics[] as v0
 * </pre>
 *
 * Worked example (v0, group "g", topic "t", partition 0, offset 5, metadata null): {@code 0001 67
 * 00000001 0001 74 00000001 00000000 0000000000000005 ffff}.
 *
 * <p>{@code groupId} is read as a nullable string: null or empty is answered by the broker with
 * INVALID_REQUEST header-only (spec §6.6), not by the codec; a negative offset and oversized
 * metadata are per-partition errors, also the broker's. A v0 request reads as {@code memberId} null
 * and {@code memberEpoch} {@link #NO_MEMBER_EPOCH}: a commit from outside the group.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param groupId the group (null only as read from a malformed request)
 * @param memberId the committing member (v1); null or "" for a commit from outside the group
 * @param memberEpoch the member's epoch (v1); {@link #NO_MEMBER_EPOCH} outside the group
 * @param topics the offsets to commit
 */
public record OffsetCommitRequest(String groupId, String memberId, int memberEpoch, List<OffsetCommitTopic> topics)
        implements ApiMessage {

    /** The version that carries {@link #memberId} and {@link #memberEpoch}. */
    public static final short VERSION_WITH_MEMBER_EPOCH = 1;

    /** {@link #memberEpoch} of a commit from outside the group (every v0 commit). */
    public static final int NO_MEMBER_EPOCH = -1;

    public OffsetCommitRequest {
        topics = List.copyOf(topics);
    }

    /** A v0 request: from outside the group. */
    public OffsetCommitRequest(String groupId, List<OffsetCommitTopic> topics) {
        this(groupId, null, NO_MEMBER_EPOCH, topics);
    }

    /** One topic's offsets. */
    public record OffsetCommitTopic(String topic, List<OffsetCommitPartition> partitions) {
        public OffsetCommitTopic {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * One partition's commit.
     *
     * @param offset the next offset to consume (last processed + 1)
     * @param metadata stored as given; nullable
     */
    public record OffsetCommitPartition(int partition, long offset, String metadata) {}

    /** Writes the v0 layout (memberId and memberEpoch are not sent). */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /** Writes the layout of {@code version} (0 or 1). */
    public void write(ByteBuf out, short version) {
        writeNullableString(out, groupId);
        if (version >= VERSION_WITH_MEMBER_EPOCH) {
            writeNullableString(out, memberId);
            out.writeInt(memberEpoch);
        }
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, c) -> {
                p.writeInt(c.partition());
                p.writeLong(c.offset());
                writeNullableString(p, c.metadata());
            });
        });
    }

    /** Reads a v0 request. */
    public static OffsetCommitRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /**
     * Reads a request of {@code version} (0 or 1).
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static OffsetCommitRequest read(ByteBuf body, short version) {
        String groupId = readNullableString(body, "groupId");
        String memberId = null;
        int memberEpoch = NO_MEMBER_EPOCH;
        if (version >= VERSION_WITH_MEMBER_EPOCH) {
            memberId = readNullableString(body, "memberId");
            memberEpoch = readInt32(body, "memberEpoch");
        }
        List<OffsetCommitTopic> topics = readArray(
                body,
                "topics",
                b -> new OffsetCommitTopic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new OffsetCommitPartition(
                                        readInt32(p, "partition"),
                                        readInt64(p, "offset"),
                                        readNullableString(p, "metadata")))));
        ensureFullyRead(body, "OffsetCommitRequest");
        return new OffsetCommitRequest(groupId, memberId, memberEpoch, topics);
    }
}
