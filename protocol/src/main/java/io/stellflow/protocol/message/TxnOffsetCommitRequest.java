package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import java.util.List;

/**
 * TxnOffsetCommit request v0 (apiKey 31, {@code docs/protocol-additions.md}): a transactional
 * producer commits a group's offsets inside its transaction (consume-transform-produce). Sent to the
 * group's coordinator, which registers its {@code __consumer_offsets} partition in the transaction
 * itself (no AddOffsetsToTxn call) and makes the offsets visible only when the transaction commits.
 * The answer is an {@link OffsetCommitResponse} (the same layout).
 *
 * <pre>
 * transactionalId string | groupId string | producerId int64 | producerEpoch int16
 * | transactionSequence int64 | memberId nullable string | memberEpoch int32
 * | topics[]: topic string, partitions[]: partition int32, offset int64, metadata nullable string
 * </pre>
 *
 * Worked example (id "tx", group "g", producer 1000 epoch 1, sequence unknown (-1), no member (null,
 * -1), "t"-0 offset 5, metadata null): {@code 0002 7478 0001 67 00000000000003e8 0001
 * ffffffffffffffff ffff ffffffff 00000001 0001 74 00000001 00000000 0000000000000005 ffff}.
 *
 * <p>Empty ids, a negative offset and oversized metadata are the broker's errors, not the codec's.
 * Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param transactionalId the producer's transactional id
 * @param groupId the group whose offsets are committed
 * @param producerId the producer id of the transactional id
 * @param producerEpoch its epoch (an older one is fenced)
 * @param transactionSequence the transaction's sequence (from BeginTransaction v1), {@link
 *     #UNKNOWN_TRANSACTION_SEQUENCE} when the client does not know it
 * @param memberId the committing member of our group protocol; null or "" for no member check
 * @param memberEpoch the member's epoch; {@link OffsetCommitRequest#NO_MEMBER_EPOCH} for no member
 *     check (as OffsetCommit v1)
 * @param topics the offsets, as OffsetCommit's
 */
public record TxnOffsetCommitRequest(
        String transactionalId,
        String groupId,
        long producerId,
        short producerEpoch,
        long transactionSequence,
        String memberId,
        int memberEpoch,
        List<OffsetCommitTopic> topics)
        implements ApiMessage {

    /** {@link #transactionSequence} of a client that does not know its transaction's sequence. */
    public static final long UNKNOWN_TRANSACTION_SEQUENCE = -1;

    public TxnOffsetCommitRequest {
        topics = List.copyOf(topics);
    }

    @Override
    public void write(ByteBuf out) {
        writeString(out, transactionalId, "transactionalId");
        writeString(out, groupId, "groupId");
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        out.writeLong(transactionSequence);
        writeNullableString(out, memberId);
        out.writeInt(memberEpoch);
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, c) -> {
                p.writeInt(c.partition());
                p.writeLong(c.offset());
                writeNullableString(p, c.metadata());
            });
        });
    }

    /**
     * Reads a v0 request.
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static TxnOffsetCommitRequest read(ByteBuf body) {
        String transactionalId = readString(body, "transactionalId");
        String groupId = readString(body, "groupId");
        long producerId = readInt64(body, "producerId");
        short producerEpoch = readInt16(body, "producerEpoch");
        long transactionSequence = readInt64(body, "transactionSequence");
        String memberId = readNullableString(body, "memberId");
        int memberEpoch = readInt32(body, "memberEpoch");
        List<OffsetCommitTopic> topics = readArray(
                body,
                "topics",
                b -> new OffsetCommitTopic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new OffsetCommitPartition(
                                        readInt32(p, "partition"),
                                        readInt64(p, "offset"),
                                        readNullableString(p, "metadata")))));
        ensureFullyRead(body, "TxnOffsetCommitRequest");
        return new TxnOffsetCommitRequest(
                transactionalId,
                groupId,
                producerId,
                producerEpoch,
                transactionSequence,
                memberId,
                memberEpoch,
                topics);
    }
}
