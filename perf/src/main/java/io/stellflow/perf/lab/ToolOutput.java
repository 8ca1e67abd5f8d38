package io.stellflow.perf.lab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the summary that a load tool printed: our {@code stellflow-perf.sh --json} line, Kafka's
 * {@code ProducerPerformance} final line or Kafka's {@code ConsumerPerformance} CSV. Stateless.
 * Throws {@link IllegalArgumentException} naming the tool when the summary is missing.
 */
final class ToolOutput {
    /** What every tool reports; latencies -1 when not measured. */
    record Summary(
            long records,
            long bytes,
            long elapsedMs,
            double mbPerS,
            double recordsPerS,
            double p50Ms,
            double p99Ms,
            double p999Ms,
            long errors) {}

    // "500000 records sent, 98000.1 records/sec (95.70 MB/sec), 12.3 ms avg latency, 300.0 ms max
    // latency, 5 ms 50th, 40 ms 95th, 120 ms 99th, 250 ms 99.9th."
    private static final Pattern KAFKA_PRODUCER =
            Pattern.compile("(\\d+) (?:steady state )?records sent, ([\\d.]+) records/sec \\(([\\d.]+)"
                    + " MB/sec\\), [\\d.]+ ms avg latency, [\\d.]+ ms max latency, ([\\d.]+) ms 50th, [\\d.]+ ms 95th,"
                    + " ([\\d.]+) ms 99th, ([\\d.]+) ms 99.9th");

    private static final ObjectMapper JSON = new ObjectMapper();

    private ToolOutput() {}

    static Summary parse(String format, List<String> lines, int recordSize) {
        return switch (format) {
            case "stellflow" -> stellflow(lines);
            case "kafka-producer" -> kafkaProducer(lines, recordSize);
            case "kafka-consumer" -> kafkaConsumer(lines);
            default -> throw new IllegalArgumentException("unknown tool output format " + format);
        };
    }

    private static Summary stellflow(List<String> lines) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            String line = lines.get(i).strip();
            if (!line.startsWith("{")) {
                continue;
            }
            try {
                JsonNode n = JSON.readTree(line);
                return new Summary(
                        n.get("records").asLong(),
                        n.get("bytes").asLong(),
                        n.get("elapsed_ms").asLong(),
                        n.get("mb_per_s").asDouble(),
                        n.get("records_per_s").asDouble(),
                        n.get("p50_ms").asDouble(),
                        n.get("p99_ms").asDouble(),
                        n.get("p999_ms").asDouble(),
                        n.get("errors").asLong());
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalArgumentException("stellflow-perf printed bad JSON: " + line, e);
            }
        }
        throw new IllegalArgumentException("stellflow-perf printed no JSON result");
    }

    /**
     * ProducerPerformance counts each record's real value bytes in its MB/s, but prints no byte
     * total: with a payload file of mixed sizes (the JSON log lines of the compression cases) the
     * records' mean size is below {@code recordSize}. The bytes are therefore taken from Kafka's own
     * MB/s over its records/s; where that mean agrees with {@code recordSize} within the precision of
     * the printed MB/s (0.005 MB/s), the records are taken to be exactly {@code recordSize} bytes.
     * (Before 2026-12-07 the bytes were always records x recordSize, which understated Kafka's CPU
     * per GB by 1024 / 857 on the JSON cases.)
     */
    private static Summary kafkaProducer(List<String> lines, int recordSize) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            Matcher m = KAFKA_PRODUCER.matcher(lines.get(i));
            if (m.find()) {
                long records = Long.parseLong(m.group(1));
                double perS = Double.parseDouble(m.group(2));
                double mbPerS = Double.parseDouble(m.group(3));
                return new Summary(
                        records,
                        producedBytes(records, perS, mbPerS, recordSize),
                        perS > 0 ? Math.round(records / perS * 1000.0) : 0,
                        mbPerS,
                        perS,
                        Double.parseDouble(m.group(4)),
                        Double.parseDouble(m.group(5)),
                        Double.parseDouble(m.group(6)),
                        0);
            }
        }
        throw new IllegalArgumentException("ProducerPerformance printed no final summary line");
    }

    private static long producedBytes(long records, double recordsPerS, double mbPerS, int recordSize) {
        if (recordsPerS <= 0 || mbPerS <= 0) {
            return records * recordSize;
        }
        double meanBytes = mbPerS * LabResult.MIB / recordsPerS;
        double printedPrecisionBytes = 0.005 * LabResult.MIB / recordsPerS;
        if (Math.abs(meanBytes - recordSize) <= printedPrecisionBytes) {
            return records * recordSize;
        }
        return Math.round(records * meanBytes);
    }

    /**
     * ConsumerPerformance prints a header and one CSV line: start.time, end.time,
     * data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,
     * fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec. We use the fetch columns, which exclude the
     * group join (our consumer assigns partitions and has no join).
     */
    private static Summary kafkaConsumer(List<String> lines) {
        for (int i = 0; i < lines.size() - 1; i++) {
            if (!lines.get(i).contains("fetch.nMsg.sec")) {
                continue;
            }
            String[] h = lines.get(i).split(",\\s*");
            String[] v = lines.get(i + 1).split(",\\s*");
            double mb = Double.parseDouble(v[index(h, "data.consumed.in.MB")]);
            long records = Long.parseLong(v[index(h, "data.consumed.in.nMsg")]);
            long fetchMs = Long.parseLong(v[index(h, "fetch.time.ms")]);
            return new Summary(
                    records,
                    Math.round(mb * LabResult.MIB),
                    fetchMs,
                    Double.parseDouble(v[index(h, "fetch.MB.sec")]),
                    Double.parseDouble(v[index(h, "fetch.nMsg.sec")]),
                    -1,
                    -1,
                    -1,
                    0);
        }
        throw new IllegalArgumentException("ConsumerPerformance printed no CSV summary");
    }

    private static int index(String[] header, String name) {
        for (int i = 0; i < header.length; i++) {
            if (header[i].strip().equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("ConsumerPerformance header has no column " + name);
    }
}
