package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * FindCoordinator response v0 (apiKey 7, {@code docs/spec/wire-protocol.md} §6.8).
 *
 * <pre>
 * errorCode int16 | nodeId int32 | host nullable string | port int32
 * </pre>
 *
 * Worked example (node 2 at "h":9092): {@code 0000 00000002 0001 68 00002384}; an error ({@link
 * #error}): {@code 0010 ffffffff ffff ffffffff}.
 *
 * <p>On success host is non-null (the Go SDK rejects null); on error nodeId and port are -1 and
 * host null. Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any
 * strict decoding violation.
 */
public record FindCoordinatorResponse(short errorCode, int nodeId, String host, int port) implements ApiMessage {

    /** The response for {@code errorCode}: nodeId -1, host null, port -1. */
    public static FindCoordinatorResponse error(short errorCode) {
        return new FindCoordinatorResponse(errorCode, -1, null, -1);
    }

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeInt(nodeId);
        writeNullableString(out, host);
        out.writeInt(port);
    }

    public static FindCoordinatorResponse read(ByteBuf body) {
        FindCoordinatorResponse r = new FindCoordinatorResponse(
                readInt16(body, "errorCode"),
                readInt32(body, "nodeId"),
                readNullableString(body, "host"),
                readInt32(body, "port"));
        ensureFullyRead(body, "FindCoordinatorResponse");
        return r;
    }
}
