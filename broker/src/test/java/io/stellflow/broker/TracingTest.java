package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/** Server spans for requests whose header carries a W3C trace context, exported to memory. */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class TracingTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT_SPAN_ID = "00f067aa0ba902b7";

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private static RequestHeader traced(short apiKey, int correlationId, byte traceFlags) {
        return new RequestHeader(
                apiKey,
                (short) 0,
                RequestHeader.HEADER_VERSION,
                correlationId,
                "tracing-test",
                TRACE_ID,
                PARENT_SPAN_ID,
                traceFlags,
                "tenant-a",
                null,
                null,
                RequestHeader.TRAFFIC_CLASS_BASELINE,
                null,
                (short) 0);
    }

    private StellflowServer start(InMemorySpanExporter spans, String ratio) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("tracing.enabled", "true");
        props.setProperty("tracing.sampler.ratio", ratio);
        return NODES.track(StellflowServer.start(BrokerConfig.fromProperties(props), spans));
    }

    @Test
    void aTracedProduceGetsAServerSpanParentedOnTheCallersSpan() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        StellflowServer server = start(spans, "1.0");
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, "traced", 2);
            byte[] batch = Requests.batch(3, 1L);
            int correlationId = Requests.nextCorrelationId();
            client.send(traced(ApiKeys.PRODUCE, correlationId, (byte) 1), Requests.produce("traced", 1, batch));
            assertThat(client.receive().errorCode()).isEqualTo(Errors.NONE);
            // Untraced requests (the CreateTopic above, this Produce) record nothing.
            Requests.produceOne(client, "traced", 0, Requests.batch(1, 1L));
            server.telemetry().flush();

            List<SpanData> finished = spans.getFinishedSpanItems();
            assertThat(finished).hasSize(1);
            SpanData span = finished.get(0);
            assertThat(span.getName()).isEqualTo("stellflow Produce");
            assertThat(span.getKind()).isEqualTo(SpanKind.SERVER);
            assertThat(span.getTraceId()).isEqualTo(TRACE_ID);
            assertThat(span.getParentSpanId()).isEqualTo(PARENT_SPAN_ID);
            assertThat(span.getParentSpanContext().isRemote()).isTrue();
            assertThat(span.getAttributes().get(AttributeKey.stringKey("stellflow.api")))
                    .isEqualTo("Produce");
            assertThat(span.getAttributes().get(AttributeKey.stringKey("stellflow.result")))
                    .isEqualTo("success");
            assertThat(span.getAttributes().get(AttributeKey.longKey("stellflow.partition.count")))
                    .isEqualTo(1L);
            assertThat(span.getAttributes().get(AttributeKey.longKey("stellflow.bytes")))
                    .isEqualTo((long) batch.length);
            assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        }
    }

    @Test
    void aFailedRequestsSpanCarriesTheErrorCodeAndErrorStatus() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        StellflowServer server = start(spans, "1.0");
        try (RawClient client = new RawClient(server.port())) {
            int correlationId = Requests.nextCorrelationId();
            client.sendWithBody(traced(ApiKeys.FETCH, correlationId, (byte) 1), new byte[] {1, 2});
            assertThat(client.receive().errorCode()).isEqualTo(Errors.INVALID_REQUEST);
            server.telemetry().flush();
            SpanData span = spans.getFinishedSpanItems().get(0);
            assertThat(span.getName()).isEqualTo("stellflow Fetch");
            assertThat(span.getAttributes().get(AttributeKey.longKey("stellflow.error_code")))
                    .isEqualTo((long) Errors.INVALID_REQUEST);
            assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        }
    }

    @Test
    void ratioZeroDropsUnsampledCallersButFollowsSampledOnes() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        StellflowServer server = start(spans, "0.0");
        try (RawClient client = new RawClient(server.port())) {
            int unsampled = Requests.nextCorrelationId();
            client.send(
                    traced(ApiKeys.API_VERSIONS, unsampled, (byte) 0), new ApiVersionsRequest(null, null, List.of()));
            client.receive();
            int sampled = Requests.nextCorrelationId();
            client.send(
                    traced(ApiKeys.METADATA, sampled, (byte) 1), new MetadataRequest(List.of(), false, false, false));
            client.receive();
            server.telemetry().flush();
            assertThat(spans.getFinishedSpanItems())
                    .extracting(SpanData::getName)
                    .containsExactly("stellflow Metadata");
        }
    }

    @Test
    void tracingOffRecordsNoSpanEvenForTracedRequests() throws Exception {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        Properties props = TestBroker.props(NODES.dir(), transport);
        StellflowServer server = NODES.track(StellflowServer.start(BrokerConfig.fromProperties(props), spans));
        try (RawClient client = new RawClient(server.port())) {
            client.send(
                    traced(ApiKeys.API_VERSIONS, Requests.nextCorrelationId(), (byte) 1),
                    new ApiVersionsRequest(null, null, List.of()));
            assertThat(client.receive().errorCode()).isEqualTo(Errors.NONE);
            server.telemetry().flush();
            assertThat(spans.getFinishedSpanItems()).isEmpty();
        }
    }
}
