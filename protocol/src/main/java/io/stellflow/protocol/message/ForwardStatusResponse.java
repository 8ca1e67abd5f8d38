package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readBool;
import static io.stellflow.protocol.WireReader.readInt16;

import io.netty.buffer.ByteBuf;

/**
 * ForwardStatus response v0 (apiKey 35, broker-to-broker, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | open bool
 * </pre>
 *
 * Worked example (the client's connection is open): {@code 0000 01}; a forward the broker does not
 * know (answered, timed out, or never made) or whose client's connection closed: {@code 0000 00}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param open true while the forward is outstanding and its client's connection is open
 */
public record ForwardStatusResponse(short errorCode, boolean open) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeByte(open ? 1 : 0);
    }

    public static ForwardStatusResponse read(ByteBuf body) {
        ForwardStatusResponse r = new ForwardStatusResponse(readInt16(body, "errorCode"), readBool(body, "open"));
        ensureFullyRead(body, "ForwardStatusResponse");
        return r;
    }
}
