package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.record.BatchCompression;
import java.io.IOException;

/**
 * Fetch v0 of a compressed stored batch (issue #21, SDK policy): the public SDKs cannot decompress
 * (decision 9.o), so the broker sends them the batch uncompressed: the stored batch is read from the
 * segment, decompressed into the response head and its codec bits, batchLength and CRC-32C are
 * rewritten ({@link BatchCompression#decompress}); offsets, timestamps and producer fields stay.
 * This batch is copied, not sent zero-copy: the cost of serving compressed data to v0 readers
 * ({@code docs/compression.md}, "SDK policy"). Fetch v1 (our client, followers) is untouched.
 *
 * <p>Thread-safety: one instance per request thread ({@link #forThisThread}); the decompressors keep
 * native state reused from batch to batch for the thread's life.
 */
final class V0Decompression {
    /** Result of {@link #write}: the batch decompresses to more than the response can still hold. */
    static final int TOO_LARGE = -1;

    private static final ThreadLocal<V0Decompression> PER_THREAD = ThreadLocal.withInitial(V0Decompression::new);

    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];

    private V0Decompression() {}

    static V0Decompression forThisThread() {
        return PER_THREAD.get();
    }

    /**
     * Appends batch {@code i} of {@code batches} (compressed with codec {@code codecId}) uncompressed
     * to {@code out}; its bytes 0-3 are left for the caller's v0 rewrite.
     *
     * @param maxBytes the most bytes the uncompressed batch may take (what the Fetch limits leave
     *     it); decompression stops once past it, so an oversized batch costs at most this much
     * @return the bytes appended, or {@link #TOO_LARGE} (nothing appended)
     * @throws IOException the stored batch cannot be read or does not decompress (it was validated
     *     on Produce: the segment is damaged)
     */
    int write(BatchCollector batches, int i, int codecId, ByteBuf out, long maxBytes) throws IOException {
        int size = batches.size(i);
        ByteBuf stored = ByteBufAllocator.DEFAULT.directBuffer(size, size);
        try {
            int copied = 0;
            while (copied < size) {
                int n = stored.setBytes(copied, batches.channel(i), batches.position(i) + copied, size - copied);
                if (n < 0) {
                    throw new IOException("unexpected end of segment file at " + (batches.position(i) + copied));
                }
                copied += n;
            }
            stored.writerIndex(size);
            Decompressor d = decompressor(codecId);
            long cap = Math.max(0, maxBytes - BatchCompression.HEADER_BYTES);
            // A zstd frame that declares more than fits is too large without decoding it: stored
            // batches were validated on Produce, where a frame that misstates its size is refused,
            // so a v0 reader retrying at such a batch costs a read, not a decompression up to cap.
            // Only zstd declares a size (Decompressor#singlePassBytes); the others skip this reset.
            if (codecId == CompressionType.ZSTD.id()) {
                d.reset(stored.slice(BatchCompression.HEADER_BYTES, size - BatchCompression.HEADER_BYTES), cap);
                if (d.singlePassBytes() > cap) {
                    return TOO_LARGE;
                }
            }
            int n = BatchCompression.decompress(stored, 0, d, cap, out);
            if (n == BatchCompression.OVER_CAP) {
                return TOO_LARGE;
            }
            if (n < 0) {
                throw new IOException("stored " + d.type().configName() + " batch at offset " + batches.baseOffset(i)
                        + " does not decompress: " + d.failureReason());
            }
            return n;
        } finally {
            stored.release();
        }
    }

    private Decompressor decompressor(int codecId) {
        Decompressor d = decompressors[codecId];
        if (d == null) {
            try (CompressionCodec c = CompressionCodecs.codec(CompressionType.forId(codecId))) {
                d = c.newDecompressor();
            }
            decompressors[codecId] = d;
        }
        return d;
    }
}
