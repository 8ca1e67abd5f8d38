package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeProducers request v0 (apiKey 34, {@code docs/protocol-additions.md}): the producer state
 * of partitions, answered by their leader.
 *
 * <pre>
 * topics[] (topic string | partitions int32[])
 * </pre>
 *
 * Worked example ("t" partition 0): {@code 00000001 0001 74 00000001 00000000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record DescribeProducersRequest(List<TopicPartitions> topics) implements ApiMessage {

    public DescribeProducersRequest {
        topics = List.copyOf(topics);
    }

    @Override
    public void write(ByteBuf out) {
        TopicPartitions.writeList(out, topics);
    }

    public static DescribeProducersRequest read(ByteBuf body) {
        DescribeProducersRequest r = new DescribeProducersRequest(TopicPartitions.readList(body, "topics"));
        ensureFullyRead(body, "DescribeProducersRequest");
        return r;
    }
}
