package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;

import io.netty.buffer.ByteBuf;

/**
 * SyncGroup response v0 (apiKey 10, {@code docs/spec/wire-protocol.md} §6.11): the body is exactly
 * {@code errorCode} int16, 2 bytes, and nothing else (no assignment array: the Go SDK rejects any
 * trailing byte, spec footnote [^sync]).
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record SyncGroupResponse(short errorCode) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
    }

    public static SyncGroupResponse read(ByteBuf body) {
        SyncGroupResponse r = new SyncGroupResponse(readInt16(body, "errorCode"));
        ensureFullyRead(body, "SyncGroupResponse");
        return r;
    }
}
