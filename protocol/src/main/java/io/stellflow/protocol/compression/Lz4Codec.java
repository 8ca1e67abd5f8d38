package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
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
 * <p>Compressing goes through the frame output stream, which copies the input through heap arrays.
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
        try (LZ4FrameOutputStream out = new LZ4FrameOutputStream(
                new ByteBufOutputStream(dst),
                LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                length,
                compressor,
                XXHASH32,
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
                LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE)) {
            src.getBytes(src.readerIndex(), out, length);
        } catch (IOException e) {
            // ByteBufOutputStream never throws but for a full dst, which ByteBuf reports unchecked
            throw new UncheckedIOException(e);
        }
        return dst.writerIndex() - start;
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
