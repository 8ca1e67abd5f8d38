package io.stellflow.perf.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JSON log records for the perf tools and payload files in the format of Kafka's --payload-file. */
class PayloadsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void jsonLogRecordsAreArraysOfWholeLinesNearTheTargetSizeAndTheSameForASeed() throws Exception {
        byte[][] records = Payloads.jsonLogRecords(42, 200, 1024);
        assertThat(records).hasNumberOfRows(200);
        long total = 0;
        for (byte[] r : records) {
            assertThat(r.length).isBetween(500, 1024);
            assertThat(r).doesNotContain((byte) '\n');
            JsonNode array = JSON.readTree(r);
            assertThat(array.isArray()).isTrue();
            assertThat(array.size()).isGreaterThanOrEqualTo(1);
            assertThat(array.get(0).get("level").asText()).isNotEmpty();
            total += r.length;
        }
        assertThat(total / 200).isBetween(800L, 1024L); // ~1 KiB records on average
        assertThat(Payloads.jsonLogRecords(42, 200, 1024)).isDeepEqualTo(records);
        assertThat(Payloads.jsonLogRecords(43, 1, 1024)[0]).isNotEqualTo(records[0]);
        // A target below one line still gives one whole line per record.
        assertThat(JSON.readTree(Payloads.jsonLogRecords(1, 1, 10)[0]).size()).isEqualTo(1);
    }

    @Test
    void aPayloadFileRoundTripsOneRecordPerLine(@TempDir Path dir) throws Exception {
        byte[][] records = Payloads.jsonLogRecords(7, 50, 600);
        Path file = dir.resolve("payload.txt");
        Payloads.writeFile(file, records);
        assertThat(Files.readAllLines(file, StandardCharsets.UTF_8)).hasSize(50);
        assertThat(Payloads.fromFile(file)).isDeepEqualTo(records);
        assertThat(Payloads.totalBytes(records)).isEqualTo(Files.size(file) - 50);
    }

    @Test
    void emptyLinesAreSkippedAndAFileWithoutRecordsIsAnError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("p.txt");
        Files.writeString(file, "a\n\nbc\n\n");
        assertThat(Payloads.fromFile(file)).hasNumberOfRows(2);
        Files.writeString(file, "\n\n");
        assertThatThrownBy(() -> Payloads.fromFile(file))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payload file " + file + " holds no record (no non-empty line)");
        assertThatThrownBy(() -> Payloads.writeFile(file, new byte[][] {"a\nb".getBytes(StandardCharsets.UTF_8)}))
                .hasMessageContaining("newline");
    }
}
