package io.stellflow.broker;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.uring.IoUring;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.Listener;
import io.stellflow.broker.fetch.OutboundSizeEstimator;
import io.stellflow.broker.network.ConnectionHandler;
import io.stellflow.broker.network.FetchResponseWriter;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestDispatcher;
import io.stellflow.broker.network.SerialExecutor;
import io.stellflow.broker.network.Transport;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.FrameReadAllocator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's client listener: the Netty server socket on {@code listeners} over the selected
 * {@link Transport}, one acceptor event loop and {@code num.network.threads} network event loops,
 * the pipeline of every accepted connection (optional flush consolidation, the request {@link
 * FrameDecoder} reading large frames in place, {@link FetchResponseWriter}, {@link
 * ConnectionHandler}) and the group of open connections, which the gauges and tests read.
 *
 * <p>Socket options: backlog 1024, {@code SO_REUSEADDR}; per connection {@code TCP_NODELAY}, {@code
 * SO_KEEPALIVE}, the write-buffer water marks of {@code socket.write.buffer.*.water.mark.bytes}
 * (file regions count with their bytes, {@link OutboundSizeEstimator}) and, when set above 0,
 * {@code socket.send.buffer.bytes} and {@code socket.receive.buffer.bytes}.
 *
 * <p>Lifecycle: {@link #bind} once, then {@link #stopAccepting}, {@link #closeConnections} and
 * {@link #close} in that order (the server closes the replica fetchers between the first two, and
 * shuts the event loops down only after the request pool and append agents have stopped). Each step
 * is a no-op when it has nothing to close.
 *
 * <p>Thread-safety: {@link #bind} and the close steps are called by the server's starting and closing
 * thread; the read-only views ({@link #connections}, {@link #connectionState}, {@link
 * #framePayloadBytes}) may be called from any thread (the last two run on each connection's event
 * loop and wait for it).
 *
 * <p>Errors: {@link #bind} throws the bind's {@link IOException} (a {@link java.net.BindException}
 * when the port is taken).
 */
final class BrokerListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerListener.class);

    /** How long {@link #closeConnections} waits for the closed connections' channelInactive. */
    static final long INACTIVE_WAIT_MS = 5_000;

    private final BrokerConfig config;
    private final Transport transport;
    private final EventLoopGroup acceptorGroup;
    private final EventLoopGroup workerGroup;
    private final ChannelGroup channels =
            new DefaultChannelGroup("stellflow-connections", GlobalEventExecutor.INSTANCE);
    /**
     * Accepted connections whose channelInactive has not passed the end of their pipeline yet. A
     * channel leaves {@link #channels} when its close future completes, which Netty does before it
     * fires channelInactive ({@link #closeConnections} waits for this set instead).
     */
    private final Set<Channel> notInactive = ConcurrentHashMap.newKeySet();

    private final ChannelInboundHandlerAdapter inactiveTracker = new InactiveTracker();
    private volatile Channel serverChannel;

    /** Creates the event loops (threads {@code sf-acceptor} and {@code sf-network-*}); binds nothing yet. */
    BrokerListener(BrokerConfig config, Transport transport) {
        this.config = config;
        this.transport = transport;
        this.acceptorGroup = transport.newEventLoopGroup(1, new DefaultThreadFactory("sf-acceptor", false));
        this.workerGroup =
                transport.newEventLoopGroup(config.numNetworkThreads(), new DefaultThreadFactory("sf-network", false));
    }

    /**
     * Binds {@code listeners} and starts accepting connections whose requests go to {@code dispatcher}
     * on {@code requestPool}.
     *
     * @param eventLoopDispatch whether requests a handler can take without blocking run on the event
     *     loop ({@link ConnectionHandler})
     * @return the bound port (the ephemeral one when the listener asked for port 0)
     * @throws IOException when the address cannot be bound
     */
    int bind(RequestDispatcher dispatcher, ExecutorService requestPool, boolean eventLoopDispatch) throws IOException {
        Listener listener = config.listener();
        InetSocketAddress bindAddress = listener.host().isEmpty()
                ? new InetSocketAddress(listener.port())
                : new InetSocketAddress(listener.host(), listener.port());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptorGroup, workerGroup)
                .channel(transport.serverChannelClass())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                // File regions count with their bytes toward the water marks (Netty counts them as 0).
                .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, OutboundSizeEstimator.INSTANCE)
                .childOption(
                        ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(
                                config.writeBufferLowWaterMarkBytes(), config.writeBufferHighWaterMarkBytes()))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        if (config.flushConsolidationFlushes() > 0) {
                            ch.pipeline()
                                    .addLast(
                                            "flushes",
                                            new FlushConsolidationHandler(config.flushConsolidationFlushes(), true));
                        }
                        // Reads of a frame spanning many reads go straight into its buffer (no copy).
                        FrameDecoder frames = FrameReadAllocator.readInto(ch, FrameDecoder.forRequests());
                        ch.pipeline()
                                .addLast("fetch-writer", FetchResponseWriter.INSTANCE)
                                .addLast("frames", frames)
                                .addLast("requests", new ConnectionHandler(dispatcher, requestPool, eventLoopDispatch))
                                .addLast("inactive", inactiveTracker);
                        // Last: a pipeline that failed to build (the channel is closed) has no tracker.
                        notInactive.add(ch);
                    }
                });
        if (config.socketSendBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_SNDBUF, config.socketSendBufferBytes());
        }
        if (config.socketReceiveBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_RCVBUF, config.socketReceiveBufferBytes());
        }
        ChannelFuture bound = bootstrap.bind(bindAddress).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            Throwable cause = bound.cause();
            if (cause instanceof IOException e) {
                throw e;
            }
            if (cause instanceof RuntimeException e) {
                throw e;
            }
            if (cause instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException("binding " + bindAddress + " failed", cause);
        }
        serverChannel = bound.channel();
        return port();
    }

    /** The bound port; only after {@link #bind} returned. */
    int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The transport the event loops and sockets use. */
    Transport transport() {
        return transport;
    }

    /** How Fetch sends log bytes with this configuration and transport (logged at start). */
    String fetchPath() {
        if (!config.fetchZeroCopy()) {
            return "copied into the response buffer (fetch.zero.copy=false)";
        }
        return switch (transport.type()) {
            case NIO -> "zero-copy file regions (FileChannel.transferTo, sendfile)";
            case EPOLL -> "zero-copy file regions (sendfile)";
            case IO_URING ->
                IoUring.isSpliceSupported()
                        ? "zero-copy file regions (io_uring splice)"
                        : "file regions copied by Netty through a direct chunk buffer (no io_uring splice on this kernel)";
            case AUTO -> throw new IllegalStateException("unresolved transport");
        };
    }

    /** The open client connections (an accepted channel joins at once, a closed one leaves). */
    ChannelGroup connections() {
        return channels;
    }

    /**
     * Payload bytes the open connections' frame decoders copied from read buffers ({@code [0]}) and
     * received straight into frame buffers ({@code [1]}), summed; each read on its event loop. Tests.
     */
    long[] framePayloadBytes() {
        long[] sum = new long[2];
        for (Channel ch : channels) {
            FrameDecoder d = ch.pipeline().get(FrameDecoder.class);
            if (d != null) {
                long[] one = ch.eventLoop()
                        .submit(() -> new long[] {d.copiedPayloadBytes(), d.inPlacePayloadBytes()})
                        .syncUninterruptibly()
                        .getNow();
                sum[0] += one[0];
                sum[1] += one[1];
            }
        }
        return sum;
    }

    /**
     * One connection's back pressure as its event loop sees it: the {@link ReadGate} reasons holding
     * reads paused (0 = reading), whether the channel reads, its requests waiting for the pool, and
     * its unsent response bytes (as counted against the write-buffer water marks). Tests.
     */
    record ConnectionState(int pauseReasons, boolean autoRead, int pendingRequests, long unsentBytes) {}

    /** The state of the connection whose client end is {@code clientAddress}, or null when there is none. Tests. */
    ConnectionState connectionState(InetSocketAddress clientAddress) {
        for (Channel ch : channels) {
            // By port: the native transports' remote addresses need not equal the client's own.
            if (ch.remoteAddress() instanceof InetSocketAddress remote && remote.getPort() == clientAddress.getPort()) {
                return ch.eventLoop()
                        .submit(() -> {
                            ConnectionHandler h = ch.pipeline().get(ConnectionHandler.class);
                            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
                            return new ConnectionState(
                                    h == null ? 0 : h.gate().reasons(),
                                    ch.config().isAutoRead(),
                                    h == null ? 0 : h.pendingRequests(),
                                    out == null ? 0 : out.totalPendingWriteBytes());
                        })
                        .syncUninterruptibly()
                        .getNow();
            }
        }
        return null;
    }

    /** Closes the server socket: no new connection is accepted. Waits for the close. */
    void stopAccepting() {
        Channel ch = serverChannel;
        if (ch != null) {
            ch.close().syncUninterruptibly();
        }
    }

    /**
     * Closes every open connection and waits until each one's channelInactive has run (at most
     * {@value #INACTIVE_WAIT_MS} ms): Netty completes a close future before it fires channelInactive,
     * and {@link ConnectionHandler#channelInactive} is where a connection's held requests (each owning
     * its frame) go to the request pool. The server shuts that pool down next, so they must be there
     * first. A connection still not inactive after the wait is logged; its requests then run on the
     * thread that finds the pool shut down ({@link SerialExecutor#resume}).
     */
    void closeConnections() {
        channels.close().awaitUninterruptibly();
        long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(INACTIVE_WAIT_MS);
        while (!notInactive.isEmpty() && System.nanoTime() < deadlineNs) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (!notInactive.isEmpty()) {
            LOG.warn(
                    "{} closed connection(s) still without channelInactive after {} ms; closing the broker anyway",
                    notInactive.size(),
                    INACTIVE_WAIT_MS);
        }
    }

    /** Connections closed by {@link #closeConnections} whose channelInactive has not run yet. Tests. */
    int notYetInactive() {
        return notInactive.size();
    }

    /** The last handler of every connection: its channelInactive has passed {@link ConnectionHandler}. */
    @ChannelHandler.Sharable
    private final class InactiveTracker extends ChannelInboundHandlerAdapter {
        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            notInactive.remove(ctx.channel());
            ctx.fireChannelInactive();
        }
    }

    /** Shuts the acceptor and network event loops down (no quiet period, up to 2 s each). */
    @Override
    public void close() {
        acceptorGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
