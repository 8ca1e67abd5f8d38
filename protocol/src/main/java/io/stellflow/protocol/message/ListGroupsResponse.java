package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ListGroups response v0 (apiKey 21, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | groups[]: groupId string, protocolType string, state string
 * </pre>
 *
 * Worked example (group "g" of our protocol, Stable): {@code 0000 00000001 0001 67 0008
 * 636f6e73756d6572 0006 537461626c65}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record ListGroupsResponse(short errorCode, List<ListedGroup> groups) implements ApiMessage {

    /** protocolType of a group of the classic v0 APIs (JoinGroup, SyncGroup, Heartbeat). */
    public static final String PROTOCOL_TYPE_CLASSIC = "classic";

    /** protocolType of a group of our protocol (ConsumerGroupHeartbeat). */
    public static final String PROTOCOL_TYPE_CONSUMER = "consumer";

    public ListGroupsResponse {
        groups = List.copyOf(groups);
    }

    /**
     * One group.
     *
     * @param protocolType {@link #PROTOCOL_TYPE_CLASSIC} or {@link #PROTOCOL_TYPE_CONSUMER}
     * @param state one of the {@code STATE_} names of {@link DescribeGroupsResponse}
     */
    public record ListedGroup(String groupId, String protocolType, String state) {}

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeArray(out, groups, (b, g) -> {
            writeString(b, g.groupId(), "groupId");
            writeString(b, g.protocolType(), "protocolType");
            writeString(b, g.state(), "state");
        });
    }

    public static ListGroupsResponse read(ByteBuf body) {
        short errorCode = readInt16(body, "errorCode");
        List<ListedGroup> groups = readArray(
                body,
                "groups",
                b -> new ListedGroup(readString(b, "groupId"), readString(b, "protocolType"), readString(b, "state")));
        ensureFullyRead(body, "ListGroupsResponse");
        return new ListGroupsResponse(errorCode, groups);
    }
}
