package io.stellflow.perf.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link TxnBench} against {@link FakeTxnSystem}, an in-memory log with transactions and groups. */
class TxnBenchTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Result(int exit, JsonNode line) {}

    private static Result run(FakeTxnSystem system, String... args) throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--bootstrap-server", "fake:1"));
        int exit;
        try (PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            exit = TxnBench.run(all.toArray(String[]::new), system, out);
        }
        String[] lines = buf.toString(StandardCharsets.UTF_8).strip().split("\n");
        assertThat(lines).hasSize(1);
        return new Result(exit, JSON.readTree(lines[0]));
    }

    @Test
    void produceEndsATransactionEveryNRecordsAndTimesEachCommit() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(2);
        Result r = run(
                system,
                "produce",
                "--topic",
                "t",
                "--partitions",
                "2",
                "--num-records",
                "1050",
                "--record-size",
                "100",
                "--transaction-records",
                "100",
                "--name",
                "txn-produce");

        JsonNode n = r.line();
        assertThat(r.exit()).isZero();
        assertThat(n.get("name").asText()).isEqualTo("txn-produce");
        assertThat(n.get("errors").asLong()).isZero();
        assertThat(n.get("records").asLong()).isEqualTo(1050);
        assertThat(n.get("bytes").asLong()).isEqualTo(105_000);
        // 10 full transactions and the last 50 records in an 11th, committed at the end.
        assertThat(n.get("transactions").asLong()).isEqualTo(11);
        assertThat(system.begins.get()).isEqualTo(11);
        assertThat(system.commits.get()).isEqualTo(11);
        assertThat(system.committedRecords("t")).isEqualTo(1050);
        assertThat(n.get("mode").asText()).isEqualTo("transactional");
        assertThat(n.get("p50_ms").asDouble()).isGreaterThanOrEqualTo(0);
        assertThat(n.get("p99_ms").asDouble())
                .isGreaterThanOrEqualTo(n.get("p50_ms").asDouble());
        assertThat(n.get("transactions_per_s").asDouble()).isPositive();
        assertThat(system.transactionalIds).singleElement().asString().startsWith("txn-bench-txn-produce-");
    }

    @Test
    void produceWithoutTransactionsIsTheIdempotentBaselineOfTheSameLoop() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        Result r = run(system, "produce", "--topic", "t", "--num-records", "500", "--no-transactions");

        assertThat(r.exit()).isZero();
        assertThat(r.line().get("mode").asText()).isEqualTo("idempotent");
        assertThat(r.line().get("transactions").asLong()).isZero();
        assertThat(r.line().get("p50_ms").asDouble()).isEqualTo(-1.0);
        assertThat(r.line().get("bytes").asLong()).isEqualTo(500 * 1024);
        assertThat(system.begins.get()).isZero();
        assertThat(system.transactionalIds).containsExactly((String) null);
        assertThat(system.committedRecords("t")).isEqualTo(500);
    }

    @Test
    void produceTakesValuesFromAPayloadFileInTurn(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("payload.txt");
        Files.writeString(file, "abc\n\nde\n");
        FakeTxnSystem system = new FakeTxnSystem(1);
        Result r = run(
                system,
                "produce",
                "--topic",
                "t",
                "--num-records",
                "5",
                "--payload-file",
                file.toString(),
                "--transaction-duration-ms",
                "100");

        assertThat(r.exit()).isZero();
        assertThat(r.line().get("bytes").asLong()).isEqualTo(3 + 2 + 3 + 2 + 3);
    }

    @Test
    void failedSendsAreCountedAsErrors() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        system.sendError = new IllegalStateException("broker said no");
        Result r = run(system, "produce", "--topic", "t", "--num-records", "20", "--transaction-records", "10");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.line().get("errors").asLong()).isEqualTo(20);
    }

    @Test
    void aRefusedInitTransactionsEndsTheCaseWithAnErrorLine() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        system.initError = new IllegalStateException("fenced");
        Result r = run(system, "produce", "--topic", "t", "--num-records", "20", "--transaction-records", "10");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.line().get("errors").asLong()).isEqualTo(1);
        assertThat(r.line().get("records").asLong()).isZero();
        assertThat(system.begins.get()).isZero();
    }

    @Test
    void aFailedCommitAbortsTheOpenTransactionAndStopsTheCase() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        system.failCommitAt = 2;
        Result r = run(system, "produce", "--topic", "t", "--num-records", "50", "--transaction-records", "10");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.line().get("errors").asLong()).isEqualTo(1);
        assertThat(r.line().get("records").asLong()).isEqualTo(20);
        assertThat(r.line().get("transactions").asLong()).isEqualTo(1);
        assertThat(system.aborts.get()).isEqualTo(1);
        assertThat(system.committedRecords("t")).isEqualTo(10); // the aborted ten are not visible
    }

    @Test
    void badOptionsAreRefusedWithTheirName() {
        FakeTxnSystem system = new FakeTxnSystem(1);
        assertThatThrownBy(() -> run(system, "produce", "--topic", "t", "--num-records", "10"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--transaction-duration-ms");
        assertThatThrownBy(() -> run(system, "produce", "--topic", "t", "--num-records", "x", "--no-transactions"))
                .hasMessageContaining("--num-records wants an integer, got x");
        assertThatThrownBy(() -> run(system, "produce", "--num-records", "1", "--no-transactions"))
                .hasMessageContaining("--topic is required");
        assertThatThrownBy(() -> run(system, "produce", "--topic", "t", "--prop", "novalue", "--no-transactions"))
                .hasMessageContaining("k=v, got novalue");
        assertThatThrownBy(() -> run(system, "replay", "--topic", "t")).hasMessageContaining("unknown case replay");
        assertThatThrownBy(() ->
                        run(system, "produce", "--topic", "t", "--producer-prop", "linger.ms=5", "--no-transactions"))
                .hasMessageContaining("unknown option --producer-prop")
                .hasMessageContaining("--prop k=v");
        assertThatThrownBy(() -> run(system, "ctp", "--input-topic", "i", "--output-topic", "o", "--record-size", "8"))
                .hasMessageContaining("--record-size >= 16");
    }

    @Test
    void ctpDeliversEveryMeasuredRecordOnceAndCommitsTheGroupsOffsetsInTheTransactions() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(2);
        Result r = run(
                system,
                "ctp",
                "--input-topic",
                "in",
                "--output-topic",
                "out",
                "--partitions",
                "2",
                "--rate",
                "1000",
                "--warmup-ms",
                "100",
                "--duration-ms",
                "400",
                "--group",
                "g",
                "--name",
                "ctp-latency-txn");

        JsonNode n = r.line();
        assertThat(r.exit()).as(n.toString()).isZero();
        assertThat(n.get("mode").asText()).isEqualTo("transactional");
        assertThat(n.get("errors").asLong()).isZero();
        assertThat(n.get("missing").asLong()).isZero();
        assertThat(n.get("duplicates").asLong()).isZero();
        // 1000 records/s for 400 ms, paced by a sleeping thread on a shared machine.
        assertThat(n.get("records").asLong()).isEqualTo(n.get("sent").asLong()).isBetween(150L, 450L);
        assertThat(n.get("p50_ms").asDouble()).isPositive();
        assertThat(n.get("p999_ms").asDouble())
                .isGreaterThanOrEqualTo(n.get("p99_ms").asDouble());
        assertThat(n.get("transactions").asLong()).isPositive().isEqualTo(system.commits.get());
        assertThat(system.asyncCommits.get()).isZero();
        // Every output record was committed, and the group's offsets came with the transactions.
        long committedOffsets = system.groupOffset("g", "in", 0) + system.groupOffset("g", "in", 1);
        assertThat(committedOffsets).isEqualTo(system.committedRecords("out")).isPositive();
    }

    @Test
    void ctpPlainIsTheSamePipelineWithAsyncOffsetCommitsAndNoTransaction() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        Result r = run(
                system,
                "ctp",
                "--input-topic",
                "in",
                "--output-topic",
                "out",
                "--rate",
                "1000",
                "--warmup-ms",
                "50",
                "--duration-ms",
                "300",
                "--group",
                "g",
                "--plain");

        assertThat(r.exit()).as(r.line().toString()).isZero();
        assertThat(r.line().get("mode").asText()).isEqualTo("plain");
        assertThat(r.line().get("records").asLong()).isPositive();
        assertThat(system.begins.get()).isZero();
        assertThat(system.asyncCommits.get()).isPositive();
        assertThat(system.transactionalIds).containsOnlyNulls();
        assertThat(system.groupOffset("g", "in", 0)).isPositive();
    }

    @Test
    void ctpWhoseAppNeverGetsItsPartitionsFailsAfterTheTimeout() throws Exception {
        FakeTxnSystem system = new FakeTxnSystem(1);
        system.neverAssign = true;
        Result r = run(
                system,
                "ctp",
                "--input-topic",
                "in",
                "--output-topic",
                "out",
                "--rate",
                "500",
                "--duration-ms",
                "100",
                "--timeout-ms",
                "200",
                "--drain-ms",
                "50");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.line().get("errors").asLong()).isPositive();
        assertThat(r.line().get("records").asLong()).isZero();
    }
}
