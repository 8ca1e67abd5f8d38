package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Drives a request {@link FrameDecoder} the way a transport's read loop does (allocate from the channel's
 * {@link FrameReadAllocator} handle, let the "kernel" write up to the buffer's writable bytes, fire
 * it), with the stream cut at chosen points, and checks the payloads and which bytes were copied.
 */
class FrameReadAllocatorTest extends FrameReadLoop {
    FrameReadAllocatorTest() {
        super(FrameDecoder.forRequests());
    }

    /** A frame (4-byte prefix + header + {@code bodyBytes} seeded random bytes). */
    private ByteBuf frame(int correlationId, int bodyBytes, SplittableRandom random) {
        ByteBuf f = Unpooled.buffer();
        f.writeInt(0);
        RequestHeader.of(ApiKeys.PRODUCE, (short) 0, correlationId, "c").write(f);
        byte[] body = new byte[bodyBytes];
        random.nextBytes(body);
        f.writeBytes(body);
        f.setInt(0, f.readableBytes() - 4);
        frames.add(f);
        return f;
    }

    @Test
    void readsAfterThePrefixReadGoStraightIntoTheFrameBuffer() {
        ByteBuf big = frame(7, 1 << 20, new SplittableRandom(1));
        int payloadBytes = big.readableBytes() - 4;
        ByteBuf stream = stream();
        assertThat(read(stream, 100))
                .as("the prefix read copies its 96 payload bytes")
                .isTrue();
        int reads = 0;
        while (stream.isReadable()) {
            assertThat(read(stream, 7_001)).as("read %d copies nothing", reads).isFalse();
            reads++;
        }
        stream.release();
        assertThat(reads).isGreaterThan(100);
        assertThat(decoder.copiedPayloadBytes()).isEqualTo(96);
        assertThat(decoder.inPlacePayloadBytes()).isEqualTo(payloadBytes - 96);
        assertPayloads();
    }

    @Test
    void aReadTargetNeverCrossesTheFrameEnd() {
        frame(1, 50_000, new SplittableRandom(2));
        frame(2, 10, new SplittableRandom(3));
        ByteBuf stream = stream();
        read(stream, 10);
        ByteBuf target = handle.allocate(alloc);
        assertThat(target.writableBytes())
                .as("the missing bytes of frame 1")
                .isEqualTo(frames.get(0).readableBytes() - 10);
        target.writeBytes(stream, target.writableBytes());
        ch.writeInbound(target);
        assertThat(decoder.inPlacePayloadBytes()).isEqualTo(frames.get(0).readableBytes() - 10);
        ByteBuf next = handle.allocate(alloc);
        assertThat(next.writableBytes())
                .as("between frames the wrapped allocator decides")
                .isEqualTo(2048);
        next.writeBytes(stream);
        ch.writeInbound(next);
        stream.release();
        assertPayloads();
    }

    /** Feeds {@code stream} in reads that end at the given stream offsets (or where the buffer is full). */
    private int feed(NavigableSet<Integer> cuts) {
        ByteBuf stream = stream();
        int copyingReads = 0;
        while (stream.isReadable()) {
            Integer cut = cuts.higher(stream.readerIndex());
            if (read(stream, cut == null ? Integer.MAX_VALUE : cut - stream.readerIndex())) {
                copyingReads++;
            }
        }
        stream.release();
        return copyingReads;
    }

    @Test
    void framesCutAtEveryAwkwardPlaceDecodeCorrectly() {
        SplittableRandom random = new SplittableRandom(42);
        int[] bodies = {0, 20, 1 << 20, 300, 70_000, 3, FrameAssembly.MAX_UPFRONT_BYTES + 100, 5, 1 << 20, 64, 2};
        List<Integer> starts = new ArrayList<>();
        int offset = 0;
        for (int i = 0; i < bodies.length; i++) {
            starts.add(offset);
            offset += frame(i, bodies[i], random).readableBytes();
        }
        List<NavigableSet<Integer>> patterns = new ArrayList<>();
        for (int k = 1; k <= 4; k++) { // the length prefix split after k bytes (4: exactly the prefix)
            NavigableSet<Integer> cuts = new TreeSet<>();
            for (int start : starts) {
                cuts.add(start + k);
            }
            patterns.add(cuts);
        }
        NavigableSet<Integer> endInsideARead = new TreeSet<>(); // a read = a frame's last byte + the next frames
        for (int start : starts) {
            endInsideARead.add(Math.max(1, start - 1));
        }
        patterns.add(endInsideARead);
        patterns.add(new TreeSet<>()); // reads as large as the buffers: several small frames per read
        NavigableSet<Integer> randomCuts = new TreeSet<>();
        for (int at = 0; at < offset; at += 1 + random.nextInt(random.nextBoolean() ? 8 : 200_000)) {
            randomCuts.add(at);
        }
        patterns.add(randomCuts);
        long inPlaceBefore = 0;
        for (NavigableSet<Integer> cuts : patterns) {
            int copyingReads = feed(cuts);
            assertThat(copyingReads)
                    .as("only a read carrying a length prefix copies (and one growth of the frame above 8 MiB)")
                    .isLessThanOrEqualTo(bodies.length + 1);
            assertPayloads();
            assertThat(decoder.inPlacePayloadBytes() - inPlaceBefore)
                    .as("the large frames were read in place")
                    .isGreaterThan(FrameAssembly.MAX_UPFRONT_BYTES + (1 << 20));
            inPlaceBefore = decoder.inPlacePayloadBytes();
        }
    }
}
