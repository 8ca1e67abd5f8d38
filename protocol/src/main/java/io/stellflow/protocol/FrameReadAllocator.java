package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * The receive-buffer allocator of one connection whose frame decoder assembles frames with a {@link
 * FrameAssembly}: while the decoder is in the middle of a frame that spans reads, the next read
 * buffer IS the unwritten tail of that frame's buffer ({@link FrameAssembly#readTarget}), so the
 * kernel writes the bytes straight into it and the decoder claims them without a user-space copy.
 * Otherwise (between frames, frames too large to be sized up front) the wrapped allocator decides.
 * Used on both ends of the data plane: the broker's request connections (1 MiB produce frames) and
 * the clients' and followers' connections to a broker ({@link FrameDecoder#forResponses}, 4 MiB fetch
 * responses).
 *
 * <p>Why this is safe on every transport (Netty 4.2): NIO and epoll allocate the next read buffer in
 * their read loop after {@code fireChannelRead} of the previous one has returned, and io_uring
 * (recv without a provided-buffer ring, the default: {@code IO_URING_BUFFER_GROUP_ID} unset) submits
 * the next recv from {@code scheduleNextRead} after the same call, so the decoder has always
 * consumed the previous read when the target is cut. A target is at most the frame's missing bytes,
 * so the next frame's length prefix always comes through the wrapped allocator. An io_uring channel
 * configured with a buffer ring never calls {@link Handle#allocate}: reads are then copied as before.
 *
 * <p>Buffer ownership: a target is a retained slice of the frame buffer, owned by the transport
 * like any read buffer and released after the decoder consumed it (or by the transport when the
 * read fails or is cancelled); the frame buffer itself stays with the decoder until it is complete.
 *
 * <p>Thread-safety: one instance per channel ({@link #newHandle} is called once, by the channel),
 * used on its event loop only.
 */
public final class FrameReadAllocator implements RecvByteBufAllocator {
    /**
     * A frame decoder that can name the buffer the next read should go into. Called by the channel's
     * read handle ({@link Handle#allocate}) on the channel's event loop only, the thread the decoder
     * runs on.
     */
    public interface ReadTargets {
        /**
         * The buffer the channel's next read should go into while a frame spanning reads is in
         * progress ({@link FrameAssembly#readTarget}), else null.
         *
         * @return a retained slice of the frame buffer the caller owns, or null
         */
        ByteBuf readTarget();
    }

    private final RecvByteBufAllocator delegate;
    private final ReadTargets decoder;

    /**
     * @param delegate the channel's configured allocator, used between frames
     * @param decoder the channel's frame decoder, whose frame in progress the reads target
     */
    public FrameReadAllocator(RecvByteBufAllocator delegate, ReadTargets decoder) {
        this.delegate = delegate;
        this.decoder = decoder;
    }

    /**
     * Makes {@code decoder} the target of {@code channel}'s reads: wraps the channel's configured
     * receive-buffer allocator in a {@link FrameReadAllocator} on it. Call from {@code initChannel},
     * before the first read, and add {@code decoder} to the pipeline.
     *
     * @return {@code decoder}
     */
    public static <D extends ReadTargets> D readInto(Channel channel, D decoder) {
        channel.config()
                .setRecvByteBufAllocator(new FrameReadAllocator(channel.config().getRecvByteBufAllocator(), decoder));
        return decoder;
    }

    @Override
    public Handle newHandle() {
        Handle handle = delegate.newHandle();
        if (!(handle instanceof ExtendedHandle extended)) {
            throw new IllegalStateException("the native transports need an ExtendedHandle, "
                    + delegate.getClass().getName() + " gave "
                    + handle.getClass().getName());
        }
        return new InPlaceHandle(extended, decoder);
    }

    private static final class InPlaceHandle extends DelegatingHandle implements ExtendedHandle {
        private final ReadTargets decoder;

        InPlaceHandle(ExtendedHandle delegate, ReadTargets decoder) {
            super(delegate);
            this.decoder = decoder;
        }

        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuf target = decoder.readTarget();
            return target != null ? target : delegate().allocate(alloc);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
        }
    }
}
