package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableArray;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeNullableArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ConsumerGroupHeartbeat request v0 (apiKey 20, {@code docs/protocol-additions.md}): our group
 * protocol (the KIP-848 model). One RPC joins, heartbeats, carries the subscription and the
 * partitions the member owns, and leaves; the coordinator computes the assignment.
 *
 * <pre>
 * groupId string | memberId nullable string | memberEpoch int32 | instanceId nullable string
 * | rackId nullable string | rebalanceTimeoutMs int32 | subscribedTopicNames nullable string[]
 * | serverAssignor nullable string | ownedPartitions nullable TopicPartitions[]
 * </pre>
 *
 * Worked example (join of group "g", subscribing to "t", every other field null or -1): {@code 0001
 * 67 ffff 00000000 ffff ffff ffffffff 00000001 0001 74 ffff ffffffff}.
 *
 * <p>A null array or string means "unchanged since the last heartbeat" (see each field). Range
 * checks (epochs below -2, unknown assignors, an empty groupId) are the broker's. Immutable,
 * thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict decoding
 * violation.
 *
 * @param groupId the group
 * @param memberId null or "" when joining ({@link #JOIN_MEMBER_EPOCH}): the broker assigns one
 * @param memberEpoch {@link #JOIN_MEMBER_EPOCH}, {@link #LEAVE_MEMBER_EPOCH}, {@link
 *     #STATIC_LEAVE_MEMBER_EPOCH}, or the member's current epoch (> 0)
 * @param instanceId {@code group.instance.id} of a static member, or null
 * @param rackId the member's rack, or null
 * @param rebalanceTimeoutMs how long the member may take to revoke partitions; {@link #UNCHANGED} = unchanged
 * @param subscribedTopicNames the subscription; null = unchanged since the last heartbeat
 * @param serverAssignor "uniform" or "range"; null = unchanged (or the broker's default)
 * @param ownedPartitions the partitions the member owns now; null = unchanged
 */
public record ConsumerGroupHeartbeatRequest(
        String groupId,
        String memberId,
        int memberEpoch,
        String instanceId,
        String rackId,
        int rebalanceTimeoutMs,
        List<String> subscribedTopicNames,
        String serverAssignor,
        List<TopicPartitions> ownedPartitions)
        implements ApiMessage {

    /** The only version. */
    public static final short VERSION = 0;

    /** memberEpoch of a join. */
    public static final int JOIN_MEMBER_EPOCH = 0;

    /** memberEpoch of a member leaving the group. */
    public static final int LEAVE_MEMBER_EPOCH = -1;

    /** memberEpoch of a static member leaving for a restart (keeps its assignment for the session). */
    public static final int STATIC_LEAVE_MEMBER_EPOCH = -2;

    /** rebalanceTimeoutMs when unchanged. */
    public static final int UNCHANGED = -1;

    public ConsumerGroupHeartbeatRequest {
        subscribedTopicNames = subscribedTopicNames == null ? null : List.copyOf(subscribedTopicNames);
        ownedPartitions = ownedPartitions == null ? null : List.copyOf(ownedPartitions);
    }

    @Override
    public void write(ByteBuf out) {
        writeString(out, groupId, "groupId");
        writeNullableString(out, memberId);
        out.writeInt(memberEpoch);
        writeNullableString(out, instanceId);
        writeNullableString(out, rackId);
        out.writeInt(rebalanceTimeoutMs);
        writeNullableArray(out, subscribedTopicNames, (b, t) -> writeString(b, t, "subscribedTopicNames"));
        writeNullableString(out, serverAssignor);
        TopicPartitions.writeNullableList(out, ownedPartitions);
    }

    public static ConsumerGroupHeartbeatRequest read(ByteBuf body) {
        ConsumerGroupHeartbeatRequest r = new ConsumerGroupHeartbeatRequest(
                readString(body, "groupId"),
                readNullableString(body, "memberId"),
                readInt32(body, "memberEpoch"),
                readNullableString(body, "instanceId"),
                readNullableString(body, "rackId"),
                readInt32(body, "rebalanceTimeoutMs"),
                readNullableArray(body, "subscribedTopicNames", b -> readString(b, "subscribedTopicNames")),
                readNullableString(body, "serverAssignor"),
                TopicPartitions.readNullableList(body, "ownedPartitions"));
        ensureFullyRead(body, "ConsumerGroupHeartbeatRequest");
        return r;
    }
}
