package io.stellflow.protocol.fuzz;

import static io.stellflow.protocol.fuzz.Oracle.check;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.util.ReferenceCountUtil;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.OversizedFrame;
import io.stellflow.protocol.RequestHeader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Fuzz target: a connection's inbound byte stream through {@link FrameDecoder} ({@code
 * docs/spec/wire-protocol.md} §1.1-1.3), in an {@link EmbeddedChannel}, cut into reads of fuzzed
 * sizes and buffer kinds, optionally read in place into the decoder's {@link
 * FrameDecoder#readTarget} as the broker's transports do.
 *
 * <p>Input: byte 0 holds flags: bit 0 the response decoder ({@link FrameDecoder#forResponses}) instead
 * of the request one, bits 1-2 the request limit (10, 64, 4096 or {@value Frames#MAX_FRAME_LENGTH}
 * payload bytes), bit 3 reads in place; byte 1 seeds the read sizes (0: the whole stream in one
 * read); the rest is the stream.
 *
 * <p>The oracle is a plain reading of the spec over the whole stream (the expected outputs). A
 * finding (crash) is: any output other than the expected one, in order: each complete frame in
 * range yields exactly its payload (and for requests one that can be answered: at least {@value
 * Frames#MIN_ANSWERABLE_PAYLOAD} bytes), each complete oversized request frame one {@link
 * OversizedFrame} with the apiKey, correlationId and length it carried, and nothing after a frame
 * that cannot be resynchronised but the documented end of the stream ({@link
 * FrameDecoder.UnsyncableFrame} and a close for requests, {@link CorruptedFrameException} for
 * responses); an incomplete last frame yields nothing. So every complete frame gets an answerable
 * request, an error answer or the close. Also: any other exception in the pipeline, an output or a
 * read buffer or a frame buffer the decoder allocated not released after the channel is closed
 * (reference counts, plus Netty's PARANOID detector), a read target larger than the bytes the frame
 * still misses.
 */
public final class FrameDecoderTarget {
    private static final int[] REQUEST_LIMITS = {Frames.MIN_ANSWERABLE_PAYLOAD, 64, 4096, Frames.MAX_FRAME_LENGTH};

    private FrameDecoderTarget() {}

    /** The end of the stream the spec prescribes, if the stream was given up. */
    private enum End {
        OPEN,
        UNSYNCABLE_CLOSE,
        CORRUPTED_EXCEPTION
    }

    /** What the decoder must emit for {@code stream}: payload byte arrays and {@link OversizedFrame}s. */
    private record Expected(List<Object> outputs, End end, int unsyncableLength, List<long[]> frames) {}

    public static void run(byte[] input) {
        if (input.length < 2) {
            return;
        }
        boolean responses = (input[0] & 1) != 0;
        int limit = responses ? Frames.MAX_FRAME_LENGTH : REQUEST_LIMITS[(input[0] >>> 1) & 3];
        boolean inPlace = (input[0] & 8) != 0;
        byte[] stream = Arrays.copyOfRange(input, 2, input.length);
        Expected expected = expect(stream, responses, limit);

        TrackingAllocator alloc = new TrackingAllocator();
        Recorder recorder = new Recorder();
        FrameDecoder decoder = responses ? FrameDecoder.forResponses() : FrameDecoder.forRequests(limit);
        EmbeddedChannel ch = new EmbeddedChannel(decoder, recorder);
        ch.config().setAllocator(alloc);
        List<ByteBuf> reads = new ArrayList<>();
        List<Object> outputs = new ArrayList<>();
        SplittableRandom sizes = new SplittableRandom(input[1]);
        int maxRead = 1 + (input[1] & 0x3F) * 8;
        try {
            int pos = 0;
            while (pos < stream.length && ch.isOpen()) {
                int n = input[1] == 0 ? stream.length - pos : Math.min(stream.length - pos, 1 + sizes.nextInt(maxRead));
                ByteBuf target = inPlace ? decoder.readTarget() : null;
                ByteBuf read;
                if (target != null) {
                    long missing = missingBytes(expected, pos);
                    check(
                            target.capacity() <= missing,
                            "read target of " + target.capacity() + " bytes, the frame misses " + missing);
                    n = Math.min(n, target.capacity());
                    read = target.writeBytes(stream, pos, n);
                } else {
                    read = readBuffer(sizes.nextInt(3), stream, pos, n);
                    reads.add(read);
                }
                pos += n;
                ch.writeInbound(read);
                for (Object o; (o = ch.readInbound()) != null; ) {
                    outputs.add(o);
                }
            }
            check(
                    recorder.unexpected == null,
                    "exception in the pipeline: " + recorder.unexpected + " (" + recorder.unexpectedCause() + ")");
            compare(expected, outputs, recorder, ch.isOpen());
        } finally {
            outputs.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
        for (ByteBuf b : reads) {
            check(b.refCnt() == 0, "a read buffer was not released: refCnt " + b.refCnt());
        }
        for (ByteBuf b : alloc.allocated) {
            check(b.refCnt() == 0, "a frame buffer the decoder allocated was not released: refCnt " + b.refCnt());
        }
    }

    private static void compare(Expected expected, List<Object> outputs, Recorder recorder, boolean open) {
        check(
                outputs.size() == expected.outputs().size(),
                outputs.size() + " outputs, expected " + expected.outputs().size() + " (end " + expected.end() + ")");
        for (int i = 0; i < outputs.size(); i++) {
            Object want = expected.outputs().get(i);
            Object got = outputs.get(i);
            if (want instanceof byte[] payload) {
                check(
                        got instanceof ByteBuf b
                                && b.readableBytes() == payload.length
                                && ByteBufUtil.equals(
                                        b, b.readerIndex(), Unpooled.wrappedBuffer(payload), 0, payload.length),
                        "output " + i + " is not the frame's payload of " + payload.length + " bytes: " + got);
                if (got instanceof ByteBuf b && payload.length >= Frames.MIN_ANSWERABLE_PAYLOAD) {
                    check(
                            RequestHeader.peekCorrelationId(b)
                                    == Unpooled.wrappedBuffer(payload).getInt(6),
                            "output " + i + ": correlationId not at offset 6");
                }
            } else {
                check(want.equals(got), "output " + i + " is " + got + ", expected " + want);
            }
        }
        switch (expected.end()) {
            case OPEN -> {
                check(open, "the connection was closed with no unsyncable frame");
                check(recorder.unsyncable == null && recorder.corrupted == null, "the stream was given up early");
            }
            case UNSYNCABLE_CLOSE -> {
                check(!open, "an unsyncable request frame did not close the connection");
                check(
                        recorder.unsyncable != null && recorder.unsyncable.frameLength() == expected.unsyncableLength(),
                        "UnsyncableFrame event " + recorder.unsyncable + ", frameLength "
                                + expected.unsyncableLength());
            }
            case CORRUPTED_EXCEPTION ->
                check(
                        recorder.corrupted != null && recorder.corruptions == 1,
                        "an out-of-range response frame length gave " + recorder.corruptions
                                + " CorruptedFrameException");
        }
    }

    /** The spec's reading of the whole stream. */
    private static Expected expect(byte[] stream, boolean responses, int limit) {
        List<Object> outputs = new ArrayList<>();
        List<long[]> frames = new ArrayList<>();
        int min = responses ? 0 : Frames.MIN_ANSWERABLE_PAYLOAD;
        ByteBuf s = Unpooled.wrappedBuffer(stream);
        int pos = 0;
        while (stream.length - pos >= Frames.LENGTH_FIELD_SIZE) {
            int length = s.getInt(pos);
            if (length < min || (responses && length > limit)) {
                return new Expected(
                        outputs, responses ? End.CORRUPTED_EXCEPTION : End.UNSYNCABLE_CLOSE, length, frames);
            }
            frames.add(new long[] {pos, pos + (long) Frames.LENGTH_FIELD_SIZE + length});
            pos += Frames.LENGTH_FIELD_SIZE;
            if (stream.length - pos < length) {
                break;
            }
            if (length > limit) {
                outputs.add(new OversizedFrame(
                        s.getShort(pos + RequestHeader.API_KEY_OFFSET),
                        s.getInt(pos + RequestHeader.CORRELATION_ID_OFFSET),
                        length));
            } else {
                outputs.add(Arrays.copyOfRange(stream, pos, pos + length));
            }
            pos += length;
        }
        return new Expected(outputs, End.OPEN, 0, frames);
    }

    /** Bytes the frame holding stream position {@code pos} still misses (its end minus pos); 0 between frames. */
    private static long missingBytes(Expected expected, int pos) {
        for (long[] f : expected.frames()) {
            if (f[0] <= pos && pos < f[1]) {
                return f[1] - pos;
            }
        }
        return 0;
    }

    private static ByteBuf readBuffer(int kind, byte[] stream, int from, int n) {
        return switch (kind) {
            case 0 -> Unpooled.buffer(n).writeBytes(stream, from, n);
            case 1 -> Unpooled.directBuffer(n).writeBytes(stream, from, n);
            default -> PooledByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(stream, from, n);
        };
    }

    /** Records the decoder's user events and exceptions (the ends of a stream it gave up). */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        FrameDecoder.UnsyncableFrame unsyncable;
        CorruptedFrameException corrupted;
        int corruptions;
        Throwable unexpected;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof FrameDecoder.UnsyncableFrame u && unsyncable == null) {
                unsyncable = u;
            } else {
                unexpected = new AssertionError("unexpected user event " + evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof CorruptedFrameException c) {
                corrupted = c;
                corruptions++;
            } else if (unexpected == null) {
                unexpected = cause;
            }
        }

        String unexpectedCause() {
            return unexpected == null || unexpected.getCause() == null
                    ? ""
                    : unexpected.getCause().toString();
        }
    }

    /**
     * Pooled buffers, each remembered so the target can check they were all released. The initial
     * capacity is capped at {@value #MAX_INITIAL_BYTES} bytes: a fuzzed length prefix would otherwise
     * cost an 8 MiB allocation per input ({@code FrameAssembly.MAX_UPFRONT_BYTES}), which dominated the soak
     * (about 180 inputs/s); the frame buffer then grows as bytes arrive, the path of payloads above that size.
     */
    private static final class TrackingAllocator extends AbstractByteBufAllocator {
        static final int MAX_INITIAL_BYTES = 64 << 10;

        final List<ByteBuf> allocated = new ArrayList<>();

        TrackingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(
                    Math.min(initialCapacity, MAX_INITIAL_BYTES), maxCapacity);
            allocated.add(b);
            return b;
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(
                    Math.min(initialCapacity, MAX_INITIAL_BYTES), maxCapacity);
            allocated.add(b);
            return b;
        }

        @Override
        public boolean isDirectBufferPooled() {
            return true;
        }
    }
}
