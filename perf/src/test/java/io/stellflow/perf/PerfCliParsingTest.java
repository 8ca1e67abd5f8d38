package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The load generator's flags, its JSON result and the results file. */
class PerfCliParsingTest {
    @Test
    void perfProduceTakesKafkaStyleFlags() {
        CommandLine cl = new CommandLine(new PerfCommand());
        CommandLine.ParseResult pr = cl.parseArgs(
                "produce",
                "--bootstrap-server",
                "h:1",
                "--topic",
                "t",
                "--record-size",
                "100",
                "--num-records",
                "5",
                "--throughput",
                "1000",
                "--producer-props",
                "acks=1",
                "batch.size=65536",
                "linger.ms=5",
                "--json");
        PerfCommand.Produce p =
                (PerfCommand.Produce) pr.subcommand().commandSpec().userObject();
        assertThat(p.recordSize).isEqualTo(100);
        assertThat(p.numRecords).isEqualTo(5);
        assertThat(p.throughput).isEqualTo(1000);
        assertThat(p.json).isTrue();
        assertThat(p.producerProps)
                .containsEntry("acks", "1")
                .containsEntry("batch.size", "65536")
                .containsEntry("linger.ms", "5");
    }

    @Test
    void perfConsumeTakesAGroup() {
        CommandLine.ParseResult pr = new CommandLine(new PerfCommand())
                .parseArgs(
                        "consume", "--bootstrap-server", "h:1", "--topic", "t", "--num-records", "5", "--group", "g1");
        PerfCommand.Consume c =
                (PerfCommand.Consume) pr.subcommand().commandSpec().userObject();
        assertThat(c.group).isEqualTo("g1");
        PerfCommand.Consume plain = (PerfCommand.Consume) new CommandLine(new PerfCommand())
                .parseArgs("consume", "--bootstrap-server", "h:1", "--topic", "t", "--num-records", "5")
                .subcommand()
                .commandSpec()
                .userObject();
        assertThat(plain.group).isNull();
    }

    @Test
    void perfNeedsALimit() {
        StringWriter err = new StringWriter();
        int rc = Cli.commandLine(new PerfCommand())
                .setErr(new PrintWriter(err))
                .execute("produce", "--bootstrap-server", "h:1", "--topic", "t");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--num-records or --duration-ms");
    }

    @Test
    void badSizesAndCountsAreOneUsageErrorBeforeAnythingConnects() {
        String[][] bad = {
            {"produce", "--record-size", "-5", "--num-records", "10"},
            {"produce", "--num-records", "-1"},
            {"produce", "--num-records", "0"},
            {"consume", "--num-records", "-5"},
            {"consume", "--duration-ms", "-7"},
            {"produce"},
        };
        String[] reasons = {
            "--record-size must be at least 0, got -5",
            "--num-records must be at least 1, got -1",
            "--num-records must be at least 1, got 0",
            "--num-records must be at least 1, got -5",
            "--duration-ms must be at least 1 (or -1: no limit), got -7",
            "give --num-records or --duration-ms",
        };
        for (int i = 0; i < bad.length; i++) {
            List<String> args = new ArrayList<>(List.of(bad[i]));
            // port 1: nothing listens, so reaching the network would fail differently (exit 1)
            args.addAll(1, List.of("--bootstrap-server", "127.0.0.1:1", "--topic", "t"));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int rc = Cli.commandLine(new PerfCommand())
                    .setOut(new PrintWriter(out))
                    .setErr(new PrintWriter(err))
                    .execute(args.toArray(String[]::new));
            assertThat(rc).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err.toString())
                    .as(String.join(" ", args))
                    .isEqualTo("error: " + reasons[i] + "\nRun with --help for usage.\n");
            assertThat(out.toString()).isEmpty();
        }

        StringWriter err = new StringWriter();
        int rc = Cli.commandLine(new PerfCommand())
                .setErr(new PrintWriter(err))
                .execute("produce", "--topic", "t", "--num-records", "5");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString())
                .isEqualTo("error: Missing required option: '--bootstrap-server=<bootstrapServer>'\n"
                        + "Run with --help for usage.\n");
    }

    @Test
    void perfConsumeRefusesAnEmptyGroupAsAUsageError() {
        StringWriter err = new StringWriter();
        int rc = Cli.commandLine(new PerfCommand())
                .setErr(new PrintWriter(err))
                .execute(
                        "consume",
                        "--bootstrap-server",
                        "127.0.0.1:1",
                        "--topic",
                        "t",
                        "--num-records",
                        "5",
                        "--group",
                        "");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--group must not be empty").doesNotContain("Exception");
    }

    @Test
    void perfResultJsonHasTheAgreedFieldNames() throws Exception {
        Histogram h = new Histogram(3);
        h.recordValue(1000);
        h.recordValue(3000);
        PerfResult r = PerfResult.of("case", 2_000, 2L << 20, 2_000_000_000L, h, 0);
        JsonNode n = new ObjectMapper().readTree(r.toJson());
        assertThat(n.get("name").asText()).isEqualTo("case");
        assertThat(n.get("mb_per_s").asDouble()).isEqualTo(1.0);
        assertThat(n.get("records_per_s").asDouble()).isEqualTo(1000.0);
        assertThat(n.get("p50_ms").asDouble()).isCloseTo(1.0, org.assertj.core.api.Assertions.within(0.01));
        assertThat(n.get("p99_ms").asDouble()).isCloseTo(3.0, org.assertj.core.api.Assertions.within(0.01));
        assertThat(n.has("p999_ms")).isTrue();
        assertThat(n.has("producers")).as("only from produce and end-to-end").isFalse();
        assertThat(r.toText()).contains("records/s").contains("MB/s").doesNotContain("producers");
        PerfResult three = PerfResult.of("case", 2_000, 2L << 20, 2_000_000_000L, h, 0, 3);
        assertThat(new ObjectMapper().readTree(three.toJson()).get("producers").asInt())
                .isEqualTo(3);
        assertThat(three.toText()).endsWith("; producers 3");
    }

    @Test
    void resultsFileAppendsObjectsToOneJsonArrayAndPrintsATable(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("r/results.json");
        Histogram h = new Histogram(3);
        h.recordValue(500);
        ResultsFile.append(file, PerfResult.of("a", 10, 10240, 1_000_000_000L, h, 0));
        ResultsFile.append(file, PerfResult.of("b", 20, 20480, 1_000_000_000L, h, 0));
        JsonNode arr = new ObjectMapper().readTree(file.toFile());
        assertThat(arr.isArray()).isTrue();
        assertThat(arr).hasSize(2);
        assertThat(arr.get(1).get("name").asText()).isEqualTo("b");
        assertThat(arr.get(1).get("records_per_s").asDouble()).isEqualTo(20.0);
        assertThat(ResultsFile.read(file)).extracting(PerfResult::name).containsExactly("a", "b");
        assertThat(ResultsFile.table(ResultsFile.read(file)))
                .contains("case")
                .contains("records/s")
                .contains("b ");
    }

    @Test
    void perfProduceTakesAPayloadOrAKafkaStylePayloadFile() {
        CommandLine cl = new CommandLine(new PerfCommand());
        PerfCommand.Produce p = (PerfCommand.Produce) cl.parseArgs(
                        "produce",
                        "--bootstrap-server",
                        "h:1",
                        "--topic",
                        "t",
                        "--payload",
                        "json-logs",
                        "--payload-records",
                        "10",
                        "--producer-props",
                        "compression.type=zstd",
                        "compression.zstd.level=3")
                .subcommand()
                .commandSpec()
                .userObject();
        assertThat(p.payload).isEqualTo("json-logs");
        assertThat(p.payloadRecords).isEqualTo(10);
        assertThat(p.producerProps).containsEntry("compression.type", "zstd");
        p = (PerfCommand.Produce) new CommandLine(new PerfCommand())
                .parseArgs("produce", "--bootstrap-server", "h:1", "--topic", "t", "--payload-file", "/tmp/x")
                .subcommand()
                .commandSpec()
                .userObject();
        assertThat(p.payloadFile).hasToString("/tmp/x");
        assertThat(p.payload).isEqualTo("random");
    }

    @Test
    void payloadFileWritesJsonLogRecords(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("p.txt");
        StringWriter out = new StringWriter();
        CommandLine cl = new CommandLine(new PerfCommand());
        cl.setOut(new PrintWriter(out));
        int exit = cl.execute("payload-file", "--out", file.toString(), "--records", "20", "--record-size", "1024");
        assertThat(exit).isZero();
        assertThat(out.toString()).startsWith("wrote 20 records, ");
        assertThat(io.stellflow.perf.data.Payloads.fromFile(file))
                .isDeepEqualTo(io.stellflow.perf.data.Payloads.jsonLogRecords(42, 20, 1024));
    }
}
