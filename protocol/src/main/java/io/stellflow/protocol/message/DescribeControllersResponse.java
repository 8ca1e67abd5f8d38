package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeControllers response v0 (apiKey 60, {@code docs/protocol-additions.md}): the control-plane
 * endpoints the answering broker itself uses ({@code controller.quorum.bootstrap.servers}, or its
 * embedded controller in combined mode), in its configured order.
 *
 * <pre>
 * errorCode int16 | controllers[]: host string, port int32
 * </pre>
 *
 * Worked example (one controller on 127.0.0.1:9094): {@code 0000 00000001 0009 3132372e302e302e31
 * 00002386}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DescribeControllersResponse(short errorCode, List<ControllerEndpoint> controllers) implements ApiMessage {

    public DescribeControllersResponse {
        controllers = List.copyOf(controllers);
    }

    /**
     * One control-plane endpoint (gRPC, not this protocol).
     *
     * @param host host name or IP literal as configured
     * @param port TCP port, 1..65535
     */
    public record ControllerEndpoint(String host, int port) {
        /** {@code host:port}, with an IPv6 literal in brackets. */
        public String hostPort() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeArray(out, controllers, (b, c) -> {
            writeString(b, c.host(), "host");
            b.writeInt(c.port());
        });
    }

    public static DescribeControllersResponse read(ByteBuf body) {
        short errorCode = readInt16(body, "errorCode");
        List<ControllerEndpoint> controllers = readArray(
                body, "controllers", b -> new ControllerEndpoint(readString(b, "host"), readInt32(b, "port")));
        ensureFullyRead(body, "DescribeControllersResponse");
        return new DescribeControllersResponse(errorCode, controllers);
    }
}
