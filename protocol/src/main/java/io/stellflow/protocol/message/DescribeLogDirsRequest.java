package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readNullableArray;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeNullableArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeLogDirs request v0 (apiKey 26, {@code docs/protocol-additions.md}): the log dirs of the
 * broker that receives it and the partitions it holds in each, for {@code stellflow-log-dirs.sh}.
 *
 * <pre>
 * topics string[]?      null = every partition on this broker; else only these topics
 * </pre>
 *
 * Worked example (topic "t" only): {@code 00000001 0001 74}; every topic: {@code ffffffff}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation (a count below -1, a null topic, trailing bytes).
 *
 * @param topics the topics to report, or null for all
 */
public record DescribeLogDirsRequest(List<String> topics) implements ApiMessage {
    public DescribeLogDirsRequest {
        topics = topics == null ? null : List.copyOf(topics);
    }

    @Override
    public void write(ByteBuf out) {
        writeNullableArray(out, topics, (b, t) -> writeString(b, t, "topic"));
    }

    public static DescribeLogDirsRequest read(ByteBuf body) {
        DescribeLogDirsRequest r =
                new DescribeLogDirsRequest(readNullableArray(body, "topics", b -> readString(b, "topic")));
        ensureFullyRead(body, "DescribeLogDirsRequest");
        return r;
    }
}
