package io.stellflow.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.FrameReadAllocator;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connections to brokers: at most one pipelined {@link BrokerConnection} per broker address,
 * opened on first use, negotiated with ApiVersions (the ranges are kept; requests go at v0 except
 * through {@link #sendNegotiated}, which picks the highest version both sides speak), and reopened on the next request after it closes.
 *
 * <p>Thread-safety: all methods are thread-safe. Futures complete on the I/O thread (one thread
 * per client); callbacks attached to them must not block.
 */
public final class NetworkClient implements AutoCloseable {
    private static final String SOFTWARE_NAME = "stellflow-java-client";
    private static final String SOFTWARE_VERSION = "0.1.0";

    private final ClientConfig config;
    private final ClientMetrics metrics;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final ConcurrentHashMap<HostPort, CompletableFuture<BrokerConnection>> connections =
            new ConcurrentHashMap<>();
    private final AtomicInteger nextCorrelationId = new AtomicInteger();
    private volatile boolean closed;

    public NetworkClient(ClientConfig config) {
        this(config, ClientMetrics.none("admin"));
    }

    /** @param metrics where requests and metadata refreshes are counted ({@link ClientMetrics}) */
    public NetworkClient(ClientConfig config, ClientMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
        ThreadFactory tf = r -> {
            Thread t = new Thread(r, "stellflow-io-" + config.clientId());
            t.setDaemon(true);
            return t;
        };
        this.group = new MultiThreadIoEventLoopGroup(1, tf, NioIoHandler.newFactory());
        this.bootstrap = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, config.connectTimeoutMs());
    }

    public ClientConfig config() {
        return config;
    }

    /** The client's instruments. */
    ClientMetrics metrics() {
        return metrics;
    }

    /**
     * Sends one v0 request to {@code address}, connecting first if needed. The future fails with a
     * {@link StellflowException}: the header's error code for a header-only error response, or
     * {@link StellflowException#NETWORK_ERROR} for connect failures, closed connections and
     * {@code request.timeout.ms} expiry.
     */
    public <T> CompletableFuture<T> send(HostPort address, short apiKey, BodyWriter body, BodyReader<T> reader) {
        return connection(address).thenCompose(c -> c.send(nextCorrelationId(), apiKey, body, reader));
    }

    /**
     * Sends one request at the highest version both sides speak: {@code highestWanted} capped at what
     * the broker advertised in ApiVersions on this connection (v0 when it advertised nothing higher).
     * {@code readers} picks the body decoder for the version actually sent. Failures as {@link #send}.
     */
    public <T> CompletableFuture<T> sendNegotiated(
            HostPort address,
            short apiKey,
            short highestWanted,
            BodyWriter body,
            java.util.function.IntFunction<BodyReader<T>> readers) {
        return connection(address).thenCompose(c -> {
            short version = c.negotiatedVersion(apiKey, highestWanted);
            return c.send(nextCorrelationId(), apiKey, version, body, readers.apply(version));
        });
    }

    /**
     * As {@link #sendNegotiated}, for requests whose body depends on the version: {@code bodies}
     * writes the body of the version actually sent.
     */
    public <T> CompletableFuture<T> sendVersioned(
            HostPort address,
            short apiKey,
            short highestWanted,
            java.util.function.IntFunction<BodyWriter> bodies,
            java.util.function.IntFunction<BodyReader<T>> readers) {
        return connection(address).thenCompose(c -> {
            short version = c.negotiatedVersion(apiKey, highestWanted);
            return c.send(nextCorrelationId(), apiKey, version, bodies.apply(version), readers.apply(version));
        });
    }

    /** The API ranges the broker at {@code address} advertised, or an empty list if not connected. */
    public List<ApiVersionsResponse.ApiVersionRange> apiVersions(HostPort address) {
        CompletableFuture<BrokerConnection> f = connections.get(address);
        if (f == null || !f.isDone() || f.isCompletedExceptionally()) {
            return List.of();
        }
        return f.join().apiVersions();
    }

    private int nextCorrelationId() {
        return nextCorrelationId.getAndIncrement() & Integer.MAX_VALUE;
    }

    private CompletableFuture<BrokerConnection> connection(HostPort address) {
        if (closed) {
            return CompletableFuture.failedFuture(
                    new StellflowException(StellflowException.NETWORK_ERROR, "client is closed"));
        }
        while (true) {
            CompletableFuture<BrokerConnection> existing = connections.get(address);
            if (existing != null) {
                if (!existing.isDone()) {
                    return existing;
                }
                if (!existing.isCompletedExceptionally() && existing.join().isActive()) {
                    return existing;
                }
                connections.remove(address, existing);
                continue;
            }
            CompletableFuture<BrokerConnection> created = new CompletableFuture<>();
            if (connections.putIfAbsent(address, created) == null) {
                open(address, created);
                return created;
            }
        }
    }

    private void open(HostPort address, CompletableFuture<BrokerConnection> result) {
        BrokerConnection conn = new BrokerConnection(address, config.clientId(), config.requestTimeoutMs(), metrics);
        ChannelFuture cf = bootstrap
                .clone()
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        // Reads of a response spanning many reads go straight into its buffer (no copy).
                        ch.pipeline()
                                .addLast("frames", FrameReadAllocator.readInto(ch, FrameDecoder.forResponses()))
                                .addLast("responses", conn);
                    }
                })
                .connect(address.host(), address.port());
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                connections.remove(address, result);
                result.completeExceptionally(new ConnectFailedException(
                        "cannot connect to " + address + connectFailure(f.cause()), f.cause()));
                return;
            }
            Channel ch = cf.channel();
            conn.attach(ch);
            ch.closeFuture().addListener(x -> connections.remove(address, result));
            conn.send(
                            nextCorrelationId(),
                            ApiKeys.API_VERSIONS,
                            new ApiVersionsRequest(SOFTWARE_NAME, SOFTWARE_VERSION, List.of())::write,
                            ApiVersionsResponse::read)
                    .whenComplete((resp, err) -> {
                        if (err != null) {
                            connections.remove(address, result);
                            conn.close();
                            result.completeExceptionally(
                                    unwrap(err) instanceof StellflowException se
                                                    && se.errorCode() == StellflowException.NETWORK_ERROR
                                            ? new ConnectFailedException(se.reason(), se.getCause())
                                            : err);
                        } else {
                            conn.apiVersions(resp.apiVersions());
                            result.complete(conn);
                        }
                    });
        });
    }

    /**
     * Whether {@code failure} (a future's failure, possibly wrapped in a {@link
     * java.util.concurrent.CompletionException} or {@link java.util.concurrent.ExecutionException})
     * says the connection could not be set up, so the request was never written: the connect was
     * refused, not made within {@code socket.connection.setup.timeout.ms}, the host did not resolve,
     * or the connection closed or timed out before the ApiVersions handshake answered. Such a request
     * can go to another broker. False for error codes a broker answered and for failures after the
     * request was written (closed connection, {@code request.timeout.ms}).
     */
    static boolean isConnectFailure(Throwable failure) {
        return unwrap(failure) instanceof ConnectFailedException;
    }

    /**
     * The failure inside {@code t}'s {@link java.util.concurrent.CompletionException} and {@link
     * java.util.concurrent.ExecutionException} wrappers (the client's one unwrap).
     */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof java.util.concurrent.CompletionException
                        || t instanceof java.util.concurrent.ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** A NETWORK_ERROR raised before the request was written ({@link #isConnectFailure}). */
    private static final class ConnectFailedException extends StellflowException {
        ConnectFailedException(String message, Throwable cause) {
            super(StellflowException.NETWORK_ERROR, message, cause);
        }
    }

    /** {@code ": <reason>"} of a failed connect (for example "Connection refused"), or "". */
    private static String connectFailure(Throwable cause) {
        if (cause == null || cause.getMessage() == null) {
            return "";
        }
        String m = cause.getMessage();
        // Netty's message is "Connection refused: /127.0.0.1:9099"; the address is named already.
        int colon = m.indexOf(": ");
        return ": " + (colon > 0 ? m.substring(0, colon) : m);
    }

    @Override
    public void close() {
        closed = true;
        for (CompletableFuture<BrokerConnection> f : connections.values()) {
            f.thenAccept(BrokerConnection::close);
        }
        connections.clear();
        if (inIoThread()) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS); // it cannot wait for itself: it ends after this task
        } else {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** Whether the caller is this client's I/O thread, where responses complete (and send callbacks run). */
    boolean inIoThread() {
        return group.next().inEventLoop();
    }
}
