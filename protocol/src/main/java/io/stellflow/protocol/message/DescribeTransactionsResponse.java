package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeTransactions response v0 (apiKey 33, {@code docs/protocol-additions.md}): one entry per
 * requested id, in request order.
 *
 * <pre>
 * transactions[] (errorCode int16 | transactionalId string | state string | transactionTimeoutMs int32
 *   | transactionStartTimeMs int64 | producerId int64 | producerEpoch int16 | transactionSequence int64
 *   | partitions[] (topic string | partition int32))
 * </pre>
 *
 * Worked example ("tx", Ongoing, 60000 ms, started at 1000 ms, producer 1000 epoch 1, sequence 3,
 * "t"-0): {@code 00000001 0000 0002 7478 0007 4f6e676f696e67 0000ea60 00000000000003e8
 * 00000000000003e8 0001 0000000000000003 00000001 0001 74 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record DescribeTransactionsResponse(List<DescribedTransaction> transactions) implements ApiMessage {

    /** The state of an id its coordinator does not know (no TRANSACTIONAL_ID_NOT_FOUND code yet). */
    public static final String DEAD = "Dead";

    public DescribeTransactionsResponse {
        transactions = List.copyOf(transactions);
    }

    /** A partition of the transaction. */
    public record TopicPartition(String topic, int partition) {}

    /**
     * One transactional id at its coordinator.
     *
     * @param errorCode NONE, NOT_COORDINATOR (ask the id's coordinator), COORDINATOR_NOT_AVAILABLE
     *     (loading), INVALID_REQUEST (an empty id); on an error or an unknown id (state {@link #DEAD})
     *     the numbers are -1 and there is no partition
     * @param state Kafka's state name ({@link ListTransactionsRequest#stateFilters}) or {@link #DEAD}
     * @param transactionStartTimeMs when the open (or last) transaction began, epoch ms; -1 before any
     * @param transactionSequence the sequence of the current (or last) transaction, +1 per Begin
     */
    public record DescribedTransaction(
            short errorCode,
            String transactionalId,
            String state,
            int transactionTimeoutMs,
            long transactionStartTimeMs,
            long producerId,
            short producerEpoch,
            long transactionSequence,
            List<TopicPartition> partitions) {

        public DescribedTransaction {
            partitions = List.copyOf(partitions);
        }

        /** An entry carrying only {@code errorCode} (and {@code state}). */
        public static DescribedTransaction of(short errorCode, String transactionalId, String state) {
            return new DescribedTransaction(
                    errorCode, transactionalId, state, -1, -1L, -1L, (short) -1, -1L, List.of());
        }
    }

    @Override
    public void write(ByteBuf out) {
        writeArray(out, transactions, (b, t) -> {
            b.writeShort(t.errorCode());
            writeString(b, t.transactionalId(), "transactionalId");
            writeString(b, t.state(), "state");
            b.writeInt(t.transactionTimeoutMs());
            b.writeLong(t.transactionStartTimeMs());
            b.writeLong(t.producerId());
            b.writeShort(t.producerEpoch());
            b.writeLong(t.transactionSequence());
            writeArray(b, t.partitions(), (bb, p) -> {
                writeString(bb, p.topic(), "topic");
                bb.writeInt(p.partition());
            });
        });
    }

    public static DescribeTransactionsResponse read(ByteBuf body) {
        DescribeTransactionsResponse r = new DescribeTransactionsResponse(readArray(
                body,
                "transactions",
                b -> new DescribedTransaction(
                        readInt16(b, "errorCode"),
                        readString(b, "transactionalId"),
                        readString(b, "state"),
                        readInt32(b, "transactionTimeoutMs"),
                        readInt64(b, "transactionStartTimeMs"),
                        readInt64(b, "producerId"),
                        readInt16(b, "producerEpoch"),
                        readInt64(b, "transactionSequence"),
                        readArray(
                                b,
                                "partitions",
                                bb -> new TopicPartition(readString(bb, "topic"), readInt32(bb, "partition"))))));
        ensureFullyRead(body, "DescribeTransactionsResponse");
        return r;
    }
}
