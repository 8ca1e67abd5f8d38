package io.stellflow.protocol.compression;

import static io.stellflow.protocol.support.ZstdFrames.rawBlocks;
import static io.stellflow.protocol.support.ZstdFrames.withDeclaredSize;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdOutputStream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Decompressor#readInPlace} for zstd ({@link ZstdInPlace}, {@code ZSTD_d_stableOutBuffer}):
 * available under both zstd-jni bindings (this class runs in both surefire executions), a frame
 * comes back in several steps appended in place and equal to the input, the caller's side of the
 * contract is enforced, and lying, truncated, capped and multi-frame streams end as they do streamed.
 */
class ZstdInPlaceTest {
    private final CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD);
    private final Decompressor d = codec.newDecompressor();

    @AfterEach
    void close() {
        d.close();
        codec.close();
    }

    /** 2 MiB of JSON-like lines from a fixed seed: about 10 of our 64 KiB input steps compressed. */
    private static byte[] text(int seed) {
        StringBuilder sb = new StringBuilder();
        Random r = new Random(seed);
        while (sb.length() < 2 << 20) {
            sb.append("{\"ts\":")
                    .append(1_700_000_000_000L + r.nextInt(1_000_000))
                    .append(",\"path\":\"/api/")
                    .append(Long.toHexString(r.nextLong()))
                    .append("\",\"ms\":")
                    .append(r.nextInt(500))
                    .append("}\n");
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** The final code, the bytes on END_OF_STREAM, reads that appended, the first one's bytes. */
    private record InPlace(int code, byte[] bytes, int steps, boolean asked, int firstRead) {
        /** Read in steps: the first read gave less than the whole frame, and more reads followed. */
        boolean stepped(int frameBytes) {
            return asked && firstRead < frameBytes && steps > 1;
        }
    }

    /**
     * Resets over {@code compressed}, asks for in place, then reads into one chunk of {@code room}
     * bytes without ever rewinding it (as the validator's region is read), checking each read was
     * appended where the last one ended.
     */
    private InPlace readInPlace(byte[] compressed, boolean directInput, long cap, int room) {
        return readInPlace(directInput ? Streams.direct(compressed) : Unpooled.wrappedBuffer(compressed), cap, room);
    }

    /** As above over {@code in}, released at the end. */
    private InPlace readInPlace(ByteBuf in, long cap, int room) {
        ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(room, room);
        try {
            d.reset(in, cap);
            boolean asked = d.readInPlace();
            int steps = 0;
            int first = 0;
            int n;
            int before = chunk.writerIndex();
            while (chunk.isWritable() && (n = d.read(chunk)) > 0) {
                assertThat(chunk.writerIndex()).isEqualTo(before + n); // appended where the last read ended
                before = chunk.writerIndex();
                first = steps++ == 0 ? n : first;
            }
            byte[] bytes = ByteBufUtil.getBytes(chunk);
            // Full: the frame's output is complete, so the chunk may be rewound for the final code.
            n = d.read(chunk.isWritable() ? chunk : chunk.clear());
            assertThat(d.read(chunk.isWritable() ? chunk : chunk.clear())).isEqualTo(n); // a final code repeats
            assertThat(in.readerIndex()).isZero();
            return new InPlace(n, n == Decompressor.END_OF_STREAM ? bytes : null, steps, asked, first);
        } finally {
            in.release();
            chunk.release();
        }
    }

    @Test
    void theLibraryAllowsInPlaceReadsInThisJvm() {
        // Both surefire executions (zstd-jni's FFM classes and its JNI classes) must find libzstd's
        // symbols: otherwise the broker silently decodes the old way.
        assertThat(((ZstdCodec.ZstdDecompressor) d).inPlaceAvailable()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aFrameReadInPlaceComesInStepsAndEqualsTheInput(boolean directInput) {
        byte[] text = text(1);
        byte[] frame = Streams.compress(codec, text);
        InPlace out = readInPlace(frame, directInput, 64 << 20, text.length + 100);
        assertThat(out.asked()).isTrue();
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(text);
        // About one read per 64 KiB of input: the caller sees each piece while it is fresh.
        assertThat(out.steps()).isGreaterThanOrEqualTo(frame.length / ZstdCodec.ZstdDecompressor.IN_PLACE_STEP_BYTES);
        assertThat(d.decompressedBytes()).isEqualTo(text.length);
    }

    @Test
    void withoutRoomForTheWholeFrameItStreamsAsBefore() {
        byte[] text = text(2);
        byte[] frame = Streams.compress(codec, text);
        d.reset(Unpooled.wrappedBuffer(frame), 64 << 20);
        assertThat(d.readInPlace()).isTrue();
        // The first read's chunk is smaller than the frame: streamed, and the chunk may be rewound.
        Streams.Outcome streamed = Streams.drain(d, 65_536);
        assertThat(streamed.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(streamed.bytes()).isEqualTo(text);
    }

    @Test
    void aChunkRewoundMidFrameBreaksTheCallersPromise() {
        byte[] text = text(3);
        ByteBuf in = Unpooled.wrappedBuffer(Streams.compress(codec, text));
        ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(text.length);
        try {
            d.reset(in, 64 << 20);
            assertThat(d.readInPlace()).isTrue();
            assertThat(d.read(chunk)).isPositive().isLessThan(text.length);
            chunk.clear();
            assertThatThrownBy(() -> d.read(chunk))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("rewound");
            // Asked after a read: refused.
            assertThatThrownBy(d::readInPlace).isInstanceOf(IllegalStateException.class);
            // The next stream is fine.
            d.reset(in, 64 << 20);
            assertThat(d.readInPlace()).isTrue();
        } finally {
            in.release();
            chunk.release();
        }
    }

    @Test
    void lyingAndTruncatedFramesAreMalformedInPlace() {
        byte[] text = text(4);
        byte[] frame = Streams.compress(codec, text);
        for (long declared : new long[] {text.length - 1, text.length + 1, text.length / 2}) {
            InPlace out = readInPlace(withDeclaredSize(frame, declared), true, 64 << 20, text.length + 100);
            assertThat(out.asked()).isTrue();
            assertThat(out.code())
                    .as("declared %d of %d", declared, text.length)
                    .isEqualTo(Decompressor.MALFORMED);
            assertThat(d.failureReason()).startsWith("zstd: ");
            // Refused after steps already handed out, not in one call.
            assertThat(out.steps()).isPositive();
            assertThat(out.firstRead()).isLessThan((int) declared);
        }
        for (int cut : new int[] {1, 100, frame.length / 2}) {
            InPlace out = readInPlace(Arrays.copyOf(frame, frame.length - cut), true, 64 << 20, text.length);
            assertThat(out.code()).as("cut %d", cut).isEqualTo(Decompressor.MALFORMED);
            assertThat(d.failureReason()).contains("truncated");
            assertThat(out.steps()).isPositive();
            assertThat(out.firstRead()).isLessThan(text.length / 2);
        }
    }

    @Test
    void theCapHoldsAtTheDeclaredSize() {
        byte[] text = text(5);
        byte[] frame = Streams.compress(codec, text);
        // A cap of exactly the frame: read in place, ends cleanly.
        InPlace exact = readInPlace(frame, true, text.length, text.length);
        assertThat(exact.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(exact.bytes()).isEqualTo(text);
        assertThat(exact.stepped(text.length)).isTrue();
        // One byte less: no room for one pass, streamed to the cap and refused there.
        InPlace under = readInPlace(frame, true, text.length - 1, text.length);
        assertThat(under.code()).isEqualTo(Decompressor.OVER_CAP);
    }

    @Test
    void framesAfterTheFirstStreamIntoTheRestOfTheChunk() {
        byte[] a = text(6);
        byte[] b = Arrays.copyOf(text(7), 300_000);
        byte[] first = Streams.compress(codec, a);
        byte[] second = Streams.compress(codec, b);
        byte[] both = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        InPlace out = readInPlace(both, true, 64 << 20, a.length + b.length);
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.stepped(a.length)).isTrue();
        byte[] expected = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, expected, a.length, b.length);
        assertThat(out.bytes()).isEqualTo(expected);
    }

    @Test
    void aHeapChunkIsNeverReadInPlace() {
        // A heap chunk may move between two steps: the first read decodes the whole frame in one
        // call (zstd's one pass) instead of one step.
        byte[] text = text(8);
        ByteBuf in = Unpooled.wrappedBuffer(Streams.compress(codec, text));
        ByteBuf chunk = Unpooled.buffer(text.length);
        d.reset(in, 64 << 20);
        assertThat(d.readInPlace()).isTrue();
        assertThat(d.read(chunk)).isEqualTo(text.length);
        assertThat(ByteBufUtil.getBytes(chunk)).isEqualTo(text);
        assertThat(d.read(chunk.clear())).isEqualTo(Decompressor.END_OF_STREAM);
    }

    @Test
    void aReadOnlyInputIsReadInPlaceToo() {
        byte[] text = text(12);
        // zstd only reads the input: the linker passes a read-only segment.
        InPlace out = readInPlace(Streams.direct(Streams.compress(codec, text)).asReadOnly(), 64 << 20, text.length);
        assertThat(out.asked()).isTrue();
        assertThat(out.steps()).isGreaterThan(1);
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(text);
    }

    @Test
    void aChunkReallocatedMidFrameBreaksTheCallersPromise() {
        byte[] text = text(9);
        ByteBuf in = Unpooled.wrappedBuffer(Streams.compress(codec, text));
        ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(text.length, 4 * text.length);
        try {
            d.reset(in, 64 << 20);
            assertThat(d.readInPlace()).isTrue();
            int first = d.read(chunk);
            assertThat(first).isPositive().isLessThan(text.length);
            chunk.capacity(2 * text.length); // new memory, same writerIndex: zstd must not write to the old
            assertThatThrownBy(() -> d.read(chunk))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("moved");
        } finally {
            chunk.release();
        }
    }

    @Test
    void framesThatDoNotDeclareTheirSizeAreNotReadInPlace() throws IOException {
        byte[] text = text(10);
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        try (ZstdOutputStream z = new ZstdOutputStream(streamed)) {
            z.write(text); // no pledged size: the header does not say it
        }
        d.reset(Unpooled.wrappedBuffer(streamed.toByteArray()), 64 << 20);
        assertThat(d.readInPlace()).isFalse();
        // A skippable frame first: the first frame declares nothing either.
        byte[] frame = Streams.compress(codec, text);
        byte[] skippable = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3};
        byte[] both = Arrays.copyOf(skippable, skippable.length + frame.length);
        System.arraycopy(frame, 0, both, skippable.length, frame.length);
        d.reset(Unpooled.wrappedBuffer(both), 64 << 20);
        assertThat(d.readInPlace()).isFalse();
        Streams.Outcome out = Streams.drain(d, 65_536);
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(text);
    }

    @Test
    void noWindowLimitAppliesInPlaceAsInOnePass() {
        // The output is the window: a frame asking for 128 MiB (2^27) decodes in steps into the
        // room given, as in zstd's one pass (ZstdCodecTest), where streamed it is refused before
        // any window is made. 200 KB of raw blocks: more than one 64 KiB step of input.
        byte[] content = new byte[200_000];
        new Random(12).nextBytes(content);
        byte[] frame = rawBlocks(content, 27, true);
        InPlace out = readInPlace(frame, true, 1 << 20, content.length + 100);
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(content);
        assertThat(out.stepped(content.length)).isTrue();
        assertThat(Streams.decompress(d, frame, 1 << 20, 65_536).code()).isEqualTo(Decompressor.MALFORMED);
    }

    /**
     * A frame with a checksum whose last 64 KiB input step ends 2 bytes into the checksum, read into
     * a chunk of exactly its size: the output is complete, and the chunk full, a read before zstd has
     * the whole checksum, so the read for the final code comes after the chunk was rewound.
     */
    @Test
    void aChecksumAfterTheLastStepOfAFullChunk() {
        int size = 300_000;
        byte[] frame = checksummedRandomFrame(size);
        for (int i = 0; i < 3 && frame.length % ZstdCodec.ZstdDecompressor.IN_PLACE_STEP_BYTES != 2; i++) {
            size += Math.floorMod(2 - frame.length, ZstdCodec.ZstdDecompressor.IN_PLACE_STEP_BYTES);
            frame = checksummedRandomFrame(size);
        }
        assertThat(frame.length % ZstdCodec.ZstdDecompressor.IN_PLACE_STEP_BYTES)
                .isEqualTo(2);
        byte[] content = randomBytes(size);
        InPlace out = readInPlace(frame, true, 64 << 20, size);
        assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
        assertThat(out.bytes()).isEqualTo(content);
        assertThat(out.steps()).isGreaterThanOrEqualTo(frame.length / ZstdCodec.ZstdDecompressor.IN_PLACE_STEP_BYTES);
        byte[] damaged = frame.clone();
        damaged[damaged.length - 1] ^= 1; // the checksum's last byte
        assertThat(readInPlace(damaged, true, 64 << 20, size).code()).isEqualTo(Decompressor.MALFORMED);
        assertThat(d.failureReason()).contains("checksum");
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        new Random(13).nextBytes(b);
        return b;
    }

    /** Random bytes (raw blocks: as long as the content) in a frame with its size and a checksum. */
    private static byte[] checksummedRandomFrame(int n) {
        try (ZstdCompressCtx c = new ZstdCompressCtx()) {
            return c.setLevel(3).setChecksum(true).setContentSize(true).compress(randomBytes(n));
        }
    }
}
