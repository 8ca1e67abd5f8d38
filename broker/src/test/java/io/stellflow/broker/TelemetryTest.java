package io.stellflow.broker;

import static io.stellflow.server.common.telemetry.PrometheusScrape.scrape;
import static io.stellflow.server.common.telemetry.PrometheusScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.server.common.telemetry.PrometheusScrape.Sample;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real broker with {@code metrics.port=0}: produce and fetch over a socket, then scrape
 * {@code /metrics} over HTTP and check the series of the metrics dictionary, their values, and that no
 * series carries a forbidden attribute. Every test runs on each transport (skipped where one is
 * unavailable): requests and fetches served by the native event loops are counted like NIO's.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class TelemetryTest {
    @Parameter
    String transport;

    /** Labels the dictionary forbids on every metric, as Prometheus spells them. */
    static final Set<String> FORBIDDEN_LABELS = Set.of(
            "client_id",
            "connection_id",
            "request_id",
            "group_id",
            "trace_id",
            "span_id",
            "traffic_tag",
            "tenant",
            "ip",
            "peer_address",
            "net_peer_ip");

    private static final Pattern IPV4 = Pattern.compile("\\b\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\b");

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @Test
    void scrapeShowsRequestProduceFetchAndStorageSeriesWithOnlyAllowedLabels() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("broker.id", "3");
        StellflowServer server = NODES.start(props);
        assertThat(server.metricsPort()).isPositive();
        int batches = 10;
        int recordsPerBatch = 5;
        long producedBytes = 0;
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "metered", 2);
            for (int i = 0; i < batches; i++) {
                byte[] batch = Requests.batch(recordsPerBatch, 1_700_000_000_000L + i);
                producedBytes += batch.length;
                assertThat(Requests.produceOne(client, "metered", i % 2, batch).errorCode())
                        .isEqualTo(Errors.NONE);
            }
            Requests.fetchOne(client, Requests.fetch("metered", 0, 0, 0));
            // A Produce to a missing partition: answered, counted as result=error.
            assertThat(Requests.produceOne(client, "metered", 9, Requests.batch(1, 1L))
                            .errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            // A malformed body: a decode error for api=Fetch.
            client.sendWithBody(
                    RequestHeader.of(ApiKeys.FETCH, (short) 0, Requests.nextCorrelationId(), "t"), new byte[] {1});
            assertThat(client.receive().errorCode()).isEqualTo(Errors.INVALID_REQUEST);

            List<Sample> samples = scrape(server.metricsPort());

            assertThat(value(samples, "stellflow_request_count_total", "api", "Produce", "result", "success"))
                    .isEqualTo(batches);
            assertThat(value(samples, "stellflow_request_count_total", "api", "Produce", "result", "error"))
                    .isEqualTo(1);
            assertThat(value(samples, "stellflow_produce_request_count_total", "result", "success"))
                    .isEqualTo(batches);
            assertThat(value(samples, "stellflow_produce_records_total")).isEqualTo(batches * recordsPerBatch);
            assertThat(value(samples, "stellflow_produce_bytes_total")).isEqualTo(producedBytes);
            assertThat(value(samples, "stellflow_fetch_request_count_total", "result", "success"))
                    .isEqualTo(1);
            assertThat(value(samples, "stellflow_fetch_records_total")).isEqualTo(batches / 2 * recordsPerBatch);
            assertThat(value(samples, "stellflow_request_decode_error_count_total", "api", "Fetch"))
                    .isEqualTo(1);
            assertThat(value(
                            samples,
                            "stellflow_request_latency_milliseconds_count",
                            "api",
                            "Produce",
                            "result",
                            "success"))
                    .isEqualTo(batches);
            assertThat(value(
                            samples,
                            "stellflow_produce_latency_milliseconds_bucket",
                            "result",
                            "success",
                            "le",
                            "+Inf"))
                    .isEqualTo(batches);
            assertThat(value(samples, "stellflow_log_append_latency_milliseconds_count", "replica_role", "leader"))
                    .isEqualTo(batches);
            // Every log open is timed, the two created by CreateTopic included.
            assertThat(value(samples, "stellflow_log_recovery_time_milliseconds_count"))
                    .isEqualTo(2);
            assertThat(value(samples, "stellflow_log_end_offset")).isEqualTo(batches * recordsPerBatch);
            assertThat(value(samples, "stellflow_log_start_offset")).isEqualTo(0);
            assertThat(value(samples, "stellflow_log_segment_active_size_bytes"))
                    .isEqualTo(producedBytes);
            assertThat(value(samples, "stellflow_connection_count")).isEqualTo(1);
            assertThat(value(samples, "stellflow_request_queue_depth")).isGreaterThanOrEqualTo(0);
            assertThat(value(samples, "stellflow_response_queue_depth")).isGreaterThanOrEqualTo(0);

            for (Sample s : samples) {
                if (s.name().startsWith("stellflow_")) {
                    assertThat(s.labels()).as(s.name()).containsEntry("node_id", "3");
                    assertThat(s.labels().keySet()).as(s.name()).doesNotContain("topic", "partition");
                }
                assertThat(s.labels().keySet()).as(s.name()).doesNotContainAnyElementsOf(FORBIDDEN_LABELS);
                for (String v : s.labels().values()) {
                    assertThat(IPV4.matcher(v).find()).as(s.name() + " " + v).isFalse();
                }
            }
        }
    }

    @Test
    void diagnosticSwitchAddsTopicAndPartitionToTheOffsetGaugesOnly() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("metrics.diagnostic.enabled", "true");
        StellflowServer server = NODES.start(props);
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "diag", 2);
            Requests.produceOne(client, "diag", 1, Requests.batch(4, 1L));
            List<Sample> samples = scrape(server.metricsPort());
            assertThat(value(samples, "stellflow_log_end_offset", "topic", "diag", "partition", "1"))
                    .isEqualTo(4);
            assertThat(value(samples, "stellflow_log_end_offset", "topic", "diag", "partition", "0"))
                    .isEqualTo(0);
            for (Sample s : samples) {
                if (!s.name().startsWith("stellflow_log_end_offset")
                        && !s.name().startsWith("stellflow_log_start_offset")) {
                    assertThat(s.labels().keySet()).as(s.name()).doesNotContain("topic", "partition");
                }
            }
        }
    }

    @Test
    void aRestartRecordsTheLoadTimeOfEveryPartitionLog() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        try (StellflowServer server = TestBroker.start(props);
                RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "reloaded", 3);
        }
        StellflowServer server = NODES.start(props);
        List<Sample> samples = scrape(server.metricsPort());
        assertThat(value(samples, "stellflow_log_recovery_time_milliseconds_count"))
                .isEqualTo(3);
    }

    @Test
    void exporterNoneServesNothingAndTheBrokerStillWorks() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("metrics.exporter", "none");
        StellflowServer server = NODES.start(props);
        try (RawClient client = new RawClient(server.port())) {
            assertThat(server.metricsPort()).isEqualTo(-1);
            Requests.createTopic(client, "quiet", 1);
            assertThat(Requests.produceOne(client, "quiet", 0, Requests.batch(1, 1L))
                            .errorCode())
                    .isEqualTo(Errors.NONE);
        }
    }
}
