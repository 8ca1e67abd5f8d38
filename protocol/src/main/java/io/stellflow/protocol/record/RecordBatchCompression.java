package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.HEADER_SIZE;
import static io.stellflow.protocol.record.RecordBatchLayout.LOG_OVERHEAD;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORDS_OFFSET;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.compression.CompressionCodec;

/**
 * Producer side of decision 9.o ({@code docs/spec/wire-protocol.md}): turns one sealed uncompressed
 * batch into its compressed form. The 57 header bytes (offsets 0-56: baseOffsetDelta to recordCount)
 * are copied as they are, every byte after recordCount (the records) becomes one stream in the
 * codec's container, then batchLength, attributes bits 0-2 (the codec id) and the CRC-32C (over
 * offsets 17 to the end, so over the compressed bytes) are set.
 *
 * <p>Example: a 16,441-byte batch of 16 JSON lines of 1 KiB, zstd level 3: header 57 bytes + a zstd
 * frame of about 3,300 bytes; attributes {@code 0x0004}; batchLength = 57 - 8 + frame bytes.
 *
 * <p>Thread-safety: stateless; the codec belongs to the calling thread.
 */
public final class RecordBatchCompression {
    private RecordBatchCompression() {}

    /**
     * Appends the compressed form of the sealed batch at {@code src}'s {@code batchStart} to {@code
     * dst} at its writerIndex (growing it). Neither buffer is retained or released; {@code src}'s
     * indexes are untouched.
     *
     * @return bytes appended to {@code dst} (the compressed batch's size, log overhead included)
     * @throws IllegalArgumentException when the batch at {@code batchStart} is already compressed
     *     (attributes bits 0-2 not 0): a caller's bug
     */
    public static int compress(ByteBuf src, int batchStart, CompressionCodec codec, ByteBuf dst) {
        int attributes = RecordBatchLayout.attributes(src, batchStart);
        if ((attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            throw new IllegalArgumentException("batch at " + batchStart + " is already compressed (attributes "
                    + Integer.toHexString(attributes) + ")");
        }
        int batchEnd = batchStart + RecordBatchLayout.batchSize(src, batchStart);
        int out = dst.writerIndex();
        dst.ensureWritable(HEADER_SIZE);
        dst.writeBytes(src, batchStart, HEADER_SIZE);
        ByteBuf records = src.slice(batchStart + RECORDS_OFFSET, batchEnd - batchStart - RECORDS_OFFSET);
        int compressedBytes = codec.compress(records, dst);
        int batchLength = HEADER_SIZE - LOG_OVERHEAD + compressedBytes;
        dst.setInt(out + RecordBatchLayout.BATCH_LENGTH_OFFSET, batchLength);
        dst.setShort(
                out + RecordBatchLayout.ATTRIBUTES_OFFSET,
                attributes | codec.type().id());
        dst.setInt(out + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(dst, out));
        return LOG_OVERHEAD + batchLength;
    }
}
