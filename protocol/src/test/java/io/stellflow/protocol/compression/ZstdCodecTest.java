package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ZstdCodec#compress}'s two paths: one shot for direct buffers (into the room the caller gave,
 * again into compressBound when the output did not fit) and the stream for heap ones, each after
 * what {@code dst} already holds, and all decoding to the input.
 */
class ZstdCodecTest {
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
}
