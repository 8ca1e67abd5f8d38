package io.stellflow.protocol.support;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * Test buffers with owned lifetimes: every buffer handed out is released by {@link #close()}, which
 * also fails the test if a buffer was released twice or retained elsewhere.
 */
public final class Bufs implements AutoCloseable {
    private final List<ByteBuf> owned = new ArrayList<>();

    public ByteBuf heap() {
        return own(Unpooled.buffer());
    }

    public ByteBuf direct() {
        return own(Unpooled.directBuffer());
    }

    /** A heap buffer holding the bytes of {@code hex} (whitespace ignored). */
    public ByteBuf hex(String hex) {
        return own(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(hex.replaceAll("\\s", ""))));
    }

    /** A direct buffer holding a copy of {@code src}'s readable bytes. */
    public ByteBuf directCopy(ByteBuf src) {
        ByteBuf d = direct();
        d.writeBytes(src, src.readerIndex(), src.readableBytes());
        return d;
    }

    /** A composite of two direct components splitting {@code src}'s readable bytes at {@code split}. */
    public ByteBuf composite(ByteBuf src, int split) {
        ByteBuf a = Unpooled.directBuffer().writeBytes(src, src.readerIndex(), split);
        ByteBuf b = Unpooled.directBuffer().writeBytes(src, src.readerIndex() + split, src.readableBytes() - split);
        CompositeByteBuf c = Unpooled.compositeBuffer();
        c.addComponents(true, a, b);
        return own(c);
    }

    public ByteBuf wrap(byte[] bytes) {
        return own(Unpooled.wrappedBuffer(bytes));
    }

    private ByteBuf own(ByteBuf b) {
        owned.add(b);
        return b;
    }

    /** Lower-case hex of the readable bytes, no separators. */
    public static String hexOf(ByteBuf b) {
        return ByteBufUtil.hexDump(b);
    }

    @Override
    public void close() {
        for (ByteBuf b : owned) {
            if (b.refCnt() != 1) {
                throw new AssertionError(
                        "buffer refCnt " + b.refCnt() + " at scope end (leaked retain or double release)");
            }
            b.release();
        }
        owned.clear();
    }
}
