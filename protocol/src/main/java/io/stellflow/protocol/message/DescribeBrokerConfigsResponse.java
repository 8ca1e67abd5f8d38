package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt32;
import static io.stellflow.protocol.WireReader.readInt8;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readString;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeString;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.List;

/**
 * DescribeBrokerConfigs response v0 (apiKey 28, {@code docs/protocol-additions.md}): the answering
 * broker's id and its configuration entries, sorted by key.
 *
 * <pre>
 * brokerId   int32
 * configs[]
 *   key      string
 *   value    string?    null for a sensitive key (its value is not sent)
 *   source   int8       0 DEFAULT (the broker's built-in default), 1 STATIC (its config file)
 * </pre>
 *
 * Worked example (broker 1, {@code a=b} from its file): {@code 00000001 00000001 0001 61 0001 62 01}.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on a strict
 * decoding violation (a source other than 0 or 1 among them).
 */
public record DescribeBrokerConfigsResponse(int brokerId, List<Entry> configs) implements ApiMessage {
    /** The broker's built-in default. */
    public static final byte SOURCE_DEFAULT = 0;
    /** Set in the broker's config file (or properties) at its start. */
    public static final byte SOURCE_STATIC = 1;

    public DescribeBrokerConfigsResponse {
        configs = List.copyOf(configs);
    }

    /** One key, its effective value (null: sensitive, not sent) and where the value comes from. */
    public record Entry(String key, String value, byte source) {}

    @Override
    public void write(ByteBuf out) {
        out.writeInt(brokerId);
        writeArray(out, configs, (b, e) -> {
            writeString(b, e.key(), "key");
            writeNullableString(b, e.value());
            b.writeByte(e.source());
        });
    }

    public static DescribeBrokerConfigsResponse read(ByteBuf body) {
        int brokerId = readInt32(body, "brokerId");
        List<Entry> configs = readArray(body, "configs", b -> {
            String key = readString(b, "key");
            String value = readNullableString(b, "value");
            byte source = readInt8(b, "source");
            if (source != SOURCE_DEFAULT && source != SOURCE_STATIC) {
                throw new ProtocolException(Errors.INVALID_REQUEST, "source must be 0 or 1, got " + source);
            }
            return new Entry(key, value, source);
        });
        ensureFullyRead(body, "DescribeBrokerConfigsResponse");
        return new DescribeBrokerConfigsResponse(brokerId, configs);
    }
}
