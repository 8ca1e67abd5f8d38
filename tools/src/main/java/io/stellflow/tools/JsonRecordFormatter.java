package io.stellflow.tools;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.protocol.record.Header;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * {@code --formatter json} of {@code stellflow-console-consumer.sh}: one JSON object per record and
 * line, {@code {"topic":"t","partition":0,"offset":5,"timestamp":1764842400000,"key":"k1",
 * "value":"hello","headers":[{"key":"h","value":"v"}]}}. A key, value or header value is a JSON
 * string when its bytes are valid UTF-8, else its Base64 with a sibling {@code "keyEncoding":
 * "base64"} ({@code valueEncoding}, or {@code "encoding"} inside a header), so no byte is lost; a null
 * one is JSON {@code null}. Written with Jackson's generator (escaping as JSON requires).
 *
 * <p>Thread-safety: immutable apart from the shared, thread-safe {@link JsonFactory}.
 */
final class JsonRecordFormatter implements RecordPrinter {
    private static final JsonFactory JSON =
            JsonFactory.builder().build().disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);

    @Override
    public void write(ConsumerRecord r, OutputStream out) throws IOException {
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("topic", r.topic());
            g.writeNumberField("partition", r.partition());
            g.writeNumberField("offset", r.offset());
            g.writeNumberField("timestamp", r.timestampMs());
            bytesField(g, "key", "keyEncoding", r.key());
            bytesField(g, "value", "valueEncoding", r.value());
            g.writeArrayFieldStart("headers");
            for (Header h : r.headers()) {
                g.writeStartObject();
                g.writeStringField("key", h.key());
                bytesField(g, "value", "encoding", h.value());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        out.write('\n');
    }

    private static void bytesField(JsonGenerator g, String name, String encodingName, byte[] bytes) throws IOException {
        if (bytes == null) {
            g.writeNullField(name);
            return;
        }
        String text = utf8(bytes);
        if (text != null) {
            g.writeStringField(name, text);
        } else {
            g.writeStringField(name, Base64.getEncoder().encodeToString(bytes));
            g.writeStringField(encodingName, "base64");
        }
    }

    /** The text of {@code bytes}, or null when they are not valid UTF-8. */
    private static String utf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
