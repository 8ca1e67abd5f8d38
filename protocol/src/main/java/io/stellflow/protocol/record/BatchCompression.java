package io.stellflow.protocol.record;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;

/**
 * Rewrites one whole RecordBatch between compressed and uncompressed form (decision 9.o of {@code
 * docs/spec/wire-protocol.md}): the 57-byte header is kept field for field (offsets, timestamps,
 * producer fields, recordCount), only the codec bits of the attributes, {@code batchLength} and the
 * CRC-32C change; the records section (every byte after recordCount) is the codec's container of
 * the uncompressed records, or those records.
 *
 * <p>Used where the bytes must change: a topic whose {@code compression.type} differs from the
 * producer's, a Fetch v0 reader that cannot decompress, and tests. Buffers: the source batch is read
 * between the given index and its size without changing indexes; the output is appended at {@code
 * out}'s writerIndex (it grows); nothing is retained or released.
 *
 * <p>Thread-safety: stateless; the codec and decompressor passed in belong to the calling thread.
 */
public final class BatchCompression {
    /** {@link #decompress} result: the container is not valid ({@link Decompressor#failureReason}). */
    public static final int MALFORMED = -2;
    /** {@link #decompress} result: the records decompress to more than the cap. */
    public static final int OVER_CAP = -3;

    /** Bytes of a batch before its records section (the 57-byte header, 8-byte prefix included). */
    public static final int HEADER_BYTES = RecordBatchLayout.RECORDS_OFFSET;

    private BatchCompression() {}

    /**
     * Appends to {@code out} the batch at {@code batchStart} of {@code src} (uncompressed, whole
     * batch with its 8-byte prefix) with its records compressed by {@code codec}.
     *
     * @return the bytes appended (the new batch's size)
     * @throws IllegalArgumentException when the source batch is already compressed
     */
    public static int compress(ByteBuf src, int batchStart, CompressionCodec codec, ByteBuf out) {
        int attributes = RecordBatchLayout.attributes(src, batchStart);
        if ((attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            throw new IllegalArgumentException("batch at " + batchStart + " is already compressed: " + attributes);
        }
        int size = RecordBatchLayout.batchSize(src, batchStart);
        int outStart = out.writerIndex();
        out.writeBytes(src, batchStart, RecordBatchLayout.RECORDS_OFFSET);
        ByteBuf records =
                src.slice(batchStart + RecordBatchLayout.RECORDS_OFFSET, size - RecordBatchLayout.RECORDS_OFFSET);
        codec.compress(records, out);
        finish(out, outStart, attributes | codec.type().id(), true);
        return out.writerIndex() - outStart;
    }

    /**
     * Appends to {@code out} the compressed batch at {@code batchStart} of {@code src} with its
     * records decompressed (at most {@code maxDecompressedBytes} of them) and the codec bits cleared.
     * The records are copied as the container holds them; {@link CompressedRecordsValidator} is what
     * checks them. On a negative result {@code out} is back at its old writerIndex.
     *
     * @param decompressor a decompressor of the batch's codec
     * @return the bytes appended, {@link #MALFORMED} or {@link #OVER_CAP}
     * @throws IllegalArgumentException when the batch is not compressed or {@code decompressor} is
     *     of another codec
     */
    public static int decompress(
            ByteBuf src, int batchStart, Decompressor decompressor, long maxDecompressedBytes, ByteBuf out) {
        return decompress(src, batchStart, decompressor, maxDecompressedBytes, out, true);
    }

    /**
     * As {@link #decompress(ByteBuf, int, Decompressor, long, ByteBuf)}; {@code withCrc} false leaves
     * the new batch's CRC field 0 instead of computing it over the decompressed records (a reader that
     * checked the CRC on the compressed bytes and decodes the result with its CRC check off: one pass
     * over the records fewer).
     */
    public static int decompress(
            ByteBuf src,
            int batchStart,
            Decompressor decompressor,
            long maxDecompressedBytes,
            ByteBuf out,
            boolean withCrc) {
        int attributes = RecordBatchLayout.attributes(src, batchStart);
        CompressionType type = CompressionType.fromAttributes((short) attributes);
        if (type == null || type == CompressionType.NONE || type != decompressor.type()) {
            throw new IllegalArgumentException("batch at " + batchStart + " has attributes " + attributes
                    + ", decompressor " + decompressor.type());
        }
        int size = RecordBatchLayout.batchSize(src, batchStart);
        int outStart = out.writerIndex();
        out.writeBytes(src, batchStart, RecordBatchLayout.RECORDS_OFFSET);
        decompressor.reset(
                src.slice(batchStart + RecordBatchLayout.RECORDS_OFFSET, size - RecordBatchLayout.RECORDS_OFFSET),
                maxDecompressedBytes);
        long singlePass = CompressedRecordsValidator.onePassBytes(
                decompressor.singlePassBytes(), size - RecordBatchLayout.RECORDS_OFFSET, maxDecompressedBytes);
        if (singlePass > 0 && singlePass <= out.maxWritableBytes()) {
            // Room for the whole first frame: zstd writes it straight into out, without its window
            // buffer and the copy out of it (Decompressor#singlePassBytes), within the validator's
            // bounds on what a header may ask for.
            out.ensureWritable((int) singlePass);
        }
        int n;
        do {
            out.ensureWritable(64 * 1024);
            n = decompressor.read(out);
        } while (n > 0);
        if (n != Decompressor.END_OF_STREAM) {
            out.writerIndex(outStart);
            return n == Decompressor.OVER_CAP ? OVER_CAP : MALFORMED;
        }
        finish(out, outStart, attributes & ~RecordBatchLayout.COMPRESSION_CODEC_MASK, withCrc);
        return out.writerIndex() - outStart;
    }

    /** Sets the attributes, batchLength and CRC of the batch written at {@code start}..writerIndex. */
    private static void finish(ByteBuf out, int start, int attributes, boolean withCrc) {
        out.setShort(start + RecordBatchLayout.ATTRIBUTES_OFFSET, attributes);
        out.setInt(
                start + RecordBatchLayout.BATCH_LENGTH_OFFSET,
                out.writerIndex() - start - RecordBatchLayout.LOG_OVERHEAD);
        out.setInt(start + RecordBatchLayout.CRC_OFFSET, withCrc ? RecordBatchLayout.computeCrc(out, start) : 0);
    }
}
