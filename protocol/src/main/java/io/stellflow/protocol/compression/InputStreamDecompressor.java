package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * A {@link Decompressor} over a library's decoding {@link InputStream} (lz4-java's frame stream,
 * snappy-java's framed stream) reading the compressed bytes through a {@link ByteBufInputStream}.
 *
 * <p>Library failures on hostile input come as {@link IOException}s, and for some malformed inputs
 * as runtime exceptions from inside the library (lz4-java's {@code LZ4Exception}, index and argument
 * errors): both mean {@link Decompressor#MALFORMED}. Thread-safety: confined to one owning thread.
 */
abstract class InputStreamDecompressor extends CappedDecompressor {
    /**
     * Heap scratch for a direct chunk: 64 KiB, a Snappy chunk's largest payload. Netty's own
     * InputStream path would allocate a fresh array per read of more than 1 KiB.
     */
    private static final int SCRATCH_BYTES = 64 * 1024;

    private byte[] scratch;
    private InputStream stream;

    InputStreamDecompressor(CompressionType type) {
        super(type);
    }

    /** Opens the library's decoding stream over {@code compressed}; it may read the header now. */
    abstract InputStream open(InputStream compressed) throws IOException;

    @Override
    final void start(ByteBuf compressed) throws MalformedInputException {
        stream = null;
        if (!compressed.isReadable()) {
            throw new MalformedInputException(type().configName() + ": empty input");
        }
        try {
            stream = open(new ByteBufInputStream(compressed));
        } catch (IOException | RuntimeException e) {
            throw new MalformedInputException(type().configName(), e);
        }
    }

    @Override
    final int fill(ByteBuf dst, int maxBytes) throws MalformedInputException {
        try {
            int n;
            if (dst.hasArray()) {
                byte[] array = dst.array();
                int offset = dst.arrayOffset() + dst.writerIndex();
                do {
                    n = stream.read(array, offset, maxBytes);
                } while (n == 0);
                if (n > 0) {
                    dst.writerIndex(dst.writerIndex() + n);
                }
            } else {
                if (scratch == null) {
                    scratch = new byte[SCRATCH_BYTES];
                }
                do {
                    n = stream.read(scratch, 0, Math.min(maxBytes, SCRATCH_BYTES));
                } while (n == 0);
                if (n > 0) {
                    dst.writeBytes(scratch, 0, n);
                }
            }
            return n < 0 ? FILL_END : n;
        } catch (IOException | RuntimeException e) {
            throw new MalformedInputException(type().configName(), e);
        }
    }

    @Override
    final void release() {
        stream = null;
    }
}
