package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * BeginTransaction request v0 (apiKey 12, {@code docs/spec/wire-protocol.md} §6.13).
 *
 * <pre>
 * transactionalId nullable string | producerId int64 | producerEpoch int16
 * </pre>
 *
 * Worked example (id "tx", producer 1000, epoch 1): {@code 0002 7478 00000000000003e8 0001}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionalId must be non-null (a null one is answered INVALID_REQUEST)
 */
public record BeginTransactionRequest(String transactionalId, long producerId, short producerEpoch)
        implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, transactionalId);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
    }

    public static BeginTransactionRequest read(ByteBuf body) {
        BeginTransactionRequest r = new BeginTransactionRequest(
                readNullableString(body, "transactionalId"),
                readInt64(body, "producerId"),
                readInt16(body, "producerEpoch"));
        ensureFullyRead(body, "BeginTransactionRequest");
        return r;
    }
}
