package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * BeginTransaction and EndTransaction response v0 (apiKeys 12 and 13, {@code
 * docs/spec/wire-protocol.md} §6.13): the same layout for both.
 *
 * <pre>
 * errorCode int16 | producerId int64 | producerEpoch int16 | transactionState nullable string
 * </pre>
 *
 * Worked example (a commit of producer 1000 epoch 1): {@code 0000 00000000000003e8 0001 0009
 * 434f4d4d4954544544} ("COMMITTED").
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param producerId echo of the request
 * @param producerEpoch echo of the request
 * @param transactionState {@code ONGOING} after Begin, {@code COMMITTED} or {@code ABORTED} after End,
 *     {@link #FAILED} on error
 */
public record TransactionResponse(short errorCode, long producerId, short producerEpoch, String transactionState)
        implements ApiMessage {
    /** The state answered with an error. */
    public static final String FAILED = "FAILED";

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        writeNullableString(out, transactionState);
    }

    public static TransactionResponse read(ByteBuf body) {
        TransactionResponse r = new TransactionResponse(
                readInt16(body, "errorCode"),
                readInt64(body, "producerId"),
                readInt16(body, "producerEpoch"),
                readNullableString(body, "transactionState"));
        ensureFullyRead(body, "TransactionResponse");
        return r;
    }
}
