package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.StreamingXXHash32;
import net.jpountz.xxhash.XXHash32;

/**
 * The LZ4 frame format read block by block with lz4-java's safe block decompressor, into one block
 * array reused from batch to batch: no stream objects and no block arrays per batch (the frame
 * stream allocated about 120 KiB per 1 MiB batch, docs/compression.md). The library does the
 * decoding and the xxHash32 checks; this class only walks the frame layout (LZ4 frame format
 * specification 1.6.x): magic {@code 04 22 4d 18}, FLG and BD bytes, optional content size, header
 * checksum, then blocks (4-byte little-endian size, high bit = stored uncompressed, 0 = end mark,
 * optional block checksum) and an optional content checksum; skippable frames ({@code 5X 2a 4d 18})
 * are skipped; frames may follow each other.
 *
 * <p>Not supported, {@link Decompressor#MALFORMED} with the reason, as lz4-java's frame stream did
 * before: frames with linked blocks (FLG block independence 0: a block may refer to the previous
 * 64 KiB, which a block API does not see; the {@code lz4} tool writes them only with {@code -BD},
 * Kafka's and our producer never) and frames with a dictionary id. A compressed buffer that is not
 * one memory region goes through the library's frame stream instead ({@code fallback}).
 *
 * <p>Memory: the block array grows to the largest block maximum seen (64 KiB for the frames we
 * write, at most 4 MiB) and stays. Thread-safety: confined to one owning thread.
 */
final class Lz4BlockDecompressor extends CappedDecompressor {
    private static final int MAGIC = 0x184D2204;
    private static final int SKIPPABLE_MAGIC_MASK = 0xFFFFFFF0;
    private static final int SKIPPABLE_MAGIC = 0x184D2A50;
    private static final int FLG_VERSION_MASK = 0xC0;
    private static final int FLG_VERSION_01 = 0x40;
    private static final int FLG_BLOCK_INDEPENDENCE = 0x20;
    private static final int FLG_BLOCK_CHECKSUM = 0x10;
    private static final int FLG_CONTENT_SIZE = 0x08;
    private static final int FLG_CONTENT_CHECKSUM = 0x04;
    private static final int FLG_RESERVED = 0x02;
    private static final int FLG_DICT_ID = 0x01;
    private static final int BD_RESERVED = 0x8F;
    private static final int UNCOMPRESSED_BLOCK = 0x80000000;

    private final LZ4SafeDecompressor safe;
    private final XXHash32 xxhash;
    private final StreamingXXHash32 contentHash;
    private final CappedDecompressor fallback;

    private boolean useFallback;
    private ByteBuffer in;
    private int pos;
    private byte[] block = new byte[0];
    private ByteBuffer blockView = ByteBuffer.wrap(block);
    private int blockPos;
    private int blockLength;

    private boolean inFrame;
    private boolean blockChecksum;
    private boolean contentChecksum;
    private long contentSize;
    private long frameBytes;
    private int maxBlockBytes;

    /**
     * @param fallback the frame-stream decompressor for a compressed buffer of several memory
     *     regions; owned and closed by this one
     */
    Lz4BlockDecompressor(
            LZ4SafeDecompressor safe, XXHash32 xxhash, StreamingXXHash32 contentHash, CappedDecompressor fallback) {
        super(CompressionType.LZ4);
        this.safe = safe;
        this.xxhash = xxhash;
        this.contentHash = contentHash;
        this.fallback = fallback;
    }

    @Override
    void start(ByteBuf compressed) throws MalformedInputException {
        in = null;
        inFrame = false;
        blockPos = 0;
        blockLength = 0;
        if (!compressed.isReadable()) {
            throw new MalformedInputException("lz4: empty input");
        }
        useFallback = compressed.nioBufferCount() != 1;
        if (!useFallback) {
            in = compressed
                    .nioBuffer(compressed.readerIndex(), compressed.readableBytes())
                    .order(ByteOrder.LITTLE_ENDIAN);
            pos = 0;
        }
        if (useFallback) {
            in = null;
            fallback.start(compressed);
        }
    }

    @Override
    int fill(ByteBuf dst, int maxBytes) throws MalformedInputException {
        if (useFallback) {
            return fallback.fill(dst, maxBytes);
        }
        while (blockPos == blockLength) {
            int direct = nextBlock(dst, maxBytes);
            if (direct == FILL_END) {
                return FILL_END;
            }
            if (direct > 0) {
                return direct;
            }
        }
        int n = Math.min(maxBytes, blockLength - blockPos);
        dst.writeBytes(block, blockPos, n);
        blockPos += n;
        return n;
    }

    @Override
    void release() {
        in = null;
        contentHash.close();
        fallback.close();
    }

    /**
     * Decodes the next block: straight into {@code dst} when it has room for the frame's largest
     * block within {@code maxBytes} and no content checksum is to be summed (the hash reads arrays),
     * else into {@link #block}. Returns the bytes appended to {@code dst} (> 0), 0 when they went to
     * {@link #block} (or an end mark or an empty block passed), {@link #FILL_END} at the clean end of
     * the input.
     */
    private int nextBlock(ByteBuf dst, int maxBytes) throws MalformedInputException {
        while (!inFrame) {
            if (pos == in.limit()) {
                return FILL_END;
            }
            frameHeader();
        }
        int size = intAt(pos, "block size");
        pos += 4;
        if (size == 0) { // end mark
            if (contentChecksum && contentHash.getValue() != intAt(pos, "content checksum")) {
                throw new MalformedInputException("lz4: content checksum mismatch");
            }
            pos += contentChecksum ? 4 : 0;
            if (contentSize >= 0 && frameBytes != contentSize) {
                throw new MalformedInputException(
                        "lz4: frame holds " + frameBytes + " bytes, its header says " + contentSize);
            }
            inFrame = false;
            blockPos = 0;
            blockLength = 0;
            return 0; // nothing to hand out; the caller asks again
        }
        boolean stored = (size & UNCOMPRESSED_BLOCK) != 0;
        size &= ~UNCOMPRESSED_BLOCK;
        if (size > maxBlockBytes || size > in.limit() - pos - (blockChecksum ? 4 : 0)) {
            throw new MalformedInputException(
                    "lz4: block of " + size + " bytes (max " + maxBlockBytes + ", " + (in.limit() - pos) + " left)");
        }
        if (blockChecksum && xxhash.hash(in, pos, size, 0) != in.getInt(pos + size)) {
            throw new MalformedInputException("lz4: block checksum mismatch");
        }
        // Straight into dst when it can take any block: no copy out of the block array (4% of a
        // broker's samples on 1 MiB lz4 batches, issue #21). dst's own cached view, positioned where
        // its writerIndex lies in it: no object per block.
        boolean direct = !contentChecksum && maxBytes >= maxBlockBytes;
        ByteBuffer out = direct ? dst.internalNioBuffer(dst.writerIndex(), maxBlockBytes) : blockView;
        int n = decodeBlock(stored, size, out, direct ? out.position() : 0);
        pos += size + (blockChecksum ? 4 : 0);
        frameBytes += n;
        blockPos = 0;
        if (direct) {
            dst.writerIndex(dst.writerIndex() + n);
            blockLength = 0;
            return n;
        }
        if (contentChecksum) {
            contentHash.update(block, 0, n);
        }
        blockLength = n;
        return 0;
    }

    /**
     * Decodes the block of {@code size} bytes at {@link #pos} (stored or compressed) into {@code out}
     * from index {@code outOff}, which has room for {@link #maxBlockBytes}; returns its size.
     */
    private int decodeBlock(boolean stored, int size, ByteBuffer out, int outOff) throws MalformedInputException {
        if (stored) {
            out.put(outOff, in, pos, size);
            return size;
        }
        try {
            return safe.decompress(in, pos, size, out, outOff, maxBlockBytes);
        } catch (RuntimeException e) { // LZ4Exception and index errors on hostile input
            throw new MalformedInputException("lz4", e);
        }
    }

    /** Reads a frame header at {@link #pos} (skipping skippable frames); sets the frame state. */
    private void frameHeader() throws MalformedInputException {
        int magic = intAt(pos, "magic");
        if ((magic & SKIPPABLE_MAGIC_MASK) == SKIPPABLE_MAGIC) {
            long skip = Integer.toUnsignedLong(intAt(pos + 4, "skippable frame size"));
            if (skip > in.limit() - pos - 8L) {
                throw new MalformedInputException("lz4: skippable frame of " + skip + " bytes past the end");
            }
            pos += 8 + (int) skip;
            return;
        }
        if (magic != MAGIC) {
            throw new MalformedInputException("lz4: bad magic " + Integer.toHexString(magic));
        }
        int flg = byteAt(pos + 4);
        int bd = byteAt(pos + 5);
        if ((flg & FLG_VERSION_MASK) != FLG_VERSION_01 || (flg & FLG_RESERVED) != 0 || (bd & BD_RESERVED) != 0) {
            throw new MalformedInputException("lz4: bad frame descriptor FLG " + flg + " BD " + bd);
        }
        if ((flg & FLG_DICT_ID) != 0) {
            throw new MalformedInputException("lz4: frames with a dictionary id are not supported");
        }
        if ((flg & FLG_BLOCK_INDEPENDENCE) == 0) {
            // A block may refer to the previous 64 KiB: the block API sees one block. lz4-java's frame
            // stream refuses these frames too; producers (ours, Kafka's) write independent blocks.
            throw new MalformedInputException("lz4: frames with linked blocks are not supported");
        }
        int maxSizeCode = (bd >> 4) & 0x07;
        if (maxSizeCode < 4) {
            throw new MalformedInputException("lz4: bad block maximum size code " + maxSizeCode);
        }
        maxBlockBytes = 1 << (8 + 2 * maxSizeCode); // 4: 64 KiB, 5: 256 KiB, 6: 1 MiB, 7: 4 MiB
        int descriptorBytes = 2 + ((flg & FLG_CONTENT_SIZE) != 0 ? 8 : 0);
        int headerChecksum = byteAt(pos + 4 + descriptorBytes);
        if (((xxhash.hash(in, pos + 4, descriptorBytes, 0) >> 8) & 0xFF) != headerChecksum) {
            throw new MalformedInputException("lz4: header checksum mismatch");
        }
        contentSize = (flg & FLG_CONTENT_SIZE) != 0 ? in.getLong(pos + 6) : -1;
        blockChecksum = (flg & FLG_BLOCK_CHECKSUM) != 0;
        contentChecksum = (flg & FLG_CONTENT_CHECKSUM) != 0;
        if (contentChecksum) {
            contentHash.reset();
        }
        if (block.length < maxBlockBytes) {
            block = new byte[maxBlockBytes];
            blockView = ByteBuffer.wrap(block);
        }
        frameBytes = 0;
        pos += 4 + descriptorBytes + 1;
        inFrame = true;
    }

    private int intAt(int p, String what) throws MalformedInputException {
        if (p < 0 || in.limit() - p < 4) {
            throw new MalformedInputException("lz4: truncated input (" + what + ")");
        }
        return in.getInt(p);
    }

    private int byteAt(int p) throws MalformedInputException {
        if (p < 0 || p >= in.limit()) {
            throw new MalformedInputException("lz4: truncated frame header");
        }
        return in.get(p) & 0xFF;
    }
}
