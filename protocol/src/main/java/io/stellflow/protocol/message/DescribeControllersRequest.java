package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;

import io.netty.buffer.ByteBuf;

/**
 * DescribeControllers request v0 (apiKey 60, {@code docs/protocol-additions.md}): "which control
 * plane do you use?", so a tool given only broker addresses can reach the controllers. The body is
 * empty (zero bytes).
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST when the body is
 * not empty.
 */
public record DescribeControllersRequest() implements ApiMessage {

    /** The one value of this body-less request. */
    public static final DescribeControllersRequest INSTANCE = new DescribeControllersRequest();

    @Override
    public void write(ByteBuf out) {}

    public static DescribeControllersRequest read(ByteBuf body) {
        ensureFullyRead(body, "DescribeControllersRequest");
        return INSTANCE;
    }
}
