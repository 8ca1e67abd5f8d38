package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * JoinGroup response v0 (apiKey 9, {@code docs/spec/wire-protocol.md} §6.10).
 *
 * <pre>
 * errorCode int16 | generationId int32 | memberId nullable string | leaderId nullable string
 * </pre>
 *
 * Worked example (generation 1, member and leader "m"): {@code 0000 00000001 0001 6d 0001 6d}; an
 * error ({@link #error}): {@code 0003 ffffffff ffff ffff}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param memberId the member id to use from now on
 * @param leaderId the member id of the group leader
 */
public record JoinGroupResponse(short errorCode, int generationId, String memberId, String leaderId)
        implements ApiMessage {

    /** The response for {@code errorCode} (spec §6.10): generationId -1, memberId and leaderId null. */
    public static JoinGroupResponse error(short errorCode) {
        return new JoinGroupResponse(errorCode, -1, null, null);
    }

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeInt(generationId);
        writeNullableString(out, memberId);
        writeNullableString(out, leaderId);
    }

    public static JoinGroupResponse read(ByteBuf body) {
        JoinGroupResponse r = new JoinGroupResponse(
                readInt16(body, "errorCode"),
                readInt32(body, "generationId"),
                readNullableString(body, "memberId"),
                readNullableString(body, "leaderId"));
        ensureFullyRead(body, "JoinGroupResponse");
        return r;
    }
}
