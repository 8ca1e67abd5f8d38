package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;

/**
 * One codec of decision 9.o ({@code docs/spec/wire-protocol.md}): compresses a record region into
 * the codec's standard container and hands out {@link Decompressor}s for it. Get one from {@link
 * CompressionCodecs#codec}.
 *
 * <p>Buffers: any Netty {@link ByteBuf}, heap or (pooled) direct. {@link #compress} reads the
 * readable bytes of {@code src} without changing its indexes or reference count and appends the
 * container to {@code dst} at its writerIndex, growing it as {@link ByteBuf#ensureWritable(int)}
 * allows ({@code dst} must be one memory region, not a composite of several components, as the
 * pooled and unpooled buffers are); neither buffer is retained or released.
 *
 * <p>Thread-safety: not thread-safe; a codec keeps native or JDK compressor state that it reuses from
 * call to call, so each owning thread (a producer's sender, a broker's validation agent) has its own.
 * {@link #close} frees that state.
 */
public interface CompressionCodec extends AutoCloseable {
    /** The codec's type (never {@link CompressionType#NONE}). */
    CompressionType type();

    /**
     * Compresses the readable bytes of {@code src} into one container appended to {@code dst}.
     *
     * @return the number of bytes appended to {@code dst}
     * @throws IndexOutOfBoundsException when {@code dst} cannot grow to hold the output (its
     *     maxCapacity is too small): a caller's sizing bug
     * @throws IllegalArgumentException when {@code dst} is a composite of several components
     * @throws IllegalStateException when the codec is closed
     */
    int compress(ByteBuf src, ByteBuf dst);

    /**
     * A new decompressor for this codec's container. Each one keeps reusable native or JDK state;
     * make one per owning thread and {@link Decompressor#reset} it for each batch.
     */
    Decompressor newDecompressor();

    /** Frees the compressor state; idempotent. Decompressors already handed out stay usable. */
    @Override
    void close();
}
