package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readInt8;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.List;

/**
 * ListOffsets request v0 (apiKey 4, {@code docs/spec/wire-protocol.md} §6.5). timestamp is in ms:
 * {@link #EARLIEST_TIMESTAMP}, {@link #LATEST_TIMESTAMP} or >= 0 for a time lookup.
 *
 * <p>Immutable, thread-safe. {@link #read} is strict; isolationLevel other than 0 or 1 throws
 * ProtocolException INVALID_REQUEST. maxNumOffsets <= 0 and timestamps below -2 are per-partition
 * errors (spec §6.5), left to the broker.
 */
public record ListOffsetsRequest(int replicaId, byte isolationLevel, List<ListOffsetsTopic> topics)
        implements ApiMessage {

    public static final long EARLIEST_TIMESTAMP = -2L;
    public static final long LATEST_TIMESTAMP = -1L;

    public ListOffsetsRequest {
        topics = List.copyOf(topics);
    }

    public record ListOffsetsTopic(String topic, List<ListOffsetsPartition> partitions) {
        public ListOffsetsTopic {
            partitions = List.copyOf(partitions);
        }
    }

    public record ListOffsetsPartition(int partition, int currentLeaderEpoch, long timestamp, int maxNumOffsets) {}

    @Override
    public void write(ByteBuf out) {
        out.writeInt(replicaId);
        out.writeByte(isolationLevel);
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, lp) -> {
                p.writeInt(lp.partition());
                p.writeInt(lp.currentLeaderEpoch());
                p.writeLong(lp.timestamp());
                p.writeInt(lp.maxNumOffsets());
            });
        });
    }

    public static ListOffsetsRequest read(ByteBuf body) {
        int replicaId = readInt32(body, "replicaId");
        byte isolationLevel = readInt8(body, "isolationLevel");
        List<ListOffsetsTopic> topics = readArray(
                body,
                "topics",
                b -> new ListOffsetsTopic(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new ListOffsetsPartition(
                                        readInt32(p, "partition"),
                                        readInt32(p, "currentLeaderEpoch"),
                                        readInt64(p, "timestamp"),
                                        readInt32(p, "maxNumOffsets")))));
        ensureFullyRead(body, "ListOffsetsRequest");
        if (isolationLevel != 0 && isolationLevel != 1) {
            throw new ProtocolException(Errors.INVALID_REQUEST, "isolationLevel " + isolationLevel + " not 0 or 1");
        }
        return new ListOffsetsRequest(replicaId, isolationLevel, topics);
    }
}
