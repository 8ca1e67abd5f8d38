package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.stellflow.broker.config.ReplicaFetcherConfig;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.BodyWriter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica fetcher's request channel to its leader: connects (the leader's address from the
 * metadata; after a failure or a lost connection again once {@code replica.fetch.backoff.ms} passed
 * on the nano clock), checks with ApiVersions that the leader offers Fetch v1 and OffsetForLeaderEpoch,
 * numbers requests (correlation ids), matches each response to its request, and closes the
 * connection when a request is unanswered after {@code replica.socket.timeout.ms} or a response is
 * undecodable; a response that answers no outstanding request is logged and dropped (the
 * connection stays). What the requests mean is the {@link Handler}'s: it
 * gets each response with the attachment its request was sent with (the fetch states it carries).
 * The Netty side (bootstrap, framing) is {@link LeaderConnection}. Log events ({@code
 * REPLICA_FETCHER_*}) keep the {@link ReplicaFetcher} logger they always had.
 *
 * <p>Thread-safety: confined to the fetcher's thread ({@code executor}): every method is called on
 * it, and the Netty event loop hands payloads and closes over to it. Buffer ownership: a response
 * body passed to {@link Handler#onResponse} is released by this class after the call. Errors: a
 * request that cannot be encoded throws from {@link #send} (nothing is sent); network failures only
 * close the connection.
 *
 * @param <A> what a request carries for its handler (not used by this class)
 */
final class LeaderChannel<A> {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

    /** What the fetcher does with the channel's events; called on the fetcher's thread. */
    interface Handler<A> {
        /** Something changed (a response applied, connected, disconnected): send what is ready. */
        void pump();

        /** Call {@link #pump} at {@code atNanos} (the reconnect time) on the nano clock, read at {@code nowNanos}. */
        void wakeAt(long atNanos, long nowNanos);

        /**
         * The answer to a request sent with {@code attachment}, sent at {@code sentNanos}; {@code
         * headerErrorCode} is the response header's error code (not {@code NONE}: the leader refused
         * the request, {@code body} is empty). {@code body} is released after the call.
         */
        void onResponse(short apiKey, A attachment, short headerErrorCode, long sentNanos, ByteBuf body);

        /** The request sent with {@code attachment} will never be answered: the connection is gone. */
        void onAbandoned(short apiKey, A attachment);
    }

    private final int leaderId;
    private final ReplicaFetcherConfig config;
    private final IntFunction<InetSocketAddress> addresses;
    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelClass;
    private final ScheduledExecutorService executor;
    private final LongSupplier nanoClock;
    private final Handler<A> handler;
    private final String clientId;
    private final LeaderConnection.Sink sink = new LeaderConnection.Sink() {
        @Override
        public void onPayload(Channel ch, ByteBuf payload) {
            try {
                executor.execute(() -> handlePayload(ch, payload));
            } catch (RejectedExecutionException e) {
                payload.release(); // closed
            }
        }

        @Override
        public void onClosed(Channel ch) {
            try {
                executor.execute(() -> handleClosed(ch));
            } catch (RejectedExecutionException e) {
                // closed
            }
        }
    };

    private final Map<Integer, InFlight<A>> inFlight = new HashMap<>();
    private Channel channel;
    private boolean connecting;
    private boolean ready;
    /** The Fetch version to send: v2 when the leader offers it (it carries our broker epoch), else v1. */
    private short fetchVersion = FetchResponseV1.VERSION;

    private boolean closed;
    private long reconnectAtNanos;
    private int nextCorrelationId;
    private int connectFailures;

    /** An outstanding request. */
    private static final class InFlight<A> {
        final short apiKey;
        final A attachment;
        final long sentNanos;
        final ScheduledFuture<?> timeout;

        InFlight(short apiKey, A attachment, long sentNanos, ScheduledFuture<?> timeout) {
            this.apiKey = apiKey;
            this.attachment = attachment;
            this.sentNanos = sentNanos;
            this.timeout = timeout;
        }
    }

    /**
     * @param leaderId the leader broker
     * @param brokerId this broker (the requests' client id names it)
     * @param config {@code replica.fetch.backoff.ms} (reconnect delay) and {@code
     *     replica.socket.timeout.ms} (request timeout; connect timeout capped at 10 s)
     * @param addresses the leader's data-plane address from the latest metadata, or null while unknown
     * @param group event loops for the connection
     * @param channelClass the broker transport's socket channel class
     * @param executor the fetcher's thread: runs every event and the request timeouts
     * @param nanoClock the fetcher's clock ({@link System#nanoTime} outside tests)
     * @param handler told about responses and lost requests
     */
    LeaderChannel(
            int leaderId,
            int brokerId,
            ReplicaFetcherConfig config,
            IntFunction<InetSocketAddress> addresses,
            EventLoopGroup group,
            Class<? extends SocketChannel> channelClass,
            ScheduledExecutorService executor,
            LongSupplier nanoClock,
            Handler<A> handler) {
        this.leaderId = leaderId;
        this.config = config;
        this.addresses = addresses;
        this.group = group;
        this.channelClass = channelClass;
        this.executor = executor;
        this.nanoClock = nanoClock;
        this.handler = handler;
        this.clientId = "stellflow-replica-fetcher-" + brokerId;
        this.reconnectAtNanos = nanoClock.getAsLong();
    }

    /**
     * Whether requests may be sent now: connected and the leader's ApiVersions accepted. When not
     * connected, starts connecting at {@code nowNanos} if the reconnect backoff has passed, else asks
     * the handler to wake up when it has.
     */
    boolean readyToSend(long nowNanos) {
        if (closed) {
            return false;
        }
        if (channel == null) {
            if (!connecting) {
                if (nowNanos - reconnectAtNanos >= 0) {
                    connect(nowNanos);
                } else {
                    handler.wakeAt(reconnectAtNanos, nowNanos);
                }
            }
            return false;
        }
        return ready;
    }

    /**
     * Sends one request; its answer goes to {@link Handler#onResponse} with {@code attachment}.
     *
     * @return false when nothing was sent (the fetcher thread is shutting down)
     * @throws RuntimeException when {@code body} cannot be encoded (nothing sent)
     */
    boolean send(short apiKey, short version, BodyWriter body, A attachment) {
        Channel ch = channel;
        int correlationId = nextCorrelationId++;
        ScheduledFuture<?> timeout;
        try {
            timeout = executor.schedule(
                    () -> onTimeout(ch, correlationId), config.socketTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            return false; // close() is running: nothing more is sent
        }
        ByteBuf frame = ch.alloc().buffer(256);
        try {
            Frames.writeRequest(frame, RequestHeader.of(apiKey, version, correlationId, clientId), body);
        } catch (RuntimeException e) {
            frame.release();
            timeout.cancel(false);
            throw e;
        }
        inFlight.put(correlationId, new InFlight<>(apiKey, attachment, nanoClock.getAsLong(), timeout));
        ch.writeAndFlush(frame).addListener(w -> {
            if (!w.isSuccess()) {
                ch.close();
            }
        });
        return true;
    }

    /** Closes the connection (it is re-established after the backoff); a no-op when not connected. */
    void reconnect() {
        if (channel != null) {
            channel.close();
        }
    }

    /** Closes the connection for good: nothing is connected or sent any more, no event is passed on. */
    void close() {
        closed = true;
        if (channel != null) {
            channel.close();
        }
    }

    private void connect(long now) {
        InetSocketAddress address = addresses.apply(leaderId);
        if (address == null) {
            LOG.debug("Leader {} has no known endpoint yet; retrying in {} ms", leaderId, config.backoffMs());
            reconnectAtNanos = now + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            handler.wakeAt(reconnectAtNanos, now);
            return;
        }
        connecting = true;
        int connectTimeoutMs = (int) Math.min(config.socketTimeoutMs(), 10_000);
        ChannelFuture future = LeaderConnection.connect(
                group, channelClass, address.getHostString(), address.getPort(), connectTimeoutMs, sink);
        future.addListener(f -> {
            try {
                executor.execute(() -> onConnect(future, address));
            } catch (RejectedExecutionException e) {
                // closed
            }
        });
    }

    private void onConnect(ChannelFuture future, InetSocketAddress address) {
        connecting = false;
        Channel ch = future.channel();
        if (closed) {
            ch.close();
            return;
        }
        if (!future.isSuccess() || !ch.isActive()) {
            connectFailures++;
            if (connectFailures == 1) {
                LOG.warn(
                        "REPLICA_FETCHER_CONNECT_FAILED leader={} address={}:{} retryMs={}: {}",
                        leaderId,
                        address.getHostString(),
                        address.getPort(),
                        config.backoffMs(),
                        String.valueOf(future.cause()));
            }
            long now = nanoClock.getAsLong();
            reconnectAtNanos = now + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            handler.wakeAt(reconnectAtNanos, now);
            return;
        }
        connectFailures = 0;
        channel = ch;
        ready = false;
        LOG.info(
                "REPLICA_FETCHER_CONNECTED leader={} address={}:{}",
                leaderId,
                address.getHostString(),
                address.getPort());
        send(
                ApiKeys.API_VERSIONS,
                (short) 0,
                new ApiVersionsRequest("stellflow-replica-fetcher", null, List.of()),
                null);
    }

    private void handleClosed(Channel ch) {
        if (ch != channel) {
            return;
        }
        channel = null;
        ready = false;
        for (InFlight<A> f : inFlight.values()) {
            f.timeout.cancel(false);
            if (f.apiKey != ApiKeys.API_VERSIONS) {
                handler.onAbandoned(f.apiKey, f.attachment);
            }
        }
        inFlight.clear();
        if (!closed) {
            LOG.info("REPLICA_FETCHER_DISCONNECTED leader={} retryMs={}", leaderId, config.backoffMs());
            reconnectAtNanos = nanoClock.getAsLong() + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            handler.pump();
        }
    }

    private void onTimeout(Channel ch, int correlationId) {
        if (ch == channel && inFlight.containsKey(correlationId)) {
            LOG.warn(
                    "REPLICA_FETCHER_TIMEOUT leader={}: no answer in replica.socket.timeout.ms={}; reconnecting",
                    leaderId,
                    config.socketTimeoutMs());
            ch.close();
        }
    }

    private void handlePayload(Channel ch, ByteBuf payload) {
        try {
            if (ch != channel || closed) {
                return;
            }
            ResponseHeader header = ResponseHeader.read(payload);
            InFlight<A> f = inFlight.remove(header.correlationId());
            if (f == null) {
                LOG.warn("Leader {} answered unknown correlationId {}", leaderId, header.correlationId());
                return;
            }
            f.timeout.cancel(false);
            if (f.apiKey != ApiKeys.API_VERSIONS) {
                handler.onResponse(f.apiKey, f.attachment, header.errorCode(), f.sentNanos, payload);
            } else if (header.errorCode() != Errors.NONE) {
                LOG.warn("Leader {} refused {}: {}", leaderId, ApiKeys.name(f.apiKey), Errors.name(header.errorCode()));
                ch.close();
            } else {
                onApiVersions(ch, ApiVersionsResponse.read(payload));
            }
        } catch (RuntimeException e) {
            LOG.error("REPLICA_FETCHER_BAD_RESPONSE leader={}; reconnecting", leaderId, e);
            ch.close();
        } finally {
            payload.release();
            handler.pump();
        }
    }

    private void onApiVersions(Channel ch, ApiVersionsResponse response) {
        short fetchMax = -1;
        boolean epochs = false;
        for (ApiVersionsResponse.ApiVersionRange r : response.apiVersions()) {
            if (r.apiKey() == ApiKeys.FETCH) {
                fetchMax = r.maxVersion();
            } else if (r.apiKey() == ApiKeys.OFFSET_FOR_LEADER_EPOCH) {
                epochs = r.minVersion() <= OffsetForLeaderEpochRequest.VERSION;
            }
        }
        if (fetchMax < FetchResponseV1.VERSION || !epochs) {
            LOG.error(
                    "REPLICA_FETCHER_UNSUPPORTED leader={}: it offers Fetch up to v{} and {}OffsetForLeaderEpoch; "
                            + "retrying in {} ms",
                    leaderId,
                    fetchMax,
                    epochs ? "" : "no ",
                    config.backoffMs());
            ch.close();
            return;
        }
        fetchVersion = (short) Math.min(fetchMax, FetchRequest.VERSION_REPLICA_EPOCH);
        ready = true;
    }

    /**
     * The Fetch version agreed with the leader at the last ApiVersions (1, or 2 when the leader
     * offers it: the request then carries this broker's epoch). Fetcher thread only.
     */
    short fetchVersion() {
        return fetchVersion;
    }
}
