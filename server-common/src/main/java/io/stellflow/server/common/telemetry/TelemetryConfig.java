package io.stellflow.server.common.telemetry;

import static io.stellflow.server.common.config.ConfigValues.bool;
import static io.stellflow.server.common.config.ConfigValues.longValue;
import static io.stellflow.server.common.config.ConfigValues.string;

import io.stellflow.server.common.config.ConfigException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * The validated telemetry settings of a server process (issue 7, {@code docs/spec/metrics.md}): a
 * broker or combined node reads every key; a controller-only node exports metrics only (the {@code
 * tracing.*} keys are read and validated there too, and unused).
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>metrics.exporter</td><td>prometheus</td><td>prometheus (scrape endpoint), otlp (push) or none</td></tr>
 *   <tr><td>metrics.host</td><td>127.0.0.1</td><td>address the Prometheus endpoint binds</td></tr>
 *   <tr><td>metrics.port</td><td>9464</td><td>0..65535; 0 = ephemeral (the bound port is logged)</td></tr>
 *   <tr><td>metrics.otlp.endpoint</td><td>http://127.0.0.1:4318/v1/metrics</td><td>OTLP/HTTP protobuf URL</td></tr>
 *   <tr><td>metrics.otlp.interval.ms</td><td>15000</td><td>1000..3600000, push period</td></tr>
 *   <tr><td>metrics.diagnostic.enabled</td><td>false</td><td>adds topic/partition series to the diagnostic
 *       instruments (log start and end offsets per partition)</td></tr>
 *   <tr><td>metrics.topic.diagnostic.enabled</td><td>false</td><td>per-topic throughput counters (bytes in and
 *       out, records in; a counter add per appended or fetched partition); off, the request path does no
 *       per-topic work at all</td></tr>
 *   <tr><td>tracing.enabled</td><td>false</td><td>record a server span for requests whose header carries a
 *       traceId and spanId</td></tr>
 *   <tr><td>tracing.sampler.ratio</td><td>1.0</td><td>0.0..1.0; applied to requests whose caller did not
 *       sample (traceFlags bit 0 unset); a sampled caller is always followed</td></tr>
 *   <tr><td>tracing.otlp.endpoint</td><td>http://127.0.0.1:4318/v1/traces</td><td>OTLP/HTTP protobuf URL
 *       for spans</td></tr>
 * </table>
 *
 * <p>Thread-safety: immutable.
 *
 * @param exporter where metrics go
 * @param host bind address of the Prometheus endpoint
 * @param port port of the Prometheus endpoint, 0 = ephemeral
 * @param otlpMetricsEndpoint OTLP/HTTP URL for metrics
 * @param otlpIntervalMs OTLP push period in ms
 * @param diagnostic whether diagnostic (topic/partition) series are exported
 * @param topicDiagnostic whether the per-topic throughput counters are exported
 * @param tracingEnabled whether server spans are recorded
 * @param samplerRatio sampling ratio for callers that did not sample
 * @param otlpTracesEndpoint OTLP/HTTP URL for spans
 */
public record TelemetryConfig(
        Exporter exporter,
        String host,
        int port,
        String otlpMetricsEndpoint,
        long otlpIntervalMs,
        boolean diagnostic,
        boolean topicDiagnostic,
        boolean tracingEnabled,
        double samplerRatio,
        String otlpTracesEndpoint) {

    /** Where metrics are exported. */
    public enum Exporter {
        PROMETHEUS,
        OTLP,
        NONE
    }

    /** The default Prometheus port (the OpenTelemetry Prometheus exporter's conventional 9464). */
    public static final int DEFAULT_PORT = 9464;

    /** Every key this record reads. */
    public static final Set<String> KEYS = Set.of(
            "metrics.exporter",
            "metrics.host",
            "metrics.port",
            "metrics.otlp.endpoint",
            "metrics.otlp.interval.ms",
            "metrics.diagnostic.enabled",
            "metrics.topic.diagnostic.enabled",
            "tracing.enabled",
            "tracing.sampler.ratio",
            "tracing.otlp.endpoint");

    /** Metrics off, tracing off (tools and tests that want no telemetry). */
    public static final TelemetryConfig DISABLED = new TelemetryConfig(
            Exporter.NONE,
            "127.0.0.1",
            DEFAULT_PORT,
            "http://127.0.0.1:4318/v1/metrics",
            15_000,
            false,
            false,
            false,
            1.0,
            "http://127.0.0.1:4318/v1/traces");

    /**
     * Reads and validates the telemetry keys.
     *
     * @throws ConfigException naming the first bad key and its value
     */
    public static TelemetryConfig from(Properties props) {
        String rawExporter = string(props, "metrics.exporter", "prometheus").toLowerCase(Locale.ROOT);
        Exporter exporter = switch (rawExporter) {
            case "prometheus" -> Exporter.PROMETHEUS;
            case "otlp" -> Exporter.OTLP;
            case "none" -> Exporter.NONE;
            default -> throw new ConfigException("metrics.exporter", rawExporter, "must be prometheus, otlp or none");
        };
        String host = string(props, "metrics.host", "127.0.0.1");
        int port = (int) longValue(props, "metrics.port", DEFAULT_PORT, 0, 65_535);
        String otlpMetrics = url(props, "metrics.otlp.endpoint", "http://127.0.0.1:4318/v1/metrics");
        long interval = longValue(props, "metrics.otlp.interval.ms", 15_000, 1_000, 3_600_000);
        boolean diagnostic = bool(props, "metrics.diagnostic.enabled", false);
        boolean topicDiagnostic = bool(props, "metrics.topic.diagnostic.enabled", false);
        boolean tracing = bool(props, "tracing.enabled", false);
        String rawRatio = string(props, "tracing.sampler.ratio", "1.0");
        double ratio;
        try {
            ratio = Double.parseDouble(rawRatio);
        } catch (NumberFormatException e) {
            throw new ConfigException("tracing.sampler.ratio", rawRatio, "not a number");
        }
        if (!(ratio >= 0.0 && ratio <= 1.0)) {
            throw new ConfigException("tracing.sampler.ratio", rawRatio, "must be in 0.0..1.0");
        }
        String otlpTraces = url(props, "tracing.otlp.endpoint", "http://127.0.0.1:4318/v1/traces");
        return new TelemetryConfig(
                exporter, host, port, otlpMetrics, interval, diagnostic, topicDiagnostic, tracing, ratio, otlpTraces);
    }

    private static String url(Properties props, String key, String defaultValue) {
        String value = string(props, key, defaultValue);
        try {
            URI uri = new URI(value);
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new ConfigException(key, value, "must be an http:// or https:// URL");
            }
        } catch (URISyntaxException e) {
            throw new ConfigException(key, value, "not a URL: " + e.getReason());
        }
        return value;
    }
}
