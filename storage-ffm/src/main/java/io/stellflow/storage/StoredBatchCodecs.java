package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;

/**
 * The codecs a storage pass that reads records uses on compressed stored batches (decision 9.o):
 * compaction ({@link LogCleaner}) decompresses a batch to read it record by record and compresses
 * one that lost records again with its own codec (Kafka's levels), so a compacted topic keeps its
 * codec; time lookups ({@link TimestampSearch}) decompress to find the record. Made per run and
 * closed after it; codecs are created on first use.
 *
 * <p>Thread-safety: confined to the thread of the run.
 */
final class StoredBatchCodecs implements AutoCloseable {
    /**
     * Cap on one stored batch's decompressed records: 2 GiB - 64 KiB, what a heap buffer can hold.
     * Stored batches were checked on Produce against the broker's smaller
     * compression.max.decompressed.bytes; this cap only keeps a damaged segment from growing a
     * buffer without end.
     */
    private static final long MAX_DECOMPRESSED_BYTES = Integer.MAX_VALUE - (64 << 10);

    private final Decompressor[] decompressors = new Decompressor[CompressionType.values().length];
    private final CompressionCodec[] codecs = new CompressionCodec[CompressionType.values().length];
    private final ByteBuf plain = Unpooled.buffer(64 * 1024);

    /** Codec id of the whole batch in {@code batch} (index 0; 0 = none). */
    static int codecId(ByteBuf batch) {
        return RecordBatchLayout.attributes(batch, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK;
    }

    /**
     * The compressed batch in {@code batch} (index 0) decompressed, in a buffer reused by the next
     * call (index 0, codec bits clear).
     *
     * @throws IOException naming the segment and position when it does not decompress
     */
    ByteBuf decompress(ByteBuf batch, LogSegment s, int pos) throws IOException {
        int id = codecId(batch);
        CompressionType type = CompressionType.forId(id);
        if (type == null) {
            throw new IOException("corrupt batch at " + s.logFile + ":" + pos + ": undefined codec " + id);
        }
        Decompressor d = decompressors[id];
        if (d == null) {
            try (CompressionCodec c = CompressionCodecs.codec(type)) {
                d = c.newDecompressor();
            }
            decompressors[id] = d;
        }
        plain.clear();
        int n = BatchCompression.decompress(batch, 0, d, MAX_DECOMPRESSED_BYTES, plain);
        if (n < 0) {
            throw new IOException("corrupt " + type.configName() + " batch at " + s.logFile + ":" + pos + ": "
                    + (n == BatchCompression.OVER_CAP ? "decompresses to more than 2 GiB" : d.failureReason()));
        }
        return plain;
    }

    /** Appends the uncompressed batch {@code batch} (index 0) compressed with codec {@code codecId} to {@code out}. */
    void compress(ByteBuf batch, int codecId, ByteBuf out) {
        CompressionCodec c = codecs[codecId];
        if (c == null) {
            c = CompressionCodecs.codec(CompressionType.forId(codecId));
            codecs[codecId] = c;
        }
        BatchCompression.compress(batch, 0, c, out);
    }

    @Override
    public void close() {
        for (int i = 0; i < codecs.length; i++) {
            if (decompressors[i] != null) {
                decompressors[i].close();
            }
            if (codecs[i] != null) {
                codecs[i].close();
            }
        }
        plain.release();
    }
}
