package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ListGroups request v0 (apiKey 21, {@code docs/protocol-additions.md}): the groups the receiving
 * broker coordinates.
 *
 * <pre>
 * statesFilter string[]
 * </pre>
 *
 * Worked example (only stable groups): {@code 00000001 0006 537461626c65}; every group: {@code
 * 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 *
 * @param statesFilter the states to list (see {@link DescribeGroupsResponse}); empty = every group
 */
public record ListGroupsRequest(List<String> statesFilter) implements ApiMessage {

    public ListGroupsRequest {
        statesFilter = List.copyOf(statesFilter);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, statesFilter, "statesFilter");
    }

    public static ListGroupsRequest read(ByteBuf body) {
        ListGroupsRequest r = new ListGroupsRequest(readStringArray(body, "statesFilter"));
        ensureFullyRead(body, "ListGroupsRequest");
        return r;
    }
}
