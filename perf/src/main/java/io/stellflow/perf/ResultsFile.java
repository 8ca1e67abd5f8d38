package io.stellflow.perf;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@code results.json} file: a JSON array with one {@link PerfResult} object per case. Appends
 * rewrite the file through a temporary file and an atomic rename. Not safe for concurrent
 * writers.
 */
final class ResultsFile {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    private ResultsFile() {}

    static List<PerfResult> read(Path file) throws IOException {
        if (!Files.exists(file) || Files.size(file) == 0) {
            return new ArrayList<>();
        }
        return JSON.readValue(file.toFile(), new TypeReference<List<PerfResult>>() {});
    }

    static void append(Path file, PerfResult r) throws IOException {
        List<PerfResult> all = read(file);
        all.add(r);
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(parent, "results", ".tmp");
        JSON.writeValue(tmp.toFile(), all);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static String table(List<PerfResult> results) {
        StringBuilder sb = new StringBuilder();
        String fmt = "%-28s %12s %10s %12s %9s %9s %9s%n";
        sb.append(String.format(
                Locale.ROOT, fmt, "case", "records", "MB/s", "records/s", "p50 ms", "p99 ms", "p99.9 ms"));
        for (PerfResult r : results) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%-28s %12d %10.1f %12.0f %9.3f %9.3f %9.3f%n",
                    r.name(),
                    r.records(),
                    r.mbPerS(),
                    r.recordsPerS(),
                    r.p50Ms(),
                    r.p99Ms(),
                    r.p999Ms()));
        }
        return sb.toString();
    }
}
