package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

/**
 * A transport's read loop over one {@link FrameDecoder} (requests or responses), for the tests of
 * {@link FrameReadAllocator}: allocate from the channel's handle, let the "kernel" write up to the
 * buffer's writable bytes, fire it. Subclasses add whole frames (length prefix included) to {@link
 * #frames}; {@link #assertPayloads} checks they come out whole and in order. Releases everything
 * after each test.
 */
abstract class FrameReadLoop {
    final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    final FrameDecoder decoder;
    final EmbeddedChannel ch;
    final RecvByteBufAllocator.Handle handle;
    final List<ByteBuf> frames = new ArrayList<>();

    FrameReadLoop(FrameDecoder decoder) {
        this.decoder = decoder;
        this.ch = new EmbeddedChannel(decoder);
        this.handle = new FrameReadAllocator(new AdaptiveRecvByteBufAllocator(), decoder).newHandle();
    }

    @AfterEach
    void release() {
        frames.forEach(ByteBuf::release);
        ch.finishAndReleaseAll();
    }

    /** The frames' bytes back to back. */
    ByteBuf stream() {
        ByteBuf all = Unpooled.buffer();
        frames.forEach(f -> all.writeBytes(f, f.readerIndex(), f.readableBytes()));
        return all;
    }

    /**
     * One read: at most {@code maxBytes} of {@code stream} go into the buffer the handle allocates.
     *
     * @return whether this read copied payload bytes
     */
    boolean read(ByteBuf stream, int maxBytes) {
        long copiedBefore = decoder.copiedPayloadBytes();
        ByteBuf buf = handle.allocate(alloc);
        int n = Math.min(Math.min(maxBytes, buf.writableBytes()), stream.readableBytes());
        buf.writeBytes(stream, n);
        ch.writeInbound(buf);
        return decoder.copiedPayloadBytes() != copiedBefore;
    }

    /** Every frame came out as one payload with the sent bytes, in order, and nothing else. */
    void assertPayloads() {
        for (int i = 0; i < frames.size(); i++) {
            ByteBuf payload = ch.readInbound();
            ByteBuf expected = frames.get(i);
            assertThat(payload).as("payload %d", i).isNotNull();
            // One bulk read: the PARANOID leak detector records a stack trace per buffer access.
            assertThat(ByteBufUtil.getBytes(payload))
                    .as("payload %d has the sent bytes", i)
                    .isEqualTo(ByteBufUtil.getBytes(expected, 4, expected.readableBytes() - 4));
            payload.release();
        }
        assertThat((Object) ch.readInbound()).isNull();
    }
}
