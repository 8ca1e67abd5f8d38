package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiMessage;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Broker-to-broker requests that are not replica fetches (the transaction APIs: WriteTxnMarkers to
 * partition leaders, RegisterTxnPartition to coordinators): one lazily opened connection per
 * destination broker, on the replica fetchers' event loop ({@link LeaderConnection} does the
 * framing), requests numbered by correlation id and matched to their responses.
 *
 * <p>Each {@link #send} returns a future that completes with the decoded response body, or
 * exceptionally: an {@link IOException} when the broker has no known address, the connection
 * failed or closed before the answer; a {@link TimeoutException} after {@code requestTimeoutMs}
 * (the connection is then closed, so a stuck peer is reconnected on the next request); an {@link
 * IllegalStateException} when the response header carried an error code. Futures complete on the
 * event loop: dependents must be short.
 *
 * <p>Thread-safety: every method from any thread.
 */
public final class BrokerRequests implements AutoCloseable {
    /** The client id of every request sent here: this prefix and the sending broker's id. */
    public static final String CLIENT_ID_PREFIX = "stellflow-broker-";

    /**
     * After the broker id in the client id of a forwarded client request ({@link #sendForward}): the
     * forwarding broker's number of the forward follows, so the receiver can ask it whether the
     * client's connection is still open (ForwardStatus, {@code docs/exactly-once.md}, "Forwarding").
     */
    public static final String FORWARD_TAG = "/forward-";

    private final String clientId;
    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelClass;
    private final IntFunction<InetSocketAddress> addresses;
    private final int requestTimeoutMs;
    private final Map<Integer, Connection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param brokerId this broker's id (in the client id of its requests)
     * @param group the event loops to connect on (the replica fetchers')
     * @param addresses a broker's data-plane address, or null while the metadata does not know it
     * @param requestTimeoutMs how long a request waits for its answer
     */
    BrokerRequests(
            int brokerId,
            EventLoopGroup group,
            Class<? extends SocketChannel> channelClass,
            IntFunction<InetSocketAddress> addresses,
            int requestTimeoutMs) {
        this.clientId = CLIENT_ID_PREFIX + brokerId;
        this.group = group;
        this.channelClass = channelClass;
        this.addresses = addresses;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    /** Sends {@code body} to broker {@code destination}; the answer decoded by {@code reader}. */
    public <T> CompletableFuture<T> send(
            int destination, short apiKey, short version, ApiMessage body, Function<ByteBuf, T> reader) {
        return send(destination, apiKey, version, body, reader, clientId);
    }

    private <T> CompletableFuture<T> send(
            int destination,
            short apiKey,
            short version,
            ApiMessage body,
            Function<ByteBuf, T> reader,
            String requestClientId) {
        if (closed) {
            return CompletableFuture.failedFuture(new IOException("closing"));
        }
        Connection c = connections.computeIfAbsent(destination, this::connect);
        if (c == null) {
            return CompletableFuture.failedFuture(new IOException("broker " + destination + " has no known address"));
        }
        return c.send(apiKey, version, body, reader, requestClientId);
    }

    /**
     * Sends {@code body}, a request body already encoded for {@code version} (a forwarded client
     * request), to broker {@code destination}; the answer body's bytes, undecoded.
     */
    public CompletableFuture<byte[]> sendRaw(int destination, short apiKey, short version, byte[] body) {
        return send(destination, apiKey, version, out -> out.writeBytes(body), ByteBufUtil::getBytes);
    }

    /**
     * As {@link #sendRaw}, for a client's control request forwarded to its transaction coordinator:
     * the client id is this broker's followed by {@link #FORWARD_TAG} and {@code forwardId}, for
     * example {@code stellflow-broker-2/forward-17}.
     */
    public CompletableFuture<byte[]> sendForward(
            int destination, short apiKey, short version, long forwardId, byte[] body) {
        return send(
                destination,
                apiKey,
                version,
                out -> out.writeBytes(body),
                ByteBufUtil::getBytes,
                clientId + FORWARD_TAG + forwardId);
    }

    private Connection connect(int destination) {
        InetSocketAddress a = addresses.apply(destination);
        if (a == null) {
            return null;
        }
        Connection c = new Connection(destination);
        c.channel = LeaderConnection.connect(
                group,
                channelClass,
                a.getHostString(),
                a.getPort(),
                Math.min(requestTimeoutMs, 10_000),
                new LeaderConnection.Sink() {
                    @Override
                    public void onPayload(Channel ch, ByteBuf payload) {
                        c.onPayload(payload);
                    }

                    @Override
                    public void onClosed(Channel ch) {
                        c.onClosed();
                    }
                });
        return c; // a failed connect is seen (and the connection dropped) by the requests' listeners
    }

    /** Closes every connection; waiting requests fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (Connection c : connections.values()) {
            c.channel.channel().close();
            c.onClosed();
        }
    }

    private record Waiting<T>(CompletableFuture<T> future, Function<ByteBuf, T> reader) {}

    private final class Connection {
        private final int destination;
        private final Map<Integer, Waiting<?>> inFlight = new ConcurrentHashMap<>();
        private int nextCorrelationId;
        volatile ChannelFuture channel;

        Connection(int destination) {
            this.destination = destination;
        }

        <T> CompletableFuture<T> send(
                short apiKey, short version, ApiMessage body, Function<ByteBuf, T> reader, String requestClientId) {
            CompletableFuture<T> f = new CompletableFuture<>();
            int correlationId;
            synchronized (this) {
                correlationId = nextCorrelationId++;
            }
            inFlight.put(correlationId, new Waiting<>(f, reader));
            Connection self = this;
            channel.addListener(connected -> {
                if (!connected.isSuccess()) {
                    connections.remove(destination, self); // the next request connects again
                    fail(correlationId, new IOException("cannot connect to broker " + destination));
                    return;
                }
                Channel ch = channel.channel();
                ByteBuf frame = ch.alloc().buffer(256);
                try {
                    Frames.writeRequest(frame, RequestHeader.of(apiKey, version, correlationId, requestClientId), body);
                } catch (RuntimeException e) {
                    frame.release();
                    fail(correlationId, e);
                    return;
                }
                ch.writeAndFlush(frame).addListener(w -> {
                    if (!w.isSuccess()) {
                        ch.close();
                    }
                });
                ch.eventLoop()
                        .schedule(
                                () -> {
                                    if (fail(
                                            correlationId,
                                            new TimeoutException("no answer from broker " + destination + " within "
                                                    + requestTimeoutMs + " ms"))) {
                                        ch.close();
                                    }
                                },
                                requestTimeoutMs,
                                TimeUnit.MILLISECONDS);
            });
            return f;
        }

        private boolean fail(int correlationId, Throwable e) {
            Waiting<?> w = inFlight.remove(correlationId);
            if (w == null) {
                return false;
            }
            w.future().completeExceptionally(e);
            return true;
        }

        void onPayload(ByteBuf payload) {
            try {
                ResponseHeader header = ResponseHeader.read(payload);
                Waiting<?> w = inFlight.remove(header.correlationId());
                if (w == null) {
                    return; // timed out meanwhile
                }
                if (header.errorCode() != Errors.NONE) {
                    w.future()
                            .completeExceptionally(new IllegalStateException("broker " + destination
                                    + " refused the request: " + Errors.name(header.errorCode())));
                    return;
                }
                complete(w, payload);
            } catch (RuntimeException e) {
                channel.channel().close(); // undecodable: the waiting requests fail with the close
            } finally {
                payload.release();
            }
        }

        private <T> void complete(Waiting<T> w, ByteBuf body) {
            T value;
            try {
                value = w.reader().apply(body);
            } catch (RuntimeException e) {
                w.future().completeExceptionally(e);
                return;
            }
            w.future().complete(value);
        }

        void onClosed() {
            connections.remove(destination, this);
            for (Integer id : inFlight.keySet()) {
                fail(id, new IOException("connection to broker " + destination + " closed"));
            }
        }
    }
}
