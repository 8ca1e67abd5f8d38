package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;

/**
 * Streaming decompression of one codec's container with a hard cap on the total decompressed size.
 * The caller {@link #reset}s it with the compressed bytes and a cap, then calls {@link #read} with a
 * reusable chunk buffer until it returns a negative code:
 *
 * <pre>{@code
 * d.reset(compressed, maxDecompressedBytes);
 * int n;
 * while ((n = d.read(chunk.clear())) > 0) {
 *     consume(chunk); // n bytes between readerIndex and writerIndex
 * }
 * if (n != Decompressor.END_OF_STREAM) { refuse the batch: MALFORMED or OVER_CAP }
 * }</pre>
 *
 * <p>Codes: {@link #read} returns the number of bytes it appended (> 0), or one of {@link
 * #END_OF_STREAM} (the container ended cleanly after at most the cap: done), {@link #MALFORMED}
 * (not a valid container: bad magic, flags, checksum, truncated input, trailing garbage; refuse the
 * data, {@link #failureReason} says why), {@link #OVER_CAP} (the container holds more than the cap:
 * a decompression bomb or an oversized batch; refuse the data). Once a negative code is returned,
 * every later call returns the same code until the next {@link #reset}.
 *
 * <p>Memory: the decompressed bytes go only into the caller's chunk, at most the cap in total over
 * one stream: when the cap is reached, one more byte is asked for into a one-byte scratch to tell
 * {@link #END_OF_STREAM} from {@link #OVER_CAP}, so no more than cap + 1 bytes are ever produced.
 * Besides, each codec keeps a working buffer bounded by its format whatever the input says: gzip
 * 32 KiB (deflate window), snappy 64 KiB chunks (a malformed chunk header may make the library read
 * up to 16 MiB), lz4 at most two 4 MiB blocks (the frame's block maximum; a block goes straight
 * into the chunk when the chunk has room for the largest), zstd a window of at most {@link
 * ZstdCodec#WINDOW_LOG_MAX 2^23} bytes (8 MiB; a frame asking for more is {@link #MALFORMED}) and
 * none when it reads a frame in one pass or in place into the chunk ({@link #singlePassBytes},
 * {@link #readInPlace}).
 *
 * <p>Buffers: {@link #reset} takes neither ownership nor a reference count of {@code compressed}:
 * the caller keeps it alive and unchanged until the stream ends or the next reset; its indexes are
 * not changed. {@link #read} appends to {@code chunk} at its writerIndex, never more than its
 * writableBytes (it does not grow it); the chunk must be one memory region (heap or direct, not a
 * composite of several components).
 *
 * <p>Thread-safety: confined to one owning thread. {@link #close} frees native state; idempotent.
 */
public interface Decompressor extends AutoCloseable {
    /** The container ended cleanly; the total decompressed size is at most the cap. */
    int END_OF_STREAM = -1;
    /** The input is not a valid container of this codec (see {@link #failureReason}). */
    int MALFORMED = -2;
    /** The container decompresses to more than the cap. */
    int OVER_CAP = -3;

    /** The codec whose container this decompresses. */
    CompressionType type();

    /**
     * Starts decompressing the readable bytes of {@code compressed} with at most {@code
     * maxDecompressedBytes} bytes of output in total; forgets any previous stream.
     *
     * @throws IllegalArgumentException when {@code maxDecompressedBytes < 0}
     * @throws IllegalStateException when closed
     */
    void reset(ByteBuf compressed, long maxDecompressedBytes);

    /**
     * Appends the next decompressed bytes to {@code chunk}.
     *
     * @return bytes appended (> 0, at most {@code chunk.writableBytes()}), or {@link #END_OF_STREAM},
     *     {@link #MALFORMED}, {@link #OVER_CAP}
     * @throws IllegalArgumentException when {@code chunk} has no writable bytes or is not one memory
     *     region (a composite buffer of several components)
     * @throws IllegalStateException when not {@link #reset} since creation, or closed; or when the
     *     chunk breaks the promise of a frame read in place ({@link #readInPlace}: a bug of the caller)
     */
    int read(ByteBuf chunk);

    /**
     * The room, in bytes, a chunk must have at the first {@link #read} after {@link #reset} for this
     * decompressor to write the stream's first frame in one pass straight into it, without a window
     * buffer of its own and the copy out of it (the whole frame must be in the input, as a batch's
     * always is); -1 when it has no such mode or the container's header does not say. zstd: the
     * first frame's declared content size (RFC 8878 §3.1.1.1.4), read as {@code
     * ZSTD_decompressStream} reads it; other codecs -1. The header is the producer's word: a
     * frame that holds another size than it declares still ends {@link #MALFORMED}, and the cap
     * still holds (a chunk with that room but a smaller cap goes the streaming way).
     */
    default long singlePassBytes() {
        return -1;
    }

    /**
     * Asks, after {@link #reset} and before the first {@link #read}, for the first frame to be read
     * in place and in steps: when the first read's chunk is direct memory with {@link
     * #singlePassBytes} of room (a heap chunk may move between reads, and streams as before), each
     * read decodes the next piece of input (a block or a few) straight into the chunk after the
     * bytes already there, so the caller reads each piece while it is still in the CPU cache,
     * without the window buffer and the copy out of it. In return the caller promises that until
     * that frame ends every read gets the same chunk with its writerIndex where the last read left
     * it and the bytes before it unchanged: no discard, clear or reallocation while the chunk still
     * has room. zstd when its library allows it ({@code ZSTD_d_stableOutBuffer}); others false.
     *
     * @return true when this stream will be read that way (if the first chunk is direct and has the
     *     room)
     * @throws IllegalStateException when not reset, already read from, or closed; and from a later
     *     {@link #read} whose chunk broke the promise (a bug of the caller)
     */
    default boolean readInPlace() {
        return false;
    }

    /** Bytes handed out since the last {@link #reset} (at most the cap). */
    long decompressedBytes();

    /** Why the stream is {@link #MALFORMED} (the library's message), or null when it is not. */
    String failureReason();

    /** Frees native and JDK state; idempotent. */
    @Override
    void close();
}
