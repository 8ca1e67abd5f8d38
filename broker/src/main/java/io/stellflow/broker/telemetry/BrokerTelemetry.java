package io.stellflow.broker.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's OpenTelemetry SDK, built from {@link TelemetryConfig}: an {@link SdkMeterProvider}
 * with the chosen exporter (Prometheus scrape endpoint, OTLP push, or none), the broker's
 * instruments ({@link BrokerMetrics}), and with {@code tracing.enabled=true} an {@link
 * SdkTracerProvider} that exports server spans over OTLP (batched).
 *
 * <p>Resource: {@code service.name=stellflow-broker}, {@code service.instance.id=<broker.id>}.
 *
 * <p>A Prometheus port that cannot be bound does not stop the broker: it logs {@code
 * METRICS_ENDPOINT_FAILED} with the reason and runs without an endpoint (data first, metrics second).
 *
 * <p>Thread-safety: built once at start; {@link #close} is idempotent.
 */
public final class BrokerTelemetry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerTelemetry.class);

    /** Instrumentation scope of every broker instrument and span. */
    public static final String SCOPE = "io.stellflow.broker";

    private final MetricsEndpoint endpoint;
    private final SdkMeterProvider otlpMeters;
    private final SdkTracerProvider tracerProvider;
    private final BrokerMetrics metrics;
    private final RequestTelemetry requests;
    private boolean closed;

    private BrokerTelemetry(
            MetricsEndpoint endpoint,
            SdkMeterProvider otlpMeters,
            SdkTracerProvider tracerProvider,
            BrokerMetrics metrics,
            RequestTelemetry requests) {
        this.endpoint = endpoint;
        this.otlpMeters = otlpMeters;
        this.tracerProvider = tracerProvider;
        this.metrics = metrics;
        this.requests = requests;
    }

    /** Builds the SDK for {@code config}; spans (when enabled) go to OTLP. */
    public static BrokerTelemetry create(TelemetryConfig config, int nodeId) {
        return create(config, nodeId, null);
    }

    /**
     * Builds the SDK for {@code config}.
     *
     * @param spanExporter where spans go when tracing is enabled; null = OTLP at {@code
     *     tracing.otlp.endpoint} (tests pass an in-memory exporter)
     */
    public static BrokerTelemetry create(TelemetryConfig config, int nodeId, SpanExporter spanExporter) {
        Resource resource = Resource.getDefault()
                .merge(Resource.create(Attributes.of(
                        AttributeKey.stringKey("service.name"),
                        "stellflow-broker",
                        AttributeKey.stringKey("service.instance.id"),
                        Integer.toString(nodeId))));
        MetricsEndpoint endpoint = null;
        SdkMeterProvider otlpMeters = null;
        Meter meter;
        switch (config.exporter()) {
            case PROMETHEUS -> {
                try {
                    endpoint = MetricsEndpoint.start(config.host(), config.port(), resource);
                    meter = endpoint.meterProvider().get(SCOPE);
                    LOG.info(
                            "Metrics: Prometheus endpoint http://{}:{}/metrics (metrics.port={})",
                            config.host(),
                            endpoint.port(),
                            config.port());
                } catch (UncheckedIOException e) {
                    LOG.warn(
                            "METRICS_ENDPOINT_FAILED {}: {}; the broker runs without a metrics endpoint",
                            e.getMessage(),
                            e.getCause().toString());
                    meter = OpenTelemetry.noop().getMeter(SCOPE);
                }
            }
            case OTLP -> {
                otlpMeters = SdkMeterProvider.builder()
                        .setResource(resource)
                        .registerMetricReader(PeriodicMetricReader.builder(OtlpHttpMetricExporter.builder()
                                        .setEndpoint(config.otlpMetricsEndpoint())
                                        .build())
                                .setInterval(Duration.ofMillis(config.otlpIntervalMs()))
                                .build())
                        .build();
                meter = otlpMeters.get(SCOPE);
                LOG.info("Metrics: OTLP to {} every {} ms", config.otlpMetricsEndpoint(), config.otlpIntervalMs());
            }
            case NONE -> {
                meter = OpenTelemetry.noop().getMeter(SCOPE);
                LOG.info("Metrics: not exported (metrics.exporter=none)");
            }
            default -> throw new IllegalStateException("unhandled exporter " + config.exporter());
        }
        BrokerMetrics metrics = new BrokerMetrics(meter, nodeId, config.diagnostic());
        SdkTracerProvider tracerProvider = null;
        Tracer tracer = null;
        if (config.tracingEnabled()) {
            SpanExporter exporter = spanExporter != null
                    ? spanExporter
                    : OtlpHttpSpanExporter.builder()
                            .setEndpoint(config.otlpTracesEndpoint())
                            .build();
            Sampler ratio = Sampler.traceIdRatioBased(config.samplerRatio());
            tracerProvider = SdkTracerProvider.builder()
                    .setResource(resource)
                    .setSampler(Sampler.parentBasedBuilder(ratio)
                            .setRemoteParentSampled(Sampler.alwaysOn())
                            .setRemoteParentNotSampled(ratio)
                            .build())
                    .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())
                    .build();
            tracer = tracerProvider.get(SCOPE);
            LOG.info(
                    "Tracing: server spans for requests with a trace context, ratio {} for unsampled callers, to {}",
                    config.samplerRatio(),
                    spanExporter != null ? spanExporter.toString() : config.otlpTracesEndpoint());
        }
        return new BrokerTelemetry(
                endpoint, otlpMeters, tracerProvider, metrics, new RequestTelemetry(metrics, tracer));
    }

    /** The broker's instruments. */
    public BrokerMetrics metrics() {
        return metrics;
    }

    /** What the request pipeline reports to. */
    public RequestTelemetry requests() {
        return requests;
    }

    /** The bound Prometheus port, or -1 when there is no endpoint. */
    public int metricsPort() {
        return endpoint == null ? -1 : endpoint.port();
    }

    /** Exports what is pending (spans, OTLP metrics) within a few seconds; tests use it. */
    public void flush() {
        if (tracerProvider != null) {
            tracerProvider.forceFlush().join(5, TimeUnit.SECONDS);
        }
        if (otlpMeters != null) {
            otlpMeters.forceFlush().join(5, TimeUnit.SECONDS);
        }
    }

    /** Flushes and stops the exporters. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        metrics.close();
        if (endpoint != null) {
            endpoint.close();
        }
        if (otlpMeters != null) {
            otlpMeters.shutdown().join(5, TimeUnit.SECONDS);
        }
        if (tracerProvider != null) {
            tracerProvider.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
