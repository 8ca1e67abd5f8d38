package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireWriter.writeNullableString;

import io.netty.buffer.ByteBuf;

/**
 * BeginTransaction and EndTransaction response v0 (apiKeys 12 and 13, {@code
 * docs/spec/wire-protocol.md} §6.13): the same layout for both; EndTransaction v1 answers it too.
 * BeginTransaction v1 (ours, {@code docs/protocol-additions.md}) appends the sequence of the
 * transaction it opened, which the producer then sends in Produce v2 and EndTransaction v1.
 *
 * <pre>
 * errorCode int16 | producerId int64 | producerEpoch int16 | transactionState nullable string
 * BeginTransaction v1: | transactionSequence int64   (-1 on error)
 * </pre>
 *
 * Worked example (a commit of producer 1000 epoch 1): {@code 0000 00000000000003e8 0001 0009
 * 434f4d4d4954544544} ("COMMITTED"); a BeginTransaction v1 answer opening transaction 3: {@code 0000
 * 00000000000003e8 0001 0007 4f4e474f494e47 0000000000000003} ("ONGOING").
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param producerId echo of the request
 * @param producerEpoch echo of the request
 * @param transactionState {@code ONGOING} after Begin, {@code COMMITTED} or {@code ABORTED} after End,
 *     {@link #FAILED} on error
 * @param transactionSequence the transaction's sequence (written by BeginTransaction v1 only); -1 on
 *     error or when unknown
 */
public record TransactionResponse(
        short errorCode, long producerId, short producerEpoch, String transactionState, long transactionSequence)
        implements ApiMessage {
    /** The state answered with an error. */
    public static final String FAILED = "FAILED";

    /** The BeginTransaction version whose response carries {@link #transactionSequence}. */
    public static final short BEGIN_VERSION_WITH_SEQUENCE = 1;

    /** A response without a sequence (v0, EndTransaction). */
    public TransactionResponse(short errorCode, long producerId, short producerEpoch, String transactionState) {
        this(errorCode, producerId, producerEpoch, transactionState, -1L);
    }

    /** Writes the layout without the sequence (v0, EndTransaction v0 and v1). */
    @Override
    public void write(ByteBuf out) {
        write(out, false);
    }

    /** Writes the layout, with {@link #transactionSequence} when {@code withSequence} (BeginTransaction v1). */
    public void write(ByteBuf out, boolean withSequence) {
        out.writeShort(errorCode);
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        writeNullableString(out, transactionState);
        if (withSequence) {
            out.writeLong(transactionSequence);
        }
    }

    /** Reads the layout without the sequence. */
    public static TransactionResponse read(ByteBuf body) {
        return read(body, false);
    }

    /** Reads the layout, with the sequence when {@code withSequence} (BeginTransaction v1). */
    public static TransactionResponse read(ByteBuf body, boolean withSequence) {
        short code = readInt16(body, "errorCode");
        long producerId = readInt64(body, "producerId");
        short epoch = readInt16(body, "producerEpoch");
        String state = readNullableString(body, "transactionState");
        long sequence = withSequence ? readInt64(body, "transactionSequence") : -1L;
        ensureFullyRead(body, "TransactionResponse");
        return new TransactionResponse(code, producerId, epoch, state, sequence);
    }
}
