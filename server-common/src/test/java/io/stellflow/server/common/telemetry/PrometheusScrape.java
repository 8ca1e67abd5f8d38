package io.stellflow.server.common.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scrape of a {@link MetricsEndpoint} over HTTP, parsed from the Prometheus text exposition format:
 * the test helper of the broker's and the controller's telemetry tests.
 */
public final class PrometheusScrape {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample line: metric name, labels in exposition order, value. */
    public record Sample(String name, Map<String, String> labels, double value) {}

    private PrometheusScrape() {}

    /** Scrapes the endpoint on 127.0.0.1:{@code port} and parses the text exposition format into samples. */
    public static List<Sample> scrape(int port) throws Exception {
        return parse(fetch(port, "text/plain"));
    }

    /**
     * {@link #scrape}, or no samples while the endpoint cannot be scraped (not up yet, or a scrape
     * that failed): for polling until a series appears.
     */
    public static List<Sample> scrapeOrEmpty(int port) {
        try {
            return scrape(port);
        } catch (Exception e) {
            return new ArrayList<>();
        }
    }

    /** The body of {@code GET /metrics} in the format {@code accept} asks for (text or OpenMetrics). */
    public static String fetch(int port, String accept) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .header("Accept", accept)
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    /** The samples of an exposition (comment lines skipped). */
    public static List<Sample> parse(String body) {
        List<Sample> samples = new ArrayList<>();
        for (String line : body.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            assertThat(m.find()).as(line).isTrue();
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
        return samples;
    }

    /** The value of the one sample named {@code name} whose labels include the given pairs. */
    public static double value(List<Sample> samples, String name, String... labelPairs) {
        List<Sample> matching = samples.stream()
                .filter(s -> s.name().equals(name))
                .filter(s -> {
                    for (int i = 0; i < labelPairs.length; i += 2) {
                        if (!labelPairs[i + 1].equals(s.labels().get(labelPairs[i]))) {
                            return false;
                        }
                    }
                    return true;
                })
                .toList();
        assertThat(matching)
                .as(name + " " + List.of(labelPairs) + " in " + names(samples))
                .hasSize(1);
        return matching.get(0).value();
    }

    /**
     * The Prometheus metric family of a metrics dictionary row: dots to underscores, unit {@code ms}
     * as the suffix {@code _milliseconds}.
     */
    public static String family(MetricsDictionary.Row row) {
        String base = row.name().replace('.', '_');
        return row.unit().equals("ms") ? base + "_milliseconds" : base;
    }

    /**
     * The sample names a dictionary row is exported under: {@code <family>_total} for a counter, the
     * family for a gauge, {@code _bucket}, {@code _sum} and {@code _count} (in that order) for a
     * histogram.
     *
     * @throws IllegalArgumentException for any other kind
     */
    public static List<String> sampleNames(MetricsDictionary.Row row) {
        String family = family(row);
        return switch (row.kind()) {
            case "counter" -> List.of(family + "_total");
            case "gauge" -> List.of(family);
            case "histogram" -> List.of(family + "_bucket", family + "_sum", family + "_count");
            default -> throw new IllegalArgumentException("kind '" + row.kind() + "' of " + row.name());
        };
    }

    private static List<String> names(List<Sample> samples) {
        return samples.stream().map(Sample::name).distinct().sorted().toList();
    }
}
