package io.stellflow.server.common.telemetry;

import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.sdk.metrics.ExemplarFilter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.resources.Resource;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A Prometheus scrape endpoint ({@code GET /metrics}) backed by an {@link SdkMeterProvider}: the
 * OpenTelemetry SDK's {@link PrometheusMetricReader} turns the instruments into Prometheus series
 * ({@code stellflow.request.count} becomes {@code stellflow_request_count_total}, a {@code ms}
 * histogram gets {@code _milliseconds}), served by the Prometheus client's small JDK HTTP server.
 * Used by the servers ({@link MetricsPipeline}) and by the load generator that exports client metrics
 * (stellflow-perf).
 *
 * <p>The reader and server are wired by hand (not {@code PrometheusHttpServer}) because that one
 * does not tell the bound port, and tests bind port 0.
 *
 * <p>Exemplars are off ({@link ExemplarFilter#alwaysOff()}): the broker never records inside a
 * current span (server spans are not made current), so the SDK's default trace-based filter would
 * keep none, while still consulting the context on every histogram record.
 *
 * <p>Thread-safety: {@link #close} is idempotent; scrapes run on the server's own threads.
 */
public final class MetricsEndpoint implements AutoCloseable {
    private final SdkMeterProvider provider;
    private final HTTPServer server;
    private boolean closed;

    private MetricsEndpoint(SdkMeterProvider provider, HTTPServer server) {
        this.provider = provider;
        this.server = server;
    }

    /**
     * Starts the endpoint.
     *
     * @param host bind address, for example {@code 127.0.0.1}
     * @param port port, 0 = ephemeral ({@link #port()} tells which)
     * @param resource the resource (service.name, service.instance.id) shown as {@code target_info}
     * @throws UncheckedIOException when the port cannot be bound
     */
    public static MetricsEndpoint start(String host, int port, Resource resource) {
        PrometheusMetricReader reader = PrometheusMetricReader.builder()
                .setOtelScopeLabelsEnabled(false)
                .build();
        SdkMeterProvider provider = SdkMeterProvider.builder()
                .setResource(resource)
                .setExemplarFilter(ExemplarFilter.alwaysOff())
                .registerMetricReader(reader)
                .build();
        PrometheusRegistry registry = new PrometheusRegistry();
        registry.register(reader);
        try {
            HTTPServer server = HTTPServer.builder()
                    .hostname(host)
                    .port(port)
                    .registry(registry)
                    .buildAndStart();
            return new MetricsEndpoint(provider, server);
        } catch (IOException e) {
            provider.close();
            throw new UncheckedIOException("cannot bind the metrics endpoint on " + host + ":" + port, e);
        }
    }

    /** The meter provider whose instruments this endpoint serves. */
    public SdkMeterProvider meterProvider() {
        return provider;
    }

    /** The bound port. */
    public int port() {
        return server.getPort();
    }

    /** Stops the HTTP server and the provider. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.close();
        provider.close();
    }
}
