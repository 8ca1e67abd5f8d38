package io.stellflow.server.common.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.sdk.metrics.ExemplarFilter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a process's metrics go, as {@link TelemetryConfig} says: an OpenTelemetry {@link
 * SdkMeterProvider} read by the Prometheus scrape endpoint ({@link MetricsEndpoint}), or pushed over
 * OTLP/HTTP every {@code metrics.otlp.interval.ms}, or a no-op provider ({@code metrics.exporter=none}).
 * The one metrics setup of every Stellflow server process: brokers and combined nodes (the broker's
 * {@code BrokerTelemetry}) and controller-only nodes (the controller's {@code ControllerNode}).
 *
 * <p>With an exporter ({@code prometheus} or {@code otlp}) the provider also carries the JVM and
 * process metrics of {@link JvmMetrics} (heap, GC pauses, CPU, threads, classes, open file
 * descriptors), read at collection time only.
 *
 * <p>Resource: {@code service.name} (for example {@code stellflow-broker}), {@code
 * service.instance.id=<node.id>}.
 *
 * <p>A Prometheus port that cannot be bound does not stop the process: it logs {@code
 * METRICS_ENDPOINT_FAILED} with the reason and runs with a no-op provider (data first, metrics
 * second).
 *
 * <p>Thread-safety: built once at start; {@link #meter} from any thread; {@link #close} is idempotent.
 */
public final class MetricsPipeline implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetricsPipeline.class);

    private final Resource resource;
    private final MetricsEndpoint endpoint;
    private final SdkMeterProvider otlpMeters;
    private final MeterProvider meters;
    private final JvmMetrics jvm;
    private boolean closed;

    private MetricsPipeline(
            Resource resource, MetricsEndpoint endpoint, SdkMeterProvider otlpMeters, MeterProvider meters) {
        this.resource = resource;
        this.endpoint = endpoint;
        this.otlpMeters = otlpMeters;
        this.meters = meters;
        this.jvm = endpoint != null || otlpMeters != null ? JvmMetrics.start(meters) : null;
    }

    /**
     * Starts the exporter {@code config} names.
     *
     * @param serviceName the resource's {@code service.name}
     * @param nodeId the resource's {@code service.instance.id}
     */
    public static MetricsPipeline start(TelemetryConfig config, String serviceName, int nodeId) {
        Resource resource = Resource.getDefault()
                .merge(Resource.create(Attributes.of(
                        AttributeKey.stringKey("service.name"),
                        serviceName,
                        AttributeKey.stringKey("service.instance.id"),
                        Integer.toString(nodeId))));
        switch (config.exporter()) {
            case PROMETHEUS -> {
                try {
                    MetricsEndpoint endpoint = MetricsEndpoint.start(config.host(), config.port(), resource);
                    LOG.info(
                            "Metrics: Prometheus endpoint http://{}:{}/metrics (metrics.port={})",
                            config.host(),
                            endpoint.port(),
                            config.port());
                    return new MetricsPipeline(resource, endpoint, null, endpoint.meterProvider());
                } catch (UncheckedIOException e) {
                    LOG.warn(
                            "METRICS_ENDPOINT_FAILED {}: {}; {} runs without a metrics endpoint",
                            e.getMessage(),
                            e.getCause().toString(),
                            serviceName);
                    return new MetricsPipeline(resource, null, null, MeterProvider.noop());
                }
            }
            case OTLP -> {
                SdkMeterProvider otlp = SdkMeterProvider.builder()
                        .setResource(resource)
                        // As the Prometheus endpoint: no exemplars (server spans are never current
                        // on the threads that record, so the trace-based filter would keep none).
                        .setExemplarFilter(ExemplarFilter.alwaysOff())
                        .registerMetricReader(PeriodicMetricReader.builder(OtlpHttpMetricExporter.builder()
                                        .setEndpoint(config.otlpMetricsEndpoint())
                                        .build())
                                .setInterval(Duration.ofMillis(config.otlpIntervalMs()))
                                .build())
                        .build();
                LOG.info("Metrics: OTLP to {} every {} ms", config.otlpMetricsEndpoint(), config.otlpIntervalMs());
                return new MetricsPipeline(resource, null, otlp, otlp);
            }
            case NONE -> {
                LOG.info("Metrics: not exported (metrics.exporter=none)");
                return new MetricsPipeline(resource, null, null, MeterProvider.noop());
            }
            default -> throw new IllegalStateException("unhandled exporter " + config.exporter());
        }
    }

    /** The resource (service name and instance) shared with traces. */
    public Resource resource() {
        return resource;
    }

    /** The meter of instrumentation scope {@code scope}. */
    public Meter meter(String scope) {
        return meters.get(scope);
    }

    /** The bound Prometheus port, or -1 when there is no endpoint. */
    public int port() {
        return endpoint == null ? -1 : endpoint.port();
    }

    /** Pushes pending OTLP metrics within a few seconds (no-op for the other exporters); tests use it. */
    public void flush() {
        if (otlpMeters != null) {
            otlpMeters.forceFlush().join(5, TimeUnit.SECONDS);
        }
    }

    /** Stops the endpoint or the OTLP reader (a last push). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (jvm != null) {
            jvm.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (otlpMeters != null) {
            otlpMeters.shutdown().join(5, TimeUnit.SECONDS);
        }
    }
}
