package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeTransactions request v0 (apiKey 33, {@code docs/protocol-additions.md}): the coordinator's
 * state of each transactional id; sent to the ids' coordinator (others answer NOT_COORDINATOR per
 * id).
 *
 * <pre>
 * transactionalIds string[]
 * </pre>
 *
 * Worked example ("tx"): {@code 00000001 0002 7478}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record DescribeTransactionsRequest(List<String> transactionalIds) implements ApiMessage {

    public DescribeTransactionsRequest {
        transactionalIds = List.copyOf(transactionalIds);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, transactionalIds, "transactionalIds");
    }

    public static DescribeTransactionsRequest read(ByteBuf body) {
        DescribeTransactionsRequest r = new DescribeTransactionsRequest(readStringArray(body, "transactionalIds"));
        ensureFullyRead(body, "DescribeTransactionsRequest");
        return r;
    }
}
