package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeGroups response v0 (apiKey 22, {@code docs/protocol-additions.md}): one entry per request
 * group, in request order.
 *
 * <pre>
 * groups[]: errorCode int16 | groupId string | protocolType string | state string | groupEpoch int32
 *           | assignmentEpoch int32 | assignor nullable string
 *           | members[]: memberId string | instanceId nullable string | clientId string | clientHost string
 *                        | memberEpoch int32 | subscribedTopics string[]
 *                        | assignment TopicPartitions[] | pendingRevocation TopicPartitions[]
 * </pre>
 *
 * Worked example (unknown group "g", {@link DescribedGroup#error} with code 45): {@code 00000001
 * 002d 0001 67 0000 0004 44656164 ffffffff ffffffff ffff 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DescribeGroupsResponse(List<DescribedGroup> groups) implements ApiMessage {

    /** A group without members (its offsets may remain). */
    public static final String STATE_EMPTY = "Empty";

    /** Every member owns exactly its target assignment. */
    public static final String STATE_STABLE = "Stable";

    /** Members are revoking or receiving partitions towards the target assignment. */
    public static final String STATE_RECONCILING = "Reconciling";

    /** A new target assignment is being computed. */
    public static final String STATE_ASSIGNING = "Assigning";

    /** The group does not exist, or is being deleted. */
    public static final String STATE_DEAD = "Dead";

    public DescribeGroupsResponse {
        groups = List.copyOf(groups);
    }

    /**
     * One group.
     *
     * @param protocolType {@link ListGroupsResponse#PROTOCOL_TYPE_CLASSIC} or {@link
     *     ListGroupsResponse#PROTOCOL_TYPE_CONSUMER}; "" on error
     * @param state one of the {@code STATE_} constants
     * @param groupEpoch the group epoch (classic groups: the generation); -1 on error
     * @param assignmentEpoch the epoch of the current target assignment; -1 on error
     * @param assignor the server assignor in use, or null
     */
    public record DescribedGroup(
            short errorCode,
            String groupId,
            String protocolType,
            String state,
            int groupEpoch,
            int assignmentEpoch,
            String assignor,
            List<DescribedMember> members) {
        public DescribedGroup {
            members = List.copyOf(members);
        }

        /** The entry for a group that cannot be described: state Dead, epochs -1, no members. */
        public static DescribedGroup error(String groupId, short errorCode) {
            return new DescribedGroup(errorCode, groupId, "", STATE_DEAD, -1, -1, null, List.of());
        }
    }

    /**
     * One member.
     *
     * @param instanceId {@code group.instance.id} of a static member, or null
     * @param assignment the partitions the member owns now
     * @param pendingRevocation partitions the member must still revoke before they move
     */
    public record DescribedMember(
            String memberId,
            String instanceId,
            String clientId,
            String clientHost,
            int memberEpoch,
            List<String> subscribedTopics,
            List<TopicPartitions> assignment,
            List<TopicPartitions> pendingRevocation) {
        public DescribedMember {
            subscribedTopics = List.copyOf(subscribedTopics);
            assignment = List.copyOf(assignment);
            pendingRevocation = List.copyOf(pendingRevocation);
        }
    }

    @Override
    public void write(ByteBuf out) {
        writeArray(out, groups, (b, g) -> {
            b.writeShort(g.errorCode());
            writeString(b, g.groupId(), "groupId");
            writeString(b, g.protocolType(), "protocolType");
            writeString(b, g.state(), "state");
            b.writeInt(g.groupEpoch());
            b.writeInt(g.assignmentEpoch());
            writeNullableString(b, g.assignor());
            writeArray(b, g.members(), (m, d) -> {
                writeString(m, d.memberId(), "memberId");
                writeNullableString(m, d.instanceId());
                writeString(m, d.clientId(), "clientId");
                writeString(m, d.clientHost(), "clientHost");
                m.writeInt(d.memberEpoch());
                writeStringArray(m, d.subscribedTopics(), "subscribedTopics");
                TopicPartitions.writeList(m, d.assignment());
                TopicPartitions.writeList(m, d.pendingRevocation());
            });
        });
    }

    public static DescribeGroupsResponse read(ByteBuf body) {
        List<DescribedGroup> groups = readArray(body, "groups", DescribeGroupsResponse::readGroup);
        ensureFullyRead(body, "DescribeGroupsResponse");
        return new DescribeGroupsResponse(groups);
    }

    private static DescribedGroup readGroup(ByteBuf b) {
        return new DescribedGroup(
                readInt16(b, "errorCode"),
                readString(b, "groupId"),
                readString(b, "protocolType"),
                readString(b, "state"),
                readInt32(b, "groupEpoch"),
                readInt32(b, "assignmentEpoch"),
                readNullableString(b, "assignor"),
                readArray(b, "members", DescribeGroupsResponse::readMember));
    }

    private static DescribedMember readMember(ByteBuf m) {
        return new DescribedMember(
                readString(m, "memberId"),
                readNullableString(m, "instanceId"),
                readString(m, "clientId"),
                readString(m, "clientHost"),
                readInt32(m, "memberEpoch"),
                readStringArray(m, "subscribedTopics"),
                TopicPartitions.readList(m, "assignment"),
                TopicPartitions.readList(m, "pendingRevocation"));
    }
}
