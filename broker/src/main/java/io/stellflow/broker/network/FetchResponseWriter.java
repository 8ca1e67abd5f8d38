package io.stellflow.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;

/**
 * Outbound handler that writes a {@link FetchResponseFrame} as its pieces: slices of the head and
 * the file regions between them, in order, within one call on the event loop (so no other response
 * can interleave). Other messages pass through.
 *
 * <p>Buffer ownership: each piece is retained before it is written (Netty releases it once sent or
 * failed); the frame itself is released here.
 *
 * <p>Thread-safety: stateless and {@link ChannelHandler.Sharable}; runs on the channel's event loop.
 */
@ChannelHandler.Sharable
public final class FetchResponseWriter extends ChannelOutboundHandlerAdapter {
    /** The shared instance. */
    public static final FetchResponseWriter INSTANCE = new FetchResponseWriter();

    private FetchResponseWriter() {}

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof FetchResponseFrame frame)) {
            ctx.write(msg, promise);
            return;
        }
        try {
            ByteBuf head = frame.head();
            int from = head.readerIndex();
            int regions = frame.regionCount();
            for (int i = 0; i < regions; i++) {
                int cut = frame.cut(i);
                if (cut > from) {
                    ctx.write(head.retainedSlice(from, cut - from), ctx.voidPromise());
                    from = cut;
                }
                boolean last = i == regions - 1 && from == head.writerIndex();
                ctx.write(frame.region(i).retain(), last ? promise : ctx.voidPromise());
            }
            if (regions == 0 || from < head.writerIndex()) {
                ctx.write(head.retainedSlice(from, head.writerIndex() - from), promise);
            }
        } finally {
            frame.release();
        }
    }
}
