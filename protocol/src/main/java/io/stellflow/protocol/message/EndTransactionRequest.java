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
 * EndTransaction request v0 (apiKey 13, {@code docs/spec/wire-protocol.md} §6.13) and v1 (ours,
 * {@code docs/protocol-additions.md}: appends the transaction's sequence, so a late End of an
 * earlier transaction can neither commit nor abort the next one); v2 has v1's layout and says the
 * coordinator begins transactions implicitly ({@link #VERSION_IMPLICIT_BEGIN}).
 *
 * <pre>
 * transactionalId nullable string | producerId int64 | producerEpoch int16 | commit bool
 * v1: | transactionSequence int64
 * </pre>
 *
 * Worked example (id "tx", producer 1000, epoch 1, commit): {@code 0002 7478 00000000000003e8 0001 01};
 * v1 of transaction 3: {@code 0002 7478 00000000000003e8 0001 01 0000000000000003}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation (a bool other than 0 or 1 included).
 *
 * @param commit true: commit, false: abort
 * @param transactionSequence v1: the sequence BeginTransaction v1 answered for the transaction to
 *     end; -1 in v0 (not checked)
 */
public record EndTransactionRequest(
        String transactionalId, long producerId, short producerEpoch, boolean commit, long transactionSequence)
        implements ApiMessage {
    /** The version that carries {@link #transactionSequence}. */
    public static final short VERSION_WITH_SEQUENCE = 1;

    /**
     * v2: bodies as v1; a coordinator that speaks it begins a transaction implicitly (the first
     * registration of the id's sequence + 1 opens it, an End of sequence + 1 completes it empty), so
     * its producers skip BeginTransaction after their first transaction ({@code
     * docs/protocol-additions.md}).
     */
    public static final short VERSION_IMPLICIT_BEGIN = 2;

    /** A v0 request (no transaction sequence). */
    public EndTransactionRequest(String transactionalId, long producerId, short producerEpoch, boolean commit) {
        this(transactionalId, producerId, producerEpoch, commit, -1L);
    }

    /** Writes the v0 layout. */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /** Writes the layout of {@code version} (0, 1 or 2; 2 as 1). */
    public void write(ByteBuf out, short version) {
        writeNullableString(out, transactionalId);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        writeBool(out, commit);
        if (version >= VERSION_WITH_SEQUENCE) {
            out.writeLong(transactionSequence);
        }
    }

    /** Reads a v0 request. */
    public static EndTransactionRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /** Reads a request of {@code version} (0, 1 or 2; 2 as 1). */
    public static EndTransactionRequest read(ByteBuf body, short version) {
        String id = readNullableString(body, "transactionalId");
        long producerId = readInt64(body, "producerId");
        short epoch = readInt16(body, "producerEpoch");
        boolean commit = readBool(body, "commit");
        long sequence = version >= VERSION_WITH_SEQUENCE ? readInt64(body, "transactionSequence") : -1L;
        ensureFullyRead(body, "EndTransactionRequest");
        return new EndTransactionRequest(id, producerId, epoch, commit, sequence);
    }
}
