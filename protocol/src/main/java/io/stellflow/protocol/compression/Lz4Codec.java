package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;

/**
 * lz4: the LZ4 frame format (magic {@code 04 22 4d 18}) through lz4-java's ({@code
 * at.yawk.lz4:lz4-java}) frame streams.
 *
 * <p>We write one frame of independent 64 KiB blocks with the content size in the frame descriptor
 * and no content checksum (the batch's CRC-32C covers the compressed bytes); levels 1-2 and the
 * default 9 use the fast compressor (as Kafka's producer at its default), the others LZ4 HC. We read one or more frames (skippable frames included) with any block
 * size and flags, through the library's safe decompressor: never the {@code fast} one, whose
 * behaviour on hostile input is the subject of CVE-2025-66566.
 *
 * <p>Compressing writes the frame itself: each 64 KiB block is compressed from the source's memory
 * straight into the destination (lz4-java's block compressor on NIO views, direct or heap), a block
 * that does not shrink stored as it is, exactly the bytes lz4-java's frame output stream writes
 * (tested) without its copies through heap arrays.
 * Decompressing walks the frame itself and decodes block by block with the safe block decompressor
 * into one reused block array ({@link Lz4BlockDecompressor}); a stream with linked blocks falls back
 * to the frame input stream, which allocates its block buffers per stream (up to 4 MiB each).
 * Thread-safety: see {@link CompressionCodec}.
 */
final class Lz4Codec implements CompressionCodec {
    private boolean closed;
    private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();
    private static final XXHash32 XXHASH32 = XXHashFactory.fastestInstance().hash32();

    private final LZ4Compressor compressor;

    static final int MAGIC = 0x184D2204;
    /** FLG: version 01, block independence, content size present. */
    private static final int FLG = 0x40 | 0x20 | 0x08;
    /** BD: block maximum size 64 KiB (id 4). */
    private static final int BD = 4 << 4;
    /** FLG, BD and the 8-byte content size. */
    private static final int DESCRIPTOR_BYTES = 10;

    private static final int BLOCK_BYTES = 64 * 1024;
    /** High bit of a block's size: the block is stored uncompressed. */
    private static final int INCOMPRESSIBLE_BIT = 0x80000000;

    Lz4Codec(int level) {
        this.compressor =
                CompressionConfig.lz4UsesFastCompressor(level) ? LZ4.fastCompressor() : LZ4.highCompressor(level);
    }

    @Override
    public CompressionType type() {
        return CompressionType.LZ4;
    }

    @Override
    public int compress(ByteBuf src, ByteBuf dst) {
        if (closed) {
            throw new IllegalStateException(type().configName() + " codec is closed");
        }
        int start = dst.writerIndex();
        int length = src.readableBytes();
        writeFrameHeader(dst, length);
        // The records are read where they are (one NIO view of src) and each block is compressed
        // straight into dst: no copy of the records through the frame stream's heap arrays, no
        // per-call stream buffers (issue #21: these were the codec's overhead in the producer).
        ByteBuffer in = src.nioBuffer(src.readerIndex(), length);
        int inBase = in.position();
        for (int off = 0; off < length; off += BLOCK_BYTES) {
            int n = Math.min(BLOCK_BYTES, length - off);
            int max = compressor.maxCompressedLength(n);
            dst.ensureWritable(4 + max);
            int sizeAt = dst.writerIndex();
            ByteBuffer out = dst.nioBuffer(sizeAt + 4, max);
            int written = compressor.compress(in, inBase + off, n, out, out.position(), max);
            if (written >= n) {
                // as the frame stream does: a block that does not shrink is stored as it is
                dst.setIntLE(sizeAt, n | INCOMPRESSIBLE_BIT);
                dst.setBytes(sizeAt + 4, src, src.readerIndex() + off, n);
                dst.writerIndex(sizeAt + 4 + n);
            } else {
                dst.setIntLE(sizeAt, written);
                dst.writerIndex(sizeAt + 4 + written);
            }
        }
        dst.writeIntLE(0); // end mark
        return dst.writerIndex() - start;
    }

    /**
     * Magic, frame descriptor (version 1, independent blocks, content size; 64 KiB blocks) and its
     * header checksum: the second byte of the xxHash32 of the descriptor (LZ4 frame format 1.6.x).
     */
    private static void writeFrameHeader(ByteBuf dst, long contentBytes) {
        byte[] descriptor = new byte[DESCRIPTOR_BYTES];
        descriptor[0] = (byte) FLG;
        descriptor[1] = (byte) BD;
        for (int i = 0; i < 8; i++) {
            descriptor[2 + i] = (byte) (contentBytes >>> (8 * i));
        }
        dst.writeIntLE(MAGIC);
        dst.writeBytes(descriptor);
        dst.writeByte((XXHASH32.hash(descriptor, 0, DESCRIPTOR_BYTES, 0) >> 8) & 0xFF);
    }

    @Override
    public Decompressor newDecompressor() {
        return new Lz4BlockDecompressor(
                Lz4Decompressor.SAFE,
                XXHASH32,
                XXHashFactory.fastestInstance().newStreamingHash32(0),
                new Lz4Decompressor());
    }

    @Override
    public void close() {
        closed = true;
        // lz4-java's compressors are stateless singletons
    }

    /** The frame-stream path: {@link Lz4BlockDecompressor}'s fallback for linked blocks. */
    private static final class Lz4Decompressor extends InputStreamDecompressor {
        private static final LZ4SafeDecompressor SAFE = LZ4.safeDecompressor();

        Lz4Decompressor() {
            super(CompressionType.LZ4);
        }

        @Override
        InputStream open(InputStream compressed) throws IOException {
            return new LZ4FrameInputStream(compressed, SAFE, XXHASH32, false);
        }
    }
}
