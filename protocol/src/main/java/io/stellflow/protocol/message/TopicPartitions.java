package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32Array;
import static io.stellflow.protocol.WireReader.readNullableArray;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeInt32Array;
import static io.stellflow.protocol.WireWriter.writeNullableArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * A topic and some of its partitions, the one shape of every assignment list of the group APIs
 * ({@code docs/protocol-additions.md}: ConsumerGroupHeartbeat's owned partitions and assignment,
 * DescribeGroups' assignment and pending revocation, OffsetDelete's request).
 *
 * <pre>
 * topic string | partitions int32[]
 * </pre>
 *
 * Worked example ("t", partitions 0 and 3): {@code 0001 74 00000002 00000000 00000003}.
 *
 * <p>Immutable, thread-safe. The readers throw ProtocolException INVALID_REQUEST on a strict
 * decoding violation (a null topic, a negative count, a body that ends early).
 *
 * @param topic the topic name
 * @param partitions partition numbers, in the order sent
 */
public record TopicPartitions(String topic, List<Integer> partitions) {

    public TopicPartitions {
        partitions = List.copyOf(partitions);
    }

    /** Appends this entry. */
    public void write(ByteBuf out) {
        writeString(out, topic, "topic");
        writeInt32Array(out, partitions);
    }

    /** Reads one entry. */
    public static TopicPartitions read(ByteBuf in) {
        return new TopicPartitions(readString(in, "topic"), readInt32Array(in, "partitions"));
    }

    /** Appends {@code list} as an array. */
    public static void writeList(ByteBuf out, List<TopicPartitions> list) {
        writeArray(out, list, (b, tp) -> tp.write(b));
    }

    /** Appends {@code list} as a nullable array (null: count -1). */
    public static void writeNullableList(ByteBuf out, List<TopicPartitions> list) {
        writeNullableArray(out, list, (b, tp) -> tp.write(b));
    }

    /** Reads an array of entries. */
    public static List<TopicPartitions> readList(ByteBuf in, String what) {
        return readArray(in, what, TopicPartitions::read);
    }

    /** Reads a nullable array of entries (count -1: null). */
    public static List<TopicPartitions> readNullableList(ByteBuf in, String what) {
        return readNullableArray(in, what, TopicPartitions::read);
    }
}
