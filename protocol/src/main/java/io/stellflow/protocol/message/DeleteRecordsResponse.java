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
 * DeleteRecords response v0 (apiKey 27, {@code docs/protocol-additions.md}): per partition an error
 * code and the low watermark, the leader's log start offset after the request (-1 on error).
 *
 * <pre>
 * topics[]
 *   topic           string
 *   partitions[]
 *     partition     int32
 *     errorCode     int16
 *     lowWatermark  int64
 * </pre>
 *
 * Worked example (topic "t", partition 0, no error, low watermark 5): {@code 00000001 0001 74
 * 00000001 00000000 0000 0000000000000005}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation.
 */
public record DeleteRecordsResponse(List<Topic> topics) implements ApiMessage {
    public DeleteRecordsResponse {
        topics = List.copyOf(topics);
    }

    /** One topic's partition results. */
    public record Topic(String topic, List<Partition> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition's outcome: its log start offset now, or -1 with an error. */
    public record Partition(int partition, short errorCode, long lowWatermark) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeShort(r.errorCode());
                p.writeLong(r.lowWatermark());
            });
        });
    }

    public static DeleteRecordsResponse read(ByteBuf body) {
        List<Topic> topics = readArray(
                body,
                "topics",
                b -> new Topic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new Partition(
                                        readInt32(p, "partition"),
                                        readInt16(p, "errorCode"),
                                        readInt64(p, "lowWatermark")))));
        ensureFullyRead(body, "DeleteRecordsResponse");
        return new DeleteRecordsResponse(topics);
    }
}
