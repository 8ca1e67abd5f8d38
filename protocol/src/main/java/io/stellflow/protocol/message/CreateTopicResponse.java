package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * CreateTopic response v0 and v1 ({@code docs/spec/wire-protocol.md} §6.14, same layout) and v2
 * (ours). topic must equal the requested name. On success one entry per partition
 * 0..partitionCount-1; on a topic-level error a single entry {@code {-1, errorCode, -1}}. v2
 * appends {@code errorMessage} (nullable string: the controller's reason for a topic-level error,
 * null otherwise) and may carry the codes 28..31 ({@code INVALID_TOPIC}, {@code
 * TOPIC_ALREADY_EXISTS}, {@code INVALID_PARTITIONS}, {@code INVALID_REPLICATION_FACTOR}); v0 and v1
 * carry {@code INVALID_REQUEST} (3) for them instead.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record CreateTopicResponse(String topic, List<CreateTopicPartition> partitions, String errorMessage)
        implements ApiMessage {

    /** The version that carries {@link #errorMessage} and the error codes 28..31. */
    public static final short VERSION_WITH_ERROR_MESSAGE = 2;

    public CreateTopicResponse {
        partitions = List.copyOf(partitions);
    }

    /** A response without an error message (all that v0 and v1 carry). */
    public CreateTopicResponse(String topic, List<CreateTopicPartition> partitions) {
        this(topic, partitions, null);
    }

    /** partition -1 marks a topic-level error entry; leaderEpoch -1 on error. */
    public record CreateTopicPartition(int partition, short errorCode, int leaderEpoch) {}

    /** Writes the v0 layout (the error message is not sent). */
    @Override
    public void write(ByteBuf out) {
        writeString(out, topic, "topic");
        writeArray(out, partitions, (b, p) -> {
            b.writeInt(p.partition());
            b.writeShort(p.errorCode());
            b.writeInt(p.leaderEpoch());
        });
    }

    /** Writes the v0 fields, then {@code errorMessage} when {@code version >= 2}. */
    public void write(ByteBuf out, short version) {
        write(out);
        if (version >= VERSION_WITH_ERROR_MESSAGE) {
            writeNullableString(out, errorMessage);
        }
    }

    /** Reads a v0 (or v1) response. */
    public static CreateTopicResponse read(ByteBuf body) {
        return read(body, (short) 0);
    }

    /**
     * Reads a response of {@code version} (0, 1 or 2).
     *
     * @throws io.stellflow.protocol.ProtocolException INVALID_REQUEST on a strict decoding violation
     */
    public static CreateTopicResponse read(ByteBuf body, short version) {
        String topic = readString(body, "topic");
        List<CreateTopicPartition> partitions = readArray(
                body,
                "partitions",
                b -> new CreateTopicPartition(
                        readInt32(b, "partition"), readInt16(b, "errorCode"), readInt32(b, "leaderEpoch")));
        String errorMessage = version >= VERSION_WITH_ERROR_MESSAGE ? readNullableString(body, "errorMessage") : null;
        ensureFullyRead(body, "CreateTopicResponse");
        return new CreateTopicResponse(topic, partitions, errorMessage);
    }
}
