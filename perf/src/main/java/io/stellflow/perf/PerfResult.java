package io.stellflow.perf;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.HdrHistogram.Histogram;

/**
 * One load-generator result, printed as a line of text or as JSON (snake_case field names: {@code
 * name, records, bytes, elapsed_ms, mb_per_s, records_per_s, p50_ms, p99_ms, p999_ms, max_ms,
 * errors}, and {@code producers}, the sender threads, from {@code produce} and {@code end-to-end}
 * only). MB means 2^20 bytes. Latencies in milliseconds. Immutable.
 */
public record PerfResult(
        String name,
        long records,
        long bytes,
        long elapsedMs,
        double mbPerS,
        double recordsPerS,
        double p50Ms,
        double p99Ms,
        double p999Ms,
        double maxMs,
        long errors,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer producers) {

    private static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .build();

    /** Builds a result without a producer count; {@code latencyUs} holds latencies in microseconds. */
    static PerfResult of(String name, long records, long bytes, long elapsedNs, Histogram latencyUs, long errors) {
        return of(name, records, bytes, elapsedNs, latencyUs, errors, null);
    }

    /** Builds a result; {@code producers} is the number of sender threads, or null when none apply. */
    static PerfResult of(
            String name,
            long records,
            long bytes,
            long elapsedNs,
            Histogram latencyUs,
            long errors,
            Integer producers) {
        double seconds = Math.max(elapsedNs, 1) / 1e9;
        return new PerfResult(
                name,
                records,
                bytes,
                elapsedNs / 1_000_000,
                round(bytes / (1024.0 * 1024.0) / seconds),
                round(records / seconds),
                ms(latencyUs, 50.0),
                ms(latencyUs, 99.0),
                ms(latencyUs, 99.9),
                round(latencyUs.getTotalCount() == 0 ? 0 : latencyUs.getMaxValue() / 1000.0),
                errors,
                producers);
    }

    private static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : round(h.getValueAtPercentile(percentile) / 1000.0);
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }

    /** One JSON object on one line. */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize " + this, e);
        }
    }

    /** A human-readable summary line; it names the producers only when there are several. */
    public String toText() {
        String line = String.format(
                java.util.Locale.ROOT,
                "%s: %d records, %.1f MB in %.2f s: %.1f records/s, %.2f MB/s; latency ms p50 %.3f p99 %.3f p99.9 %.3f max %.3f; errors %d",
                name,
                records,
                bytes / (1024.0 * 1024.0),
                elapsedMs / 1000.0,
                recordsPerS,
                mbPerS,
                p50Ms,
                p99Ms,
                p999Ms,
                maxMs,
                errors);
        return producers != null && producers > 1 ? line + "; producers " + producers : line;
    }
}
