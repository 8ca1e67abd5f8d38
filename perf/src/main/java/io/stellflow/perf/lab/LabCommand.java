package io.stellflow.perf.lab;

import io.stellflow.perf.Cli;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The Java half of {@code perf/run-matrix.sh}: {@code add} parses one tool's output into a {@link
 * LabResult} line of {@code cases.jsonl} (with the broker CPU of the case), {@code report} writes
 * results.json, results.md and the charts, {@code charts} draws the charts again from a
 * results.json ({@code bin/stellflow-lab.sh charts <dir>}). One invocation per call; not
 * thread-safe.
 */
@Command(
        name = "lab",
        mixinStandardHelpOptions = true,
        description = "Records and reports perf lab cases.",
        subcommands = {LabCommand.Add.class, LabCommand.Report.class, LabCommand.ChartsCommand.class})
public final class LabCommand implements Runnable {
    @Override
    public void run() {
        throw new IllegalArgumentException("choose a subcommand: add, report or charts");
    }

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Append one case to cases.jsonl.")
    static final class Add implements Callable<Integer> {
        @Option(names = "--cases", required = true, description = "cases.jsonl to append to")
        Path cases;

        @Option(names = "--format", required = true, description = "stellflow, kafka-producer or kafka-consumer")
        String format;

        @Option(names = "--output", required = true, description = "file holding the tool's stdout")
        Path output;

        @Option(names = "--system", required = true)
        String system;

        @Option(names = "--case", required = true)
        String caseName;

        @Option(names = "--run", defaultValue = "1")
        int run;

        @Option(
                names = "--kind",
                required = true,
                description = "produce, consume, latency, end-to-end, rebalance or commit")
        String kind;

        @Option(names = "--transport", defaultValue = "-")
        String transport;

        @Option(names = "--record-size", defaultValue = "0")
        int recordSize;

        @Option(names = "--batch-size", defaultValue = "0")
        int batchSize;

        @Option(names = "--partitions", defaultValue = "1")
        int partitions;

        @Option(names = "--acks", defaultValue = "-")
        String acks;

        @Option(
                names = "--idempotence",
                defaultValue = "-",
                description = "the producer's enable.idempotence: true, false or - (no producer)")
        String idempotence;

        @Option(names = "--cpu-ticks", required = true, description = "broker utime+stime ticks over the case")
        long cpuTicks;

        @Option(names = "--clk-tck", defaultValue = "100", description = "ticks per second (getconf CLK_TCK)")
        long clkTck;

        @Option(
                names = "--client-cpu-ms",
                defaultValue = "-1",
                description = "the load tool's user+system CPU time in ms (-1: not measured)")
        long clientCpuMs;

        @Option(
                names = "--warmup-records",
                defaultValue = "0",
                description = "records the tool sent before its measured ones (--warmup-records of both load"
                        + " tools): left out of the throughput and latencies, but their bytes count in the CPU"
                        + " per GB, since the CPU figures cover the whole case")
        long warmupRecords;

        @Override
        public Integer call() throws IOException {
            ToolOutput.Summary s =
                    ToolOutput.parse(format, Files.readAllLines(output, StandardCharsets.UTF_8), recordSize);
            double cpuS = (double) cpuTicks / clkTck;
            // warm-up records are the measured ones' kind: counted at their mean size (a payload file
            // of mixed sizes is below --record-size)
            double recordBytes = s.records() > 0 ? (double) s.bytes() / s.records() : recordSize;
            double gb = (s.bytes() + warmupRecords * recordBytes) / LabResult.GIB;
            LabResult r = new LabResult(
                    system,
                    caseName,
                    run,
                    kind,
                    transport,
                    recordSize,
                    batchSize,
                    partitions,
                    acks,
                    idempotence,
                    s.records(),
                    s.bytes(),
                    s.elapsedMs(),
                    s.mbPerS(),
                    s.recordsPerS(),
                    s.p50Ms(),
                    s.p99Ms(),
                    s.p999Ms(),
                    LabResult.round(cpuS),
                    gb > 0 ? LabResult.round(cpuS / gb) : -1,
                    clientCpuMs >= 0 ? LabResult.round(clientCpuMs / 1000.0) : -1,
                    clientCpuMs >= 0 && gb > 0 ? LabResult.round(clientCpuMs / 1000.0 / gb) : -1,
                    s.errors());
            String line = LabReport.JSON
                    .writer()
                    .without(com.fasterxml.jackson.databind.SerializationFeature.INDENT_OUTPUT)
                    .writeValueAsString(r);
            Files.writeString(
                    cases, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            if (kind.equals(LabReport.REBALANCE)) {
                System.out.printf(
                        java.util.Locale.ROOT,
                        "%-9s %-34s run %d: %8d ms to a stable assignment, errors %d, broker CPU %.2f s over the"
                                + " bench run%n",
                        system,
                        caseName,
                        run,
                        r.elapsedMs(),
                        r.errors(),
                        r.brokerCpuSeconds());
                return s.records() > 0 && s.errors() == 0 ? 0 : 1;
            }
            System.out.printf(
                    java.util.Locale.ROOT,
                    "%-9s %-34s run %d: %8.1f MB/s %10.0f rec/s p50 %s p99 %s p99.9 %s ms, broker CPU %.2f s (%.2f s/GB),"
                            + " client CPU %.2f s/GB%n",
                    system,
                    caseName,
                    run,
                    r.mbPerS(),
                    r.recordsPerS(),
                    r.p50Ms(),
                    r.p99Ms(),
                    r.p999Ms(),
                    r.brokerCpuSeconds(),
                    r.brokerCpuSecondsPerGb(),
                    r.clientCpuSecondsPerGb());
            return s.records() > 0 && s.errors() == 0 ? 0 : 1;
        }
    }

    @Command(name = "report", mixinStandardHelpOptions = true, description = "Write results.json/.md and charts.")
    static final class Report implements Callable<Integer> {
        @Option(names = "--cases", required = true)
        Path cases;

        @Option(names = "--out-dir", required = true)
        Path outDir;

        @Option(names = "--iperf3-json", description = "iperf3 -J output (loopback limit)")
        Path iperf3;

        @Option(names = "--fio-json", description = "fio --output-format=json output (disk limit)")
        Path fio;

        @Option(names = "--note", defaultValue = "", description = "a sentence on how and where this was run")
        String note;

        @Override
        public Integer call() throws IOException {
            List<LabResult> runs = LabReport.readCases(cases);
            LabReport.Limits limits = LabReport.readLimits(exists(iperf3), exists(fio));
            List<Path> charts = LabReport.write(outDir, note, limits, runs);
            System.out.print(LabReport.markdown(
                    note, limits, LabReport.medians(runs), LabReport.ratios(LabReport.medians(runs))));
            System.out.println("\ncharts (" + charts.size() + "): "
                    + String.join(
                            " ",
                            charts.stream().map(p -> p.getFileName().toString()).toList()));
            return 0;
        }

        private static Path exists(Path p) {
            return p != null && Files.exists(p) ? p : null;
        }
    }

    @Command(
            name = "charts",
            mixinStandardHelpOptions = true,
            description = "Draw the charts of a results.json (a lab report or a --results-file array) again.")
    static final class ChartsCommand implements Callable<Integer> {
        @CommandLine.Parameters(
                index = "0",
                paramLabel = "RESULTS",
                description = "a results directory (its results.json) or a results.json file")
        Path results;

        @Option(names = "--out-dir", description = "where the PNGs go (default: beside results.json)")
        Path outDir;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            Path file = Files.isDirectory(results) ? results.resolve("results.json") : results;
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("no results file at " + file);
            }
            if (System.getProperty("java.awt.headless") == null) {
                System.setProperty("java.awt.headless", "true");
            }
            Path dir = outDir != null ? outDir : file.toAbsolutePath().getParent();
            List<Path> written = Charts.write(dir, Charts.readRuns(file));
            java.io.PrintWriter out = spec.commandLine().getOut();
            for (Path p : written) {
                out.println("chart: " + p);
            }
            out.flush();
            if (written.isEmpty()) {
                spec.commandLine().getErr().println("error: " + file + " holds no measured value to chart");
                return 1;
            }
            return 0;
        }
    }

    /** The command line {@link #main} runs: bad input prints one {@code error:} line and exits 1. */
    static CommandLine commandLine() {
        CommandLine cl = Cli.withVersion(new CommandLine(new LabCommand()));
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof IllegalArgumentException) {
                commandLine.getErr().println("error: " + ex.getMessage());
                commandLine.getErr().flush();
                return 1;
            }
            throw ex;
        });
        return cl;
    }

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(commandLine().execute(args));
    }
}
