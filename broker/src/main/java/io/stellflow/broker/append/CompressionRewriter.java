package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.stellflow.broker.telemetry.CompressionTelemetry;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.LogCompression;

/**
 * The leader's rewrite of a validated RecordBatchSet for a log whose {@code compression.type} is not
 * {@code producer} (Kafka's semantics): every batch whose codec differs from the topic's is
 * decompressed and stored uncompressed ({@code uncompressed}) or recompressed with the topic's
 * codec at its {@code compression.<codec>.level}; offsets, timestamps, producer fields and
 * recordCount stay as produced, batchLength and the CRC-32C are recomputed ({@link
 * BatchCompression}). A batch already in the topic's codec is copied as it is.
 *
 * <p>Costs: a rewrite copies the whole set into a new pooled direct buffer and runs the codecs; it
 * happens only when the topic asks for it, and each rewritten batch is counted ({@link #rewrittenBatches}).
 *
 * <p>Thread-safety: confined to one owning thread (an append agent, a request thread); the codecs
 * keep native state reused from batch to batch. {@link #close} frees it.
 */
public final class CompressionRewriter implements AutoCloseable {
    /** Decompressed bytes of one batch: grown once to the largest batch seen, reused. */
    private ByteBuf plain;

    private final CompressionCodec[] codecs = new CompressionCodec[CompressionType.values().length];
    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];
    private CompressionConfig codecLevels = CompressionConfig.DEFAULT;
    private final long maxDecompressedBytes;
    private final CompressionTelemetry telemetry;
    private long rewrittenBatches;

    /**
     * @param maxDecompressedBytes {@code compression.max.decompressed.bytes} (the set is validated under it)
     * @param telemetry where each rewritten batch is counted (direction recompress)
     */
    public CompressionRewriter(long maxDecompressedBytes, CompressionTelemetry telemetry) {
        this.maxDecompressedBytes = maxDecompressedBytes;
        this.telemetry = telemetry;
    }

    /**
     * The codec id (attribute bits 0-2) of the first compressed batch of a validated {@code records}
     * set, or 0 ({@code NONE}) when every batch is uncompressed: what {@code
     * compression.produce.policy=refuse} refuses.
     */
    public static int firstCompressedCodec(ByteBuf records) {
        for (int p = records.readerIndex(); p < records.writerIndex(); p += RecordBatchLayout.batchSize(records, p)) {
            int codecId = RecordBatchLayout.attributes(records, p) & RecordBatchLayout.COMPRESSION_CODEC_MASK;
            if (codecId != CompressionType.NONE.id()) {
                return codecId;
            }
        }
        return CompressionType.NONE.id();
    }

    /** Whether a validated {@code records} set holds a batch {@code compression} would rewrite. */
    public static boolean needsRewrite(ByteBuf records, LogCompression compression) {
        if (compression.target() == null) {
            return false; // producer: keep as produced
        }
        for (int p = records.readerIndex(); p < records.writerIndex(); p += RecordBatchLayout.batchSize(records, p)) {
            if (compression.rewrites(
                    RecordBatchLayout.attributes(records, p) & RecordBatchLayout.COMPRESSION_CODEC_MASK)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The validated {@code records} rewritten for {@code compression}, in a new buffer the caller owns
     * (releases); {@code records} is neither changed nor released.
     *
     * @throws IllegalStateException when a batch no longer decompresses (it was validated: a bug)
     */
    public ByteBuf rewrite(ByteBuf records, LogCompression compression) {
        CompressionType target = compression.target();
        ByteBuf out = ByteBufAllocator.DEFAULT.directBuffer(records.readableBytes());
        try {
            for (int p = records.readerIndex();
                    p < records.writerIndex();
                    p += RecordBatchLayout.batchSize(records, p)) {
                int codecId = RecordBatchLayout.attributes(records, p) & RecordBatchLayout.COMPRESSION_CODEC_MASK;
                if (!compression.rewrites(codecId)) {
                    out.writeBytes(records, p, RecordBatchLayout.batchSize(records, p));
                    continue;
                }
                rewrittenBatches++;
                long startNs = System.nanoTime();
                int outStart = out.writerIndex();
                long plainBytes;
                if (codecId == CompressionType.NONE.id()) {
                    plainBytes = RecordBatchLayout.batchSize(records, p);
                    BatchCompression.compress(records, p, codec(target, compression.levels()), out);
                } else if (target != CompressionType.NONE) {
                    plainBuffer().clear();
                    decompress(records, p, codecId, plain);
                    plainBytes = plain.readableBytes();
                    BatchCompression.compress(plain, 0, codec(target, compression.levels()), out);
                } else {
                    decompress(records, p, codecId, out);
                    plainBytes = out.writerIndex() - outStart;
                }
                // Counted under the codec that worked: the topic's, or the producer's when storing uncompressed.
                CompressionType codec = target != CompressionType.NONE ? target : CompressionType.forId(codecId);
                long compressedBytes = target != CompressionType.NONE
                        ? out.writerIndex() - outStart
                        : RecordBatchLayout.batchSize(records, p);
                telemetry.batch(
                        CompressionTelemetry.RECOMPRESS,
                        codec,
                        compressedBytes - RecordBatchLayout.RECORDS_OFFSET,
                        plainBytes - RecordBatchLayout.RECORDS_OFFSET,
                        System.nanoTime() - startNs);
            }
            return out;
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    /** Size of the largest batch of a validated set, in bytes (a rewrite may grow a batch past message.max.bytes). */
    public static int largestBatchBytes(ByteBuf records) {
        int largest = 0;
        for (int p = records.readerIndex(); p < records.writerIndex(); p += RecordBatchLayout.batchSize(records, p)) {
            largest = Math.max(largest, RecordBatchLayout.batchSize(records, p));
        }
        return largest;
    }

    /** Batches rewritten so far (the owner publishes the count as a metric). */
    long rewrittenBatches() {
        return rewrittenBatches;
    }

    private void decompress(ByteBuf records, int p, int codecId, ByteBuf into) {
        CompressionType type = CompressionType.forId(codecId);
        Decompressor d = decompressors[codecId];
        if (d == null) {
            try (CompressionCodec c = CompressionCodecs.codec(type)) {
                d = c.newDecompressor();
            }
            decompressors[codecId] = d;
        }
        int n = BatchCompression.decompress(records, p, d, maxDecompressedBytes, into);
        if (n < 0) {
            throw new IllegalStateException("a validated " + type.configName() + " batch does not decompress: "
                    + (n == BatchCompression.OVER_CAP ? "over the cap" : d.failureReason()));
        }
    }

    private ByteBuf plainBuffer() {
        if (plain == null) {
            plain = ByteBufAllocator.DEFAULT.directBuffer(64 * 1024);
        }
        return plain;
    }

    /** The codec of {@code type} at {@code levels}; codecs are made again when the topic's levels change. */
    private CompressionCodec codec(CompressionType type, CompressionConfig levels) {
        if (!levels.equals(codecLevels)) {
            closeCodecs();
            codecLevels = levels;
        }
        CompressionCodec c = codecs[type.id()];
        if (c == null) {
            c = CompressionCodecs.codec(type, levels);
            codecs[type.id()] = c;
        }
        return c;
    }

    private void closeCodecs() {
        for (int i = 0; i < codecs.length; i++) {
            if (codecs[i] != null) {
                codecs[i].close();
                codecs[i] = null;
            }
        }
    }

    /** Frees the codecs, decompressors and the reusable buffer; idempotent. */
    @Override
    public void close() {
        closeCodecs();
        for (int i = 0; i < decompressors.length; i++) {
            if (decompressors[i] != null) {
                decompressors[i].close();
                decompressors[i] = null;
            }
        }
        if (plain != null) {
            plain.release();
            plain = null;
        }
    }
}
