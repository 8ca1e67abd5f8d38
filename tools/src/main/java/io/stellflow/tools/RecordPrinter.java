package io.stellflow.tools;

import io.stellflow.client.ConsumerRecord;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.Set;

/**
 * How {@code stellflow-console-consumer.sh} prints records, chosen by {@code --formatter}: {@code
 * default} ({@link RecordFormatter}, the {@code --property print.*} fields; Kafka's class names {@code
 * kafka.tools.DefaultMessageFormatter} and {@code org.apache.kafka.tools.consumer.DefaultMessageFormatter}
 * mean the same) or {@code json} ({@link JsonRecordFormatter}, one object per line; it takes no {@code
 * --property}). Formatter classes of one's own are not loaded: Kafka's {@code --formatter} takes any
 * class, ours names a built-in.
 */
interface RecordPrinter {
    /** Names {@code --formatter} takes for the default formatter. */
    Set<String> DEFAULT_NAMES = Set.of(
            "default",
            "kafka.tools.DefaultMessageFormatter",
            "org.apache.kafka.tools.consumer.DefaultMessageFormatter");

    /** Writes {@code r}, one record, with its line end. */
    void write(ConsumerRecord r, OutputStream out) throws IOException;

    /**
     * The printer for {@code --formatter name} (null: default) and {@code --property} values.
     *
     * @throws IllegalArgumentException naming an unknown formatter, or a property the formatter does not
     *     take
     */
    static RecordPrinter of(String name, Map<String, String> props) {
        if (name == null || DEFAULT_NAMES.contains(name)) {
            return RecordFormatter.of(props);
        }
        if (name.equals("json")) {
            if (props != null && !props.isEmpty()) {
                throw new IllegalArgumentException("--formatter json takes no --property (got "
                        + String.join(", ", props.keySet().stream().sorted().toList()) + ")");
            }
            return new JsonRecordFormatter();
        }
        throw new IllegalArgumentException("unknown --formatter '" + name + "': the built-in formatters are default"
                + " and json (Kafka's DefaultMessageFormatter class names mean default); formatter classes of"
                + " one's own are not supported");
    }
}
