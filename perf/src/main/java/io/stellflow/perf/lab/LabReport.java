package io.stellflow.perf.lab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Turns the cases of one lab run into {@code results.json}, {@code results.md} and the charts:
 * medians over runs per (system, case), Stellflow/Kafka ratios for cases both systems ran, and each
 * median as a fraction of the machine limits measured in the same run. Not thread-safe.
 */
final class LabReport {
    static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    /** Loopback TCP and sequential write bandwidth in MB/s (2^20 bytes), 0 when not measured. */
    record Limits(double loopbackMbPerS, double diskWriteMbPerS) {}

    /** Stellflow/Kafka ratios of medians; NaN-free: -1 when a side did not measure the value. */
    record Ratio(
            String caseName, double throughput, double p99, double p999, double brokerCpuPerGb, double totalCpuPerGb) {}

    record Report(String note, Limits limits, List<LabResult> medians, List<Ratio> ratios, List<LabResult> runs) {}

    private LabReport() {}

    static List<LabResult> readCases(Path jsonl) throws IOException {
        List<LabResult> out = new ArrayList<>();
        for (String line : Files.readAllLines(jsonl)) {
            if (!line.isBlank()) {
                out.add(JSON.readValue(line, LabResult.class));
            }
        }
        return out;
    }

    /** iperf3 -J output: end.sum_received.bits_per_second; fio JSON: jobs[0].write.bw_bytes. */
    static Limits readLimits(Path iperf3Json, Path fioJson) throws IOException {
        double loopback = 0;
        double disk = 0;
        if (iperf3Json != null && Files.size(iperf3Json) > 0) {
            JsonNode n = JSON.readTree(iperf3Json.toFile());
            loopback =
                    n.path("end").path("sum_received").path("bits_per_second").asDouble() / 8 / LabResult.MIB;
        }
        if (fioJson != null && Files.size(fioJson) > 0) {
            JsonNode n = JSON.readTree(fioJson.toFile());
            disk = n.path("jobs").path(0).path("write").path("bw_bytes").asDouble() / LabResult.MIB;
        }
        return new Limits(LabResult.round(loopback), LabResult.round(disk));
    }

    static List<LabResult> medians(List<LabResult> runs) {
        Map<String, List<LabResult>> groups = new LinkedHashMap<>();
        for (LabResult r : runs) {
            groups.computeIfAbsent(r.system() + "\u0000" + r.caseName(), k -> new ArrayList<>())
                    .add(r);
        }
        List<LabResult> out = new ArrayList<>();
        for (List<LabResult> g : groups.values()) {
            LabResult f = g.get(0);
            out.add(new LabResult(
                    f.system(),
                    f.caseName(),
                    g.size(),
                    f.kind(),
                    f.transport(),
                    f.recordSize(),
                    f.batchSize(),
                    f.partitions(),
                    f.acks(),
                    (long) median(g, LabResult::records),
                    (long) median(g, LabResult::bytes),
                    (long) median(g, LabResult::elapsedMs),
                    median(g, LabResult::mbPerS),
                    median(g, LabResult::recordsPerS),
                    median(g, LabResult::p50Ms),
                    median(g, LabResult::p99Ms),
                    median(g, LabResult::p999Ms),
                    median(g, LabResult::brokerCpuSeconds),
                    median(g, LabResult::brokerCpuSecondsPerGb),
                    median(g, LabResult::clientCpuSeconds),
                    median(g, LabResult::clientCpuSecondsPerGb),
                    g.stream().mapToLong(LabResult::errors).sum()));
        }
        return out;
    }

    private static double median(List<LabResult> g, ToDoubleFunction<LabResult> f) {
        double[] v = g.stream().mapToDouble(f).sorted().toArray();
        int n = v.length;
        return LabResult.round(n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
    }

    static List<Ratio> ratios(List<LabResult> medians) {
        Map<String, LabResult> kafka = new LinkedHashMap<>();
        medians.stream().filter(m -> m.system().equals("kafka")).forEach(m -> kafka.put(m.caseName(), m));
        List<Ratio> out = new ArrayList<>();
        for (LabResult s : medians) {
            LabResult k = kafka.get(s.caseName());
            if (!s.system().equals("stellflow") || k == null) {
                continue;
            }
            out.add(new Ratio(
                    s.caseName(),
                    ratio(s.mbPerS(), k.mbPerS()),
                    ratio(s.p99Ms(), k.p99Ms()),
                    ratio(s.p999Ms(), k.p999Ms()),
                    ratio(s.brokerCpuSecondsPerGb(), k.brokerCpuSecondsPerGb()),
                    ratio(totalCpuPerGb(s), totalCpuPerGb(k))));
        }
        return out;
    }

    /** Broker plus client CPU seconds per GB, or -1 when either was not measured. */
    static double totalCpuPerGb(LabResult r) {
        return r.brokerCpuSecondsPerGb() < 0 || r.clientCpuSecondsPerGb() < 0
                ? -1
                : r.brokerCpuSecondsPerGb() + r.clientCpuSecondsPerGb();
    }

    private static double ratio(double a, double b) {
        return a < 0 || b <= 0 ? -1 : LabResult.round(a / b);
    }

    static void write(Path outDir, String note, Limits limits, List<LabResult> runs) throws IOException {
        List<LabResult> medians = medians(runs);
        List<Ratio> ratios = ratios(medians);
        Files.createDirectories(outDir);
        JSON.writeValue(outDir.resolve("results.json").toFile(), new Report(note, limits, medians, ratios, runs));
        Files.writeString(outDir.resolve("results.md"), markdown(note, limits, medians, ratios));
        Charts.write(outDir, medians);
    }

    static String markdown(String note, Limits limits, List<LabResult> medians, List<Ratio> ratios) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Stellflow perf lab results\n\n").append(note).append("\n\n");
        sb.append(String.format(
                Locale.ROOT,
                "Machine limits measured in this run: loopback TCP %s MB/s (iperf3), sequential write %s MB/s (fio)."
                        + " MB = 2^20 bytes, GB = 2^30 bytes.\n\n",
                limits.loopbackMbPerS() > 0 ? fmt(limits.loopbackMbPerS()) : "n/a",
                limits.diskWriteMbPerS() > 0 ? fmt(limits.diskWriteMbPerS()) : "n/a"));
        sb.append("Medians of the runs (`runs` column).\n\n");
        sb.append("| system | case | transport | runs | MB/s | records/s | p50 ms | p99 ms | p99.9 ms |"
                + " broker CPU s/GB | client CPU s/GB | % loopback | % disk |\n");
        sb.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        List<LabResult> sorted = new ArrayList<>(medians);
        sorted.sort(Comparator.comparing(LabResult::caseName).thenComparing(LabResult::system));
        for (LabResult m : sorted) {
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n",
                    m.system(),
                    m.caseName(),
                    m.transport(),
                    m.run(),
                    fmt(m.mbPerS()),
                    m.recordsPerS(),
                    opt(m.p50Ms()),
                    opt(m.p99Ms()),
                    opt(m.p999Ms()),
                    opt(m.brokerCpuSecondsPerGb()),
                    opt(m.clientCpuSecondsPerGb()),
                    pct(m.mbPerS(), limits.loopbackMbPerS()),
                    m.kind().equals("consume") ? "" : pct(m.mbPerS(), limits.diskWriteMbPerS())));
        }
        if (!ratios.isEmpty()) {
            sb.append("\n## Stellflow / Kafka (medians; throughput above 1 is better, latency and CPU below 1)\n\n");
            sb.append("| case | throughput | p99 | p99.9 | broker CPU s/GB | broker+client CPU s/GB |\n"
                    + "|---|---:|---:|---:|---:|---:|\n");
            for (Ratio r : ratios) {
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %s |\n",
                        r.caseName(),
                        opt(r.throughput()),
                        opt(r.p99()),
                        opt(r.p999()),
                        opt(r.brokerCpuPerGb()),
                        opt(r.totalCpuPerGb())));
            }
        }
        return sb.toString();
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String opt(double v) {
        return v < 0 ? "n/a" : String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.2f", v);
    }

    private static String pct(double v, double limit) {
        return limit > 0 ? String.format(Locale.ROOT, "%.0f%%", 100 * v / limit) : "n/a";
    }
}
