package io.stellflow.tools;

import io.stellflow.client.ConsumerRecord;
import io.stellflow.protocol.record.Header;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * How {@code stellflow-console-consumer.sh} prints a record, from its {@code --property k=v} keys
 * (Kafka's console-consumer names): {@code print.timestamp} ({@code CreateTime:<ms>}), {@code
 * print.partition} ({@code Partition:<n>}), {@code print.offset} ({@code Offset:<n>}), {@code
 * print.headers} ({@code k1:v1,k2:v2}, or {@code NO_HEADERS}; {@code headers.separator} and {@code
 * headers.key.separator} change the {@code ,} and {@code :}), {@code print.key}, {@code print.value}
 * (default true), each field followed by {@code key.separator}
 * (default a tab) in that order, then the value and {@code line.separator} (default {@code \n}); a
 * null key or value prints as {@code null.literal} (default {@code null}). Keys and values are written
 * as their raw bytes. With no property set the output is exactly the value and {@code \n}.
 *
 * <p>Errors: an unknown key or a {@code print.*} value other than true/false is an {@link
 * IllegalArgumentException} naming it. Thread-safety: immutable.
 */
final class RecordFormatter implements RecordPrinter {
    static final Set<String> KEYS = Set.of(
            "print.timestamp",
            "print.partition",
            "print.offset",
            "print.key",
            "print.value",
            "print.headers",
            "headers.separator",
            "headers.key.separator",
            "key.separator",
            "line.separator",
            "null.literal");

    /** What {@code print.headers} prints for a record without headers (Kafka's word). */
    private static final byte[] NO_HEADERS = "NO_HEADERS".getBytes(StandardCharsets.UTF_8);

    private final boolean timestamp;
    private final boolean partition;
    private final boolean offset;
    private final boolean headers;
    private final boolean key;
    private final boolean value;
    private final byte[] separator;
    private final byte[] lineSeparator;
    private final byte[] nullLiteral;
    private final byte[] headersSeparator;
    private final byte[] headerKeySeparator;

    private RecordFormatter(Map<String, String> props) {
        for (String k : props.keySet()) {
            if (!KEYS.contains(k)) {
                throw new IllegalArgumentException("unknown --property " + k + " (known: "
                        + String.join(", ", KEYS.stream().sorted().toList()) + ")");
            }
        }
        timestamp = flag(props, "print.timestamp", false);
        partition = flag(props, "print.partition", false);
        offset = flag(props, "print.offset", false);
        headers = flag(props, "print.headers", false);
        key = flag(props, "print.key", false);
        value = flag(props, "print.value", true);
        separator = bytes(props.getOrDefault("key.separator", "\t"));
        lineSeparator = bytes(props.getOrDefault("line.separator", "\n"));
        nullLiteral = bytes(props.getOrDefault("null.literal", "null"));
        headersSeparator = bytes(props.getOrDefault("headers.separator", ","));
        headerKeySeparator = bytes(props.getOrDefault("headers.key.separator", ":"));
    }

    /** The formatter for {@code --property} values {@code props} (null or empty: the value alone). */
    static RecordFormatter of(Map<String, String> props) {
        return new RecordFormatter(props == null ? Map.of() : props);
    }

    /** Writes {@code r} and the line separator to {@code out}. */
    @Override
    public void write(ConsumerRecord r, OutputStream out) throws IOException {
        if (timestamp) {
            field(out, "CreateTime:" + r.timestampMs());
        }
        if (partition) {
            field(out, "Partition:" + r.partition());
        }
        if (offset) {
            field(out, "Offset:" + r.offset());
        }
        if (headers) {
            if (r.headers().isEmpty()) {
                out.write(NO_HEADERS);
            }
            for (int i = 0; i < r.headers().size(); i++) {
                Header h = r.headers().get(i);
                if (i > 0) {
                    out.write(headersSeparator);
                }
                out.write(bytes(h.key()));
                out.write(headerKeySeparator);
                out.write(h.value() == null ? nullLiteral : h.value());
            }
            out.write(separator);
        }
        if (key) {
            out.write(r.key() == null ? nullLiteral : r.key());
            out.write(separator);
        }
        if (value) {
            out.write(r.value() == null ? nullLiteral : r.value());
        }
        out.write(lineSeparator);
    }

    private void field(OutputStream out, String text) throws IOException {
        out.write(bytes(text));
        out.write(separator);
    }

    private static boolean flag(Map<String, String> props, String name, boolean dflt) {
        String v = props.get(name);
        if (v == null) {
            return dflt;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException("--property " + name + " must be true or false, got '" + v + "'");
    }

    /** Unescapes {@code \t}, {@code \n} and {@code \r} as a shell user types them, then UTF-8. */
    private static byte[] bytes(String s) {
        return s.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r").getBytes(StandardCharsets.UTF_8);
    }
}
