package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt64;

import io.netty.buffer.ByteBuf;

/**
 * RegisterTxnPartition response v0 (apiKey 29, broker-to-broker, {@code docs/protocol-additions.md}).
 *
 * <pre>
 * errorCode int16 | transactionSequence int64
 * </pre>
 *
 * Worked example (registered in transaction 3): {@code 0000 0000000000000003}; on an error the
 * sequence is -1.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionSequence the sequence of the transaction the partition is now part of
 */
public record RegisterTxnPartitionResponse(short errorCode, long transactionSequence) implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        out.writeShort(errorCode);
        out.writeLong(transactionSequence);
    }

    public static RegisterTxnPartitionResponse read(ByteBuf body) {
        RegisterTxnPartitionResponse r =
                new RegisterTxnPartitionResponse(readInt16(body, "errorCode"), readInt64(body, "transactionSequence"));
        ensureFullyRead(body, "RegisterTxnPartitionResponse");
        return r;
    }
}
