package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeGroups request v0 (apiKey 22, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * groupIds string[]
 * </pre>
 *
 * Worked example (group "g"): {@code 00000001 0001 67}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DescribeGroupsRequest(List<String> groupIds) implements ApiMessage {

    public DescribeGroupsRequest {
        groupIds = List.copyOf(groupIds);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, groupIds, "groupIds");
    }

    public static DescribeGroupsRequest read(ByteBuf body) {
        DescribeGroupsRequest r = new DescribeGroupsRequest(readStringArray(body, "groupIds"));
        ensureFullyRead(body, "DescribeGroupsRequest");
        return r;
    }
}
