package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.FileRegion;
import io.netty.channel.MessageSizeEstimator;
import io.stellflow.broker.network.FetchResponseFrame;

/**
 * Sizes outbound messages for the write-buffer water marks ({@code
 * socket.write.buffer.low/high.water.mark.bytes}) by the bytes they put on the wire, file regions
 * included. Netty's default estimator counts a {@link FileRegion} as 0 bytes, so with {@code
 * fetch.zero.copy=true} only the few head bytes of each Fetch response counted: a client that sent
 * Fetches and read nothing had 200 responses of 60 KiB (12 MiB) queued while the channel counted
 * 52 KB and stayed writable, and its reads were never paused (BackPressureTest).
 *
 * <p>Thread-safety: stateless, one shared instance.
 */
public final class OutboundSizeEstimator implements MessageSizeEstimator, MessageSizeEstimator.Handle {
    /** The shared instance. */
    public static final OutboundSizeEstimator INSTANCE = new OutboundSizeEstimator();

    /** Netty's default for messages of unknown size. */
    private static final int UNKNOWN_SIZE = 8;

    private OutboundSizeEstimator() {}

    @Override
    public Handle newHandle() {
        return this;
    }

    @Override
    public int size(Object msg) {
        if (msg instanceof ByteBuf buf) {
            return buf.readableBytes();
        }
        if (msg instanceof FileRegion region) {
            return clamp(region.count() - region.transferred());
        }
        if (msg instanceof FetchResponseFrame frame) {
            return clamp(frame.head().readableBytes() + frame.regionBytes());
        }
        if (msg instanceof ByteBufHolder holder) {
            return holder.content().readableBytes();
        }
        return UNKNOWN_SIZE;
    }

    private static int clamp(long bytes) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, bytes));
    }
}
