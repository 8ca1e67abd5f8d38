package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ListTransactions response v0 (apiKey 32, {@code docs/protocol-additions.md}): the transactional ids
 * the answering broker coordinates that pass the request's filters.
 *
 * <pre>
 * errorCode int16 | transactions[] (transactionalId string | producerId int64 | state string)
 * </pre>
 *
 * Worked example ("tx" of producer 1000, Ongoing): {@code 0000 00000001 0002 7478 00000000000003e8
 * 0007 4f6e676f696e67}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param errorCode NONE, or COORDINATOR_NOT_AVAILABLE while a partition of {@code
 *     __transaction_state} led here is loading (the list is then partial)
 */
public record ListTransactionsResponse(short errorCode, List<ListedTransaction> transactions) implements ApiMessage {

    public ListTransactionsResponse {
        transactions = List.copyOf(transactions);
    }

    /**
     * One transactional id.
     *
     * @param state Kafka's state name ({@link ListTransactionsRequest#stateFilters})
     */
    public record ListedTransaction(String transactionalId, long producerId, String state) {}

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        writeArray(out, transactions, (b, t) -> {
            writeString(b, t.transactionalId(), "transactionalId");
            b.writeLong(t.producerId());
            writeString(b, t.state(), "state");
        });
    }

    public static ListTransactionsResponse read(ByteBuf body) {
        ListTransactionsResponse r = new ListTransactionsResponse(
                readInt16(body, "errorCode"),
                readArray(
                        body,
                        "transactions",
                        b -> new ListedTransaction(
                                readString(b, "transactionalId"), readInt64(b, "producerId"), readString(b, "state"))));
        ensureFullyRead(body, "ListTransactionsResponse");
        return r;
    }
}
