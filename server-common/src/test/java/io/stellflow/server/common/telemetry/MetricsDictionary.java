package io.stellflow.server.common.telemetry;

import io.opentelemetry.sdk.metrics.data.MetricDataType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The metrics dictionary ({@code shared/spec/metrics.md}) parsed from its Markdown tables: one row per
 * instrument with its section, kind, unit and attribute keys. Found by walking up from the working
 * directory to the repository's copy {@code docs/spec/metrics.md} (kept identical to the team's
 * {@code shared/spec/metrics.md}; {@code .ci/run} compares the two when {@code ../shared} exists).
 */
public final class MetricsDictionary {
    /** One instrument row: its section title, name, kind, unit (first word), attribute keys. */
    public record Row(
            String section, String name, String kind, String unit, List<String> attributes, boolean diagnostic) {}

    private MetricsDictionary() {}

    /** {@code docs/spec/metrics.md}, found by walking up from the working directory. */
    public static Path locate() {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 5 && dir != null; i++, dir = dir.getParent()) {
            Path candidate = dir.resolve("docs/spec/metrics.md");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException(
                "docs/spec/metrics.md not found above " + Path.of("").toAbsolutePath());
    }

    /**
     * Every instrument row, by name: the dictionary's in its order, then those of {@code
     * docs/metrics-additions.md} (ours, proposed for the dictionary; same table format) beside it.
     */
    public static Map<String, Row> load() throws IOException {
        Map<String, Row> rows = new LinkedHashMap<>();
        Path dictionary = locate();
        read(dictionary, rows);
        Path additions = dictionary.getParent().getParent().resolve("metrics-additions.md");
        if (Files.isRegularFile(additions)) {
            read(additions, rows);
        }
        return rows;
    }

    private static void read(Path file, Map<String, Row> rows) throws IOException {
        String section = "";
        for (String line : Files.readAllLines(file)) {
            if (line.startsWith("## ")) {
                section = line.substring(3).trim();
                continue;
            }
            if (!line.startsWith("| stellflow.")) {
                continue;
            }
            String[] cells = line.split("\\|");
            String name = cells[1].trim();
            String kind = cells[2].trim();
            String unit = cells[3].trim();
            String unitValue = unit.contains(" ") ? unit.substring(0, unit.indexOf(' ')) : unit;
            String rawAttrs = cells[4].trim();
            boolean diagnostic = rawAttrs.contains("when diagnostic");
            String core = rawAttrs.replaceAll("\\(.*\\)", "").trim();
            List<String> attrs = new ArrayList<>();
            for (String a : core.split(",")) {
                if (!a.isBlank()) {
                    attrs.add(a.trim());
                }
            }
            rows.put(name, new Row(section, name, kind, unitValue, List.copyOf(attrs), diagnostic));
        }
    }

    /** The dictionary kind of an exported OpenTelemetry metric type. */
    public static Instrument.Kind kind(MetricDataType type) {
        return switch (type) {
            case LONG_SUM, DOUBLE_SUM -> Instrument.Kind.COUNTER;
            case HISTOGRAM -> Instrument.Kind.HISTOGRAM;
            case LONG_GAUGE, DOUBLE_GAUGE -> Instrument.Kind.GAUGE;
            default -> throw new AssertionError("unexpected type " + type);
        };
    }
}
