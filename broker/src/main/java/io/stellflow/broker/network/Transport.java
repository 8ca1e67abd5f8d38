package io.stellflow.broker.network;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.util.concurrent.ThreadFactory;

/**
 * A resolved Netty transport: the I/O handler factory for event loops and the matching server
 * channel class.
 *
 * <p>Thread-safety: immutable.
 *
 * @param type the concrete transport, never {@link TransportType#AUTO}
 * @param ioHandlerFactory creates the per-event-loop I/O handler
 * @param serverChannelClass the server socket channel class for this transport
 */
public record Transport(
        TransportType type, IoHandlerFactory ioHandlerFactory, Class<? extends ServerChannel> serverChannelClass) {

    /**
     * Resolves the configured transport. {@code AUTO} picks epoll, then io_uring, then NIO, whichever
     * is first available on this machine. Epoll comes first because it measured ahead or level here
     * in every 1 GiB case side by side, and ahead with three brokers (docs/performance.md, "Transport
     * choice"). Likely cause: Netty's io_uring transport sends a {@code FileRegion} with {@code
     * IORING_OP_SPLICE}, which the kernel hands to its io-wq worker threads, while epoll uses {@code
     * sendfile} on the event loop; consumer and follower fetches are all {@code FileRegion}s.
     *
     * @throws IllegalStateException when an explicitly requested native transport is unavailable; the
     *     message carries Netty's reason
     */
    public static Transport select(TransportType requested) {
        return switch (requested) {
            case AUTO -> {
                if (Epoll.isAvailable()) {
                    yield epoll();
                }
                if (IoUring.isAvailable()) {
                    yield ioUring();
                }
                yield nio();
            }
            case IO_URING -> {
                if (!IoUring.isAvailable()) {
                    throw new IllegalStateException(
                            "transport=io_uring is not available: " + IoUring.unavailabilityCause());
                }
                yield ioUring();
            }
            case EPOLL -> {
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("transport=epoll is not available: " + Epoll.unavailabilityCause());
                }
                yield epoll();
            }
            case NIO -> nio();
        };
    }

    /** Whether {@code type} can run on this machine ({@code AUTO} and {@code NIO} always can). */
    public static boolean isAvailable(TransportType type) {
        return switch (type) {
            case AUTO, NIO -> true;
            case IO_URING -> IoUring.isAvailable();
            case EPOLL -> Epoll.isAvailable();
        };
    }

    /** A new event loop group of {@code threads} threads for this transport. */
    public EventLoopGroup newEventLoopGroup(int threads, ThreadFactory threadFactory) {
        return new MultiThreadIoEventLoopGroup(threads, threadFactory, ioHandlerFactory);
    }

    /** The client socket channel class of this transport (outgoing connections: replica fetchers). */
    public Class<? extends SocketChannel> socketChannelClass() {
        return switch (type) {
            case IO_URING -> IoUringSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case NIO -> NioSocketChannel.class;
            case AUTO -> throw new IllegalStateException("unresolved transport");
        };
    }

    private static Transport ioUring() {
        return new Transport(TransportType.IO_URING, IoUringIoHandler.newFactory(), IoUringServerSocketChannel.class);
    }

    private static Transport epoll() {
        return new Transport(TransportType.EPOLL, EpollIoHandler.newFactory(), EpollServerSocketChannel.class);
    }

    private static Transport nio() {
        return new Transport(TransportType.NIO, NioIoHandler.newFactory(), NioServerSocketChannel.class);
    }
}
