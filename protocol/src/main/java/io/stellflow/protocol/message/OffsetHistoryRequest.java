package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;

/**
 * OffsetHistory request v0 (apiKey 25, {@code docs/protocol-additions.md}): the journal of a group's
 * offset changes, for {@code stellflow-consumer-groups.sh --describe --history}.
 *
 * <pre>
 * groupId string | maxEntries int32
 * </pre>
 *
 * Worked example (group "g", the last 100 entries): {@code 0001 67 00000064}.
 *
 * <p>maxEntries <= 0 is the broker's check. Immutable, thread-safe. {@link #read} throws
 * ProtocolException INVALID_REQUEST on a strict decoding violation.
 *
 * @param maxEntries the most entries to return (the newest ones)
 */
public record OffsetHistoryRequest(String groupId, int maxEntries) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeString(out, groupId, "groupId");
        out.writeInt(maxEntries);
    }

    public static OffsetHistoryRequest read(ByteBuf body) {
        OffsetHistoryRequest r = new OffsetHistoryRequest(readString(body, "groupId"), readInt32(body, "maxEntries"));
        ensureFullyRead(body, "OffsetHistoryRequest");
        return r;
    }
}
