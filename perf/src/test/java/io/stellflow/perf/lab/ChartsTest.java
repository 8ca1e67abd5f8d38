package io.stellflow.perf.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.testsupport.TempDirs;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ChartsTest {
    private Path dir;

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @BeforeEach
    void createDir() throws IOException {
        dir = TempDirs.create("charts");
    }

    @AfterEach
    void deleteDir() throws IOException {
        TempDirs.deleteRecursively(dir);
    }

    private static LabResult run(
            String system,
            String name,
            int run,
            String kind,
            long elapsedMs,
            double mbPerS,
            double recPerS,
            double p50,
            double p99,
            double p999,
            double cpuPerGb) {
        return new LabResult(
                system, name, run, kind, "-", 1024, 1 << 20, 1, "1", "false", 1000, 1 << 20, elapsedMs, mbPerS, recPerS,
                p50, p99, p999, cpuPerGb, cpuPerGb, -1, -1, 0);
    }

    /** Two systems, three runs of a produce, a consume and a fixed-rate case, and group cases. */
    private static List<LabResult> labRuns() {
        List<LabResult> runs = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            runs.add(run(
                    "stellflow", "produce-1KiB-b1MiB-acks1", i, "produce", 1600, 600 + 10 * i, 6e5, 30, 100, 110, 0.5));
            runs.add(
                    run("kafka", "produce-1KiB-b1MiB-acks1", i, "produce", 3200, 300 + 20 * i, 3e5, 60, 180, 200, 1.1));
            runs.add(run("stellflow", "consume-1KiB", i, "consume", 1200, 800, 8e5, 2, 9, 12, 0.4));
            runs.add(run("kafka", "consume-1KiB", i, "consume", 2400, 450, 4.5e5, -1, -1, -1, 0.9));
            runs.add(
                    run("stellflow", "latency-1KiB-20k/s-acks-1", i, "latency", 10_000, 19.5, 2e4, 1.2, 4.5, 9.7, 0.6));
            runs.add(run("kafka", "latency-1KiB-20k/s-acks-1", i, "latency", 10_000, 19.5, 2e4, 2.0, 7.0, 11, 1.0));
            runs.add(run("stellflow", "rebalance-3x30-join", i, "rebalance", 1200 + i, 0, 0, -1, -1, -1, -1));
            runs.add(run("kafka", "rebalance-3x30-join", i, "rebalance", 5000 + i, 0, 0, -1, -1, -1, -1));
            runs.add(run("stellflow", "commit-2", i, "commit", 3000, 0, 7000, 0.7, 6.7, 18, -1));
            runs.add(run("kafka", "commit-2", i, "commit", 3000, 0, 1900, 3.2, 17, 77, -1));
        }
        return runs;
    }

    private static void assertPng(Path file) throws IOException {
        assertThat(file).exists();
        byte[] bytes = Files.readAllBytes(file);
        assertThat(bytes.length).isBetween(3_000, 2_000_000);
        assertThat(new String(bytes, 1, 3, java.nio.charset.StandardCharsets.US_ASCII))
                .isEqualTo("PNG");
        BufferedImage img = ImageIO.read(file.toFile());
        assertThat(img).isNotNull();
        assertThat(img.getWidth()).isBetween(600, 4000);
        assertThat(img.getHeight()).isBetween(400, 1200);
    }

    @Test
    void writesOneValidPngPerMetricWithFixedRateAndGroupCasesOnTheirOwn() throws IOException {
        List<Path> written = Charts.write(dir, labRuns());

        assertThat(written)
                .extracting(p -> p.getFileName().toString())
                .containsExactly(
                        "throughput.png",
                        "records-per-s.png",
                        "latency-p50.png",
                        "latency-p99.png",
                        "latency-p999.png",
                        "cpu.png",
                        "fixed-rate-latency-p50.png",
                        "fixed-rate-latency-p99.png",
                        "fixed-rate-latency-p999.png",
                        "fixed-rate-cpu.png",
                        "commit-rate.png",
                        "commit-latency-p50.png",
                        "commit-latency-p99.png",
                        "commit-latency-p999.png",
                        "rebalance.png");
        for (Path p : written) {
            assertPng(p);
        }
    }

    @Test
    void eachSystemHasItsOwnColourOnEveryChart() throws IOException {
        // One case where only ours has a bar: its colour is ours, not the first series colour.
        List<LabResult> runs = List.of(
                run("kafka", "produce-a", 1, "produce", 1000, 100, 1e5, 1, 2, 3, 1),
                run("stellflow", "produce-b", 1, "produce", 1000, 200, 2e5, 1, 2, 3, 1));
        Charts.write(dir, runs);
        BufferedImage img = ImageIO.read(dir.resolve("throughput.png").toFile());

        assertThat(countPixels(img, BarChart.STELLFLOW.getRGB())).isGreaterThan(2_000);
        assertThat(countPixels(img, BarChart.KAFKA.getRGB())).isGreaterThan(1_000);
        assertThat(BarChart.colour("stellflow")).isNotEqualTo(BarChart.colour("kafka"));
        assertThat(BarChart.colour("redpanda")).isEqualTo(BarChart.colour("redpanda"));
    }

    private static int countPixels(BufferedImage img, int rgb) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if ((img.getRGB(x, y) & 0xFFFFFF) == (rgb & 0xFFFFFF)) {
                    n++;
                }
            }
        }
        return n;
    }

    @Test
    void aChartWithNothingMeasuredIsNotWrittenAndAStaleOneIsRemoved() throws IOException {
        Files.writeString(dir.resolve(Charts.OLD_LATENCY_CHART), "old chart of the lab before per-metric charts");
        Files.writeString(dir.resolve("cpu.png"), "stale");
        List<LabResult> noCpu = List.of(run("stellflow", "produce-1KiB", 1, "produce", 1000, 500, 5e5, 1, 2, 3, -1));

        List<Path> written = Charts.write(dir, noCpu);

        assertThat(written).extracting(p -> p.getFileName().toString()).doesNotContain("cpu.png");
        assertThat(dir.resolve("cpu.png")).doesNotExist();
        assertThat(dir.resolve(Charts.OLD_LATENCY_CHART)).doesNotExist();
        assertPng(dir.resolve("throughput.png"));
    }

    @Test
    void spreadIsTheMedianAndTheLowestAndHighestRun() {
        assertThat(Charts.Spread.of(new double[] {3.0, 1.0, 2.0})).isEqualTo(new Charts.Spread(2.0, 1.0, 3.0));
        assertThat(Charts.Spread.of(new double[] {4.0, 1.0, 2.0, 10.0})).isEqualTo(new Charts.Spread(3.0, 1.0, 10.0));
        assertThat(Charts.Spread.of(new double[] {7.5})).isEqualTo(new Charts.Spread(7.5, 7.5, 7.5));
        Charts.Spread none = Charts.Spread.of(new double[0]);
        assertThat(none.median()).isNaN();
        assertThat(none.min()).isNaN();
        assertThat(none.max()).isNaN();
    }

    @Test
    void theChartMedianIsTheReportsMedian() {
        List<LabResult> runs = labRuns();
        for (LabResult m : LabReport.medians(runs)) {
            double[] mb = runs.stream()
                    .filter(r -> r.system().equals(m.system()) && r.caseName().equals(m.caseName()))
                    .mapToDouble(LabResult::mbPerS)
                    .toArray();
            assertThat(Charts.Spread.of(mb).median()).isEqualTo(m.mbPerS());
        }
    }

    @Test
    void fixedRateCasesAreTheLatencyKindOrNamedWithARate() {
        assertThat(Charts.fixedRate(run("s", "latency-1KiB-acks-1", 1, "latency", 0, 0, 0, 0, 0, 0, 0)))
                .isTrue();
        assertThat(Charts.fixedRate(run("s", "produce-1KiB-acks1-20k/s", 1, "produce", 0, 0, 0, 0, 0, 0, 0)))
                .isTrue();
        assertThat(Charts.fixedRate(run("s", "produce-500/s-x", 1, "produce", 0, 0, 0, 0, 0, 0, 0)))
                .isTrue();
        assertThat(Charts.fixedRate(run("s", "produce-1KiB-b1MiB-acks-1", 1, "produce", 0, 0, 0, 0, 0, 0, 0)))
                .isFalse();
    }

    @Test
    void readsTheRunsOfALabReportAndTheQuickJobsArray() throws IOException {
        LabReport.write(dir, "note", new LabReport.Limits(0, 0), labRuns());
        assertThat(Charts.readRuns(dir.resolve("results.json"))).isEqualTo(labRuns());

        // The --quick job's file: stellflow-perf.sh --results-file, no system, kind or CPU.
        Path quick = dir.resolve("quick.json");
        Files.writeString(quick, """
                [ {"name":"produce-1KiB-acks1","records":500000,"bytes":512000000,"elapsed_ms":1000,
                   "mb_per_s":488.3,"records_per_s":500000.0,"p50_ms":20.1,"p99_ms":60.2,"p999_ms":70.3,
                   "max_ms":80.0,"errors":0,"producers":1},
                  {"name":"consume-1KiB","records":500000,"bytes":512000000,"elapsed_ms":800,
                   "mb_per_s":610.4,"records_per_s":625000.0,"p50_ms":0.5,"p99_ms":3.0,"p999_ms":9.0,
                   "max_ms":12.0,"errors":0} ]
                """);
        List<LabResult> runs = Charts.readRuns(quick);
        assertThat(runs).extracting(LabResult::system).containsOnly("stellflow");
        assertThat(runs).extracting(LabResult::kind).containsExactly("produce", "consume");
        assertThat(runs.get(0).mbPerS()).isEqualTo(488.3);
        assertThat(runs.get(0).p99Ms()).isEqualTo(60.2);
        assertThat(runs.get(1).brokerCpuSecondsPerGb()).isEqualTo(-1);
    }

    @Test
    void anOldReportWithoutNewerFieldsStillReads() throws IOException {
        // As the lab wrote it on 2026-11-29: no client CPU, and a field we no longer know.
        Path old = dir.resolve("results.json");
        Files.writeString(old, """
                {"note":"old","runs":[{"system":"kafka","case_name":"produce-1KiB","run":2,"kind":"produce",
                  "mb_per_s":114.0,"records_per_s":116736.0,"p50_ms":5.0,"p99_ms":9.0,"p999_ms":12.0,
                  "broker_cpu_seconds_per_gb":2.1,"retired_field":7}]}
                """);
        List<LabResult> runs = Charts.readRuns(old);
        assertThat(runs).singleElement().satisfies(r -> {
            assertThat(r.system()).isEqualTo("kafka");
            assertThat(r.run()).isEqualTo(2);
            assertThat(r.mbPerS()).isEqualTo(114.0);
        });
    }

    @Test
    void aReportWithoutRunsIsChartedFromItsMedians() throws IOException {
        Path medians = dir.resolve("results.json");
        Files.writeString(medians, """
                {"note":"medians only","medians":[
                  {"system":"stellflow","case_name":"produce-1KiB","run":3,"kind":"produce","mb_per_s":600.0},
                  {"system":"kafka","case_name":"produce-1KiB","run":3,"kind":"produce","mb_per_s":300.0}]}
                """);

        List<LabResult> runs = Charts.readRuns(medians);
        List<Path> written = Charts.write(dir, runs);

        assertThat(runs).extracting(LabResult::mbPerS).containsExactly(600.0, 300.0);
        assertThat(written).extracting(p -> p.getFileName().toString()).contains("throughput.png");
        assertPng(dir.resolve("throughput.png"));
    }

    @Test
    void badInputIsRefusedWithTheFileNamed() throws IOException {
        Path notJson = dir.resolve("broken.json");
        Files.writeString(notJson, "{\"runs\": [");
        assertThatThrownBy(() -> Charts.readRuns(notJson))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("broken.json");
        Path wrongShape = dir.resolve("shape.json");
        Files.writeString(wrongShape, "{\"cases\": 3}");
        assertThatThrownBy(() -> Charts.readRuns(wrongShape))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shape.json");
    }

    @Test
    void theChartsCommandRendersADirectoryAgain() throws IOException {
        LabReport.write(dir, "note", new LabReport.Limits(0, 0), labRuns());
        Files.delete(dir.resolve("throughput.png"));
        StringWriterPair io = new StringWriterPair();

        int rc = io.commandLine().execute("charts", dir.toString());

        assertThat(rc).isZero();
        assertPng(dir.resolve("throughput.png"));
        assertThat(io.out()).contains("chart: " + dir.resolve("rebalance.png"));
    }

    @Test
    void theChartsCommandNamesAMissingOrBrokenResultsFile() throws IOException {
        StringWriterPair io = new StringWriterPair();
        assertThat(io.commandLine().execute("charts", dir.resolve("missing").toString()))
                .isEqualTo(1);
        assertThat(io.err()).startsWith("error: no results file at " + dir.resolve("missing"));

        Files.writeString(dir.resolve("results.json"), "not json");
        StringWriterPair broken = new StringWriterPair();
        assertThat(broken.commandLine().execute("charts", dir.toString())).isEqualTo(1);
        assertThat(broken.err())
                .startsWith("error: ")
                .contains("is not valid JSON")
                .doesNotContain("\tat ");
        assertThat(dir.resolve("throughput.png")).doesNotExist();
    }

    /** {@link LabCommand#commandLine} with its stdout and stderr kept. */
    private static final class StringWriterPair {
        private final java.io.StringWriter out = new java.io.StringWriter();
        private final java.io.StringWriter err = new java.io.StringWriter();
        private final CommandLine cl = LabCommand.commandLine();

        StringWriterPair() {
            cl.setOut(new PrintWriter(out));
            cl.setErr(new PrintWriter(err));
        }

        CommandLine commandLine() {
            return cl;
        }

        String out() {
            return out.toString();
        }

        String err() {
            return err.toString();
        }
    }
}
