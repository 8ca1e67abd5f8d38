package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;

/**
 * Heartbeat request v0 (apiKey 8, {@code docs/spec/wire-protocol.md} §6.9).
 *
 * <pre>
 * groupId string | generationId int32 | memberId string
 * </pre>
 *
 * Worked example (group "g", generation 3, member "m"): {@code 0001 67 00000003 0001 6d}.
 *
 * <p>Both strings are non-null (length -1 is INVALID_REQUEST, header-only, spec §2). Immutable,
 * thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict decoding
 * violation.
 */
public record HeartbeatRequest(String groupId, int generationId, String memberId) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeString(out, groupId, "groupId");
        out.writeInt(generationId);
        writeString(out, memberId, "memberId");
    }

    public static HeartbeatRequest read(ByteBuf body) {
        HeartbeatRequest r = new HeartbeatRequest(
                readString(body, "groupId"), readInt32(body, "generationId"), readString(body, "memberId"));
        ensureFullyRead(body, "HeartbeatRequest");
        return r;
    }
}
