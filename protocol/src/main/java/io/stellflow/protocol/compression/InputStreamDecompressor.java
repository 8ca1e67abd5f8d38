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
            do {
                n = dst.writeBytes(stream, maxBytes);
            } while (n == 0);
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
