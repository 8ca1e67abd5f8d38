package io.stellflow.broker.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;

/**
 * What the request pipeline reports when a request is answered: the request, Produce and Fetch
 * metrics ({@link BrokerMetrics}) and, with {@code tracing.enabled=true}, one server span per request
 * whose header carries a W3C {@code traceId} (32 hex) and {@code spanId} (16 hex), parented on the
 * caller's span ({@code docs/spec/wire-protocol.md} §3, fields 6-8).
 *
 * <p>With tracing off, {@link #startSpan} returns null after one field read: no span, no context, no
 * allocation.
 *
 * <p>Span: name {@code stellflow <Api>} (for example {@code stellflow Produce}), kind SERVER,
 * attributes {@code messaging.system=stellflow}, {@code stellflow.api}, {@code stellflow.result},
 * {@code stellflow.error_code}, {@code stellflow.partition.count}, {@code stellflow.bytes} (records
 * bytes produced or fetched); status ERROR when the header error code is not 0.
 *
 * <p>Thread-safety: immutable; every method may be called from any thread.
 */
public final class RequestTelemetry {
    /** Metrics to a no-op meter, no tracing (tests and tools that build pipelines by hand). */
    public static final RequestTelemetry NONE =
            new RequestTelemetry(new BrokerMetrics(OpenTelemetry.noop().getMeter("none"), 0, false), null);

    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> SPAN_API = AttributeKey.stringKey("stellflow.api");
    static final AttributeKey<String> SPAN_RESULT = AttributeKey.stringKey("stellflow.result");
    static final AttributeKey<Long> SPAN_ERROR_CODE = AttributeKey.longKey("stellflow.error_code");
    static final AttributeKey<Long> SPAN_PARTITIONS = AttributeKey.longKey("stellflow.partition.count");
    static final AttributeKey<Long> SPAN_BYTES = AttributeKey.longKey("stellflow.bytes");

    private final BrokerMetrics metrics;
    private final Tracer tracer;

    /**
     * @param metrics the broker's instruments
     * @param tracer the tracer, or null when tracing is off
     */
    public RequestTelemetry(BrokerMetrics metrics, Tracer tracer) {
        this.metrics = metrics;
        this.tracer = tracer;
    }

    /** The broker's instruments (handlers and append agents count into them). */
    public BrokerMetrics metrics() {
        return metrics;
    }

    /**
     * Starts the server span of a request, or returns null when tracing is off, the header has no
     * valid trace context, or the sampler drops it.
     */
    public Span startSpan(RequestHeader header) {
        if (tracer == null || header.traceId() == null || header.spanId() == null) {
            return null;
        }
        SpanContext parent = SpanContext.createFromRemoteParent(
                header.traceId(), header.spanId(), TraceFlags.fromByte(header.traceFlags()), TraceState.getDefault());
        if (!parent.isValid()) {
            return null;
        }
        Span span = tracer.spanBuilder(spanName(header.apiKey()))
                .setParent(Context.root().with(Span.wrap(parent)))
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(MESSAGING_SYSTEM, "stellflow")
                .setAttribute(SPAN_API, ApiKeys.name(header.apiKey()))
                .startSpan();
        if (!span.getSpanContext().isSampled()) {
            span.end();
            return null;
        }
        return span;
    }

    private static String spanName(short apiKey) {
        return switch (apiKey) {
            case ApiKeys.API_VERSIONS -> "stellflow ApiVersions";
            case ApiKeys.METADATA -> "stellflow Metadata";
            case ApiKeys.PRODUCE -> "stellflow Produce";
            case ApiKeys.FETCH -> "stellflow Fetch";
            case ApiKeys.LIST_OFFSETS -> "stellflow ListOffsets";
            case ApiKeys.CREATE_TOPIC -> "stellflow CreateTopic";
            default -> "stellflow Unknown";
        };
    }

    /**
     * One request answered.
     *
     * @param apiKey the request's API
     * @param errorCode the response header's error code
     * @param partitionError whether any partition of the response carries an error
     * @param startNanos {@link System#nanoTime()} when the request was read from the socket
     * @param span the request's span from {@link #startSpan}, or null
     * @param partitions partitions in the request (Produce, Fetch), else 0
     * @param bytes records bytes produced or fetched
     * @param records records fetched (Fetch)
     * @param parkedNanos when a Fetch was parked for long-poll, else 0
     * @param longPollHit whether an append answered the parked Fetch before maxWaitMs
     */
    public void completed(
            short apiKey,
            short errorCode,
            boolean partitionError,
            long startNanos,
            Span span,
            int partitions,
            long bytes,
            long records,
            long parkedNanos,
            boolean longPollHit) {
        long now = System.nanoTime();
        long latency = now - startNanos;
        int result = BrokerMetrics.result(errorCode);
        if (result == BrokerMetrics.SUCCESS && partitionError) {
            result = BrokerMetrics.ERROR;
        }
        metrics.request(apiKey, result, latency);
        if (apiKey == ApiKeys.PRODUCE) {
            metrics.produceRequest(result, latency);
        } else if (apiKey == ApiKeys.FETCH) {
            metrics.fetchRequest(result, latency, bytes, records);
            if (parkedNanos != 0) {
                metrics.longPoll(longPollHit, now - parkedNanos);
            }
        }
        if (span != null) {
            span.setAttribute(SPAN_RESULT, BrokerMetrics.RESULTS[result]);
            span.setAttribute(SPAN_ERROR_CODE, errorCode);
            span.setAttribute(SPAN_PARTITIONS, partitions);
            span.setAttribute(SPAN_BYTES, bytes);
            if (errorCode != Errors.NONE) {
                span.setStatus(StatusCode.ERROR, "error code " + errorCode);
            }
            span.end();
        }
    }
}
