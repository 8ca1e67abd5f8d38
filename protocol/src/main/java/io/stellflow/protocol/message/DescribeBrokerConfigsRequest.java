package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readNullableArray;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeNullableArray;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * DescribeBrokerConfigs request v0 (apiKey 28, {@code docs/protocol-additions.md}): the effective
 * static configuration of the broker that receives it, for {@code stellflow-configs.sh --entity-type
 * brokers --describe} and the topics tool's min-ISR filters.
 *
 * <pre>
 * keys string[]?      null = every key the broker reports; else only these keys
 * </pre>
 *
 * Worked example (key "a" only): {@code 00000001 0001 61}; every key: {@code ffffffff}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation (a count below -1, a null key, trailing bytes).
 *
 * @param keys the keys to report, or null for all
 */
public record DescribeBrokerConfigsRequest(List<String> keys) implements ApiMessage {
    public DescribeBrokerConfigsRequest {
        keys = keys == null ? null : List.copyOf(keys);
    }

    @Override
    public void write(ByteBuf out) {
        writeNullableArray(out, keys, (b, k) -> writeString(b, k, "key"));
    }

    public static DescribeBrokerConfigsRequest read(ByteBuf body) {
        DescribeBrokerConfigsRequest r =
                new DescribeBrokerConfigsRequest(readNullableArray(body, "keys", b -> readString(b, "key")));
        ensureFullyRead(body, "DescribeBrokerConfigsRequest");
        return r;
    }
}
