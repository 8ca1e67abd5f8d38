package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32Array;
import static io.stellflow.protocol.WireReader.readNullableArray;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeInt32Array;
import static io.stellflow.protocol.WireWriter.writeNullableArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.function.Function;

/**
 * OffsetFetch request (apiKey 6): v0 is {@code docs/spec/wire-protocol.md} §6.7; v1 ({@code
 * docs/protocol-additions.md}) has the same layout but {@code topics} is a nullable array, count -1
 * asking for every partition the group has an offset for.
 *
 * <pre>
 * groupId string | topics[] (v1: nullable): topic string, partitions int32[]
 * </pre>
 *
 * Worked example (v0, group "g", topic "t", partitions 0 and 1): {@code 0001 67 00000001 0001 74
 * 00000002 00000000 00000001}; v1 with every partition: {@code 0001 67 ffffffff}.
 *
 * <p>{@code groupId} is read as a nullable string: null or empty is the broker's INVALID_REQUEST,
 * header-only (spec §6.7). Immutable, thread-safe. {@link #read} throws ProtocolException
 * INVALID_REQUEST on any strict decoding violation (including count -1 in v0).
 *
 * @param groupId the group (null only as read from a malformed request)
 * @param topics the partitions asked for; null only in v1 (every partition with an offset)
 */
public record OffsetFetchRequest(String groupId, List<OffsetFetchTopic> topics) implements ApiMessage {

    /** The version whose {@link #topics} may be null. */
    public static final short VERSION_WITH_ALL_TOPICS = 1;

    public OffsetFetchRequest {
        topics = topics == null ? null : List.copyOf(topics);
    }

    /** One topic's partitions. */
    public record OffsetFetchTopic(String topic, List<Integer> partitions) {
        public OffsetFetchTopic {
            partitions = List.copyOf(partitions);
        }
    }

    /** Writes the v0 layout. */
    @Override
    public void write(ByteBuf out) {
        write(out, (short) 0);
    }

    /**
     * Writes the layout of {@code version} (0 or 1).
     *
     * @throws IllegalArgumentException {@link #topics} null for v0, which cannot carry it
     */
    public void write(ByteBuf out, short version) {
        if (topics == null && version < VERSION_WITH_ALL_TOPICS) {
            throw new IllegalArgumentException("OffsetFetch v" + version + " has no null topics (every partition)");
        }
        writeNullableString(out, groupId);
        writeNullableArray(out, topics, (b, t) -> {
            writeString(b, t.topic(), "topic");
            writeInt32Array(b, t.partitions());
        });
    }

    /** Reads a v0 request. */
    public static OffsetFetchRequest read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /**
     * Reads a request of {@code version} (0 or 1).
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static OffsetFetchRequest read(ByteBuf body, short version) {
        String groupId = readNullableString(body, "groupId");
        Function<ByteBuf, OffsetFetchTopic> topic =
                b -> new OffsetFetchTopic(readString(b, "topic"), readInt32Array(b, "partitions"));
        List<OffsetFetchTopic> topics = version >= VERSION_WITH_ALL_TOPICS
                ? readNullableArray(body, "topics", topic)
                : readArray(body, "topics", topic);
        ensureFullyRead(body, "OffsetFetchRequest");
        return new OffsetFetchRequest(groupId, topics);
    }
}
