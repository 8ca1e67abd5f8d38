package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt64Array;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeInt64Array;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ListTransactions request v0 (apiKey 32, {@code docs/protocol-additions.md}): the transactional ids
 * the answering broker coordinates, optionally filtered (Kafka's KIP-664). An admin asks every
 * broker and merges the answers.
 *
 * <pre>
 * stateFilters string[] | producerIdFilters int64[]
 * </pre>
 *
 * Worked example (state "Ongoing", producer 1000): {@code 00000001 0007 4f6e676f696e67 00000001
 * 00000000000003e8}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param stateFilters Kafka's state names ({@code Empty}, {@code Ongoing}, {@code PrepareCommit},
 *     {@code PrepareAbort}, {@code CompleteCommit}, {@code CompleteAbort}); empty: every state
 * @param producerIdFilters producer ids; empty: every producer id
 */
public record ListTransactionsRequest(List<String> stateFilters, List<Long> producerIdFilters) implements ApiMessage {

    public ListTransactionsRequest {
        stateFilters = List.copyOf(stateFilters);
        producerIdFilters = List.copyOf(producerIdFilters);
    }

    @Override
    public void write(ByteBuf out) {
        writeStringArray(out, stateFilters, "stateFilters");
        writeInt64Array(out, producerIdFilters);
    }

    public static ListTransactionsRequest read(ByteBuf body) {
        ListTransactionsRequest r = new ListTransactionsRequest(
                readStringArray(body, "stateFilters"), readInt64Array(body, "producerIdFilters"));
        ensureFullyRead(body, "ListTransactionsRequest");
        return r;
    }
}
