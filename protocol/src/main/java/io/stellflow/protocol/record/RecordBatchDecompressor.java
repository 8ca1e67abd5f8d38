package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.HEADER_SIZE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;

/**
 * Consumer side of decision 9.o: expands one compressed batch into an equivalent uncompressed batch
 * in a reusable buffer, so the uncompressed reader and validator run on it unchanged. The expanded
 * batch is {@link BatchCompression#decompress}'s: the 57 header bytes of the original with attributes
 * bits 0-2 cleared, batchLength and CRC set for the decompressed records (the caller checks the CRC
 * on the compressed bytes, as sent, before expanding).
 *
 * <p>Memory: one heap buffer per instance, grown by doubling to the largest batch seen (at most
 * {@code maxDecompressedBytes} + 57) and reused for every batch; decompressors are made on first use
 * of each codec and reused. No allocation per record.
 *
 * <p>Errors: a stream that is not a valid container, or holds more than the cap, throws {@link
 * ProtocolException} with {@code CORRUPT_MESSAGE} (malformed) or {@code INVALID_RECORD} (over the
 * cap, undefined codec) and a message naming the
 * codec and the reason; the cap guards against decompression bombs (the output stops at cap + 1
 * bytes).
 *
 * <p>Thread-safety: confined to one owning thread (a consumer's application thread).
 */
public final class RecordBatchDecompressor implements AutoCloseable {
    /** Told of each batch expanded (a consumer's compression metrics). */
    @FunctionalInterface
    public interface Listener {
        /** Does nothing. */
        Listener NONE = (type, compressedBytes, decompressedBytes, elapsedNs) -> {};

        /**
         * One batch expanded: its codec, the records section compressed (bytes, as received) and
         * decompressed (bytes), and the time decompression took (ns). Called on the expanding thread
         * once per batch, never per record; must be cheap. Not called for a batch that failed.
         */
        void expanded(CompressionType type, long compressedBytes, long decompressedBytes, long elapsedNs);
    }

    private final long maxDecompressedBytes;
    private final Listener listener;
    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];
    private ByteBuf scratch = Unpooled.buffer(HEADER_SIZE + 64 * 1024);
    private boolean closed;

    /**
     * @param maxDecompressedBytes the largest decompressed records section accepted for one batch
     * @throws IllegalArgumentException when the cap is not positive
     */
    public RecordBatchDecompressor(long maxDecompressedBytes) {
        this(maxDecompressedBytes, Listener.NONE);
    }

    /**
     * @param maxDecompressedBytes the largest decompressed records section accepted for one batch
     * @param listener told of each batch expanded
     * @throws IllegalArgumentException when the cap is not positive or the listener null
     */
    public RecordBatchDecompressor(long maxDecompressedBytes, Listener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        this.listener = listener;
        if (maxDecompressedBytes <= 0) {
            throw new IllegalArgumentException("maxDecompressedBytes must be > 0: " + maxDecompressedBytes);
        }
        this.maxDecompressedBytes = maxDecompressedBytes;
    }

    /** The cap on the decompressed records section of one batch (bytes). */
    public long maxDecompressedBytes() {
        return maxDecompressedBytes;
    }

    /**
     * Expands the compressed batch at {@code buf}'s {@code batchStart} (framing already checked; its
     * attributes name codec 1-4). The returned buffer holds the expanded batch from index 0 to its
     * writerIndex; it is this instance's buffer, valid until the next call, never to be released by
     * the caller.
     *
     * @throws ProtocolException CORRUPT_MESSAGE when the stream is malformed, INVALID_RECORD when it holds more than the cap
     *     or the attributes name an undefined codec
     * @throws IllegalStateException when closed
     */
    public ByteBuf expand(ByteBuf buf, int batchStart) {
        if (closed) {
            throw new IllegalStateException("decompressor closed");
        }
        int attributes = RecordBatchLayout.attributes(buf, batchStart);
        CompressionType type = CompressionType.forId(attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK);
        if (type == null || type == CompressionType.NONE) {
            throw new ProtocolException(
                    Errors.INVALID_RECORD, "attributes " + Integer.toHexString(attributes) + " name no codec");
        }
        Decompressor d = decompressor(type);
        ByteBuf out = scratch.clear();
        long startNs = System.nanoTime();
        int n = BatchCompression.decompress(buf, batchStart, d, maxDecompressedBytes, out);
        if (n == BatchCompression.MALFORMED) {
            throw new ProtocolException(
                    Errors.CORRUPT_MESSAGE, type.configName() + " stream is malformed: " + d.failureReason());
        }
        if (n == BatchCompression.OVER_CAP) {
            throw new ProtocolException(
                    Errors.INVALID_RECORD,
                    type.configName() + " stream decompresses to more than " + maxDecompressedBytes + " bytes");
        }
        listener.expanded(
                type,
                RecordBatchLayout.batchSize(buf, batchStart) - HEADER_SIZE,
                n - HEADER_SIZE,
                System.nanoTime() - startNs);
        return out;
    }

    private Decompressor decompressor(CompressionType type) {
        Decompressor d = decompressors[type.id()];
        if (d == null) {
            try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                d = codec.newDecompressor();
            }
            decompressors[type.id()] = d;
        }
        return d;
    }

    /** Frees the decompressors' native state and drops the buffer; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < decompressors.length; i++) {
            if (decompressors[i] != null) {
                decompressors[i].close();
                decompressors[i] = null;
            }
        }
        scratch.release();
    }
}
