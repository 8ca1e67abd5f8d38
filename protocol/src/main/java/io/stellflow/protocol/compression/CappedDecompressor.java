package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The cap and code bookkeeping of every {@link Decompressor}; a codec implements {@link #start} and
 * {@link #fill}. Thread-safety: confined to one owning thread.
 */
abstract class CappedDecompressor implements Decompressor {
    /** A codec's {@link #fill} found the stream's clean end and produced nothing more. */
    static final int FILL_END = -1;

    private final CompressionType type;
    /** The one-byte probe past the cap (heap, unpooled: nothing to leak). */
    private final ByteBuf probe = Unpooled.buffer(1, 1);

    private long capBytes;
    private long producedBytes;
    private int finalCode;
    private String failureReason;
    private boolean started;
    private boolean readSinceReset;
    private boolean closed;

    CappedDecompressor(CompressionType type) {
        this.type = type;
    }

    @Override
    public final CompressionType type() {
        return type;
    }

    @Override
    public final void reset(ByteBuf compressed, long maxDecompressedBytes) {
        if (closed) {
            throw new IllegalStateException(type.configName() + " decompressor is closed");
        }
        if (maxDecompressedBytes < 0) {
            throw new IllegalArgumentException("maxDecompressedBytes < 0: " + maxDecompressedBytes);
        }
        capBytes = maxDecompressedBytes;
        producedBytes = 0;
        finalCode = 0;
        failureReason = null;
        started = true;
        readSinceReset = false;
        try {
            start(compressed.slice());
        } catch (MalformedInputException e) {
            fail(e.getMessage());
        }
    }

    @Override
    public final int read(ByteBuf chunk) {
        if (closed || !started) {
            throw new IllegalStateException(
                    type.configName() + " decompressor " + (closed ? "is closed" : "was never reset"));
        }
        readSinceReset = true;
        if (finalCode != 0) {
            return finalCode;
        }
        int room = chunk.writableBytes();
        if (room == 0 || chunk.nioBufferCount() != 1) {
            throw new IllegalArgumentException("chunk must be one region with writable bytes: " + chunk);
        }
        try {
            long left = capBytes - producedBytes;
            if (left == 0) {
                probe.clear();
                int n = fill(probe, 1);
                finalCode = n > 0 ? OVER_CAP : END_OF_STREAM;
                return finalCode;
            }
            int n = fill(chunk, (int) Math.min(room, left));
            if (n == FILL_END) {
                finalCode = END_OF_STREAM;
                return finalCode;
            }
            producedBytes += n;
            return n;
        } catch (MalformedInputException e) {
            return fail(e.getMessage());
        }
    }

    @Override
    public final boolean readInPlace() {
        if (closed || !started || readSinceReset) {
            throw new IllegalStateException(type.configName() + " decompressor "
                    + (closed ? "is closed" : started ? "was already read from" : "was never reset"));
        }
        return finalCode == 0 && startInPlace();
    }

    @Override
    public final long decompressedBytes() {
        return producedBytes;
    }

    @Override
    public final String failureReason() {
        return failureReason;
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            release();
        }
    }

    private int fail(String reason) {
        failureReason = reason == null ? type.configName() + ": malformed input" : reason;
        finalCode = MALFORMED;
        return MALFORMED;
    }

    /**
     * Starts a stream over {@code compressed} (a slice: the codec may move its indexes, never
     * release or write it).
     *
     * @throws MalformedInputException when the container's start is invalid
     */
    abstract void start(ByteBuf compressed) throws MalformedInputException;

    /**
     * Appends between 1 and {@code maxBytes} decompressed bytes to {@code dst} (which has at least
     * that much room).
     *
     * @return bytes appended (> 0) or {@link #FILL_END} when the container ended cleanly
     * @throws MalformedInputException when the input is not a valid container
     */
    abstract int fill(ByteBuf dst, int maxBytes) throws MalformedInputException;

    /**
     * {@link Decompressor#readInPlace} for the stream just started: true when the codec will read its
     * first frame in place if the first chunk has the room (default: it has no such mode).
     */
    boolean startInPlace() {
        return false;
    }

    /** Frees the codec's state (called once). */
    abstract void release();

    /** The input is not a valid container: the message says what was wrong. */
    static final class MalformedInputException extends Exception {
        MalformedInputException(String message) {
            super(message, null, false, false);
        }

        MalformedInputException(String message, Throwable cause) {
            super(message + ": " + cause, null, false, false);
        }
    }
}
