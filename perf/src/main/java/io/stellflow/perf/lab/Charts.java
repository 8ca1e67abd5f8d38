package io.stellflow.perf.lab;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import java.util.regex.Pattern;

/**
 * The PNG charts of a lab run, one per metric ({@link BarChart}): each case's median over its runs
 * per system side by side, the value on each bar, a min-max whisker over the runs, latencies on a
 * log scale. Cases at a fixed target rate ({@code latency} kind, or a rate such as {@code 20k/s} in
 * the name) get charts of their own, as do the group lab's commits and rebalances, so that no axis
 * mixes them with max-throughput cases. Stateless; needs {@code
 * java.awt.headless=true} on a machine without a display.
 */
final class Charts {
    /** A rate in a case name: {@code 20k/s}, {@code 500/s}, {@code 1.5M/s}. */
    private static final Pattern TARGET_RATE = Pattern.compile("(^|-)\\d+(\\.\\d+)?[kKM]?/s(-|$)");

    private enum Section {
        MAX_RATE("max-throughput cases"),
        FIXED_RATE("fixed-rate cases"),
        COMMIT("group commits"),
        REBALANCE("group rebalances");

        final String label;

        Section(String label) {
            this.label = label;
        }
    }

    /**
     * One chart: the cases of {@code section} that {@code cases} keeps, {@code value} of each run;
     * a run whose value is negative did not measure it (on a log axis: not positive).
     */
    private record Metric(
            String file,
            Section section,
            String title,
            String unit,
            boolean logScale,
            Predicate<LabResult> cases,
            ToDoubleFunction<LabResult> value) {}

    private static final Predicate<LabResult> ALL = r -> true;
    // Consume latency is the duration of a poll (ours only), not a record's delay: left out.
    private static final Predicate<LabResult> NOT_CONSUME = r -> !r.kind().equals("consume");

    private static final List<Metric> METRICS = List.of(
            new Metric("throughput.png", Section.MAX_RATE, "Throughput", "MB/s", false, ALL, LabResult::mbPerS),
            new Metric(
                    "records-per-s.png",
                    Section.MAX_RATE,
                    "Records per second",
                    "records/s",
                    false,
                    ALL,
                    LabResult::recordsPerS),
            latency("latency-p50.png", Section.MAX_RATE, "p50", LabResult::p50Ms),
            latency("latency-p99.png", Section.MAX_RATE, "p99", LabResult::p99Ms),
            latency("latency-p999.png", Section.MAX_RATE, "p99.9", LabResult::p999Ms),
            cpu("cpu.png", Section.MAX_RATE),
            latency("fixed-rate-latency-p50.png", Section.FIXED_RATE, "p50", LabResult::p50Ms),
            latency("fixed-rate-latency-p99.png", Section.FIXED_RATE, "p99", LabResult::p99Ms),
            latency("fixed-rate-latency-p999.png", Section.FIXED_RATE, "p99.9", LabResult::p999Ms),
            cpu("fixed-rate-cpu.png", Section.FIXED_RATE),
            new Metric(
                    "commit-rate.png",
                    Section.COMMIT,
                    "Commits per second",
                    "commits/s",
                    false,
                    ALL,
                    LabResult::recordsPerS),
            latency("commit-latency-p50.png", Section.COMMIT, "p50", LabResult::p50Ms),
            latency("commit-latency-p99.png", Section.COMMIT, "p99", LabResult::p99Ms),
            latency("commit-latency-p999.png", Section.COMMIT, "p99.9", LabResult::p999Ms),
            new Metric(
                    "rebalance.png",
                    Section.REBALANCE,
                    "Time to a stable assignment",
                    "ms",
                    false,
                    ALL,
                    r -> r.elapsedMs()));

    /** The lab's one latency chart before 2026-12-04 (every percentile on a linear axis). */
    static final String OLD_LATENCY_CHART = "latency.png";

    private Charts() {}

    private static Metric latency(String file, Section section, String percentile, ToDoubleFunction<LabResult> f) {
        return new Metric(file, section, percentile + " latency", percentile + " ms", true, NOT_CONSUME, f);
    }

    private static Metric cpu(String file, Section section) {
        return new Metric(
                file,
                section,
                "Broker CPU per GB moved",
                "broker CPU s/GB",
                false,
                ALL,
                r -> r.brokerCpuSecondsPerGb());
    }

    /**
     * Writes the charts of {@code runs} (every run of every case, as {@code results.json} keeps
     * them) to {@code outDir} and removes the chart files it did not write ({@link
     * #OLD_LATENCY_CHART} too), so that a re-rendered directory holds no stale chart. A chart
     * without any measured value is not written. Returns the files written.
     */
    static List<Path> write(Path outDir, List<LabResult> runs) throws IOException {
        Files.createDirectories(outDir);
        List<Path> written = new ArrayList<>();
        for (Metric m : METRICS) {
            BarChart.Spec spec = spec(m, runs);
            Path file = outDir.resolve(m.file());
            if (spec == null) {
                Files.deleteIfExists(file);
            } else {
                BarChart.write(spec, file);
                written.add(file);
            }
        }
        Files.deleteIfExists(outDir.resolve(OLD_LATENCY_CHART));
        return written;
    }

    /** Whether {@code r} ran at a target rate rather than as fast as it could. */
    static boolean fixedRate(LabResult r) {
        return r.kind().equals("latency") || TARGET_RATE.matcher(r.caseName()).find();
    }

    private static Section section(LabResult r) {
        if (r.kind().equals(LabReport.REBALANCE)) {
            return Section.REBALANCE;
        }
        if (r.kind().equals(LabReport.COMMIT)) {
            return Section.COMMIT;
        }
        return fixedRate(r) ? Section.FIXED_RATE : Section.MAX_RATE;
    }

    /** The chart of {@code m}, or null when no run of its cases measured it. */
    private static BarChart.Spec spec(Metric m, List<LabResult> runs) {
        List<LabResult> mine = runs.stream()
                .filter(r -> section(r) == m.section() && m.cases().test(r))
                .toList();
        Set<String> systems = new LinkedHashSet<>();
        // Ours first, Kafka second, then any other system in the order met.
        for (String s : List.of("stellflow", "kafka")) {
            if (mine.stream().anyMatch(r -> r.system().equals(s))) {
                systems.add(s);
            }
        }
        mine.forEach(r -> systems.add(r.system()));
        List<String> cases = new ArrayList<>();
        for (LabResult r : mine) {
            if (!cases.contains(r.caseName()) && measured(m, r)) {
                cases.add(r.caseName());
            }
        }
        if (cases.isEmpty()) {
            return null;
        }
        List<BarChart.Series> series = new ArrayList<>();
        int minRuns = Integer.MAX_VALUE;
        int maxRuns = 0;
        for (String system : systems) {
            double[] median = new double[cases.size()];
            double[] min = new double[cases.size()];
            double[] max = new double[cases.size()];
            for (int c = 0; c < cases.size(); c++) {
                String caseName = cases.get(c);
                double[] v = values(
                        mine.stream()
                                .filter(r -> r.system().equals(system)
                                        && r.caseName().equals(caseName))
                                .filter(r -> measured(m, r))
                                .toList(),
                        m.value());
                Spread s = Spread.of(v);
                median[c] = s.median();
                min[c] = s.min();
                max[c] = s.max();
                if (v.length > 0) {
                    minRuns = Math.min(minRuns, v.length);
                    maxRuns = Math.max(maxRuns, v.length);
                }
            }
            series.add(new BarChart.Series(system, median, min, max));
        }
        String runsText = minRuns == maxRuns ? Integer.toString(maxRuns) : minRuns + "-" + maxRuns;
        String subtitle = (maxRuns == 1
                        ? "One run per case"
                        : "Bars: median of " + runsText + " runs; whiskers: lowest to highest run")
                + (m.logScale() ? "; log scale" : "");
        return new BarChart.Spec(m.title() + ", " + m.section().label, subtitle, m.unit(), m.logScale(), cases, series);
    }

    private static boolean measured(Metric m, LabResult r) {
        double v = m.value().applyAsDouble(r);
        return m.logScale() ? v > 0 : v >= 0;
    }

    private static double[] values(List<LabResult> runs, ToDoubleFunction<LabResult> f) {
        double[] v = new double[runs.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = f.applyAsDouble(runs.get(i));
        }
        return v;
    }

    /**
     * Median, lowest and highest of one metric over the runs of one case and system; all NaN when
     * no run measured it. The median is {@link LabReport#medians}' (mean of the middle two for an
     * even count, rounded to 0.001).
     */
    record Spread(double median, double min, double max) {
        static Spread of(double[] values) {
            if (values.length == 0) {
                return new Spread(Double.NaN, Double.NaN, Double.NaN);
            }
            double[] v = values.clone();
            Arrays.sort(v);
            int n = v.length;
            double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
            return new Spread(LabResult.round(median), v[0], v[n - 1]);
        }
    }

    /**
     * The runs of a {@code results.json}: the {@code runs} of a lab report ({@code medians} for a
     * report without them), or the JSON array of {@code stellflow-perf.sh --results-file} (the
     * {@code --quick} job's: one Stellflow run per case; kind {@code consume} for a case named
     * {@code consume...}, else {@code produce}; CPU not measured). Fields a file does not have are
     * not measured; fields it has beyond {@link LabResult}'s are ignored.
     */
    static List<LabResult> readRuns(Path resultsJson) throws IOException {
        JsonNode root;
        try {
            root = LabReport.JSON.readTree(resultsJson.toFile());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(resultsJson + " is not valid JSON: " + e.getOriginalMessage(), e);
        }
        ObjectReader reader =
                LabReport.JSON.readerFor(LabResult.class).without(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        List<LabResult> out = new ArrayList<>();
        if (root == null) {
            throw new IllegalArgumentException(resultsJson + " is empty");
        }
        if (root.isArray()) {
            for (JsonNode n : root) {
                out.add(fromPerfResult(n));
            }
            return out;
        }
        JsonNode runs = root.path("runs").isArray() ? root.path("runs") : root.path("medians");
        if (!runs.isArray()) {
            throw new IllegalArgumentException(
                    resultsJson + " is neither a lab report (with runs or medians) nor a --results-file array");
        }
        for (JsonNode n : runs) {
            try {
                out.add(withDefaults(reader.readValue(n)));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalArgumentException(
                        resultsJson + ": a run that is not a lab result: " + e.getOriginalMessage(), e);
            }
        }
        return out;
    }

    private static LabResult fromPerfResult(JsonNode n) {
        String name = n.path("name").asText("case");
        return new LabResult(
                "stellflow",
                name,
                1,
                name.startsWith("consume") ? "consume" : "produce",
                "-",
                0,
                0,
                1,
                "-",
                "-",
                n.path("records").asLong(),
                n.path("bytes").asLong(),
                n.path("elapsed_ms").asLong(),
                n.path("mb_per_s").asDouble(-1),
                n.path("records_per_s").asDouble(-1),
                n.path("p50_ms").asDouble(-1),
                n.path("p99_ms").asDouble(-1),
                n.path("p999_ms").asDouble(-1),
                -1,
                -1,
                -1,
                -1,
                n.path("errors").asLong());
    }

    /** A lab report's run with the names a record needs; {@code kind} defaults to {@code produce}. */
    private static LabResult withDefaults(LabResult r) {
        if (r.system() != null && r.caseName() != null && r.kind() != null) {
            return r;
        }
        return new LabResult(
                r.system() == null ? "stellflow" : r.system(),
                r.caseName() == null ? "case" : r.caseName(),
                r.run(),
                r.kind() == null ? "produce" : r.kind(),
                r.transport(),
                r.recordSize(),
                r.batchSize(),
                r.partitions(),
                r.acks(),
                r.idempotence(),
                r.records(),
                r.bytes(),
                r.elapsedMs(),
                r.mbPerS(),
                r.recordsPerS(),
                r.p50Ms(),
                r.p99Ms(),
                r.p999Ms(),
                r.brokerCpuSeconds(),
                r.brokerCpuSecondsPerGb(),
                r.clientCpuSeconds(),
                r.clientCpuSecondsPerGb(),
                r.errors());
    }
}
