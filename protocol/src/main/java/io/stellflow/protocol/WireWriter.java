package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Writers for the v0 primitive types (spec §2), appending at a {@link ByteBuf}'s writerIndex.
 *
 * <p>Passing a value the wire cannot carry (null for a non-null field, a string longer than 32767
 * UTF-8 bytes) is a bug in the caller and throws {@link IllegalArgumentException}. Source buffers
 * are copied with absolute reads: their indexes are not touched, and their reference counts neither,
 * except for one case: a {@link ByteBuf} value of at least {@link #GATHER_MIN_BYTES} written into a
 * buffer made by {@link #gatheringBuffer} is not copied but appended as a retained slice (see there).
 * Thread-safety: stateless.
 */
public final class WireWriter {
    /** Largest string length in UTF-8 bytes (int16 prefix). */
    public static final int MAX_STRING_BYTES = Short.MAX_VALUE;

    /**
     * Bytes values of at least this size (64 KiB) go into a {@link #gatheringBuffer} without a copy.
     * Below it a copy costs less than a buffer component and one more entry in the gathering write.
     */
    public static final int GATHER_MIN_BYTES = 64 * 1024;

    /** Writable bytes of each scratch component of a gathering buffer (the fields around values). */
    private static final int SCRATCH_BYTES = 256;

    private WireWriter() {}

    public static void writeBool(ByteBuf out, boolean value) {
        out.writeByte(value ? 1 : 0);
    }

    /** A non-null string. */
    public static void writeString(ByteBuf out, String value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        writeNullableString(out, value);
    }

    /** A nullable string: null is written as length -1. */
    public static void writeNullableString(ByteBuf out, String value) {
        if (value == null) {
            out.writeShort(-1);
            return;
        }
        int len = ByteBufUtil.utf8Bytes(value);
        if (len > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("string of " + len + " UTF-8 bytes exceeds " + MAX_STRING_BYTES);
        }
        out.writeShort(len);
        ByteBufUtil.reserveAndWriteUtf8(out, value, len);
    }

    /** Non-null bytes: the readable bytes of {@code value}, which is not consumed. */
    public static void writeBytes(ByteBuf out, ByteBuf value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        writeNullableBytes(out, value);
    }

    /**
     * Nullable bytes: null is written as length -1; {@code value} is not consumed. Into a {@link
     * #gatheringBuffer}, a value of at least {@link #GATHER_MIN_BYTES} is appended as a retained slice
     * instead of being copied: the caller must then not change those bytes until {@code out} is
     * released (record batches are immutable once closed, which is what this is for).
     */
    public static void writeNullableBytes(ByteBuf out, ByteBuf value) {
        if (value == null) {
            out.writeInt(-1);
            return;
        }
        int len = value.readableBytes();
        out.writeInt(len);
        if (len >= GATHER_MIN_BYTES && out instanceof CompositeByteBuf gather) {
            appendWithoutCopy(gather, value.retainedSlice(value.readerIndex(), len));
        } else {
            out.writeBytes(value, value.readerIndex(), len);
        }
    }

    /**
     * An empty buffer for one message whose large bytes values (Produce records, 256 KiB to 4 MiB)
     * are not copied: {@link #writeNullableBytes(ByteBuf, ByteBuf)} appends them as components, and
     * the other fields go into small pooled direct scratch components between them. Written to a
     * socket, it goes out in one gathering write ({@code writev}) of its components, byte for byte
     * what a contiguous buffer would have sent. Releasing it releases every component. Not for
     * buffers read back with absolute offsets across components at high rates (each access looks the
     * component up).
     *
     * @param alloc the allocator of the scratch components (the channel's)
     */
    public static CompositeByteBuf gatheringBuffer(ByteBufAllocator alloc) {
        CompositeByteBuf gather = alloc.compositeDirectBuffer(Integer.MAX_VALUE); // never consolidated (copied)
        addScratch(gather);
        return gather;
    }

    private static void appendWithoutCopy(CompositeByteBuf gather, ByteBuf slice) {
        // The unwritten tail of the last component would otherwise lie between the bytes written so
        // far and the new component: cut the capacity back to the writerIndex first.
        gather.capacity(gather.writerIndex());
        gather.addComponent(true, slice);
        addScratch(gather);
    }

    /** Room for the next fields: a component of SCRATCH_BYTES counted in the capacity, not written. */
    private static void addScratch(CompositeByteBuf gather) {
        ByteBuf scratch = gather.alloc().directBuffer(SCRATCH_BYTES);
        gather.addComponent(false, scratch.writerIndex(SCRATCH_BYTES));
    }

    /** Nullable bytes from an array: null is written as length -1. */
    public static void writeNullableBytes(ByteBuf out, byte[] value) {
        if (value == null) {
            out.writeInt(-1);
            return;
        }
        out.writeInt(value.length);
        out.writeBytes(value);
    }

    /** An array: count, then each entry written by {@code entry}. */
    public static <T> void writeArray(ByteBuf out, List<T> values, BiConsumer<ByteBuf, T> entry) {
        out.writeInt(values.size());
        for (int i = 0; i < values.size(); i++) {
            entry.accept(out, values.get(i));
        }
    }

    public static void writeInt32Array(ByteBuf out, List<Integer> values) {
        out.writeInt(values.size());
        for (int i = 0; i < values.size(); i++) {
            out.writeInt(values.get(i));
        }
    }

    public static void writeInt64Array(ByteBuf out, List<Long> values) {
        out.writeInt(values.size());
        for (int i = 0; i < values.size(); i++) {
            out.writeLong(values.get(i));
        }
    }

    /** {@code array<string>}: elements must be non-null. */
    public static void writeStringArray(ByteBuf out, List<String> values, String what) {
        out.writeInt(values.size());
        for (int i = 0; i < values.size(); i++) {
            writeString(out, values.get(i), what);
        }
    }
}
