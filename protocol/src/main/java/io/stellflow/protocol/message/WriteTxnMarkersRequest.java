package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readBool;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * WriteTxnMarkers request v0 (apiKey 30, broker-to-broker, {@code docs/protocol-additions.md}): a
 * transaction coordinator asks a partition leader to append one transaction's COMMIT or ABORT
 * marker to each listed partition and to answer once the high watermark passed it (or after
 * {@code timeoutMs}).
 *
 * <pre>
 * producerId int64 | producerEpoch int16 | commit bool | coordinatorEpoch int32
 * | transactionSequence int64 | timeoutMs int32 | partitions[] (topic string | partition int32)
 * </pre>
 *
 * Worked example (producer 1000 epoch 1, commit, coordinator epoch 2, sequence 3, 5000 ms, "t"-0):
 * {@code 00000000000003e8 0001 01 00000002 0000000000000003 00001388 00000001 0001 74 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param timeoutMs how long the leader waits for the high watermark to pass the markers
 */
public record WriteTxnMarkersRequest(
        long producerId,
        short producerEpoch,
        boolean commit,
        int coordinatorEpoch,
        long transactionSequence,
        int timeoutMs,
        List<TopicPartition> partitions)
        implements ApiMessage {

    public WriteTxnMarkersRequest {
        partitions = List.copyOf(partitions);
    }

    /** One partition to write the marker to. */
    public record TopicPartition(String topic, int partition) {}

    @Override
    public void write(ByteBuf out) {
        out.writeLong(producerId);
        out.writeShort(producerEpoch);
        out.writeByte(commit ? 1 : 0);
        out.writeInt(coordinatorEpoch);
        out.writeLong(transactionSequence);
        out.writeInt(timeoutMs);
        writeArray(out, partitions, (b, p) -> {
            writeString(b, p.topic(), "topic");
            b.writeInt(p.partition());
        });
    }

    public static WriteTxnMarkersRequest read(ByteBuf body) {
        WriteTxnMarkersRequest r = new WriteTxnMarkersRequest(
                readInt64(body, "producerId"),
                readInt16(body, "producerEpoch"),
                readBool(body, "commit"),
                readInt32(body, "coordinatorEpoch"),
                readInt64(body, "transactionSequence"),
                readInt32(body, "timeoutMs"),
                readArray(
                        body,
                        "partitions",
                        b -> new TopicPartition(readString(b, "topic"), readInt32(b, "partition"))));
        ensureFullyRead(body, "WriteTxnMarkersRequest");
        return r;
    }
}
