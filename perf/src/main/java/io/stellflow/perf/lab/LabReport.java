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
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
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

    /**
     * Stellflow/Kafka ratios of medians; NaN-free: -1 when a side did not measure the value. {@code
     * throughput} compares MB/s, or records/s where neither side moved bytes (commits/s of the
     * {@code commit} kind); {@code time} compares {@code elapsed_ms} of the {@code rebalance} kind
     * (time to a stable assignment), -1 for other kinds.
     */
    record Ratio(
            String caseName,
            double throughput,
            double p99,
            double p999,
            double brokerCpuPerGb,
            double totalCpuPerGb,
            double time) {}

    record Report(String note, Limits limits, List<LabResult> medians, List<Ratio> ratios, List<LabResult> runs) {}

    /** The kind of the group lab's rebalance cases: {@code elapsed_ms} is the figure, lower is better. */
    static final String REBALANCE = "rebalance";
    /** The kind of the group lab's commit cases: records are commits, latencies per commit. */
    static final String COMMIT = "commit";

    /** Case name prefixes of the group lab's consume cases, paired by what follows them. */
    static final String GROUP_CONSUME = "consume-group-";

    static final String ASSIGN_CONSUME = "consume-assign-";

    /** Name suffix of a produce case run with {@code enable.idempotence=false} beside its idempotent twin. */
    static final String NON_IDEMPOTENT = "-noidem";

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
                    f.idempotence(),
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
        return LabResult.round(median(g.stream().mapToDouble(f).toArray()));
    }

    /** The median of {@code values} (not empty; the array is not changed). */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
            boolean bytes = s.mbPerS() > 0 || k.mbPerS() > 0;
            out.add(new Ratio(
                    s.caseName(),
                    bytes ? ratio(s.mbPerS(), k.mbPerS()) : ratio(s.recordsPerS(), k.recordsPerS()),
                    ratio(s.p99Ms(), k.p99Ms()),
                    ratio(s.p999Ms(), k.p999Ms()),
                    ratio(s.brokerCpuSecondsPerGb(), k.brokerCpuSecondsPerGb()),
                    ratio(totalCpuPerGb(s), totalCpuPerGb(k)),
                    s.kind().equals(REBALANCE) ? ratio(s.elapsedMs(), k.elapsedMs()) : -1));
        }
        return out;
    }

    /** Broker plus client CPU seconds per GB, or -1 when either was not measured. */
    static double totalCpuPerGb(LabResult r) {
        return r.brokerCpuSecondsPerGb() < 0 || r.clientCpuSecondsPerGb() < 0
                ? -1
                : r.brokerCpuSecondsPerGb() + r.clientCpuSecondsPerGb();
    }

    static double ratio(double a, double b) {
        return a < 0 || b <= 0 ? -1 : LabResult.round(a / b);
    }

    /** Writes results.json, results.md and the charts; returns the chart files written. */
    static List<Path> write(Path outDir, String note, Limits limits, List<LabResult> runs) throws IOException {
        List<LabResult> medians = medians(runs);
        List<Ratio> ratios = ratios(medians);
        Files.createDirectories(outDir);
        JSON.writeValue(outDir.resolve("results.json").toFile(), new Report(note, limits, medians, ratios, runs));
        Files.writeString(outDir.resolve("results.md"), markdown(note, limits, medians, ratios, runs));
        return Charts.write(outDir, runs);
    }

    static String markdown(String note, Limits limits, List<LabResult> medians, List<Ratio> ratios) {
        return markdown(note, limits, medians, ratios, List.of());
    }

    /** As above; {@code runs} (each run's results) adds per-run pairings where a section has them. */
    static String markdown(
            String note, Limits limits, List<LabResult> medians, List<Ratio> ratios, List<LabResult> runs) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Stellflow perf lab results\n\n").append(note).append("\n\n");
        sb.append(String.format(
                Locale.ROOT,
                "Machine limits measured in this run: loopback TCP %s MB/s (iperf3), sequential write %s MB/s (fio)."
                        + " MB = 2^20 bytes, GB = 2^30 bytes.\n\n",
                limits.loopbackMbPerS() > 0 ? fmt(limits.loopbackMbPerS()) : "n/a",
                limits.diskWriteMbPerS() > 0 ? fmt(limits.diskWriteMbPerS()) : "n/a"));
        sb.append("Medians of the runs (`runs` column).\n\n");
        sb.append("| system | case | transport | idempotence | runs | MB/s | records/s | p50 ms | p99 ms |"
                + " p99.9 ms | broker CPU s/GB | client CPU s/GB | % loopback | % disk |\n");
        sb.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        List<LabResult> sorted = new ArrayList<>(medians);
        sorted.sort(Comparator.comparing(LabResult::caseName).thenComparing(LabResult::system));
        for (LabResult m : sorted) {
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %d | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n",
                    m.system(),
                    m.caseName(),
                    m.transport(),
                    m.idempotence() == null ? "-" : m.idempotence(),
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
        groupSection(sb, sorted);
        idempotenceSection(sb, sorted, runs);
        TxnReport.section(sb, sorted);
        if (!ratios.isEmpty()) {
            boolean times = ratios.stream().anyMatch(r -> r.time() >= 0);
            sb.append("\n## Stellflow / Kafka (medians; throughput above 1 is better, latency, CPU"
                    + (times ? " and rebalance time" : "") + " below 1)\n\n");
            sb.append("| case | throughput | p99 | p99.9 | broker CPU s/GB | broker+client CPU s/GB |"
                    + (times ? " rebalance time |" : "") + "\n"
                    + "|---|---:|---:|---:|---:|---:|" + (times ? "---:|" : "") + "\n");
            for (Ratio r : ratios) {
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %s |",
                        r.caseName(),
                        opt(r.throughput()),
                        opt(r.p99()),
                        opt(r.p999()),
                        opt(r.brokerCpuPerGb()),
                        opt(r.totalCpuPerGb())));
                sb.append(times ? " " + opt(r.time()) + " |\n" : "\n");
            }
        }
        return sb.toString();
    }

    /**
     * The rebalance and commit cases in their own units (the table above shows them as 0 MB/s), and
     * each system's group consume against its assign consume of the same data: a case {@code
     * consume-group-<rest>} beside {@code consume-assign-<rest>}.
     */
    private static void groupSection(StringBuilder sb, List<LabResult> sorted) {
        List<String> pairs = new ArrayList<>();
        for (LabResult g : sorted) {
            if (!g.caseName().startsWith(GROUP_CONSUME)) {
                continue;
            }
            String assignName = ASSIGN_CONSUME + g.caseName().substring(GROUP_CONSUME.length());
            sorted.stream()
                    .filter(a -> a.system().equals(g.system()) && a.caseName().equals(assignName))
                    .findFirst()
                    .ifPresent(a -> pairs.add(String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s | %s |\n",
                            g.system(),
                            g.caseName().substring(GROUP_CONSUME.length()),
                            fmt(g.mbPerS()),
                            fmt(a.mbPerS()),
                            opt(ratio(g.mbPerS(), a.mbPerS())))));
        }
        if (!pairs.isEmpty()) {
            sb.append("\n## Group against assign consume (medians, MB/s)\n\n");
            sb.append("| system | data | group | assign | group / assign |\n|---|---|---:|---:|---:|\n");
            pairs.forEach(sb::append);
        }
        List<LabResult> group = sorted.stream()
                .filter(m -> m.kind().equals(REBALANCE) || m.kind().equals(COMMIT))
                .toList();
        if (group.isEmpty()) {
            return;
        }
        sb.append("\n## Consumer groups (medians)\n\n");
        sb.append("| system | case | runs | time to stable ms | commits/s | commit p50 ms | commit p99 ms |"
                + " commit p99.9 ms | errors |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (LabResult m : group) {
            boolean rebalance = m.kind().equals(REBALANCE);
            sb.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %d | %s | %s | %s | %s | %s | %d |\n",
                    m.system(),
                    m.caseName(),
                    m.run(),
                    rebalance ? Long.toString(m.elapsedMs()) : "",
                    rebalance ? "" : String.format(Locale.ROOT, "%.0f", m.recordsPerS()),
                    rebalance ? "" : opt(m.p50Ms()),
                    rebalance ? "" : opt(m.p99Ms()),
                    rebalance ? "" : opt(m.p999Ms()),
                    m.errors()));
        }
    }

    /**
     * Issue #20's target, idempotent produce within 3% of non-idempotent on our broker: each system's
     * case {@code <name>} run idempotent beside {@code <name>}{@value #NON_IDEMPOTENT} (the same
     * workload with {@code enable.idempotence=false}), as ratios of medians (idempotent over not),
     * then, where {@code runs} has both cases of one run, the throughput ratio of each run's pair (the
     * two ran back to back on the same brokers, so a run's pair shares its window) and their median.
     */
    private static void idempotenceSection(StringBuilder sb, List<LabResult> sorted, List<LabResult> runs) {
        List<String> pairs = new ArrayList<>();
        List<String> perRun = new ArrayList<>();
        for (LabResult off : sorted) {
            if (!off.caseName().endsWith(NON_IDEMPOTENT)) {
                continue;
            }
            String onName = off.caseName().substring(0, off.caseName().length() - NON_IDEMPOTENT.length());
            sorted.stream()
                    .filter(on ->
                            on.system().equals(off.system()) && on.caseName().equals(onName))
                    .findFirst()
                    .ifPresent(on -> pairs.add(String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                            on.system(),
                            onName,
                            fmt(on.mbPerS()),
                            fmt(off.mbPerS()),
                            opt(ratio(on.mbPerS(), off.mbPerS())),
                            opt(ratio(on.p99Ms(), off.p99Ms())),
                            opt(ratio(on.brokerCpuSecondsPerGb(), off.brokerCpuSecondsPerGb())),
                            opt(ratio(totalCpuPerGb(on), totalCpuPerGb(off))))));
            List<Double> paired = pairedThroughputRatios(runs, off.system(), onName, off.caseName());
            if (!paired.isEmpty()) {
                StringBuilder line = new StringBuilder("- ")
                        .append(off.system())
                        .append(' ')
                        .append(onName)
                        .append(", each run's idempotent / non-idempotent throughput, in run order: ");
                for (int i = 0; i < paired.size(); i++) {
                    line.append(i == 0 ? "" : ", ").append(opt(paired.get(i)));
                }
                long below = paired.stream().filter(v -> v < 0.97).count();
                double median =
                        median(paired.stream().mapToDouble(Double::doubleValue).toArray());
                perRun.add(line.append(String.format(
                                Locale.ROOT, "; median %s, %d of %d below 0.97\n", opt(median), below, paired.size()))
                        .toString());
            }
        }
        if (!pairs.isEmpty()) {
            sb.append("\n## Idempotent / non-idempotent produce (medians; the target is a throughput ratio of at"
                    + " least 0.97 on Stellflow)\n\n");
            sb.append("| system | case | idempotent MB/s | non-idempotent MB/s | throughput | p99 | broker CPU s/GB |"
                    + " broker+client CPU s/GB |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
            pairs.forEach(sb::append);
            if (!perRun.isEmpty()) {
                sb.append('\n');
                perRun.forEach(sb::append);
            }
        }
    }

    /**
     * Throughput ratios {@code on / off} of one system's two cases, one per run number that has both
     * (ascending run order); empty when no run has both.
     */
    static List<Double> pairedThroughputRatios(List<LabResult> runs, String system, String on, String off) {
        Map<Integer, Double> onByRun = new TreeMap<>();
        Map<Integer, Double> offByRun = new TreeMap<>();
        for (LabResult r : runs) {
            if (!r.system().equals(system)) {
                continue;
            }
            if (r.caseName().equals(on)) {
                onByRun.put(r.run(), r.mbPerS());
            } else if (r.caseName().equals(off)) {
                offByRun.put(r.run(), r.mbPerS());
            }
        }
        List<Double> out = new ArrayList<>();
        onByRun.forEach((run, mbs) -> {
            Double other = offByRun.get(run);
            if (other != null && other > 0) {
                out.add(mbs / other);
            }
        });
        return out;
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String opt(double v) {
        return v < 0 ? "n/a" : String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.2f", v);
    }

    private static String pct(double v, double limit) {
        return limit > 0 ? String.format(Locale.ROOT, "%.0f%%", 100 * v / limit) : "n/a";
    }
}
