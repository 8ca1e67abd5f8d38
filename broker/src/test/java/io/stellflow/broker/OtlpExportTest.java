package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.testsupport.IntegrationTest;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code metrics.exporter=otlp} and {@code tracing.enabled=true} push OTLP/HTTP protobuf to the
 * configured endpoints: a JDK HTTP server on 127.0.0.1 stands in for the collector.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class OtlpExportTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    record Post(String path, String contentType, byte[] body) {}

    @Test
    void metricsAndSpansArePushedOverOtlpHttp() throws Exception {
        LinkedBlockingQueue<Post> posts = new LinkedBlockingQueue<>();
        HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        collector.createContext("/", exchange -> {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            try (InputStream in = exchange.getRequestBody()) {
                in.transferTo(body);
            }
            posts.add(new Post(
                    exchange.getRequestURI().getPath(),
                    exchange.getRequestHeaders().getFirst("Content-Type"),
                    body.toByteArray()));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        collector.start();
        try {
            String base = "http://127.0.0.1:" + collector.getAddress().getPort();
            Properties props = TestBroker.props(NODES.dir(), transport);
            props.setProperty("metrics.exporter", "otlp");
            props.setProperty("metrics.otlp.endpoint", base + "/v1/metrics");
            props.setProperty("metrics.otlp.interval.ms", "1000");
            props.setProperty("tracing.enabled", "true");
            props.setProperty("tracing.otlp.endpoint", base + "/v1/traces");
            // Closed here, before the collector stops: its last export goes to a live endpoint.
            try (StellflowServer server = NODES.start(props);
                    RawClient client = new RawClient(server.port())) {
                assertThat(server.metricsPort()).isEqualTo(-1);
                client.send(
                        new RequestHeader(
                                ApiKeys.API_VERSIONS,
                                (short) 0,
                                RequestHeader.HEADER_VERSION,
                                Requests.nextCorrelationId(),
                                "otlp-test",
                                "4bf92f3577b34da6a3ce929d0e0e4736",
                                "00f067aa0ba902b7",
                                (byte) 1,
                                null,
                                null,
                                null,
                                RequestHeader.TRAFFIC_CLASS_BASELINE,
                                null,
                                (short) 0),
                        new ApiVersionsRequest(null, null, List.of()));
                assertThat(client.receive().errorCode()).isEqualTo(Errors.NONE);
                server.telemetry().flush();

                boolean sawMetrics = false;
                boolean sawSpan = false;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (!(sawMetrics && sawSpan) && System.nanoTime() < deadline) {
                    Post p = posts.poll(500, TimeUnit.MILLISECONDS);
                    if (p == null) {
                        continue;
                    }
                    assertThat(p.contentType()).isEqualTo("application/x-protobuf");
                    String text = new String(p.body(), StandardCharsets.ISO_8859_1);
                    if (p.path().equals("/v1/metrics") && text.contains("stellflow.request.count")) {
                        sawMetrics = true;
                    }
                    if (p.path().equals("/v1/traces") && text.contains("stellflow ApiVersions")) {
                        sawSpan = true;
                    }
                }
                assertThat(sawMetrics)
                        .as("an OTLP metrics export with stellflow.request.count")
                        .isTrue();
                assertThat(sawSpan)
                        .as("an OTLP trace export with the server span")
                        .isTrue();
            }
        } finally {
            collector.stop(0);
        }
    }
}
