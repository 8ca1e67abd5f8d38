package io.stellflow.broker.telemetry;

import io.stellflow.protocol.RequestHeader;
import org.slf4j.MDC;

/**
 * Puts a request's correlation fields into the SLF4J MDC for the log lines written about that
 * request: {@code correlationId}, {@code traceId}, {@code tenant} and {@code trafficClass} (the
 * logback layouts in {@code config/logback.xml} print them). Opened only around request-scoped log
 * lines (errors, debug), never for every request, so the request path pays nothing when it logs
 * nothing. Never carries payloads, client ids or credentials.
 *
 * <p>Usage: {@code try (RequestMdc ignored = RequestMdc.open(header)) { LOG.warn(...); }}
 *
 * <p>Thread-safety: the MDC is per thread; open and close on the same thread.
 */
public final class RequestMdc implements AutoCloseable {
    /** MDC key of the request's correlationId. */
    public static final String CORRELATION_ID = "correlationId";
    /** MDC key of the W3C trace id from the request header (absent when the header has none). */
    public static final String TRACE_ID = "traceId";
    /** MDC key of the header's tenantId (absent when null). */
    public static final String TENANT = "tenant";
    /** MDC key of the header's trafficClass (0 baseline, 1 canary, 2 background, 3 control). */
    public static final String TRAFFIC_CLASS = "trafficClass";

    private static final RequestMdc INSTANCE = new RequestMdc();

    private RequestMdc() {}

    /** Puts the header's fields into this thread's MDC until {@link #close}. */
    public static RequestMdc open(RequestHeader header) {
        MDC.put(CORRELATION_ID, Integer.toString(header.correlationId()));
        if (header.traceId() != null) {
            MDC.put(TRACE_ID, header.traceId());
        }
        if (header.tenantId() != null) {
            MDC.put(TENANT, header.tenantId());
        }
        MDC.put(TRAFFIC_CLASS, Byte.toString(header.trafficClass()));
        return INSTANCE;
    }

    /** Removes the fields again. */
    @Override
    public void close() {
        MDC.remove(CORRELATION_ID);
        MDC.remove(TRACE_ID);
        MDC.remove(TENANT);
        MDC.remove(TRAFFIC_CLASS);
    }
}
