package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Response header ({@code docs/spec/wire-protocol.md} §4.1), 12 bytes: correlationId int32,
 * headerVersion int16 (always 2), errorCode int16, throttleTimeMs int32. A non-zero errorCode means
 * a header-only response (spec §4.2).
 *
 * <p>Immutable and thread-safe. {@link #read} throws {@link ProtocolException} INVALID_REQUEST when
 * fewer than 12 bytes are readable; it does not judge headerVersion, so a client can still match the
 * correlationId.
 */
public record ResponseHeader(int correlationId, short headerVersion, short errorCode, int throttleTimeMs) {
    /** Encoded size in bytes. */
    public static final int SIZE = 12;

    /** A v2 response header with throttleTimeMs 0. */
    public static ResponseHeader of(int correlationId, short errorCode) {
        return new ResponseHeader(correlationId, RequestHeader.HEADER_VERSION, errorCode, 0);
    }

    public void write(ByteBuf out) {
        out.writeInt(correlationId);
        out.writeShort(headerVersion);
        out.writeShort(errorCode);
        out.writeInt(throttleTimeMs);
    }

    public static ResponseHeader read(ByteBuf in) {
        WireReader.require(in, SIZE, "response header");
        return new ResponseHeader(in.readInt(), in.readShort(), in.readShort(), in.readInt());
    }
}
