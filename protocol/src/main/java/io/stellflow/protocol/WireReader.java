package io.stellflow.protocol;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Strict readers for the v0 primitive types ({@code docs/spec/wire-protocol.md} §2), consuming from
 * a {@link ByteBuf}'s readerIndex.
 *
 * <p>Every violation throws {@link ProtocolException} with {@link Errors#INVALID_REQUEST}: a body
 * that ends early, a bool byte other than 0 or 1, a string or bytes length below -1, length -1 for a
 * non-null field, invalid UTF-8, a negative array count, and (via {@link #ensureFullyRead}) bytes left
 * after the last field.
 *
 * <p>Byte fields are returned as slices of the source buffer: no copy, no extra reference count;
 * they are valid only while the source buffer is. Thread-safety: stateless (the UTF-8 decoder is
 * per thread).
 */
public final class WireReader {
    private static final ThreadLocal<CharsetDecoder> UTF8 = ThreadLocal.withInitial(() -> StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT));

    private WireReader() {}

    /** Throws unless {@code n} more bytes are readable; {@code what} names the field for the message. */
    public static void require(ByteBuf in, int n, String what) {
        if (in.readableBytes() < n) {
            throw invalid(what + ": body ends early (need " + n + " bytes, have " + in.readableBytes() + ")");
        }
    }

    public static byte readInt8(ByteBuf in, String what) {
        require(in, 1, what);
        return in.readByte();
    }

    public static short readInt16(ByteBuf in, String what) {
        require(in, 2, what);
        return in.readShort();
    }

    public static int readInt32(ByteBuf in, String what) {
        require(in, 4, what);
        return in.readInt();
    }

    public static long readInt64(ByteBuf in, String what) {
        require(in, 8, what);
        return in.readLong();
    }

    /** A bool: exactly 0x00 or 0x01. */
    public static boolean readBool(ByteBuf in, String what) {
        byte b = readInt8(in, what);
        if (b == 0) {
            return false;
        }
        if (b == 1) {
            return true;
        }
        throw invalid(what + ": bool byte " + b + " is neither 0 nor 1");
    }

    /** A non-null string: length -1 is rejected. */
    public static String readString(ByteBuf in, String what) {
        String s = readNullableString(in, what);
        if (s == null) {
            throw invalid(what + ": null (length -1) for a non-null string");
        }
        return s;
    }

    /** A nullable string: length -1 is null, below -1 invalid, the bytes must be valid UTF-8. */
    public static String readNullableString(ByteBuf in, String what) {
        short len = readInt16(in, what);
        if (len == -1) {
            return null;
        }
        if (len < -1) {
            throw invalid(what + ": string length " + len + " below -1");
        }
        require(in, len, what);
        String s = decodeUtf8(in, in.readerIndex(), len, what);
        in.skipBytes(len);
        return s;
    }

    /**
     * Decodes {@code length} bytes at {@code index} as strict UTF-8 without moving any index.
     *
     * @throws ProtocolException INVALID_REQUEST for malformed UTF-8
     */
    public static String decodeUtf8(ByteBuf in, int index, int length, String what) {
        if (length == 0) {
            return "";
        }
        ByteBuffer nio =
                in.nioBufferCount() == 1 ? in.nioBuffer(index, length) : ByteBuffer.wrap(copy(in, index, length));
        CharsetDecoder decoder = UTF8.get();
        try {
            CharBuffer chars = decoder.reset().decode(nio);
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw invalid(what + ": invalid UTF-8");
        }
    }

    /** Non-null bytes as a slice of {@code in}: length -1 is rejected. */
    public static ByteBuf readBytes(ByteBuf in, String what) {
        ByteBuf b = readNullableBytes(in, what);
        if (b == null) {
            throw invalid(what + ": null (length -1) for non-null bytes");
        }
        return b;
    }

    /** Nullable bytes as a slice of {@code in} (no copy, no retain); length -1 is null. */
    public static ByteBuf readNullableBytes(ByteBuf in, String what) {
        int len = readInt32(in, what);
        if (len == -1) {
            return null;
        }
        if (len < -1) {
            throw invalid(what + ": bytes length " + len + " below -1");
        }
        require(in, len, what);
        return in.readSlice(len);
    }

    /**
     * An array count: must be >= 0 and, since every entry takes at least one byte, at most the
     * readable bytes (so a forged count cannot make us allocate a huge list).
     */
    public static int readArrayCount(ByteBuf in, String what) {
        int count = readInt32(in, what);
        if (count < 0) {
            throw invalid(what + ": negative array count " + count);
        }
        if (count > in.readableBytes()) {
            throw invalid(what + ": array count " + count + " exceeds the " + in.readableBytes() + " bytes left");
        }
        return count;
    }

    /** An array whose entries are read by {@code entry}; returns an unmodifiable list. */
    public static <T> List<T> readArray(ByteBuf in, String what, Function<ByteBuf, T> entry) {
        int count = readArrayCount(in, what);
        List<T> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            list.add(entry.apply(in));
        }
        return List.copyOf(list);
    }

    /**
     * A nullable array (our additions only, {@code docs/protocol-additions.md}; v0 arrays are never
     * null): count -1 is null, a count below -1 is invalid, otherwise as {@link #readArray}.
     */
    public static <T> List<T> readNullableArray(ByteBuf in, String what, Function<ByteBuf, T> entry) {
        require(in, 4, what);
        if (in.getInt(in.readerIndex()) == -1) {
            in.skipBytes(4);
            return null;
        }
        return readArray(in, what, entry);
    }

    /** {@code array<int32>}. */
    public static List<Integer> readInt32Array(ByteBuf in, String what) {
        return readArray(in, what, b -> readInt32(b, what));
    }

    /** {@code array<int64>}. */
    public static List<Long> readInt64Array(ByteBuf in, String what) {
        return readArray(in, what, b -> readInt64(b, what));
    }

    /** {@code array<string>} with non-null elements. */
    public static List<String> readStringArray(ByteBuf in, String what) {
        return readArray(in, what, b -> readString(b, what));
    }

    /**
     * Throws unless every byte of {@code in} has been consumed ({@code docs/spec/wire-protocol.md}
     * §2: no trailing bytes).
     */
    public static void ensureFullyRead(ByteBuf in, String what) {
        if (in.isReadable()) {
            throw invalid(what + ": " + in.readableBytes() + " trailing bytes after the last field");
        }
    }

    private static ProtocolException invalid(String msg) {
        return new ProtocolException(Errors.INVALID_REQUEST, msg);
    }

    private static byte[] copy(ByteBuf in, int index, int length) {
        byte[] bytes = new byte[length];
        in.getBytes(index, bytes);
        return bytes;
    }
}
