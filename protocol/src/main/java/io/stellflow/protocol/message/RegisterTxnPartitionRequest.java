package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;

/**
 * RegisterTxnPartition request v0 (apiKey 29, broker-to-broker, {@code docs/protocol-additions.md}):
 * a partition leader registers a partition in a transaction at the transaction's coordinator before
 * its first transactional append (the KIP-890 defence against hanging transactions).
 *
 * <pre>
 * transactionalId string | producerId int64 | producerEpoch int16 | transactionSequence int64
 * | topic string | partition int32
 * </pre>
 *
 * Worked example (id "tx", producer 1000 epoch 1, sequence unknown (-1), "t"-0): {@code 0002 7478
 * 00000000000003e8 0001 ffffffffffffffff 0001 74 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionSequence the transaction's sequence the leader expects, -1 when it does not know it
 */
public record RegisterTxnPartitionRequest(
        String transactionalId,
        long producerId,
        short producerEpoch,
        long transactionSequence,
        String topic,
        int partition)
        implements ApiMessage {

    @Override
    public void write(ByteBuf out) {
        writeString(out, transactionalId, "transactionalId");
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        out.writeLong(transactionSequence);
        writeString(out, topic, "topic");
        out.writeInt(partition);
    }

    public static RegisterTxnPartitionRequest read(ByteBuf body) {
        RegisterTxnPartitionRequest r = new RegisterTxnPartitionRequest(
                readString(body, "transactionalId"),
                readInt64(body, "producerId"),
                readInt16(body, "producerEpoch"),
                readInt64(body, "transactionSequence"),
                readString(body, "topic"),
                readInt32(body, "partition"));
        ensureFullyRead(body, "RegisterTxnPartitionRequest");
        return r;
    }
}
