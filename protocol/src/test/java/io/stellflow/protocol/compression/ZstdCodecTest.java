package io.stellflow.protocol.compression;

import static io.stellflow.protocol.support.ZstdFrames.rawBlocks;
import static io.stellflow.protocol.support.ZstdFrames.withDeclaredSize;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ZstdCodec#compress}'s two paths: one shot for direct buffers (into the room the caller gave,
 * again into compressBound when the output did not fit) and the stream for heap ones, each after
 * what {@code dst} already holds, and all decoding to the input; the decompressor's one-pass mode
 * ({@link Decompressor#singlePassBytes}).
 */
class ZstdCodecTest {
    /** The content of the frames that ask for a 128 MiB window (2^27): one byte. */
    private static final byte[] X = {'x'};

    /** 4 MiB of JSON-like lines, more than zstd's level-3 window: the producer's batches are this large. */
    private static byte[] compressible() {
        StringBuilder sb = new StringBuilder();
        Random r = new Random(7);
        while (sb.length() < 4 << 20) {
            sb.append("{\"ts\":")
                    .append(1_700_000_000_000L + r.nextInt(1_000_000))
                    .append(",\"level\":\"INFO\",\"path\":\"/api/v2/orders/")
                    .append(r.nextInt(100_000))
                    .append("\",\"ms\":")
                    .append(r.nextInt(500))
                    .append("}\n");
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        new Random(11).nextBytes(b);
        return b;
    }

    /** Compresses {@code data} from a buffer of the given kind into dst after 5 bytes already there. */
    private static byte[] compressAfterPrefix(CompressionCodec codec, byte[] data, boolean direct, int dstCapacity) {
        ByteBuf src = direct ? Streams.direct(data) : Unpooled.wrappedBuffer(data);
        ByteBuf dst = direct ? PooledByteBufAllocator.DEFAULT.directBuffer(dstCapacity) : Unpooled.buffer(dstCapacity);
        try {
            dst.writeBytes(new byte[] {9, 9, 9, 9, 9});
            int n = codec.compress(src, dst);
            assertThat(dst.readableBytes()).isEqualTo(5 + n);
            assertThat(ByteBufUtil.getBytes(dst, 0, 5)).containsOnly(9);
            assertThat(src.readerIndex()).isZero();
            return ByteBufUtil.getBytes(dst, 5, n);
        } finally {
            src.release();
            dst.release();
        }
    }

    @Test
    void bothPathsDecodeToTheInputWhetherTheOutputFitsOrGrows() {
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD)) {
            byte[] text = compressible();
            byte[] noise = random(1 << 20);
            for (boolean direct : new boolean[] {true, false}) {
                // Fits the 2 MiB given; then random bytes that do not fit 64 KiB and make dst grow.
                byte[] fits = compressAfterPrefix(codec, text, direct, 2 << 20);
                assertThat(fits.length).isLessThan(text.length / 3);
                // One frame on both paths, its content size in the header (decision 9.o's container).
                assertThat(Zstd.getFrameContentSize(fits)).isEqualTo(text.length);
                assertThat(Streams.decompress(codec, fits, text.length).bytes()).isEqualTo(text);
                byte[] grew = compressAfterPrefix(codec, noise, direct, 64);
                assertThat(grew.length).isGreaterThan(noise.length);
                assertThat(Zstd.getFrameContentSize(grew)).isEqualTo(noise.length);
                assertThat(Streams.decompress(codec, grew, noise.length).bytes())
                        .isEqualTo(noise);
            }
        }
    }

    /** The decompressor's {@link Decompressor#singlePassBytes} after a reset on {@code frame}, read from heap or direct memory. */
    private static long singlePassBytes(Decompressor d, byte[] frame, boolean direct) {
        ByteBuf in = direct ? Streams.direct(frame) : Unpooled.wrappedBuffer(frame);
        try {
            d.reset(in, Long.MAX_VALUE);
            return d.singlePassBytes();
        } finally {
            in.release();
        }
    }

    @Test
    void singlePassBytesIsTheFirstFramesDeclaredSizeOrMinusOne() throws IOException {
        byte[] text = compressible();
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD);
                Decompressor d = codec.newDecompressor()) {
            byte[] ours = Streams.compress(codec, text);
            ByteArrayOutputStream streamed = new ByteArrayOutputStream();
            try (ZstdOutputStream z = new ZstdOutputStream(streamed)) { // no pledged size: none in the header
                z.write(text);
            }
            byte[] skippableFirst = new byte[8 + ours.length];
            System.arraycopy(new byte[] {0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, 0, skippableFirst, 0, 8);
            System.arraycopy(ours, 0, skippableFirst, 8, ours.length);
            for (boolean direct : new boolean[] {true, false}) {
                assertThat(singlePassBytes(d, ours, direct)).isEqualTo(text.length);
                assertThat(singlePassBytes(d, streamed.toByteArray(), direct)).isEqualTo(-1);
                assertThat(singlePassBytes(d, skippableFirst, direct)).isEqualTo(-1);
                assertThat(singlePassBytes(d, new byte[] {1, 2, 3}, direct)).isEqualTo(-1);
                assertThat(singlePassBytes(d, new byte[0], direct)).isEqualTo(-1);
            }
            // With that much room the first read gives the whole frame, then the end (that it was one
            // pass, with no window, the huge-window test below shows).
            ByteBuf in = Streams.direct(ours);
            ByteBuf chunk = PooledByteBufAllocator.DEFAULT.directBuffer(text.length, text.length);
            try {
                d.reset(in, text.length);
                assertThat(d.read(chunk)).isEqualTo(text.length);
                assertThat(ByteBufUtil.getBytes(chunk)).isEqualTo(text);
                assertThat(d.read(chunk.clear())).isEqualTo(Decompressor.END_OF_STREAM);
            } finally {
                in.release();
                chunk.release();
            }
        }
    }

    /**
     * zstd's one-pass mode, which {@link Decompressor#singlePassBytes} relies on (a chunk of 8 KiB
     * has room for this frame's one byte, so it held before the method was added too).
     */
    @Test
    void aFrameReadInOnePassUsesNoWindowSoTheWindowLimitIsNotAsked() {
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD);
                Decompressor d = codec.newDecompressor()) {
            // Streamed, the frame would need a 128 MiB window: refused before any is allocated.
            Streams.Outcome streamed = Streams.decompress(d, rawBlocks(X, 27, false), 1 << 20, 8192);
            assertThat(streamed.code()).isEqualTo(Decompressor.MALFORMED);
            assertThat(streamed.failureReason()).contains("too much memory");
            // In one pass zstd writes into the caller's room only: the byte comes back.
            Streams.Outcome onePass = Streams.decompress(d, rawBlocks(X, 27, true), 1 << 20, 8192);
            assertThat(onePass.code()).isEqualTo(Decompressor.END_OF_STREAM);
            assertThat(onePass.bytes()).containsExactly('x');
        }
    }

    /** Whatever room the chunk has (one pass or streamed), a frame's header cannot lie about its size. */
    @Test
    void aFrameThatMisstatesItsSizeIsMalformedInOnePassToo() {
        byte[] text = compressible();
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD);
                Decompressor d = codec.newDecompressor()) {
            byte[] ours = Streams.compress(codec, text);
            for (long declared : new long[] {text.length - 1, text.length + 1, 200_000}) {
                byte[] lying = withDeclaredSize(ours, declared);
                for (int room : new int[] {(int) declared, text.length + 4096, 8192}) {
                    Streams.Outcome out = Streams.decompress(d, lying, 64 << 20, room);
                    assertThat(out.code())
                            .as("declared %d, room %d", declared, room)
                            .isEqualTo(Decompressor.MALFORMED);
                }
            }
        }
    }
}
