package io.stellflow.broker;

import static io.stellflow.server.common.telemetry.PrometheusScrape.scrape;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The metrics an on-call engineer reads (issue 22), scraped over HTTP from a real broker with two log
 * dirs: JVM and process series (heap, CPU, threads, classes, open file descriptors), disk free and
 * used per log dir, partitions hosted and led, and the per-topic throughput counters, present only
 * with {@code metrics.topic.diagnostic.enabled=true}.
 */
@IntegrationTest
class OnCallMetricsTest {
    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private Properties twoDirs(boolean topicDiagnostic) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), "nio");
        Path d1 = NODES.dir().resolve("d1");
        Path d2 = NODES.dir().resolve("d2");
        props.setProperty("log.dirs", d1 + "," + d2);
        props.setProperty("broker.id", "4");
        if (topicDiagnostic) {
            props.setProperty("metrics.topic.diagnostic.enabled", "true");
        }
        return props;
    }

    @Test
    void scrapeShowsJvmDiskPerLogDirPartitionCountsAndPerTopicThroughput() throws Exception {
        Properties props = twoDirs(true);
        StellflowServer server = NODES.start(props);
        String d1 = NODES.dir().resolve("d1").toString();
        String d2 = NODES.dir().resolve("d2").toString();
        long[] bytesPerPartition = new long[2];
        int records = 0;
        try (RawClient client = new RawClient(server.port())) {
            // Two partitions: a new partition goes to the dir holding the fewest, one in each.
            Requests.createTopic(client, "hot", 2);
            Requests.createTopic(client, "cold", 1);
            for (int i = 0; i < 6; i++) {
                byte[] batch = Requests.batch(3, 1_700_000_000_000L + i);
                bytesPerPartition[i % 2] += batch.length;
                records += 3;
                assertThat(Requests.produceOne(client, "hot", i % 2, batch).errorCode())
                        .isEqualTo(Errors.NONE);
            }
            Requests.fetchOne(client, Requests.fetch("hot", 0, 0, 0));

            List<Sample> samples = scrape(server.metricsPort());

            // JVM and process, from the OpenTelemetry runtime library.
            assertThat(sum(samples, "jvm_memory_used_bytes", "jvm_memory_type", "heap"))
                    .isPositive();
            assertThat(sum(samples, "jvm_file_descriptor_count", null, null)).isGreaterThan(3);
            assertThat(sum(samples, "jvm_thread_count", null, null)).isGreaterThan(5);
            assertThat(sum(samples, "jvm_cpu_time_seconds_total", null, null)).isPositive();
            assertThat(sum(samples, "jvm_class_loaded_total", null, null)).isGreaterThan(1000);

            // Disk per log dir: the free space of its file system, and our segment bytes in it.
            assertThat(value(samples, "stellflow_log_dir_free_bytes", "log_dir", d1))
                    .isEqualTo((double) Files.getFileStore(Path.of(d1)).getUsableSpace(), within());
            assertThat(value(samples, "stellflow_log_dir_free_bytes", "log_dir", d2))
                    .isPositive();
            double used1 = value(samples, "stellflow_log_dir_used_bytes", "log_dir", d1, "node_id", "4");
            double used2 = value(samples, "stellflow_log_dir_used_bytes", "log_dir", d2, "node_id", "4");
            assertThat(used1 + used2).isEqualTo(bytesPerPartition[0] + bytesPerPartition[1]);
            assertThat(List.of(used1, used2))
                    .as("each dir holds one partition of hot")
                    .containsExactlyInAnyOrder((double) bytesPerPartition[0], (double) bytesPerPartition[1]);

            // Partitions hosted and led: hot-0, hot-1, cold-0, all led by this single node.
            assertThat(value(samples, "stellflow_partition_count", "node_id", "4"))
                    .isEqualTo(3);
            assertThat(value(samples, "stellflow_partition_leader_count", "node_id", "4"))
                    .isEqualTo(3);

            // Per-topic throughput: what went to and came out of "hot"; "cold" at 0.
            assertThat(value(samples, "stellflow_topic_produce_bytes_total", "topic", "hot"))
                    .isEqualTo(bytesPerPartition[0] + bytesPerPartition[1]);
            assertThat(value(samples, "stellflow_topic_produce_records_total", "topic", "hot"))
                    .isEqualTo(records);
            assertThat(value(samples, "stellflow_topic_fetch_bytes_total", "topic", "hot"))
                    .isEqualTo(bytesPerPartition[0]);
            assertThat(value(samples, "stellflow_topic_produce_bytes_total", "topic", "cold"))
                    .isEqualTo(0);
            assertThat(value(samples, "stellflow_produce_bytes_total"))
                    .isEqualTo(bytesPerPartition[0] + bytesPerPartition[1]);
        }
    }

    @Test
    void appendsOnTheRequestThreadAreCountedPerTopicToo() throws Exception {
        Properties props = twoDirs(true);
        props.setProperty("num.append.agents", "0"); // ProduceHandler appends itself, no agent
        StellflowServer server = NODES.start(props);
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "direct", 1);
            byte[] batch = Requests.batch(4, 1L);
            assertThat(Requests.produceOne(client, "direct", 0, batch).errorCode())
                    .isEqualTo(Errors.NONE);
            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_topic_produce_bytes_total", "topic", "direct"))
                    .isEqualTo(batch.length);
            assertThat(value(samples, "stellflow_topic_produce_records_total", "topic", "direct"))
                    .isEqualTo(4);
        }
    }

    @Test
    void withoutTheTopicDiagnosticNoSeriesCarriesATopic() throws Exception {
        StellflowServer server = NODES.start(twoDirs(false));
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "quiet", 1);
            assertThat(Requests.produceOne(client, "quiet", 0, Requests.batch(2, 1L))
                            .errorCode())
                    .isEqualTo(Errors.NONE);
            Requests.fetchOne(client, Requests.fetch("quiet", 0, 0, 0));
            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_produce_records_total")).isEqualTo(2);
            assertThat(value(samples, "stellflow_partition_count")).isEqualTo(1);
            assertThat(samples)
                    .filteredOn(s -> s.name().startsWith("stellflow_topic_")
                            || s.labels().containsKey("topic"))
                    .isEmpty();
        }
    }

    /** Free space moves while other processes write: within 64 MiB of what the test reads. */
    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(64.0 * 1024 * 1024);
    }

    private static double sum(List<Sample> samples, String name, String label, String labelValue) {
        return samples.stream()
                .filter(s -> s.name().equals(name))
                .filter(s -> label == null || labelValue.equals(s.labels().get(label)))
                .mapToDouble(Sample::value)
                .sum();
    }
}
