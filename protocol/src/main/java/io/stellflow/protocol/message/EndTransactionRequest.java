package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readBool;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeBool;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * EndTransaction request v0 (apiKey 13, {@code docs/spec/wire-protocol.md} §6.13).
 *
 * <pre>
 * transactionalId nullable string | producerId int64 | producerEpoch int16 | commit bool
 * </pre>
 *
 * Worked example (id "tx", producer 1000, epoch 1, commit): {@code 0002 7478 00000000000003e8 0001 01}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation (a bool other than 0 or 1 included).
 *
 * @param commit true: commit, false: abort
 */
public record EndTransactionRequest(String transactionalId, long producerId, short producerEpoch, boolean commit)
        implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, transactionalId);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        writeBool(out, commit);
    }

    public static EndTransactionRequest read(ByteBuf body) {
        EndTransactionRequest r = new EndTransactionRequest(
                readNullableString(body, "transactionalId"),
                readInt64(body, "producerId"),
                readInt16(body, "producerEpoch"),
                readBool(body, "commit"));
        ensureFullyRead(body, "EndTransactionRequest");
        return r;
    }
}
