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
 * DescribeProducers response v0 (apiKey 34, {@code docs/protocol-additions.md}): per requested
 * partition, in request order, the producers its leader's log keeps state for, ascending by id.
 *
 * <pre>
 * topics[] (topic string | partitions[] (partition int32 | errorCode int16
 *   | producers[] (producerId int64 | producerEpoch int16 | lastSequence int32 | lastTimestampMs int64
 *     | coordinatorEpoch int32 | currentTxnStartOffset int64 | transactionSequence int64)))
 * </pre>
 *
 * Worked example ("t"-0, producer 1000 epoch 1, last sequence 4 at 2000 ms, no marker yet, a
 * transaction open at offset 7 with sequence 3): {@code 00000001 0001 74 00000001 00000000 0000
 * 00000001 00000000000003e8 0001 00000004 00000000000007d0 ffffffff 0000000000000007
 * 0000000000000003}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record DescribeProducersResponse(List<Topic> topics) implements ApiMessage {

    public DescribeProducersResponse {
        topics = List.copyOf(topics);
    }

    /** One topic's partitions. */
    public record Topic(String topic, List<Partition> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * One partition.
     *
     * @param errorCode NONE, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION (then no producer)
     */
    public record Partition(int partition, short errorCode, List<Producer> producers) {
        public Partition {
            producers = List.copyOf(producers);
        }
    }

    /**
     * One producer id's state in the partition.
     *
     * @param lastSequence the last sequence of its last batch in its epoch, -1 when none
     * @param lastTimestampMs when it last appended, epoch ms (the broker's clock, or the batch's max
     *     timestamp when the state was replayed from the log)
     * @param coordinatorEpoch the highest coordinator epoch of its COMMIT/ABORT markers, -1 when none
     * @param currentTxnStartOffset the first offset (the BEGIN marker) of its open transaction, -1
     *     when none is open
     * @param transactionSequence the open transaction's sequence, -1 when none is open
     */
    public record Producer(
            long producerId,
            short producerEpoch,
            int lastSequence,
            long lastTimestampMs,
            int coordinatorEpoch,
            long currentTxnStartOffset,
            long transactionSequence) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (bp, p) -> {
                bp.writeInt(p.partition());
                bp.writeShort(p.errorCode());
                writeArray(bp, p.producers(), (bb, s) -> {
                    bb.writeLong(s.producerId());
                    bb.writeShort(s.producerEpoch());
                    bb.writeInt(s.lastSequence());
                    bb.writeLong(s.lastTimestampMs());
                    bb.writeInt(s.coordinatorEpoch());
                    bb.writeLong(s.currentTxnStartOffset());
                    bb.writeLong(s.transactionSequence());
                });
            });
        });
    }

    public static DescribeProducersResponse read(ByteBuf body) {
        DescribeProducersResponse r = new DescribeProducersResponse(readArray(
                body,
                "topics",
                b -> new Topic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                bp -> new Partition(
                                        readInt32(bp, "partition"),
                                        readInt16(bp, "errorCode"),
                                        readArray(
                                                bp,
                                                "producers",
                                                bb -> new Producer(
                                                        readInt64(bb, "producerId"),
                                                        readInt16(bb, "producerEpoch"),
                                                        readInt32(bb, "lastSequence"),
                                                        readInt64(bb, "lastTimestampMs"),
                                                        readInt32(bb, "coordinatorEpoch"),
                                                        readInt64(bb, "currentTxnStartOffset"),
                                                        readInt64(bb, "transactionSequence"))))))));
        ensureFullyRead(body, "DescribeProducersResponse");
        return r;
    }
}
