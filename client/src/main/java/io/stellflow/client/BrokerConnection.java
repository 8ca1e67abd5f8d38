package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.GatheringBuffer;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiVersionsResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pipelined TCP connection to one broker: requests are written as they come, responses are
 * matched to their request by correlationId through a pending map, in any order.
 *
 * <p>Thread-safety: {@link #send} may be called from any thread; responses are decoded and futures
 * completed on the connection's I/O thread. When the channel closes every pending request fails
 * with a retriable {@link StellflowException#NETWORK_ERROR}.
 */
final class BrokerConnection extends SimpleChannelInboundHandler<ByteBuf> {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerConnection.class);

    private final HostPort address;
    private final String clientId;
    private final long requestTimeoutMs;
    private final ClientMetrics metrics;
    private final ConcurrentHashMap<Integer, Pending<?>> pending = new ConcurrentHashMap<>();
    private volatile Channel channel;
    private volatile List<ApiVersionsResponse.ApiVersionRange> apiVersions = List.of();

    BrokerConnection(HostPort address, String clientId, long requestTimeoutMs) {
        this(address, clientId, requestTimeoutMs, ClientMetrics.none("admin"));
    }

    BrokerConnection(HostPort address, String clientId, long requestTimeoutMs, ClientMetrics metrics) {
        this.metrics = metrics;
        this.address = address;
        this.clientId = clientId;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    void attach(Channel ch) {
        this.channel = ch;
    }

    HostPort address() {
        return address;
    }

    boolean isActive() {
        Channel ch = channel;
        return ch != null && ch.isActive();
    }

    /** The ranges the broker advertised in ApiVersions on this connection. */
    List<ApiVersionsResponse.ApiVersionRange> apiVersions() {
        return apiVersions;
    }

    void apiVersions(List<ApiVersionsResponse.ApiVersionRange> ranges) {
        this.apiVersions = List.copyOf(ranges);
    }

    /** True when the broker advertised {@code apiKey} with a range that includes v0. */
    boolean supportsV0(short apiKey) {
        return supports(apiKey, (short) 0);
    }

    /** True when the broker advertised {@code apiKey} with a range that includes {@code version}. */
    boolean supports(short apiKey, short version) {
        for (ApiVersionsResponse.ApiVersionRange r : apiVersions) {
            if (r.apiKey() == apiKey) {
                return r.minVersion() <= version && r.maxVersion() >= version;
            }
        }
        return false;
    }

    /**
     * The highest version of {@code apiKey} both sides speak: {@code highestWanted} capped at the
     * broker's advertised maximum; 0 when the broker did not advertise the API (or before
     * ApiVersions).
     */
    short negotiatedVersion(short apiKey, short highestWanted) {
        for (ApiVersionsResponse.ApiVersionRange r : apiVersions) {
            if (r.apiKey() == apiKey) {
                return (short) Math.max(0, Math.min(highestWanted, r.maxVersion()));
            }
        }
        return 0;
    }

    int pendingCount() {
        return pending.size();
    }

    /** Encodes and writes one v0 request; the future completes with the decoded body. */
    <T> CompletableFuture<T> send(int correlationId, short apiKey, BodyWriter body, BodyReader<T> reader) {
        return send(correlationId, apiKey, (short) 0, body, reader);
    }

    /** Encodes and writes one request at {@code version}; the future completes with the decoded body. */
    <T> CompletableFuture<T> send(
            int correlationId, short apiKey, short version, BodyWriter body, BodyReader<T> reader) {
        Pending<T> p = new Pending<>(apiKey, reader);
        if (apiKey != ApiKeys.API_VERSIONS && !apiVersions.isEmpty() && !supports(apiKey, version)) {
            // The broker did not advertise this version of the API: fail here instead of sending it.
            p.future.completeExceptionally(new StellflowException(
                    Errors.UNSUPPORTED_VERSION,
                    ApiKeys.name(apiKey) + " v" + version + " is not offered by " + address));
            return p.future;
        }
        Channel ch = channel;
        if (ch == null || !ch.isActive()) {
            p.future.completeExceptionally(
                    new StellflowException(StellflowException.NETWORK_ERROR, "not connected to " + address));
            return p.future;
        }
        // A request carrying record batches (Produce) goes out as one gathering write of the header and
        // the batches' own buffers, so the record bytes are not copied again on their way to the socket.
        ByteBuf frame = body.gathers()
                ? GatheringBuffer.direct(ch.alloc())
                : ch.alloc().directBuffer(Math.max(256, 64 + body.sizeHintBytes()));
        try {
            int start = Frames.beginFrame(frame);
            RequestHeader.of(apiKey, version, correlationId, clientId).write(frame);
            body.write(frame);
            Frames.endFrame(frame, start); // a request above the frame limit fails here, unsent
        } catch (RuntimeException e) {
            frame.release();
            p.future.completeExceptionally(e);
            return p.future;
        }
        pending.put(correlationId, p);
        p.timeout = ch.eventLoop().schedule(() -> timeout(correlationId), requestTimeoutMs, TimeUnit.MILLISECONDS);
        ch.writeAndFlush(frame).addListener(f -> {
            if (!f.isSuccess()) {
                fail(correlationId, f.cause());
            }
        });
        return p.future;
    }

    private void timeout(int correlationId) {
        Pending<?> p = pending.remove(correlationId);
        if (p != null) {
            metrics.request(p.apiKey, ClientMetrics.TIMEOUT, System.nanoTime() - p.startNanos);
            p.future.completeExceptionally(new StellflowException(
                    StellflowException.NETWORK_ERROR,
                    ApiKeys.name(p.apiKey) + " to " + address + " timed out after " + requestTimeoutMs + " ms"));
        }
    }

    private void fail(int correlationId, Throwable cause) {
        Pending<?> p = pending.remove(correlationId);
        if (p != null) {
            p.cancelTimeout();
            metrics.request(p.apiKey, ClientMetrics.ERROR, System.nanoTime() - p.startNanos);
            p.future.completeExceptionally(
                    new StellflowException(StellflowException.NETWORK_ERROR, "write to " + address + " failed", cause));
        }
    }

    void close() {
        Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
        ResponseHeader header = ResponseHeader.read(frame);
        Pending<?> p = pending.remove(header.correlationId());
        if (p == null) {
            // A late answer to a request that already timed out: drop it (the request has failed).
            LOG.debug("dropping response with unknown correlationId {} from {}", header.correlationId(), address);
            return;
        }
        p.cancelTimeout();
        metrics.request(p.apiKey, ClientMetrics.result(header.errorCode(), false), System.nanoTime() - p.startNanos);
        p.complete(header, frame, address);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        failAll(new StellflowException(StellflowException.NETWORK_ERROR, "connection to " + address + " closed"));
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.warn("connection to {} failed: {}", address, cause.toString());
        failAll(new StellflowException(
                StellflowException.NETWORK_ERROR, "connection to " + address + " failed", cause));
        ctx.close();
    }

    private void failAll(StellflowException e) {
        for (Integer id : pending.keySet()) {
            Pending<?> p = pending.remove(id);
            if (p != null) {
                p.cancelTimeout();
                metrics.request(p.apiKey, ClientMetrics.ERROR, System.nanoTime() - p.startNanos);
                p.future.completeExceptionally(e);
            }
        }
    }

    private static final class Pending<T> {
        final short apiKey;
        final BodyReader<T> reader;
        final CompletableFuture<T> future = new CompletableFuture<>();
        final long startNanos = System.nanoTime();
        volatile ScheduledFuture<?> timeout;

        Pending(short apiKey, BodyReader<T> reader) {
            this.apiKey = apiKey;
            this.reader = reader;
        }

        void cancelTimeout() {
            ScheduledFuture<?> t = timeout;
            if (t != null) {
                t.cancel(false);
            }
        }

        void complete(ResponseHeader header, ByteBuf body, HostPort from) {
            if (header.errorCode() != Errors.NONE) {
                future.completeExceptionally(
                        new StellflowException(header.errorCode(), ApiKeys.name(apiKey) + " rejected by " + from));
                return;
            }
            T value;
            try {
                value = reader.read(body);
            } catch (RuntimeException e) {
                future.completeExceptionally(e);
                return;
            }
            future.complete(value);
        }
    }
}
