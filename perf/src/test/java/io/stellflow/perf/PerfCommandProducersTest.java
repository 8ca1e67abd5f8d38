package io.stellflow.perf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stellflow.broker.StellflowServer;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stellflow-perf.sh produce --producers N} against a real broker in-process on 127.0.0.1:0. */
@IntegrationTest
class PerfCommandProducersTest {
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
    void threeProducerThreadsSendEveryRecordThroughOneSharedProducer() throws Exception {
        createTopic("three", 2);
        JsonNode result = perf(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "three",
                "--record-size",
                "100",
                "--num-records",
                "3001", // not a multiple of 3: one thread sends one more
                "--throughput",
                "-1",
                "--producers",
                "3",
                "--json",
                "--producer-props",
                "acks=-1",
                "linger.ms=1");
        assertThat(result.get("producers").asInt()).isEqualTo(3);
        assertThat(result.get("records").asLong()).as("acknowledged").isEqualTo(3001);
        assertThat(result.get("bytes").asLong()).isEqualTo(3001L * 100);
        assertThat(result.get("errors").asLong()).isZero();
        assertThat(result.get("p999_ms").asDouble())
                .isGreaterThanOrEqualTo(result.get("p50_ms").asDouble());
        assertThat(logEndOffset("three", 0) + logEndOffset("three", 1))
                .as("every record is in the log once")
                .isEqualTo(3001);
    }

    @Test
    void twoProducerThreadsHoldAFixedThroughputTogether() throws Exception {
        createTopic("rate", 2);
        long target = 4000;
        JsonNode result = perf(
                "produce",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                "rate",
                "--record-size",
                "100",
                "--num-records",
                "7000",
                "--warmup-records",
                "1001", // split 501 + 500, as the records are
                "--throughput",
                Long.toString(target),
                "--producers",
                "2",
                "--producer-per-thread",
                "--json",
                "--producer-props",
                "acks=1",
                "linger.ms=0");
        assertThat(result.get("producers").asInt()).isEqualTo(2);
        assertThat(result.get("records").asLong()).as("measured records only").isEqualTo(5999);
        assertThat(result.get("errors").asLong()).isZero();
        // Record k overall is due k / target s after the start, so the rate cannot be much above the
        // target; a loose floor because other builds share this machine's cores.
        assertThat(result.get("records_per_s").asDouble()).isBetween(0.6 * target, 1.1 * target);
        assertThat(logEndOffset("rate", 0) + logEndOffset("rate", 1))
                .as("warm-up records are sent too")
                .isEqualTo(7000);
    }

    @Test
    void producersMustBePositiveAndPerThreadProducersCannotExportMetrics() {
        String[] produce = {"produce", "--bootstrap-server", bootstrap, "--topic", "t", "--num-records", "5"};
        PerfRun none = PerfRun.of(with(produce, "--producers", "0"));
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.err()).contains("--producers must be >= 1");
        PerfRun exported =
                PerfRun.of(with(produce, "--producers", "2", "--producer-per-thread", "--metrics-port", "0"));
        assertThat(exported.exit()).isEqualTo(2);
        assertThat(exported.err()).contains("not with --producer-per-thread");
    }

    private static String[] with(String[] args, String... more) {
        String[] all = Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }

    private long logEndOffset(String topic, int partition) {
        try (StellflowAdmin admin = InProcessBroker.admin(server)) {
            return admin.listOffsets(new TopicPartition(topic, partition), StellflowAdmin.LATEST);
        }
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
