package io.stellflow.protocol.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * The buffers of one fuzz input, each of a kind chosen by the input (the code under test sees heap,
 * direct, pooled and composite buffers in production), released by {@link #close}, which fails
 * when the code under test kept a reference (refCnt not 1: a retain without release, or a release
 * of a buffer it does not own). Together with Netty's PARANOID detector ({@code
 * support.LeakCheck}) this is the leak oracle of every target.
 *
 * <p>Not thread-safe: one per input.
 */
public final class FuzzBuffers implements AutoCloseable {
    /** The buffer kinds, selected by the two low bits of a selector byte. */
    public enum Kind {
        HEAP,
        DIRECT,
        POOLED_DIRECT,
        COMPOSITE
    }

    private final List<ByteBuf> owned = new ArrayList<>();

    /** The kind selected by {@code selector}'s two low bits. */
    public static Kind kind(byte selector) {
        return Kind.values()[selector & 3];
    }

    /**
     * A buffer of {@code kind} holding {@code data[from, to)}, readerIndex 0. A composite is split
     * into two components at {@code splitPermille} thousandths of the length.
     */
    public ByteBuf of(Kind kind, byte[] data, int from, int to, int splitPermille) {
        int length = to - from;
        ByteBuf b = switch (kind) {
            case HEAP -> Unpooled.buffer(length).writeBytes(data, from, length);
            case DIRECT -> Unpooled.directBuffer(Math.max(length, 1)).writeBytes(data, from, length);
            case POOLED_DIRECT ->
                PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(length, 1)).writeBytes(data, from, length);
            case COMPOSITE -> {
                int split = (int) ((long) length * Math.floorMod(splitPermille, 1001) / 1000);
                CompositeByteBuf c = Unpooled.compositeBuffer();
                c.addComponent(true, Unpooled.directBuffer(Math.max(split, 1)).writeBytes(data, from, split));
                c.addComponent(true, Unpooled.buffer(length - split).writeBytes(data, from + split, length - split));
                yield c;
            }
        };
        owned.add(b);
        return b;
    }

    /**
     * The common input layout: byte 0 selects the kind ({@link #kind}) and the composite split,
     * the rest is the content; an empty input gives an empty heap buffer.
     */
    public ByteBuf fromInput(byte[] input) {
        if (input.length == 0) {
            return of(Kind.HEAP, input, 0, 0, 0);
        }
        return of(kind(input[0]), input, 1, input.length, (input[0] & 0xFF) * 4);
    }

    /** A fresh empty heap buffer released with the others (for re-encoding). */
    public ByteBuf scratch() {
        ByteBuf b = Unpooled.buffer();
        owned.add(b);
        return b;
    }

    /** Releases every buffer; fails if the code under test changed a reference count. */
    @Override
    public void close() {
        AssertionError error = null;
        for (ByteBuf b : owned) {
            int refCnt = b.refCnt();
            if (refCnt != 1 && error == null) {
                error = new AssertionError("input buffer refCnt " + refCnt
                        + " after the target (a retain without release, or a release it did not own)");
            }
            if (refCnt > 0) {
                b.release(refCnt);
            }
        }
        owned.clear();
        if (error != null) {
            throw error;
        }
    }
}
