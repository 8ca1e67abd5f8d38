package io.stellflow.broker.replication;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.stellflow.protocol.FrameAssembly;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.FrameReadAllocator;
import io.stellflow.protocol.Frames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty side of a fetcher's TCP connection to its leader: connects, splits the leader's byte
 * stream into response payloads ({@code docs/spec/wire-protocol.md} §1.1; large Fetch responses
 * assembled in one pooled buffer by {@link FrameAssembly}) and hands every payload and the
 * connection's end to a {@link Sink}. It does no protocol work: the sink runs it on the fetcher's
 * own thread.
 *
 * <p>Buffer ownership: the sink owns each payload and must release it. A frame length outside
 * [0, {@value Frames#MAX_FRAME_LENGTH}] cannot be resynchronised: the connection is closed.
 *
 * <p>Thread-safety: the handlers run on the channel's event loop; {@link #connect} from any thread.
 */
final class LeaderConnection {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderConnection.class);

    /** What the fetcher is told; called on the channel's event loop (the fetcher hands off to its thread). */
    interface Sink {
        /** A whole response payload (header + body) read from {@code channel}; the sink must release it. */
        void onPayload(Channel channel, ByteBuf payload);

        /** {@code channel} closed (by either side, or after a decoding failure). */
        void onClosed(Channel channel);
    }

    private LeaderConnection() {}

    /**
     * Starts connecting to {@code host:port}; the future completes with the channel (or the failure).
     *
     * @param group the event loops of the replica fetchers
     * @param channelClass the socket channel class of the broker's transport
     * @param connectTimeoutMs TCP connect timeout
     */
    static ChannelFuture connect(
            EventLoopGroup group,
            Class<? extends SocketChannel> channelClass,
            String host,
            int port,
            int connectTimeoutMs,
            Sink sink) {
        return new Bootstrap()
                .group(group)
                .channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // Fetch responses spanning many reads go straight into their buffer (no copy).
                        ch.pipeline()
                                .addLast("frames", FrameReadAllocator.readInto(ch, FrameDecoder.forResponses()))
                                .addLast("sink", new ToSink(sink));
                    }
                })
                .connect(host, port);
    }

    private static final class ToSink extends ChannelInboundHandlerAdapter {
        private final Sink sink;

        ToSink(Sink sink) {
            this.sink = sink;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            sink.onPayload(ctx.channel(), (ByteBuf) msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            sink.onClosed(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("Replica fetch connection to {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }
}
