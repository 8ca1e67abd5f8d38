package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DeleteGroups response v0 (apiKey 23, {@code docs/protocol-additions.md}): one result per request
 * group, in request order.
 *
 * <pre>
 * results[]: groupId string, errorCode int16
 * </pre>
 *
 * Worked example ("g" still has members): {@code 00000001 0001 67 002e}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DeleteGroupsResponse(List<GroupResult> results) implements ApiMessage {

    public DeleteGroupsResponse {
        results = List.copyOf(results);
    }

    /**
     * One group's outcome.
     *
     * @param errorCode 0, NON_EMPTY_GROUP while it has members, GROUP_ID_NOT_FOUND, NOT_COORDINATOR, ...
     */
    public record GroupResult(String groupId, short errorCode) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, results, (b, r) -> {
            writeString(b, r.groupId(), "groupId");
            b.writeShort(r.errorCode());
        });
    }

    public static DeleteGroupsResponse read(ByteBuf body) {
        List<GroupResult> results =
                readArray(body, "results", b -> new GroupResult(readString(b, "groupId"), readInt16(b, "errorCode")));
        ensureFullyRead(body, "DeleteGroupsResponse");
        return new DeleteGroupsResponse(results);
    }
}
