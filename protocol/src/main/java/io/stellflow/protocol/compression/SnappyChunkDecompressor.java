package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * The Snappy framing format read chunk by chunk with snappy-java's block decoder, into one direct
 * 64 KiB buffer reused from batch to batch: no stream objects and no arrays per batch (the framed
 * stream allocated about 96 KiB per 1 MiB batch, docs/compression.md). The library decodes; this
 * class walks the framing (format description of the snappy project): chunks of a type byte and a
 * 3-byte little-endian length; {@code 0xff} stream identifier ({@code sNaPpY}, first); {@code 0x00}
 * compressed data and {@code 0x01} uncompressed data, each with the masked CRC-32C of its data
 * (checked) and at most 65,536 bytes of it; {@code 0x02-0x7f} reserved: malformed; {@code
 * 0x80-0xfe} skippable (padding included).
 *
 * <p>A compressed buffer that is not one direct memory region (the block decoder's ByteBuffer API
 * takes direct buffers) goes through the library's framed stream instead ({@code fallback}).
 * Thread-safety: confined to one owning thread.
 */
final class SnappyChunkDecompressor extends CappedDecompressor {
    /** The framing format's largest chunk data. */
    private static final int MAX_DATA_BYTES = 65_536;

    private static final int STREAM_IDENTIFIER = 0xff;
    private static final int COMPRESSED = 0x00;
    private static final int UNCOMPRESSED = 0x01;
    private static final int MAX_RESERVED = 0x7f;
    private static final byte[] IDENTIFIER = {'s', 'N', 'a', 'P', 'p', 'Y'};
    private static final int CRC_MASK_DELTA = 0xa282ead8;

    private final CappedDecompressor fallback;
    private final ByteBuffer data = ByteBuffer.allocateDirect(MAX_DATA_BYTES);
    private final CRC32C crc = new CRC32C();

    private boolean useFallback;
    private ByteBuffer in;
    private int pos;
    private boolean sawIdentifier;

    /** @param fallback the framed-stream decompressor for heap or composite input; owned and closed by this one */
    SnappyChunkDecompressor(CappedDecompressor fallback) {
        super(CompressionType.SNAPPY);
        this.fallback = fallback;
        data.limit(0);
    }

    @Override
    void start(ByteBuf compressed) throws MalformedInputException {
        in = null;
        data.clear().limit(0);
        sawIdentifier = false;
        if (!compressed.isReadable()) {
            throw new MalformedInputException("snappy: empty input");
        }
        useFallback = compressed.nioBufferCount() != 1 || !compressed.isDirect();
        if (useFallback) {
            fallback.start(compressed);
            return;
        }
        in = compressed
                .nioBuffer(compressed.readerIndex(), compressed.readableBytes())
                .order(ByteOrder.LITTLE_ENDIAN);
        pos = 0;
    }

    @Override
    int fill(ByteBuf dst, int maxBytes) throws MalformedInputException {
        if (useFallback) {
            return fallback.fill(dst, maxBytes);
        }
        while (!data.hasRemaining()) {
            if (!nextChunk()) {
                return FILL_END;
            }
        }
        int n = Math.min(maxBytes, data.remaining());
        int limit = data.limit();
        data.limit(data.position() + n);
        dst.writeBytes(data);
        data.limit(limit);
        return n;
    }

    @Override
    void release() {
        in = null;
        fallback.close();
    }

    /** Reads the next chunk; its data, if any, is then between data's position and limit. False at the clean end. */
    private boolean nextChunk() throws MalformedInputException {
        int end = in.limit();
        if (pos == end) {
            if (!sawIdentifier) {
                throw new MalformedInputException("snappy: no stream identifier");
            }
            return false;
        }
        if (end - pos < 4) {
            throw new MalformedInputException("snappy: truncated chunk header");
        }
        int header = in.getInt(pos);
        int type = header & 0xff;
        int length = header >>> 8;
        if (length > end - pos - 4) {
            throw new MalformedInputException("snappy: chunk of " + length + " bytes past the end");
        }
        int body = pos + 4;
        pos = body + length;
        if (type == STREAM_IDENTIFIER) {
            if (length != IDENTIFIER.length || !identifierAt(body)) {
                throw new MalformedInputException("snappy: bad stream identifier");
            }
            sawIdentifier = true;
            return true;
        }
        if (!sawIdentifier) {
            throw new MalformedInputException("snappy: the stream does not start with its identifier");
        }
        if (type > MAX_RESERVED) {
            return true; // skippable (padding included)
        }
        if (type != COMPRESSED && type != UNCOMPRESSED) {
            throw new MalformedInputException("snappy: reserved unskippable chunk type " + type);
        }
        if (length < 4) {
            throw new MalformedInputException("snappy: chunk without its checksum");
        }
        int expectedCrc = in.getInt(body);
        int from = body + 4;
        int size = length - 4;
        data.clear();
        if (type == UNCOMPRESSED) {
            if (size > MAX_DATA_BYTES) {
                throw new MalformedInputException("snappy: uncompressed chunk of " + size + " bytes");
            }
            data.put(0, in, from, size).limit(size);
        } else {
            int oldLimit = in.limit();
            try {
                in.limit(from + size).position(from);
                int declared = Snappy.uncompressedLength(in);
                if (declared < 0 || declared > MAX_DATA_BYTES) {
                    throw new MalformedInputException("snappy: chunk declares " + declared + " bytes");
                }
                int n = Snappy.uncompress(in, data);
                data.position(0).limit(n);
            } catch (IOException | RuntimeException e) { // SnappyError on hostile input
                throw new MalformedInputException("snappy", e);
            } finally {
                in.limit(oldLimit).position(0);
            }
        }
        crc.reset();
        crc.update(data);
        data.position(0);
        int actual = (int) crc.getValue();
        if (((actual >>> 15) | (actual << 17)) + CRC_MASK_DELTA != expectedCrc) {
            throw new MalformedInputException("snappy: chunk checksum mismatch");
        }
        return true;
    }

    private boolean identifierAt(int p) {
        for (int i = 0; i < IDENTIFIER.length; i++) {
            if (in.get(p + i) != IDENTIFIER[i]) {
                return false;
            }
        }
        return true;
    }
}
