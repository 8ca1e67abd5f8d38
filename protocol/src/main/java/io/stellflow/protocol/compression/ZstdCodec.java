package io.stellflow.protocol.compression;

import com.github.luben.zstd.EndDirective;
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import io.netty.buffer.ByteBuf;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * zstd: standard Zstandard frames (RFC 8878, magic {@code 28 b5 2f fd}) through zstd-jni's reusable
 * contexts on ByteBuffer views of the Netty buffers (heap or direct, no copy).
 *
 * <p>We write one frame with the content size in its header and no content checksum (the batch's
 * CRC-32C already covers the compressed bytes end to end). We read one or more concatenated frames,
 * skippable frames included, as the {@code zstd} tool does; a frame streamed through zstd's window
 * buffer whose window is larger than {@code 2^}{@value #WINDOW_LOG_MAX} bytes is {@link
 * Decompressor#MALFORMED} (one read in one pass or in place has no window buffer, so no limit: the
 * output the caller sized is the window). The broker's validation reads a frame that declares its
 * size in place ({@link ZstdInPlace}: libzstd through the FFM linker).
 *
 * <p>Thread-safety: see {@link CompressionCodec}.
 */
final class ZstdCodec implements CompressionCodec {
    private boolean closed;
    /**
     * Largest window a frame may ask the decoder for, as a power of two: 2^23 = 8 MiB, the window of
     * zstd's levels 1-19 at their largest (level 3, Kafka's default, uses at most 2^21); only
     * {@code --ultra} levels 20-22 and {@code --long} go beyond. It bounds the decoder's native
     * memory whatever a hostile frame declares (zstd's own default limit is 2^27 = 128 MiB).
     */
    static final int WINDOW_LOG_MAX = 23;

    private final int level;
    private ZstdCompressCtx ctx;

    ZstdCodec(int level) {
        this.level = level;
    }

    @Override
    public CompressionType type() {
        return CompressionType.ZSTD;
    }

    @Override
    public int compress(ByteBuf src, ByteBuf dst) {
        if (closed) {
            throw new IllegalStateException(type().configName() + " codec is closed");
        }
        if (dst.nioBufferCount() != 1) {
            throw new IllegalArgumentException("dst must be one memory region: " + dst);
        }
        if (ctx == null) {
            ctx = new ZstdCompressCtx();
        }
        ctx.reset();
        ctx.setLevel(level);
        ctx.setChecksum(false);
        ctx.setContentSize(true);
        int start = dst.writerIndex();
        int srcBytes = src.readableBytes();
        ByteBuffer in = src.nioBuffer(src.readerIndex(), srcBytes);
        // Room as the caller sized dst (the producer: its estimate of the compressed size) and 64 KiB.
        // Asking for compressBound (the input's size and more) up front grew every producer batch's
        // output buffer to its uncompressed size (4.5 MB for 1 MiB of zstd JSON) by reallocation and
        // copy (issue #21).
        dst.ensureWritable(64 * 1024);
        if (in.isDirect() && dst.isDirect()) {
            // One shot (ZSTD_compress2) straight from the source: zstd reads it in place. The streaming
            // call below copies the input into the context's window buffer (2 MiB + 128 KiB at level
            // 3), and a producer batch of 4.5 MB wraps that buffer, after which zstd matches in its
            // slower two-segment mode: 7% more codec time on the lab's JSON batches (issue #21).
            // Only when the output does not fit (the caller's estimate was low) is the batch compressed
            // again into compressBound: the first attempt's work is lost and dst grows to about the
            // input's size, rare with the producer's estimate.
            int n = compressOneShot(in, dst);
            if (n < 0) {
                dst.ensureWritable((int) Math.min(Integer.MAX_VALUE, Zstd.compressBound(srcBytes)));
                n = compressOneShot(in, dst);
                if (n < 0) {
                    throw new IllegalStateException("zstd: compressBound did not hold " + srcBytes + " bytes");
                }
            }
            dst.writerIndex(start + n);
            return n;
        }
        ctx.setPledgedSrcSize(srcBytes);
        // The stream grows dst 64 KiB at a time past the room given.
        boolean done = false;
        while (!done) {
            ByteBuffer out = dst.nioBuffer(dst.writerIndex(), dst.writableBytes());
            done = ctx.compressByteBufferStream(out, in, EndDirective.END);
            dst.writerIndex(dst.writerIndex() + out.position());
            if (!done) {
                dst.ensureWritable(64 * 1024);
            }
        }
        return dst.writerIndex() - start;
    }

    /**
     * Compresses all of {@code in} (direct) into the writable bytes of {@code dst} (direct) as one
     * frame; returns its size, or -1 when it did not fit (nothing of dst's indexes changed).
     */
    private int compressOneShot(ByteBuffer in, ByteBuf dst) {
        ByteBuffer out = dst.nioBuffer(dst.writerIndex(), dst.writableBytes());
        try {
            return ctx.compressDirectByteBuffer(
                    out, out.position(), out.remaining(), in, in.position(), in.remaining());
        } catch (ZstdException e) {
            if (e.getErrorCode() == Zstd.errDstSizeTooSmall()) {
                return -1;
            }
            throw e;
        }
    }

    @Override
    public Decompressor newDecompressor() {
        return new ZstdDecompressor();
    }

    @Override
    public void close() {
        closed = true;
        if (ctx != null) {
            ctx.close();
            ctx = null;
        }
    }

    static final class ZstdDecompressor extends CappedDecompressor {
        /**
         * Compressed bytes given to zstd per call when a frame is read in place: about 2 blocks of the
         * lab's JSON at level 3, 250 KiB decoded, which the caller then reads from the core's 2 MiB
         * L2. A block cut by a step's end is gathered in zstd's 128 KiB input buffer (a copy of
         * compressed bytes only).
         */
        static final int IN_PLACE_STEP_BYTES = 64 * 1024;

        private final ZstdDecompressCtx ctx = new ZstdDecompressCtx();
        private ByteBuffer in;
        /** The last call ended a frame: the stream may end here. */
        private boolean frameDone;
        /** {@link #singlePassBytes} of the stream started last. */
        private long singlePassBytes = -1;

        /** The in-place context, opened at the first {@link #startInPlace}; null when unavailable. */
        private ZstdInPlace inPlace;

        private boolean inPlaceOpened;
        /** {@link #readInPlace} was asked for this stream and the first read has not come yet. */
        private boolean inPlaceAsked;
        /** The first frame's output while it is read in place, else null. */
        private MemorySegment inPlaceOut;
        /** The chunk it lies in and that chunk's writerIndex at the frame's start. */
        private ByteBuf inPlaceChunk;
        /** The chunk's cached NIO view at the frame's start: a Netty buffer makes a new one when its memory changes. */
        private ByteBuffer inPlaceView;

        private int inPlaceBase;
        /** The input from the frame's start, while it is read in place. */
        private MemorySegment inPlaceIn;

        ZstdDecompressor() {
            super(CompressionType.ZSTD);
        }

        @Override
        void start(ByteBuf compressed) throws MalformedInputException {
            ctx.reset();
            ctx.setLongMax(WINDOW_LOG_MAX);
            singlePassBytes = -1;
            inPlaceAsked = false;
            endInPlace();
            in = compressed.nioBuffer();
            frameDone = false;
            if (!in.hasRemaining()) {
                throw new MalformedInputException("zstd: empty input, expected a frame");
            }
            singlePassBytes = declaredContentSize(in);
        }

        /**
         * zstd decodes a frame in one pass, straight into the output and with no window buffer, when
         * the first call of a frame has the whole frame as input and at least its declared content size
         * as output room; otherwise each block goes through the window buffer (2 MiB at level 3) and a
         * copy out of it: 5% of decoding time on the lab's 4.7 MB JSON batches (issue #21). No window
         * limit applies there: the memory is the caller's, at most the room it chose to give.
         */
        @Override
        public long singlePassBytes() {
            return singlePassBytes;
        }

        @Override
        boolean startInPlace() {
            inPlaceAsked = singlePassBytes > 0 && inPlaceAvailable();
            return inPlaceAsked;
        }

        /** Whether this JVM can read frames in place; opens the context at the first ask. */
        boolean inPlaceAvailable() {
            if (!inPlaceOpened) {
                inPlaceOpened = true;
                inPlace = ZstdInPlace.open();
            }
            return inPlace != null;
        }

        /** The first frame's content size from its header, or -1 (unknown, skippable, not a frame). */
        private static long declaredContentSize(ByteBuffer in) {
            long size;
            if (in.isDirect()) {
                size = Zstd.getDirectByteBufferFrameContentSize(in, in.position(), in.remaining());
            } else if (in.hasArray()) {
                size = Zstd.getFrameContentSize(in.array(), in.arrayOffset() + in.position(), in.remaining());
            } else {
                return -1;
            }
            // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are -1 and -2; a skippable frame says 0.
            return size > 0 && size <= Integer.MAX_VALUE ? size : -1;
        }

        @Override
        int fill(ByteBuf dst, int maxBytes) throws MalformedInputException {
            if (inPlaceAsked) {
                inPlaceAsked = false;
                // Direct memory only: a heap chunk may move between two steps (a critical call
                // pins it during one call only). A read-only input is fine: zstd only reads it.
                if (maxBytes >= singlePassBytes && dst.isDirect()) {
                    inPlaceBase = dst.writerIndex();
                    inPlaceChunk = dst;
                    inPlaceView = dst.internalNioBuffer(inPlaceBase, (int) singlePassBytes);
                    inPlaceOut = MemorySegment.ofBuffer(inPlaceView);
                    inPlaceIn = MemorySegment.ofBuffer(in);
                    inPlace.startFrame();
                }
            }
            if (inPlaceOut != null) {
                int n = fillInPlace(dst);
                if (n > 0) {
                    return n;
                }
                // The frame ended with no more output: what follows it, if anything, streams below.
            }
            while (true) {
                if (frameDone && !in.hasRemaining()) {
                    return FILL_END;
                }
                int before = in.position();
                // The buffer's own cached view (no object per call); zstd-jni moves its position.
                ByteBuffer out = dst.internalNioBuffer(dst.writerIndex(), maxBytes);
                int outStart = out.position();
                try {
                    frameDone = ctx.decompressByteBufferStream(out, in);
                } catch (ZstdException e) {
                    throw new MalformedInputException("zstd: " + e.getMessage());
                }
                int n = out.position() - outStart;
                if (n > 0) {
                    dst.writerIndex(dst.writerIndex() + n);
                    return n;
                }
                if (!frameDone && in.position() == before) {
                    throw new MalformedInputException("zstd: truncated frame");
                }
            }
        }

        /**
         * Gives zstd the next {@link #IN_PLACE_STEP_BYTES} of input until it decodes something into
         * the frame's output or the frame ends; returns the bytes appended (0: ended with none).
         */
        private int fillInPlace(ByteBuf dst) throws MalformedInputException {
            long size = inPlaceOut.byteSize();
            long outPos = inPlace.dstPos();
            if (outPos < size) {
                String broken = brokenPromise(dst, outPos, size);
                if (broken != null) {
                    throw new IllegalStateException("zstd frame read in place: " + broken + " at " + outPos + " of "
                            + size + " bytes (Decompressor#readInPlace)");
                }
            }
            long inEnd = inPlaceIn.byteSize();
            while (true) {
                long srcPos = inPlace.srcPos();
                long ret =
                        inPlace.decompress(inPlaceOut, size, inPlaceIn, Math.min(inEnd, srcPos + IN_PLACE_STEP_BYTES));
                if (inPlace.isError(ret)) {
                    endInPlace();
                    throw new MalformedInputException("zstd: " + inPlace.errorName(ret));
                }
                long produced = inPlace.dstPos() - outPos;
                if (ret == 0) { // the frame is complete: later frames go through zstd-jni
                    in.position(in.position() + (int) inPlace.srcPos());
                    frameDone = true;
                    endInPlace();
                }
                if (produced > 0) {
                    dst.writerIndex(dst.writerIndex() + (int) produced);
                    return (int) produced;
                }
                if (ret == 0) {
                    return 0;
                }
                if (inPlace.srcPos() == srcPos) {
                    endInPlace();
                    throw new MalformedInputException(
                            srcPos == inEnd ? "zstd: truncated frame" : "zstd: no progress in frame");
                }
            }
        }

        /**
         * How the caller broke its promise, or null when it kept it: the same chunk, its writerIndex
         * where the last read left it, over the same memory. A Netty buffer whose memory changes (a
         * capacity change) drops its cached NIO view, so the same view object means the same memory;
         * another view is compared by address (one segment, only then).
         */
        private String brokenPromise(ByteBuf dst, long outPos, long size) {
            if (dst != inPlaceChunk) {
                return "another chunk";
            }
            if (dst.writerIndex() != inPlaceBase + outPos) {
                return "the chunk was rewound or written";
            }
            if (dst.capacity() < inPlaceBase + size) {
                return "the chunk moved (shrunk)";
            }
            ByteBuffer view = dst.internalNioBuffer(dst.writerIndex(), (int) (size - outPos));
            if (view != inPlaceView && MemorySegment.ofBuffer(view).address() != inPlaceOut.address() + outPos) {
                return "the chunk moved (new memory)";
            }
            return null;
        }

        /** Drops the references the frame held to the caller's buffers. */
        private void endInPlace() {
            inPlaceOut = null;
            inPlaceView = null;
            inPlaceChunk = null;
            inPlaceIn = null;
        }

        @Override
        void release() {
            try {
                ctx.close();
            } finally {
                if (inPlace != null) {
                    inPlace.close();
                }
            }
        }
    }
}
