package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Writers for the v0 primitive types ({@code docs/spec/wire-protocol.md} §2), appending at a {@link
 * ByteBuf}'s writerIndex.
 *
 * <p>Passing a value the wire cannot carry (null for a non-null field, a string longer than 32767
 * UTF-8 bytes) is a bug in the caller and throws {@link IllegalArgumentException}. Source buffers
 * are copied with absolute reads: their indexes are not touched, and their reference counts neither,
 * except for one case: a {@link ByteBuf} value of at least {@link GatheringBuffer#MIN_APPEND_BYTES}
 * written into a {@link GatheringBuffer} is not copied but appended as a retained slice (see there).
 * Thread-safety: stateless.
 */
public final class WireWriter {
    /** Largest string length in UTF-8 bytes (int16 prefix). */
    public static final int MAX_STRING_BYTES = Short.MAX_VALUE;

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
     * GatheringBuffer}, a value of at least {@link GatheringBuffer#MIN_APPEND_BYTES} is appended as a
     * retained slice instead of being copied: the caller must then not change those bytes until
     * {@code out} is released (record batches are immutable once closed, which is what this is for).
     */
    public static void writeNullableBytes(ByteBuf out, ByteBuf value) {
        if (value == null) {
            out.writeInt(-1);
            return;
        }
        int len = value.readableBytes();
        out.writeInt(len);
        if (len >= GatheringBuffer.MIN_APPEND_BYTES && out instanceof GatheringBuffer gather) {
            gather.appendRetainedSlice(value, value.readerIndex(), len);
        } else {
            out.writeBytes(value, value.readerIndex(), len);
        }
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

    /** A nullable array (our additions only): null is written as count -1, else as {@link #writeArray}. */
    public static <T> void writeNullableArray(ByteBuf out, List<T> values, BiConsumer<ByteBuf, T> entry) {
        if (values == null) {
            out.writeInt(-1);
            return;
        }
        writeArray(out, values, entry);
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
