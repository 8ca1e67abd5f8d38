package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt64;
import static io.stellflow.protocol.WireReader.readNullableBytes;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableBytes;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Produce request v0 (apiKey 2, {@code docs/spec/wire-protocol.md} §6.3), v1 (the same layout) and
 * v2 (ours, {@code docs/protocol-additions.md}): v2 inserts {@code transactionSequence} int64 right
 * after {@code transactionalId}, the sequence BeginTransaction v1 answered (-1 when not transactional
 * or unknown), so a Produce of an earlier transaction is refused instead of joining the next one.
 *
 * <pre>
 * transactionalId nullable string | v2: transactionSequence int64 | acks int16 | timeoutMs int32 | topicData[]
 * </pre>
 *
 * <p>Buffer ownership: on {@link #read}, each {@link PartitionData#records()} is a slice of the body
 * buffer (no copy, no retain), valid only while the frame buffer is alive; retain it (or copy) to
 * keep it longer. It is null when the wire length is -1 (the broker answers that partition with
 * INVALID_RECORD, §6.3 step 4). {@link #write} copies the readable bytes of each records buffer
 * without consuming or releasing it, except into a {@link io.stellflow.protocol.GatheringBuffer},
 * which keeps records of at least {@link io.stellflow.protocol.GatheringBuffer#MIN_APPEND_BYTES}
 * bytes as retained slices (no copy).
 *
 * <p>{@link #read} is strict and applies the request-level checks of §6.3: acks in {0, 1, -1},
 * timeoutMs > 0, non-empty topicData and partitions arrays, no (topic, partition) twice; any violation
 * throws ProtocolException INVALID_REQUEST. Records are not validated here (see
 * {@code RecordBatchValidator}). Immutable record; thread-safe as long as the slices are not released.
 */
public record ProduceRequest(
        String transactionalId, long transactionSequence, short acks, int timeoutMs, List<TopicData> topicData)
        implements ApiMessage {
    /** The version that carries {@link #transactionSequence}. */
    public static final short VERSION_WITH_TXN_SEQUENCE = 2;

    public ProduceRequest {
        topicData = List.copyOf(topicData);
    }

    /** A v0/v1 request (no transaction sequence: -1). */
    public ProduceRequest(String transactionalId, short acks, int timeoutMs, List<TopicData> topicData) {
        this(transactionalId, -1L, acks, timeoutMs, topicData);
    }

    /** One topic of the request. */
    public record TopicData(String topic, List<PartitionData> partitions) {
        public TopicData {
            partitions = List.copyOf(partitions);
        }
    }

    /** One partition: a RecordBatchSet ({@code docs/spec/wire-protocol.md} §7), or null. */
    public record PartitionData(int partition, ByteBuf records) {}

    /** Writes the v0/v1 layout. */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /** Writes the layout of {@code version} (0, 1 or 2). */
    public void write(ByteBuf out, short version) {
        writeNullableString(out, transactionalId);
        if (version >= VERSION_WITH_TXN_SEQUENCE) {
            out.writeLong(transactionSequence);
        }
        out.writeShort(acks);
        out.writeInt(timeoutMs);
        writeArray(out, topicData, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, pd) -> {
                p.writeInt(pd.partition());
                writeNullableBytes(p, pd.records());
            });
        });
    }

    /** Reads a v0/v1 request. */
    public static ProduceRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /** Reads a request of {@code version} (0, 1 or 2); v2 with a null transactionalId must carry -1. */
    public static ProduceRequest read(ByteBuf body, short version) {
        String transactionalId = readNullableString(body, "transactionalId");
        long transactionSequence = -1L;
        if (version >= VERSION_WITH_TXN_SEQUENCE) {
            transactionSequence = readInt64(body, "transactionSequence");
            if (transactionSequence < -1 || (transactionalId == null && transactionSequence != -1)) {
                throw invalid("transactionSequence " + transactionSequence + " with transactionalId " + transactionalId
                        + " (must be -1 without a transactional id, >= -1 with one)");
            }
        }
        short acks = readInt16(body, "acks");
        int timeoutMs = readInt32(body, "timeoutMs");
        List<TopicData> topics = readArray(
                body,
                "topicData",
                b -> new TopicData(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new PartitionData(readInt32(p, "partition"), readNullableBytes(p, "records")))));
        ensureFullyRead(body, "ProduceRequest");
        if (acks != 0 && acks != 1 && acks != -1) {
            throw invalid("acks " + acks + " not in {0, 1, -1}");
        }
        if (timeoutMs <= 0) {
            throw invalid("timeoutMs " + timeoutMs + " must be > 0");
        }
        if (topics.isEmpty()) {
            throw invalid("empty topicData");
        }
        Map<String, Set<Integer>> seen = new HashMap<>();
        for (TopicData t : topics) {
            if (t.partitions().isEmpty()) {
                throw invalid("empty partitions for topic " + t.topic());
            }
            Set<Integer> partitions = seen.computeIfAbsent(t.topic(), k -> new HashSet<>());
            for (PartitionData p : t.partitions()) {
                if (!partitions.add(p.partition())) {
                    throw invalid("topic " + t.topic() + " partition " + p.partition() + " appears twice");
                }
            }
        }
        return new ProduceRequest(transactionalId, transactionSequence, acks, timeoutMs, topics);
    }

    private static ProtocolException invalid(String msg) {
        return new ProtocolException(Errors.INVALID_REQUEST, msg);
    }
}
