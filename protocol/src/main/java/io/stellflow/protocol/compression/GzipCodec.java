package io.stellflow.protocol.compression;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * gzip: an RFC 1952 stream made of the JDK's raw deflate ({@link Deflater}/{@link Inflater} with
 * {@code nowrap}) between the gzip header and the CRC-32/ISIZE trailer written and checked here.
 *
 * <pre>
 * member: 1f 8b | CM=08 | FLG | MTIME (4, LE) | XFL | OS | [FEXTRA: XLEN (2, LE), XLEN bytes]
 *         [FNAME: zero-terminated] [FCOMMENT: zero-terminated] [FHCRC: 2 bytes, LE]
 *         deflate data | CRC32 (4, LE) | ISIZE (4, LE: size mod 2^32)
 * </pre>
 *
 * <p>We write one member with FLG = 0, MTIME = 0, XFL by level (2 at 9, 4 at 1), OS = 255. We read
 * one or more members (as {@code gzip -d} does) with any of the optional fields; reserved FLG bits
 * 5-7, a CM other than 8, a bad header CRC-16, CRC-32 or ISIZE, truncation and bytes after the last
 * member that do not start a member are {@link Decompressor#MALFORMED}.
 *
 * <p>Works directly on heap or direct buffers through the JDK's ByteBuffer entry points (no copy).
 * Thread-safety: see {@link CompressionCodec}.
 */
final class GzipCodec implements CompressionCodec {
    private boolean closed;
    static final int HEADER_BYTES = 10;
    static final int TRAILER_BYTES = 8;
    private static final int ID1 = 0x1f;
    private static final int ID2 = 0x8b;
    private static final int CM_DEFLATE = 8;
    private static final int FHCRC = 0x02;
    private static final int FEXTRA = 0x04;
    private static final int FNAME = 0x08;
    private static final int FCOMMENT = 0x10;
    private static final int FLG_RESERVED = 0xe0;
    private static final int OS_UNKNOWN = 255;
    /** Output growth step while deflating: 64 KiB, one pooled chunk page run. */
    private static final int GROW_BYTES = 64 * 1024;

    private final int level;
    private final Deflater deflater;
    private final CRC32 crc = new CRC32();

    GzipCodec(int level) {
        this.level = level;
        this.deflater = new Deflater(level, true);
    }

    @Override
    public CompressionType type() {
        return CompressionType.GZIP;
    }

    @Override
    public int compress(ByteBuf src, ByteBuf dst) {
        if (closed) {
            throw new IllegalStateException(type().configName() + " codec is closed");
        }
        if (dst.nioBufferCount() != 1) {
            throw new IllegalArgumentException("dst must be one memory region: " + dst);
        }
        int start = dst.writerIndex();
        int xfl = level == 9 ? 2 : level == 1 ? 4 : 0;
        dst.ensureWritable(HEADER_BYTES);
        dst.writeByte(ID1).writeByte(ID2).writeByte(CM_DEFLATE).writeByte(0).writeIntLE(0);
        dst.writeByte(xfl).writeByte(OS_UNKNOWN);

        ByteBuffer in = src.nioBuffer(src.readerIndex(), src.readableBytes());
        crc.reset();
        crc.update(in.duplicate());
        deflater.reset();
        deflater.setInput(in);
        deflater.finish();
        while (!deflater.finished()) {
            dst.ensureWritable(GROW_BYTES);
            ByteBuffer out = dst.nioBuffer(dst.writerIndex(), dst.writableBytes());
            int n = deflater.deflate(out);
            dst.writerIndex(dst.writerIndex() + n);
        }
        dst.ensureWritable(TRAILER_BYTES);
        dst.writeIntLE((int) crc.getValue()).writeIntLE(src.readableBytes());
        return dst.writerIndex() - start;
    }

    @Override
    public Decompressor newDecompressor() {
        return new GzipDecompressor();
    }

    @Override
    public void close() {
        closed = true;
        deflater.end();
    }

    /** The member state machine: header, deflate data, trailer, then another member or the end. */
    private static final class GzipDecompressor extends CappedDecompressor {
        private final Inflater inflater = new Inflater(true);
        private final CRC32 crc = new CRC32();
        private ByteBuf in;
        private ByteBuffer inNio;
        private boolean inMember;
        private long memberBytes;
        /** Position of {@link #inNio} that {@link #in}'s readerIndex matches. */
        private int lastInPosition;

        GzipDecompressor() {
            super(CompressionType.GZIP);
        }

        @Override
        void start(ByteBuf compressed) throws MalformedInputException {
            in = compressed;
            inMember = false;
            if (!in.isReadable()) {
                throw new MalformedInputException("gzip: empty input, expected a member");
            }
            startMember();
        }

        @Override
        int fill(ByteBuf dst, int maxBytes) throws MalformedInputException {
            while (true) {
                if (!inMember) {
                    if (!in.isReadable()) {
                        return FILL_END;
                    }
                    startMember();
                }
                ByteBuffer out = dst.nioBuffer(dst.writerIndex(), maxBytes);
                int n;
                try {
                    n = inflater.inflate(out);
                } catch (DataFormatException e) {
                    throw new MalformedInputException("gzip: bad deflate data", e);
                }
                int consumed = inNio.position() - lastInPosition;
                in.readerIndex(in.readerIndex() + consumed);
                lastInPosition = inNio.position();
                if (n > 0) {
                    crc.update(dst.nioBuffer(dst.writerIndex(), n));
                    dst.writerIndex(dst.writerIndex() + n);
                    memberBytes += n;
                }
                if (inflater.finished()) {
                    endMember();
                }
                if (n > 0) {
                    return n;
                }
                if (inMember && (inflater.needsInput() || inflater.needsDictionary() || consumed == 0)) {
                    throw new MalformedInputException("gzip: truncated deflate data");
                }
            }
        }

        private void startMember() throws MalformedInputException {
            int p = in.readerIndex();
            need(p, HEADER_BYTES, "header");
            if (in.getUnsignedByte(p) != ID1 || in.getUnsignedByte(p + 1) != ID2) {
                throw new MalformedInputException(
                        "gzip: bad magic 0x" + Integer.toHexString(in.getUnsignedShort(p)) + " at input byte " + p);
            }
            int cm = in.getUnsignedByte(p + 2);
            if (cm != CM_DEFLATE) {
                throw new MalformedInputException("gzip: compression method " + cm + ", expected 8");
            }
            int flg = in.getUnsignedByte(p + 3);
            if ((flg & FLG_RESERVED) != 0) {
                throw new MalformedInputException("gzip: reserved FLG bits set: 0x" + Integer.toHexString(flg));
            }
            int q = p + HEADER_BYTES;
            if ((flg & FEXTRA) != 0) {
                need(q, 2, "FEXTRA length");
                int xlen = in.getUnsignedShortLE(q);
                need(q + 2, xlen, "FEXTRA");
                q += 2 + xlen;
            }
            if ((flg & FNAME) != 0) {
                q = skipZeroTerminated(q, "FNAME");
            }
            if ((flg & FCOMMENT) != 0) {
                q = skipZeroTerminated(q, "FCOMMENT");
            }
            if ((flg & FHCRC) != 0) {
                need(q, 2, "FHCRC");
                crc.reset();
                crc.update(in.nioBuffer(p, q - p));
                if ((crc.getValue() & 0xffff) != in.getUnsignedShortLE(q)) {
                    throw new MalformedInputException("gzip: header CRC-16 mismatch");
                }
                q += 2;
            }
            in.readerIndex(q);
            inflater.reset();
            inNio = in.nioBuffer(q, in.writerIndex() - q);
            lastInPosition = inNio.position();
            inflater.setInput(inNio);
            crc.reset();
            memberBytes = 0;
            inMember = true;
        }

        private void endMember() throws MalformedInputException {
            int p = in.readerIndex();
            need(p, TRAILER_BYTES, "trailer");
            long storedCrc = in.getUnsignedIntLE(p);
            long storedSize = in.getUnsignedIntLE(p + 4);
            if (storedCrc != crc.getValue()) {
                throw new MalformedInputException("gzip: CRC-32 mismatch: stored 0x" + Long.toHexString(storedCrc)
                        + ", computed 0x" + Long.toHexString(crc.getValue()));
            }
            if (storedSize != (memberBytes & 0xffffffffL)) {
                throw new MalformedInputException(
                        "gzip: ISIZE mismatch: stored " + storedSize + ", decompressed " + memberBytes);
            }
            in.readerIndex(p + TRAILER_BYTES);
            inMember = false;
        }

        private int skipZeroTerminated(int from, String field) throws MalformedInputException {
            int zero = in.indexOf(from, in.writerIndex(), (byte) 0);
            if (zero < 0) {
                throw new MalformedInputException("gzip: truncated " + field);
            }
            return zero + 1;
        }

        private void need(int from, int bytes, String what) throws MalformedInputException {
            if (in.writerIndex() - from < bytes) {
                throw new MalformedInputException("gzip: truncated " + what + " at input byte " + from);
            }
        }

        @Override
        void release() {
            inflater.end();
        }
    }
}
