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
import io.stellflow.protocol.Errors;
import java.util.List;

/**
 * OffsetFetch response (apiKey 6): v0 is {@code docs/spec/wire-protocol.md} §6.7, where a
 * partition's {@code errorCode} is its <b>last</b> field; v1 ({@code docs/protocol-additions.md})
 * appends a group-level {@code errorCode} after the topics.
 *
 * <pre>
 * topics[]: topic string, partitions[]: partition int32, offset int64, metadata nullable string, errorCode int16
 * v1 only: errorCode int16
 * </pre>
 *
 * Worked example (v0, "t" partition 0 with no committed offset): {@code 00000001 0001 74 00000001
 * 00000000 ffffffffffffffff 0000 0000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 *
 * @param topics one entry per request topic, in request order (v1 with null request topics: every
 *     partition with an offset)
 * @param errorCode the group-level code (v1 only; {@link Errors#NONE} as read from v0)
 */
public record OffsetFetchResponse(List<OffsetFetchTopicResponse> topics, short errorCode) implements ApiMessage {

    /** The version that carries the group-level {@link #errorCode}. */
    public static final short VERSION_WITH_ERROR_CODE = 1;

    /** Offset of a partition without a committed offset (spec §6.7). */
    public static final long NO_OFFSET = -1L;

    public OffsetFetchResponse {
        topics = List.copyOf(topics);
    }

    /** A response without a group-level error. */
    public OffsetFetchResponse(List<OffsetFetchTopicResponse> topics) {
        this(topics, Errors.NONE);
    }

    /** One topic's offsets. */
    public record OffsetFetchTopicResponse(String topic, List<OffsetFetchPartitionResponse> partitions) {
        public OffsetFetchTopicResponse {
            partitions = List.copyOf(partitions);
        }
    }

    /**
     * One partition's committed offset.
     *
     * @param offset the committed offset, or {@link #NO_OFFSET}
     * @param metadata the committed metadata, or "" when none
     */
    public record OffsetFetchPartitionResponse(int partition, long offset, String metadata, short errorCode) {}

    /** Writes the v0 layout. */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /**
     * Writes the layout of {@code version} (0 or 1).
     *
     * @throws IllegalArgumentException a group-level {@link #errorCode} for v0, which cannot carry
     *     it (the broker puts it on every partition instead)
     */
    public void write(ByteBuf out, short version) {
        if (errorCode != Errors.NONE && version < VERSION_WITH_ERROR_CODE) {
            throw new IllegalArgumentException(
                    "OffsetFetch v" + version + " has no group-level errorCode " + Errors.name(errorCode));
        }
        writeArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeArray(b, t.partitions(), (p, r) -> {
                p.writeInt(r.partition());
                p.writeLong(r.offset());
                writeNullableString(p, r.metadata());
                p.writeShort(r.errorCode());
            });
        });
        if (version >= VERSION_WITH_ERROR_CODE) {
            out.writeShort(errorCode);
        }
    }

    /** Reads a v0 response. */
    public static OffsetFetchResponse read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /**
     * Reads a response of {@code version} (0 or 1).
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static OffsetFetchResponse read(ByteBuf body, short version) {
        List<OffsetFetchTopicResponse> topics = readArray(
                body,
                "topics",
                b -> new OffsetFetchTopicResponse(
                        readString(b, "topic"),
                        readArray(
                                b,
                                "partitions",
                                p -> new OffsetFetchPartitionResponse(
                                        readInt32(p, "partition"),
                                        readInt64(p, "offset"),
                                        readNullableString(p, "metadata"),
                                        readInt16(p, "errorCode")))));
        short errorCode = version >= VERSION_WITH_ERROR_CODE ? readInt16(body, "errorCode") : Errors.NONE;
        ensureFullyRead(body, "OffsetFetchResponse");
        return new OffsetFetchResponse(topics, errorCode);
    }
}
