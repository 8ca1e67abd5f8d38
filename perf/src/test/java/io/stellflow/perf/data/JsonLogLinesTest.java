package io.stellflow.perf.data;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;

class JsonLogLinesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theSameSeedGivesTheSameBytesAndAnotherSeedOthers() {
        byte[] a = JsonLogLines.generate(42, 100_000);
        assertThat(JsonLogLines.generate(42, 100_000)).isEqualTo(a);
        assertThat(JsonLogLines.generate(43, 100_000)).isNotEqualTo(a);
        assertThat(a).hasSize(100_000);
        assertThat(a[a.length - 1]).isEqualTo((byte) '\n');
    }

    @Test
    void everyLineIsJsonWithRealisticVariety() throws Exception {
        JsonLogLines gen = new JsonLogLines(7);
        Set<String> levels = new HashSet<>();
        Set<String> services = new HashSet<>();
        Set<Integer> users = new HashSet<>();
        Set<String> urls = new HashSet<>();
        Set<String> messages = new HashSet<>();
        String previousTs = "";
        int slow = 0;
        for (int i = 0; i < 2000; i++) {
            String line = gen.nextLine();
            assertThat(line).endsWith("\n").doesNotContain("%");
            JsonNode n = JSON.readTree(line);
            assertThat(n.get("ts").asText()).isGreaterThanOrEqualTo(previousTs);
            previousTs = n.get("ts").asText();
            assertThat(n.get("traceId").asText()).hasSize(32);
            levels.add(n.get("level").asText());
            services.add(n.get("service").asText());
            users.add(n.get("userId").asInt());
            urls.add(n.get("url").asText());
            messages.add(n.get("msg").asText());
            slow += n.get("latencyMs").asInt() > 50 ? 1 : 0;
        }
        assertThat(levels).contains("INFO", "WARN", "ERROR", "DEBUG");
        assertThat(services).hasSize(12);
        assertThat(users).hasSizeBetween(1000, 1900); // a hot set of 100 users repeats
        assertThat(urls.size()).isGreaterThan(1000);
        assertThat(messages.size()).isGreaterThan(1000);
        assertThat(slow).isBetween(100, 400); // ~10% long tail
    }

    @Test
    void compressesLikeALogNotLikeZerosOrNoise() {
        byte[] data = JsonLogLines.generate(42, 1 << 20);
        Deflater deflater = new Deflater(6);
        deflater.setInput(data);
        deflater.finish();
        byte[] out = new byte[data.length];
        int n = deflater.deflate(out);
        deflater.end();
        double ratio = (double) data.length / n;
        assertThat(ratio).as("deflate ratio").isBetween(2.5, 8.0);
        assertThat(new String(data, 0, 200, StandardCharsets.UTF_8)).startsWith("{\"ts\":\"2026-12-04T00:00:00.0");
    }
}
