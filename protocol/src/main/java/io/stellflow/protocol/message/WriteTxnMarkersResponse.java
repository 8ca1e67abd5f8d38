package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * WriteTxnMarkers response v0 (apiKey 30, broker-to-broker, {@code docs/protocol-additions.md}): one
 * error code per partition of the request, in request order.
 *
 * <pre>
 * partitions[] (topic string | partition int32 | errorCode int16)
 * </pre>
 *
 * Worked example ("t"-0 written): {@code 00000001 0001 74 00000000 0000}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record WriteTxnMarkersResponse(List<PartitionResult> partitions) implements ApiMessage {

    public WriteTxnMarkersResponse {
        partitions = List.copyOf(partitions);
    }

    /** One partition's outcome: NONE once the marker is below the high watermark. */
    public record PartitionResult(String topic, int partition, short errorCode) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, partitions, (b, p) -> {
            writeString(b, p.topic(), "topic");
            b.writeInt(p.partition());
            b.writeShort(p.errorCode());
        });
    }

    public static WriteTxnMarkersResponse read(ByteBuf body) {
        WriteTxnMarkersResponse r = new WriteTxnMarkersResponse(readArray(
                body,
                "partitions",
                b -> new PartitionResult(
                        readString(b, "topic"), readInt32(b, "partition"), readInt16(b, "errorCode"))));
        ensureFullyRead(body, "WriteTxnMarkersResponse");
        return r;
    }
}
