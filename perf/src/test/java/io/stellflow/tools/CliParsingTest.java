package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CliParsingTest {

    @Test
    void topicsCommandNeedsExactlyOneAction() {
        TopicsCommand cmd = new TopicsCommand();
        new CommandLine(cmd).parseArgs("--bootstrap-server", "h:1", "--create", "--topic", "x", "--partitions", "3");
        assertThat(cmd.action.create).isTrue();
        assertThat(cmd.topic).isEqualTo("x");
        assertThat(cmd.partitionsOption).isEqualTo(3);
        assertThat(cmd.replicationFactorOption).as("not given").isNull();

        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new TopicsCommand())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "h:1", "--list", "--describe");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("mutually exclusive");
    }

    @Test
    void consoleProducerMapsShortcutsAndPropertiesToProducerConfig() {
        ConsoleProducer cmd = new ConsoleProducer();
        new CommandLine(cmd)
                .parseArgs(
                        "--bootstrap-server",
                        "h:1",
                        "--topic",
                        "t",
                        "--acks",
                        "all",
                        "--batch-size",
                        "100",
                        "--linger-ms",
                        "3",
                        "--producer-property",
                        "max.in.flight.requests.per.connection=2",
                        "--property",
                        "parse.key=true",
                        "--property",
                        "key.separator=::");
        Properties p = cmd.producerProperties();
        assertThat(p.getProperty("acks")).isEqualTo("all");
        assertThat(p.getProperty("batch.size")).isEqualTo("100");
        assertThat(p.getProperty("linger.ms")).isEqualTo("3");
        assertThat(p.getProperty("max.in.flight.requests.per.connection")).isEqualTo("2");
        assertThat(p.getProperty("bootstrap.servers")).isEqualTo("h:1");
        assertThat(cmd.separator()).isEqualTo("::".getBytes(StandardCharsets.UTF_8));

        ConsoleProducer plain = new ConsoleProducer();
        new CommandLine(plain).parseArgs("--bootstrap-server", "h:1", "--topic", "t");
        assertThat(plain.separator()).isNull();
        ConsoleProducer dflt = new ConsoleProducer();
        new CommandLine(dflt).parseArgs("--bootstrap-server", "h:1", "--topic", "t", "--property", "parse.key=true");
        assertThat(dflt.separator()).isEqualTo(new byte[] {'\t'});
    }

    @Test
    void lineSplitterKeepsEveryByteExceptTheNewlines() throws IOException {
        byte[] input = "a\r\n\nü€ line\n\u0000\u00ff last".getBytes(StandardCharsets.UTF_8);
        ConsoleProducer.LineSplitter s = new ConsoleProducer.LineSplitter(new ByteArrayInputStream(input));
        List<String> lines = new ArrayList<>();
        byte[] line;
        while ((line = s.next()) != null) {
            lines.add(new String(line, StandardCharsets.UTF_8));
        }
        assertThat(lines).containsExactly("a\r", "", "ü€ line", "\u0000\u00ff last");
    }

    @Test
    void lineSplitterHandlesLinesLongerThanItsBuffer() throws IOException {
        byte[] big = new byte[200_000];
        java.util.Arrays.fill(big, (byte) 'x');
        byte[] input = new byte[big.length * 2 + 2];
        System.arraycopy(big, 0, input, 0, big.length);
        input[big.length] = '\n';
        System.arraycopy(big, 0, input, big.length + 1, big.length);
        input[input.length - 1] = '\n';
        ConsoleProducer.LineSplitter s = new ConsoleProducer.LineSplitter(new ByteArrayInputStream(input));
        assertThat(s.next()).isEqualTo(big);
        assertThat(s.next()).isEqualTo(big);
        assertThat(s.next()).isNull();
    }

    @Test
    void consoleConsumerRejectsOffsetWithoutPartition() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new ConsoleConsumer())
                .setErr(new PrintWriter(err))
                .execute("--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--offset", "5");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--offset needs --partition");
    }

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
    void perfNeedsALimit() {
        StringWriter err = new StringWriter();
        int rc = Tools.commandLine(new PerfCommand())
                .setErr(new PrintWriter(err))
                .execute("produce", "--bootstrap-server", "h:1", "--topic", "t");
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("--num-records or --duration-ms");
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
}
