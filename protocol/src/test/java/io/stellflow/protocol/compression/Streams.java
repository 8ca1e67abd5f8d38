package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.ByteArrayOutputStream;

/** Test helpers: compress and decompress whole byte arrays through pooled direct buffers. */
final class Streams {
    private Streams() {}

    /** What a whole decompression gave: the final code and every byte handed out before it. */
    record Outcome(int code, byte[] bytes, String failureReason) {}

    static byte[] compress(CompressionCodec codec, byte[] data) {
        ByteBuf src = direct(data);
        ByteBuf dst = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        try {
            int n = codec.compress(src, dst);
            if (n != dst.readableBytes() || src.readerIndex() != 0 || src.readableBytes() != data.length) {
                throw new AssertionError(
                        "compress returned " + n + " but wrote " + dst.readableBytes() + ", or moved src's indexes");
            }
            return ByteBufUtil.getBytes(dst);
        } finally {
            src.release();
            dst.release();
        }
    }

    static Outcome decompress(Decompressor d, byte[] compressed, long capBytes, int chunkBytes) {
        return decompress(d, compressed, capBytes, chunkBytes, false);
    }

    /** As above, into a pooled heap chunk when {@code heapChunk}, else a pooled direct one. */
    static Outcome decompress(Decompressor d, byte[] compressed, long capBytes, int chunkBytes, boolean heapChunk) {
        ByteBuf in = direct(compressed);
        ByteBuf chunk = heapChunk
                ? PooledByteBufAllocator.DEFAULT.heapBuffer(chunkBytes, chunkBytes)
                : PooledByteBufAllocator.DEFAULT.directBuffer(chunkBytes, chunkBytes);
        try {
            d.reset(in, capBytes);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int n;
            while ((n = d.read(chunk.clear())) > 0) {
                if (n != chunk.readableBytes() || n > chunkBytes) {
                    throw new AssertionError("read returned " + n + " but the chunk holds " + chunk.readableBytes());
                }
                out.write(ByteBufUtil.getBytes(chunk), 0, n);
                if (out.size() > capBytes) {
                    throw new AssertionError("handed out " + out.size() + " bytes past the cap " + capBytes);
                }
            }
            if (d.read(chunk.clear()) != n) {
                throw new AssertionError("a final code must repeat");
            }
            if (in.readerIndex() != 0 || in.readableBytes() != compressed.length) {
                throw new AssertionError("the decompressor moved the input's indexes");
            }
            if (d.decompressedBytes() != out.size()) {
                throw new AssertionError("decompressedBytes " + d.decompressedBytes() + " != " + out.size());
            }
            return new Outcome(n, out.toByteArray(), d.failureReason());
        } finally {
            in.release();
            chunk.release();
        }
    }

    /**
     * Reads an already reset {@code d} to its final code through a direct chunk of {@code chunkBytes},
     * rewound before each read (a streamed read: nothing read in place).
     */
    static Outcome drain(Decompressor d, int chunkBytes) {
        ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(chunkBytes, chunkBytes);
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int n;
            while ((n = d.read(chunk.clear())) > 0) {
                out.write(ByteBufUtil.getBytes(chunk), 0, n);
            }
            return new Outcome(n, out.toByteArray(), d.failureReason());
        } finally {
            chunk.release();
        }
    }

    static Outcome decompress(CompressionCodec codec, byte[] compressed, long capBytes) {
        try (Decompressor d = codec.newDecompressor()) {
            return decompress(d, compressed, capBytes, 8192);
        }
    }

    static ByteBuf direct(byte[] data) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, data.length));
        return b.writeBytes(data);
    }
}
