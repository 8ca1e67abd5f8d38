package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.opentelemetry.api.trace.Span;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiMessage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request in flight: its header and the channel to answer on. Guarantees exactly one response
 * per request ({@code docs/spec/wire-protocol.md} §1.3): the first {@code respond*} call wins,
 * later calls are logged and dropped.
 *
 * <p>Telemetry: the response that wins reports the request once to {@link RequestTelemetry}, just
 * before it is handed to the channel (so a client that saw its response also sees it counted)
 * (request count and latency, Produce/Fetch metrics, the server span when one was started). Handlers
 * add what only they know with {@link #recordStats}, {@link #markPartitionError}, {@link #markParked}
 * and {@link #markLongPollHit}: plain fields of this object, no allocation.
 *
 * <p>Thread-safety: may be completed from any thread; the write is handed to the channel's event loop
 * by Netty. A response to a closed channel is silently dropped (its buffer is released by Netty). The
 * telemetry fields are written before the response (by the thread that sends it, or before the
 * hand-off to it) and read by the thread that wins the response.
 */
public final class RequestContext {
    private static final Logger LOG = LoggerFactory.getLogger(RequestContext.class);

    private final Channel channel;
    private final RequestHeader header;
    private final AtomicBoolean responded = new AtomicBoolean();
    private final RequestTelemetry telemetry;
    private final long startNanos;
    private final Span span;
    private volatile int partitions;
    private volatile long bytes;
    private volatile long records;
    private volatile boolean partitionError;
    private volatile long parkedNanos;
    private volatile boolean longPollHit;

    /** A request without telemetry. @param channel the client connection; @param header the decoded request header */
    public RequestContext(Channel channel, RequestHeader header) {
        this(channel, header, RequestTelemetry.NONE, System.nanoTime());
    }

    /**
     * @param channel the client connection
     * @param header the decoded request header
     * @param telemetry where the answered request is reported
     * @param startNanos {@link System#nanoTime()} when the request was read from the socket
     */
    public RequestContext(Channel channel, RequestHeader header, RequestTelemetry telemetry, long startNanos) {
        this.channel = channel;
        this.header = header;
        this.telemetry = telemetry;
        this.startNanos = startNanos;
        this.span = telemetry.startSpan(header);
    }

    /** The broker's metrics, for handlers that count more than {@link #recordStats} (compression). */
    public BrokerMetrics metrics() {
        return telemetry.metrics();
    }

    /**
     * What the request moved, for metrics and its span: partitions in the request, records bytes
     * produced or fetched, records fetched. A later call replaces an earlier one (a parked Fetch reports
     * its last evaluation, the one it sends).
     */
    public void recordStats(int partitionCount, long recordsBytes, long recordCount) {
        this.partitions = partitionCount;
        this.bytes = recordsBytes;
        this.records = recordCount;
    }

    /** Some partition of the response carries an error (the request counts as {@code result=error}). */
    public void markPartitionError() {
        partitionError = true;
    }

    /** The Fetch was parked for long-poll now. */
    public void markParked() {
        parkedNanos = System.nanoTime() | 1L;
    }

    /** The parked Fetch is answered because an append made enough bytes readable. */
    public void markLongPollHit() {
        longPollHit = true;
    }

    private void completed(short errorCode) {
        telemetry.completed(
                header.apiKey(),
                errorCode,
                partitionError,
                startNanos,
                span,
                partitions,
                bytes,
                records,
                parkedNanos,
                longPollHit);
    }

    /** The decoded request header. */
    public RequestHeader header() {
        return header;
    }

    /** The client connection. */
    public Channel channel() {
        return channel;
    }

    /** Whether a response was already sent. */
    public boolean responded() {
        return responded.get();
    }

    /**
     * Sends a successful response: header with errorCode 0, then {@code body}. Does not release
     * buffers referenced by {@code body}. If encoding fails (a bug, or a body above the frame limit),
     * answers {@code UNKNOWN_SERVER_ERROR} header-only instead.
     */
    public void respond(ApiMessage body) {
        if (!responded.compareAndSet(false, true)) {
            LOG.error("Second response to correlationId {} dropped", header.correlationId());
            return;
        }
        ByteBuf out = channel.alloc().ioBuffer();
        try {
            int start = Frames.beginFrame(out);
            ResponseHeader.of(header.correlationId(), Errors.NONE).write(out);
            body.write(out);
            Frames.endFrame(out, start);
        } catch (RuntimeException e) {
            out.release();
            LOG.error(
                    "Failed to encode the {} response to correlationId {}",
                    ApiKeys.name(header.apiKey()),
                    header.correlationId(),
                    e);
            completed(Errors.UNKNOWN_SERVER_ERROR);
            channel.writeAndFlush(headerOnly(channel, header.correlationId(), Errors.UNKNOWN_SERVER_ERROR));
            return;
        }
        completed(Errors.NONE);
        channel.writeAndFlush(out);
    }

    /**
     * Starts a successful response written by the caller: a frame with a length placeholder and the
     * response header (errorCode 0). Append the body, then hand the buffer to {@link #sendFrame}; the
     * caller owns it until then (release it if it is not sent).
     *
     * @param sizeHint expected frame size in bytes, to allocate once
     */
    public ByteBuf newResponseFrame(int sizeHint) {
        ByteBuf out = channel.alloc().ioBuffer(Math.max(Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE, sizeHint));
        Frames.beginFrame(out);
        ResponseHeader.of(header.correlationId(), Errors.NONE).write(out);
        return out;
    }

    /**
     * Sends a frame started by {@link #newResponseFrame}, taking ownership of it. A frame above the
     * limit (a bug) is released and answered with {@code UNKNOWN_SERVER_ERROR} header-only; a second
     * response is released and dropped.
     */
    public void sendFrame(ByteBuf frame) {
        if (!responded.compareAndSet(false, true)) {
            frame.release();
            LOG.error("Second response to correlationId {} dropped", header.correlationId());
            return;
        }
        try {
            Frames.endFrame(frame, frame.readerIndex());
        } catch (IllegalStateException e) {
            frame.release();
            LOG.error("Response to correlationId {} exceeds the frame limit", header.correlationId(), e);
            completed(Errors.UNKNOWN_SERVER_ERROR);
            channel.writeAndFlush(headerOnly(channel, header.correlationId(), Errors.UNKNOWN_SERVER_ERROR));
            return;
        }
        completed(Errors.NONE);
        channel.writeAndFlush(frame);
    }

    /**
     * Sends a Fetch response frame (head buffer plus file regions), taking ownership of it. A frame
     * above the limit (a bug) is released and answered with {@code UNKNOWN_SERVER_ERROR} header-only;
     * a second response is released and dropped. The channel's {@link FetchResponseWriter} writes the
     * pieces on the event loop.
     */
    public void sendFetch(FetchResponseFrame frame) {
        if (!responded.compareAndSet(false, true)) {
            frame.release();
            LOG.error("Second response to correlationId {} dropped", header.correlationId());
            return;
        }
        if (!frame.seal()) {
            LOG.error(
                    "Fetch response to correlationId {} of {} bytes exceeds the frame limit",
                    header.correlationId(),
                    frame.payloadBytes());
            frame.release();
            completed(Errors.UNKNOWN_SERVER_ERROR);
            channel.writeAndFlush(headerOnly(channel, header.correlationId(), Errors.UNKNOWN_SERVER_ERROR));
            return;
        }
        completed(Errors.NONE);
        channel.writeAndFlush(frame);
    }

    /**
     * Sends a header-only error response (decision 9.h of {@code docs/spec/wire-protocol.md}). A
     * header-only answer always carries an error: {@code Errors.NONE} here is a bug of the caller,
     * logged and answered {@code UNKNOWN_SERVER_ERROR}, so the request is still answered.
     */
    public void respondError(short errorCode) {
        if (errorCode == Errors.NONE) {
            LOG.error(
                    "Header-only answer without an error for correlationId {}: UNKNOWN_SERVER_ERROR",
                    header.correlationId());
            errorCode = Errors.UNKNOWN_SERVER_ERROR;
        }
        if (!responded.compareAndSet(false, true)) {
            LOG.error("Second response to correlationId {} dropped", header.correlationId());
            return;
        }
        completed(errorCode);
        channel.writeAndFlush(headerOnly(channel, header.correlationId(), errorCode));
    }

    /** A 16-byte header-only response frame: frameLength 12, correlationId, headerVersion 2, errorCode, 0. */
    public static ByteBuf headerOnly(Channel channel, int correlationId, short errorCode) {
        ByteBuf out = channel.alloc().ioBuffer(Frames.LENGTH_FIELD_SIZE + ResponseHeader.SIZE);
        try {
            Frames.writeErrorResponse(out, correlationId, errorCode);
        } catch (RuntimeException e) {
            out.release(); // errorCode NONE: a bug of the caller, which must not leak the buffer too
            throw e;
        }
        return out;
    }
}
