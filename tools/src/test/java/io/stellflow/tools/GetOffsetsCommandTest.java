package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowProducer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-get-offsets.sh} against a real broker: earliest, latest and by-time offsets of a
 * two-partition topic whose records carry known timestamps, the partition selectors, and one-line
 * errors (exit 1 or 2, within seconds) for a missing topic or partition and bad flags.
 */
@IntegrationTest
class GetOffsetsCommandTest {
    @TempDir
    Path dir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void start() throws Exception {
        server = InProcessBroker.startNio(dir);
        bootstrap = "127.0.0.1:" + server.port();
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        try (StellflowAdmin admin = new StellflowAdmin(p)) {
            admin.createTopic("orders", 2);
        }
        p.setProperty("acks", "1");
        try (StellflowProducer producer = new StellflowProducer(p)) {
            // partition 0: offsets 0, 1, 2 at 1000, 2000, 3000; partition 1: offsets 0, 1 at 5000, 6000
            long[][] stamps = {{1000, 2000, 3000}, {5000, 6000}};
            for (int part = 0; part < 2; part++) {
                for (long ts : stamps[part]) {
                    producer.send(new ProducerRecord("orders", part, null, bytes("v" + ts), ts))
                            .get(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private ToolRun run(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = bootstrap;
        System.arraycopy(args, 0, all, 2, args.length);
        return ToolRun.run(OneLineUsageErrors.commandLine(new GetOffsetsCommand()), all);
    }

    @Test
    void printsEarliestLatestAndByTimeOffsetsPerPartition() {
        assertOut(run("--topic", "orders"), "orders:0:3\norders:1:2\n");
        assertOut(run("--topic", "orders", "--time", "latest"), "orders:0:3\norders:1:2\n");
        assertOut(run("--topic", "orders", "--time", "-1"), "orders:0:3\norders:1:2\n");
        assertOut(run("--topic", "orders", "--time", "earliest"), "orders:0:0\norders:1:0\n");
        assertOut(run("--topic", "orders", "--time", "-2"), "orders:0:0\norders:1:0\n");
        // first record at or after 2500 ms: offset 2 (3000) in partition 0, offset 0 (5000) in partition 1
        assertOut(run("--topic", "orders", "--time", "2500"), "orders:0:2\norders:1:0\n");
        // no record at or after 5500 in partition 0: no line for it, as in Kafka
        assertOut(run("--topic", "orders", "--time", "5500"), "orders:1:1\n");
        assertOut(run("--topic", "orders", "--time", "7000"), "");
    }

    @Test
    void selectsPartitionsByListRangeRegexOrAll() {
        assertOut(run("--topic", "orders", "--partitions", "1"), "orders:1:2\n");
        assertOut(run("--topic-partitions", "orders:1"), "orders:1:2\n");
        assertOut(run("--topic-partitions", "orders:0-1"), "orders:0:3\norders:1:2\n");
        assertOut(run("--topic-partitions", "orders"), "orders:0:3\norders:1:2\n");
        assertOut(run("--topic", "ord.*", "--partitions", "0"), "orders:0:3\n");
        ToolRun all = run();
        assertThat(all.exit()).as(all.err()).isZero();
        assertThat(all.out()).contains("orders:0:3\norders:1:2\n");
    }

    @Test
    void badInputFailsWithOneLineWithinSeconds() {
        assertFails(1, "error: topic nosuch does not exist (no topic name matches it)", "--topic", "nosuch");
        assertFails(
                1, "error: topic orders has 2 partition(s), no partition 5", "--topic", "orders", "--partitions", "5");
        assertFails(2, "error: --topic-partitions: bad entry 'orders:x'", "--topic-partitions", "orders:x");
        assertFails(2, "error: --time must be earliest, latest", "--topic", "orders", "--time", "yesterday");
        assertFails(2, "error: --time max-timestamp is not supported", "--topic", "orders", "--time", "max-timestamp");
        assertFails(2, "error: Unknown option: '--no-such-flag'", "--topic", "orders", "--no-such-flag");
        assertFails(2, "error: --partitions needs --topic", "--partitions", "0");
    }

    private static void assertOut(ToolRun r, String expected) {
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).isEqualTo(expected);
    }

    /** Runs {@code args}: exit status {@code exit}, one stderr line starting {@code errorStart}, in under 5 s. */
    private void assertFails(int exit, String errorStart, String... args) {
        long startNs = System.nanoTime();
        ToolRun r = run(args);
        assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isLessThan(Duration.ofSeconds(5));
        assertThat(r.exit()).as(r.err()).isEqualTo(exit);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith(errorStart);
        assertThat(r.err().strip().lines())
                .as("one line (and the usage hint): " + r.err())
                .hasSize(exit == OneLineUsageErrors.USAGE_EXIT ? 2 : 1);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
