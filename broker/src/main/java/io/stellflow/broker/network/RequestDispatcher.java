package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.stellflow.broker.telemetry.RequestMdc;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.RequestHeader;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the request header, routes the body to its {@link ApiHandler}, and turns request-level
 * failures into header-only responses ({@code docs/spec/wire-protocol.md} §3, §4.2, §5):
 *
 * <ol>
 *   <li>Header unreadable: its {@link ProtocolException} code ({@code UNSUPPORTED_VERSION} for a
 *       headerVersion other than 2, else {@code INVALID_REQUEST}), using the correlationId at payload
 *       offset 6.
 *   <li>apiKey without a handler: {@code FEATURE_NOT_ENABLED}.
 *   <li>apiVersion outside 0..{@link ApiHandler#maxVersion()} of its handler (0 for every API but
 *       Fetch, which reads 0 and 1): {@code UNSUPPORTED_VERSION}.
 *   <li>The handler throws {@link ProtocolException}: its code; anything else (including running out of
 *       direct memory): {@code UNKNOWN_SERVER_ERROR}.
 * </ol>
 *
 * <p>Telemetry: every answered request is reported through its {@link RequestContext}; unreadable
 * headers and malformed bodies also count as {@code stellflow.request.decode.error.count}. Log lines
 * about one request carry its correlation fields in the MDC ({@link RequestMdc}).
 *
 * <p>Thread-safety: immutable after construction; {@link #dispatch} runs on request handler threads.
 */
public final class RequestDispatcher {
    private static final Logger LOG = LoggerFactory.getLogger(RequestDispatcher.class);

    /** The apiVersion every API implements; some accept more ({@link ApiHandler#maxVersion()}). */
    public static final short SUPPORTED_API_VERSION = 0;

    private final Map<Short, ApiHandler> handlers;
    private final RequestTelemetry telemetry;

    /** Without telemetry. @param handlers one handler per implemented apiKey */
    public RequestDispatcher(Map<Short, ApiHandler> handlers) {
        this(handlers, RequestTelemetry.NONE);
    }

    /**
     * @param handlers one handler per implemented apiKey
     * @param telemetry where answered requests are reported
     */
    public RequestDispatcher(Map<Short, ApiHandler> handlers, RequestTelemetry telemetry) {
        this.handlers = Map.copyOf(handlers);
        this.telemetry = telemetry;
    }

    /**
     * Handles one request payload (header + body, at least 10 bytes). Does not release
     * {@code payload}; the caller does once this returns.
     */
    public void dispatch(Channel channel, ByteBuf payload) {
        dispatch(channel, payload, System.nanoTime());
    }

    /**
     * As {@link #dispatch(Channel, ByteBuf)}, with the {@link System#nanoTime()} at which the request
     * was read from the socket (the start of its measured latency).
     */
    public void dispatch(Channel channel, ByteBuf payload, long receivedNanos) {
        int correlationId = RequestHeader.peekCorrelationId(payload);
        short peekedApiKey = RequestHeader.peekApiKey(payload);
        RequestHeader header;
        try {
            header = RequestHeader.read(payload);
        } catch (ProtocolException e) {
            telemetry.metrics().decodeError(peekedApiKey);
            LOG.debug("Bad request header from {}: {}", channel.remoteAddress(), e.getMessage());
            channel.writeAndFlush(RequestContext.headerOnly(channel, correlationId, e.errorCode()));
            return;
        }
        RequestContext context = new RequestContext(channel, header, telemetry, receivedNanos);
        ApiHandler handler = handlers.get(header.apiKey());
        if (handler == null) {
            LOG.debug("Unknown apiKey {} from {}", header.apiKey(), channel.remoteAddress());
            context.respondError(Errors.FEATURE_NOT_ENABLED);
            return;
        }
        if (header.apiVersion() < SUPPORTED_API_VERSION || header.apiVersion() > handler.maxVersion()) {
            context.respondError(Errors.UNSUPPORTED_VERSION);
            return;
        }
        run(context, () -> handler.handle(context, payload));
    }

    /**
     * Runs a handler call and answers what it throws: a malformed body with its error code, a bug
     * with {@code UNKNOWN_SERVER_ERROR}, and an {@link OutOfMemoryError} (typically Netty's
     * OutOfDirectMemoryError for a large Fetch response under memory pressure) the same way, so the
     * request still gets its one response and the broker keeps serving.
     */
    private void run(RequestContext context, Runnable call) {
        RequestHeader header = context.header();
        try {
            call.run();
        } catch (ProtocolException e) {
            telemetry.metrics().decodeError(header.apiKey());
            if (LOG.isDebugEnabled()) {
                try (RequestMdc ignored = RequestMdc.open(header)) {
                    LOG.debug("Malformed {} request: {}", ApiKeys.name(header.apiKey()), e.getMessage());
                }
            }
            answerFailure(context, e.errorCode());
        } catch (RuntimeException e) {
            try (RequestMdc ignored = RequestMdc.open(header)) {
                LOG.error(
                        "Unexpected failure handling {} correlationId {}",
                        ApiKeys.name(header.apiKey()),
                        header.correlationId(),
                        e);
            }
            answerFailure(context, Errors.UNKNOWN_SERVER_ERROR);
        } catch (OutOfMemoryError e) {
            try (RequestMdc ignored = RequestMdc.open(header)) {
                LOG.warn(
                        "Out of memory handling {} correlationId {}: {}",
                        ApiKeys.name(header.apiKey()),
                        header.correlationId(),
                        e.toString());
            }
            answerFailure(context, Errors.UNKNOWN_SERVER_ERROR);
        }
    }

    /**
     * Handles the request on the calling event loop when its handler can do so without blocking
     * ({@link EventLoopApiHandler}); returns false, with {@code payload} unread, when it cannot (no
     * such handler, a header or body the pool path must answer, or work that may block), and the
     * caller then hands it to the pool. Does not release {@code payload}.
     */
    public boolean dispatchOnEventLoop(Channel channel, ByteBuf payload, long receivedNanos) {
        if (!(handlers.get(RequestHeader.peekApiKey(payload)) instanceof EventLoopApiHandler<?> handler)) {
            return false;
        }
        int start = payload.readerIndex();
        try {
            RequestHeader header = RequestHeader.read(payload);
            if (header.apiVersion() < SUPPORTED_API_VERSION || header.apiVersion() > handler.maxVersion()) {
                payload.readerIndex(start);
                return false;
            }
            return handleDecoded(channel, header, handler, payload, receivedNanos, start);
        } catch (ProtocolException e) {
            payload.readerIndex(start); // the pool path answers it with its error code
            return false;
        }
    }

    private <T> boolean handleDecoded(
            Channel channel,
            RequestHeader header,
            EventLoopApiHandler<T> handler,
            ByteBuf payload,
            long receivedNanos,
            int start) {
        T request = handler.decodeIfNonBlocking(payload, header.apiVersion());
        if (request == null) {
            payload.readerIndex(start);
            return false;
        }
        RequestContext context = new RequestContext(channel, header, telemetry, receivedNanos);
        run(context, () -> handler.handleDecoded(context, request));
        return true;
    }

    private static void answerFailure(RequestContext context, short errorCode) {
        if (!context.responded()) {
            context.respondError(errorCode);
        }
    }

    /** Whether an apiKey has a handler. */
    public boolean supports(short apiKey) {
        return handlers.containsKey(apiKey);
    }
}
