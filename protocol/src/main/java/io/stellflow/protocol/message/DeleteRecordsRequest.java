package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DeleteRecords request v0 (apiKey 27, {@code docs/protocol-additions.md}): raise the log start
 * offset of partitions led by the receiving broker, so the records below it are deleted (Kafka's
 * DeleteRecords, its key 21 being our ListGroups).
 *
 * <pre>
 * topics[]
 *   topic        string
 *   partitions[]
 *     partition  int32
 *     offset     int64   the new log start offset; -1 = the high watermark
 * </pre>
 *
 * Worked example (topic "t", partition 0, offset 5): {@code 00000001 0001 74 00000001 00000000
 * 0000000000000005}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation (a negative or short count, a null topic, trailing bytes).
 *
 * @param topics the partitions and their new log start offsets, grouped by topic
 */
public record DeleteRecordsRequest(List<Topic> topics) implements ApiMessage {
    /** Offset meaning "up to the high watermark": every record a consumer can read is deleted. */
    public static final long HIGH_WATERMARK = -1L;

    public DeleteRecordsRequest {
        topics = List.copyOf(topics);
    }

    /** One topic's partitions. */
    public record Topic(String topic, List<Partition> partitions) {
        public Topic {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition and its new log start offset ({@link #HIGH_WATERMARK} for the high watermark). */
    public record Partition(int partition, long offset) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeLong(r.offset());
            });
        });
    }

    public static DeleteRecordsRequest read(ByteBuf body) {
        List<Topic> topics = readArray(
                body,
                "topics",
                b -> new Topic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new Partition(readInt32(p, "partition"), readInt64(p, "offset")))));
        ensureFullyRead(body, "DeleteRecordsRequest");
        return new DeleteRecordsRequest(topics);
    }
}
