package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.ConsumerRecord;
import io.stellflow.protocol.record.Header;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --property print.headers} of the console consumer's default formatter (Kafka's format). */
class RecordFormatterTest {
    private static String print(Map<String, String> props, ConsumerRecord r) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RecordFormatter.of(props).write(r, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void printHeadersWritesKeyColonValuePairsBeforeTheKeyAndNoHeadersWhenThereAreNone() throws IOException {
        ConsumerRecord two = new ConsumerRecord(
                "t", 0, 5, 1000, bytes("k"), bytes("v"), List.of(new Header("h1", bytes("a")), new Header("h2", null)));
        assertThat(print(Map.of("print.headers", "true", "print.key", "true"), two))
                .isEqualTo("h1:a,h2:null\tk\tv\n");
        assertThat(print(
                        Map.of(
                                "print.headers", "true",
                                "headers.separator", ";",
                                "headers.key.separator", "=",
                                "print.offset", "true"),
                        two))
                .isEqualTo("Offset:5\th1=a;h2=null\tv\n");

        ConsumerRecord none = new ConsumerRecord("t", 0, 6, 1000, null, bytes("v"), List.of());
        assertThat(print(Map.of("print.headers", "true"), none)).isEqualTo("NO_HEADERS\tv\n");
        assertThat(print(Map.of(), two)).as("off by default").isEqualTo("v\n");
    }
}
