package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readInt64Array;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeInt64Array;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ListOffsets response v0 ({@code docs/spec/wire-protocol.md} §6.5): per partition the resolved
 * offset (-1 on error), the record timestamp in ms for time lookups (-1 otherwise) and up to
 * maxNumOffsets consecutive offsets.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record ListOffsetsResponse(List<ListOffsetsTopicResponse> topics) implements ApiMessage {

    public ListOffsetsResponse {
        topics = List.copyOf(topics);
    }

    public record ListOffsetsTopicResponse(String topic, List<ListOffsetsPartitionResponse> partitions) {
        public ListOffsetsTopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    public record ListOffsetsPartitionResponse(
            int partition, short errorCode, int leaderEpoch, long timestamp, long offset, List<Long> offsets) {
        public ListOffsetsPartitionResponse {
            offsets = List.copyOf(offsets);
        }
    }

    @Override
    public void write(ByteBuf out) {
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeShort(r.errorCode());
                p.writeInt(r.leaderEpoch());
                p.writeLong(r.timestamp());
                p.writeLong(r.offset());
                writeInt64Array(p, r.offsets());
            });
        });
    }

    public static ListOffsetsResponse read(ByteBuf body) {
        List<ListOffsetsTopicResponse> topics = readArray(
                body,
                "topics",
                b -> new ListOffsetsTopicResponse(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new ListOffsetsPartitionResponse(
                                        readInt32(p, "partition"),
                                        readInt16(p, "errorCode"),
                                        readInt32(p, "leaderEpoch"),
                                        readInt64(p, "timestamp"),
                                        readInt64(p, "offset"),
                                        readInt64Array(p, "offsets")))));
        ensureFullyRead(body, "ListOffsetsResponse");
        return new ListOffsetsResponse(topics);
    }
}
