package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.xerial.snappy.SnappyFramedInputStream;
import org.xerial.snappy.SnappyFramedOutputStream;

/**
 * snappy: the Snappy framing format (stream identifier chunk {@code ff 06 00 00 73 4e 61 50 70 59}
 * first, then compressed (0x00) or uncompressed (0x01) chunks of at most 64 KiB of data, each with
 * the masked CRC-32C of its data), as decision 9.o says, through snappy-java's framed streams. This
 * is not Kafka's xerial block framing ({@code 82 53 4e 41 50 50 59 00}), which 9.o does not use.
 *
 * <p>We write 64 KiB chunks, each stored uncompressed when Snappy saves less than 15% on it (the
 * library's default). We read any valid framed stream, checksums verified; skippable chunks
 * (0x80-0xfe) are skipped, reserved unskippable ones (0x02-0x7f) are {@link Decompressor#MALFORMED}.
 *
 * <p>Compressing goes through the framed output stream, which copies the input through heap arrays.
 * Decompressing a direct buffer walks the framing itself and decodes chunk by chunk into one reused
 * direct buffer ({@link SnappyChunkDecompressor}); heap or composite input goes through the framed
 * input stream. Snappy has no level. Thread-safety: see {@link CompressionCodec}.
 */
final class SnappyCodec implements CompressionCodec {
    private boolean closed;

    @Override
    public CompressionType type() {
        return CompressionType.SNAPPY;
    }

    @Override
    public int compress(ByteBuf src, ByteBuf dst) {
        if (closed) {
            throw new IllegalStateException(type().configName() + " codec is closed");
        }
        int start = dst.writerIndex();
        try (SnappyFramedOutputStream out = new SnappyFramedOutputStream(new ByteBufOutputStream(dst))) {
            src.getBytes(src.readerIndex(), out, src.readableBytes());
        } catch (IOException e) {
            // ByteBufOutputStream never throws but for a full dst, which ByteBuf reports unchecked
            throw new UncheckedIOException(e);
        }
        return dst.writerIndex() - start;
    }

    @Override
    public Decompressor newDecompressor() {
        return new SnappyChunkDecompressor(new SnappyDecompressor());
    }

    @Override
    public void close() {
        closed = true;
        // the framed streams keep their buffers in snappy-java's own pool
    }

    /** The framed-stream path: {@link SnappyChunkDecompressor}'s fallback for heap or composite input. */
    private static final class SnappyDecompressor extends InputStreamDecompressor {
        SnappyDecompressor() {
            super(CompressionType.SNAPPY);
        }

        @Override
        InputStream open(InputStream compressed) throws IOException {
            return new SnappyFramedInputStream(compressed, true);
        }
    }
}
