package io.stellflow.broker.telemetry;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.stellflow.controller.telemetry.ControllerTelemetry;
import io.stellflow.server.common.telemetry.MetricsPipeline;
import io.stellflow.server.common.telemetry.TelemetryConfig;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's OpenTelemetry SDK, built from {@link TelemetryConfig}: the metrics exporter ({@link
 * MetricsPipeline}: Prometheus scrape endpoint, OTLP push, or none), the broker's instruments ({@link
 * BrokerMetrics}), in combined mode the embedded controller's instruments on the same endpoint ({@link
 * #controllerMetrics()}), and with {@code tracing.enabled=true} an {@link SdkTracerProvider} that
 * exports server spans over OTLP (batched).
 *
 * <p>Resource: {@code service.name=stellflow-broker}, {@code service.instance.id=<broker.id>}.
 *
 * <p>Thread-safety: built once at start; {@link #close} is idempotent.
 */
public final class BrokerTelemetry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerTelemetry.class);

    /** Instrumentation scope of every broker instrument and span. */
    public static final String SCOPE = "io.stellflow.broker";

    private final MetricsPipeline pipeline;
    private final int nodeId;
    private final SdkTracerProvider tracerProvider;
    private final BrokerMetrics metrics;
    private final RequestTelemetry requests;
    private ControllerTelemetry controller;
    private boolean closed;

    private BrokerTelemetry(
            MetricsPipeline pipeline,
            int nodeId,
            SdkTracerProvider tracerProvider,
            BrokerMetrics metrics,
            RequestTelemetry requests) {
        this.pipeline = pipeline;
        this.nodeId = nodeId;
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
        MetricsPipeline pipeline = MetricsPipeline.start(config, "stellflow-broker", nodeId);
        BrokerMetrics metrics =
                new BrokerMetrics(pipeline.meter(SCOPE), nodeId, config.diagnostic(), config.topicDiagnostic());
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
                    .setResource(pipeline.resource())
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
        return new BrokerTelemetry(pipeline, nodeId, tracerProvider, metrics, new RequestTelemetry(metrics, tracer));
    }

    /** The broker's instruments. */
    public BrokerMetrics metrics() {
        return metrics;
    }

    /** What the request pipeline reports to. */
    public RequestTelemetry requests() {
        return requests;
    }

    /**
     * The instruments of this node's embedded controller (combined mode), on the broker's meter
     * provider and endpoint; registered on the first call, closed with this object.
     */
    public synchronized ControllerTelemetry controllerMetrics() {
        if (closed) {
            throw new IllegalStateException("telemetry is closed");
        }
        if (controller == null) {
            controller = new ControllerTelemetry(pipeline.meter(ControllerTelemetry.SCOPE), nodeId);
        }
        return controller;
    }

    /** The bound Prometheus port, or -1 when there is no endpoint. */
    public int metricsPort() {
        return pipeline.port();
    }

    /** Exports what is pending (spans, OTLP metrics) within a few seconds; tests use it. */
    public void flush() {
        if (tracerProvider != null) {
            tracerProvider.forceFlush().join(5, TimeUnit.SECONDS);
        }
        pipeline.flush();
    }

    /** Flushes and stops the exporters. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        metrics.close();
        if (controller != null) {
            controller.close();
        }
        pipeline.close();
        if (tracerProvider != null) {
            tracerProvider.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
