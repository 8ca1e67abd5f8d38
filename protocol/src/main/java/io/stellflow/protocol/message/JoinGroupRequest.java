package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * JoinGroup request v0 (apiKey 9, {@code docs/spec/wire-protocol.md} §6.10): no protocol type, no
 * protocol list, no subscription.
 *
 * <pre>
 * groupId string | memberId nullable string | sessionTimeoutMs int32
 * </pre>
 *
 * Worked example (group "g", memberId "", 30000 ms): {@code 0001 67 0000 00007530}.
 *
 * <p>{@code groupId} is read as a nullable string because null or empty is answered with
 * INVALID_REQUEST <i>in the body</i> (spec §6.10), as is a session timeout outside the broker's
 * bounds. {@code memberId} null or "" asks the broker to assign one. Immutable, thread-safe. {@link
 * #read} throws ProtocolException INVALID_REQUEST on any strict decoding violation.
 */
public record JoinGroupRequest(String groupId, String memberId, int sessionTimeoutMs) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, groupId);
        writeNullableString(out, memberId);
        out.writeInt(sessionTimeoutMs);
    }

    public static JoinGroupRequest read(ByteBuf body) {
        JoinGroupRequest r = new JoinGroupRequest(
                readNullableString(body, "groupId"),
                readNullableString(body, "memberId"),
                readInt32(body, "sessionTimeoutMs"));
        ensureFullyRead(body, "JoinGroupRequest");
        return r;
    }
}
