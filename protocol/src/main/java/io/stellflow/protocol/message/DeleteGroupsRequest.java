package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DeleteGroups request v0 (apiKey 23, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * groupIds string[]
 * </pre>
 *
 * Worked example (delete group "g"): {@code 00000001 0001 67}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DeleteGroupsRequest(List<String> groupIds) implements ApiMessage {

    public DeleteGroupsRequest {
        groupIds = List.copyOf(groupIds);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, groupIds, "groupIds");
    }

    public static DeleteGroupsRequest read(ByteBuf body) {
        DeleteGroupsRequest r = new DeleteGroupsRequest(readStringArray(body, "groupIds"));
        ensureFullyRead(body, "DeleteGroupsRequest");
        return r;
    }
}
