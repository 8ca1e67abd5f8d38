package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt64;

import io.netty.buffer.ByteBuf;

/**
 * ForwardStatus request v0 (apiKey 35, broker-to-broker, {@code docs/protocol-additions.md}): a
 * transaction coordinator asks the broker that forwarded a client's control request whether the
 * client's connection to that broker is still open, before it runs the request.
 *
 * <pre>
 * forwardId int64
 * </pre>
 *
 * Worked example (forward 42): {@code 000000000000002a}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param forwardId the forwarding broker's number of the forward (in the forwarded request's client id)
 */
public record ForwardStatusRequest(long forwardId) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        out.writeLong(forwardId);
    }

    public static ForwardStatusRequest read(ByteBuf body) {
        ForwardStatusRequest r = new ForwardStatusRequest(readInt64(body, "forwardId"));
        ensureFullyRead(body, "ForwardStatusRequest");
        return r;
    }
}
