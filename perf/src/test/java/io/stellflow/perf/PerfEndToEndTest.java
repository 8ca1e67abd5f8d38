package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stellflow.broker.StellflowServer;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The load generator's end-to-end and warm-up modes against a real broker in-process on 127.0.0.1:0. */
@IntegrationTest
class PerfEndToEndTest {
    @TempDir
    Path dataDir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        server = InProcessBroker.start(dataDir);
        bootstrap = "127.0.0.1:" + server.port();
    }

    @AfterEach
    void stopBroker() {
        server.close();
    }

    @Test
    void endToEndModeReceivesEveryRecordFromSeveralProducers() throws Exception {
        createTopic("e2e", 2);
        JsonNode result = perf(
                "end-to-end",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "e2e",
                "--record-size",
                "100",
                "--num-records",
                "2001",
                "--throughput",
                "4000",
                "--producers",
                "2",
                "--json",
                "--producer-props",
                "acks=-1",
                "linger.ms=0");
        assertThat(result.get("records").asLong()).isEqualTo(2001);
        assertThat(result.get("bytes").asLong()).isEqualTo(2001L * 100);
        assertThat(result.get("errors").asLong()).isZero();
        assertThat(result.get("p50_ms").asDouble()).isPositive();
        assertThat(result.get("p999_ms").asDouble())
                .isGreaterThanOrEqualTo(result.get("p50_ms").asDouble());
    }

    @Test
    void produceWarmupRecordsAreSentButLeftOutOfTheResult() throws Exception {
        createTopic("warm", 1);
        JsonNode result = perf(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "warm",
                "--record-size",
                "100",
                "--num-records",
                "3000",
                "--warmup-records",
                "1000",
                "--throughput",
                "20000",
                "--json",
                "--producer-props",
                "acks=-1",
                "linger.ms=0");
        assertThat(result.get("records").asLong()).as("measured records only").isEqualTo(2000);
        assertThat(result.get("bytes").asLong()).isEqualTo(2000L * 100);
        assertThat(result.get("errors").asLong()).isZero();
        // Latency from the due time, and from the send for a record sent early in a burst: at least
        // a round trip to the broker, never a negative span clamped to 1 us.
        assertThat(result.get("p50_ms").asDouble()).isGreaterThan(0.01);
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            assertThat(admin.listOffsets(new TopicPartition("warm", 0), StellflowAdmin.LATEST))
                    .as("every record, warm-up included, is in the log")
                    .isEqualTo(3000);
        }
        PerfRun bad = PerfRun.of(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "warm",
                "--num-records",
                "5",
                "--warmup-records",
                "5");
        assertThat(bad.exit()).as("warm-up must leave records to measure").isEqualTo(2);
    }

    @Test
    void consumeWithAGroupReadsEveryRecordOnceThenResumesAtTheGroupsCommits() throws Exception {
        createTopic("grouped", 3);
        perf(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "grouped",
                "--record-size",
                "100",
                "--num-records",
                "3000",
                "--json",
                "--producer-props",
                "acks=-1");
        JsonNode first = perf(
                "consume",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "grouped",
                "--group",
                "perf-group",
                "--num-records",
                "3000",
                "--timeout-ms",
                "5000",
                "--json");
        assertThat(first.get("records").asLong()).isEqualTo(3000);
        assertThat(first.get("bytes").asLong()).isEqualTo(3000L * 100);
        // The group committed its positions when the run closed: a second run finds nothing new,
        // and says it read fewer than asked (exit 1).
        PerfRun again = PerfRun.of(
                "consume",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "grouped",
                "--group",
                "perf-group",
                "--num-records",
                "1",
                "--timeout-ms",
                "2000",
                "--json");
        assertThat(again.exit()).isEqualTo(1);
        assertThat(again.err()).contains("read 0 of --num-records 1");
    }

    @Test
    void consumeWithAGroupCommitsExactlyTheRecordsItCounted() throws Exception {
        createTopic("counted", 3);
        perf(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "counted",
                "--record-size",
                "10",
                "--num-records",
                "3000",
                "--json",
                "--producer-props",
                "acks=-1");
        // 1001 of 3000: the run stops inside a poll (polls return whole fetches), and the records of
        // that poll it did not count must not be committed.
        JsonNode first = perf(
                "consume",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "counted",
                "--group",
                "cut",
                "--num-records",
                "1001",
                "--timeout-ms",
                "5000",
                "--json");
        assertThat(first.get("records").asLong()).isEqualTo(1001);
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            Map<TopicPartition, Long> committed = admin.groups().committedOffsets("cut");
            assertThat(committed.values().stream().mapToLong(Long::longValue).sum())
                    .as("committed offsets sum to the records counted: %s", committed)
                    .isEqualTo(1001);
        }
        // The rest, none twice: 1999 of the 5000 asked (exit 1, saying so).
        PerfRun rest = PerfRun.of(
                "consume",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "counted",
                "--group",
                "cut",
                "--num-records",
                "5000",
                "--timeout-ms",
                "3000",
                "--json");
        assertThat(rest.exit()).isEqualTo(1);
        assertThat(rest.err()).contains("read 1999 of --num-records 5000");
    }

    private void createTopic(String name, int partitions) throws Exception {
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            admin.createTopic(name, partitions);
        }
    }

    /** Runs {@code bin/stellflow-perf.sh} in-process; returns its JSON result (the command must succeed). */
    private static JsonNode perf(String... args) throws Exception {
        return PerfRun.of(args).json();
    }
}
