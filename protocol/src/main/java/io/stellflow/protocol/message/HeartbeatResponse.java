package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;

import io.netty.buffer.ByteBuf;

/**
 * Heartbeat response v0 (apiKey 8, {@code docs/spec/wire-protocol.md} §6.9): the body is exactly
 * {@code errorCode} int16, 2 bytes (for example {@code 0000}); group errors go here with the header
 * at 0.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record HeartbeatResponse(short errorCode) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
    }

    public static HeartbeatResponse read(ByteBuf body) {
        HeartbeatResponse r = new HeartbeatResponse(readInt16(body, "errorCode"));
        ensureFullyRead(body, "HeartbeatResponse");
        return r;
    }
}
