package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import net.jpountz.xxhash.XXHashFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Lz4Codec} writes its frames itself (block by block, from the source's memory into the
 * destination's): the bytes must be exactly what lz4-java's frame output stream writes with the
 * same settings, for every block layout (empty, partial, exact 64 KiB multiples, incompressible
 * blocks stored as they are), heap or direct buffers, and a destination that grows.
 */
class Lz4CodecFrameTest {
    private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

    @ParameterizedTest(name = "{0} bytes, {1}, level {2}")
    @CsvSource({
        "0, json, 9",
        "1, json, 9",
        "100, json, 9",
        "65535, json, 9",
        "65536, json, 9",
        "65537, json, 9",
        "196625, random, 9",
        "3000000, json, 9",
        "3000000, mixed, 9",
        "300000, mixed, 12",
        "70000, json, 3"
    })
    void framesAreTheBytesOfTheFrameStream(int size, String content, int level) throws IOException {
        byte[] data = data(size, content);
        byte[] expected = frameStream(data, level);
        try (Lz4Codec codec = new Lz4Codec(level)) {
            for (boolean directSrc : new boolean[] {false, true}) {
                ByteBuf src = directSrc ? Unpooled.directBuffer(size + 10) : Unpooled.buffer(size + 10);
                src.writeBytes(new byte[7]).writeBytes(data).readerIndex(7); // not at index 0
                ByteBuf dst = Unpooled.directBuffer(16); // grows
                dst.writeBytes(new byte[] {1, 2, 3});
                try {
                    int n = codec.compress(src, dst);
                    assertThat(n).isEqualTo(expected.length);
                    assertThat(ByteBufUtil.getBytes(dst, 3, n)).isEqualTo(expected);
                    assertThat(src.readerIndex()).isEqualTo(7);
                    assertThat(src.readableBytes()).isEqualTo(size);
                    assertThat(decompress(ByteBufUtil.getBytes(dst, 3, n))).isEqualTo(data);
                } finally {
                    src.release();
                    dst.release();
                }
            }
        }
    }

    private static byte[] frameStream(byte[] data, int level) throws IOException {
        LZ4Compressor compressor =
                CompressionConfig.lz4UsesFastCompressor(level) ? LZ4.fastCompressor() : LZ4.highCompressor(level);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (LZ4FrameOutputStream out = new LZ4FrameOutputStream(
                bytes,
                LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                data.length,
                compressor,
                XXHashFactory.fastestInstance().hash32(),
                LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
                LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE)) {
            out.write(data);
        }
        return bytes.toByteArray();
    }

    private static byte[] decompress(byte[] frame) throws IOException {
        try (LZ4FrameInputStream in = new LZ4FrameInputStream(new ByteArrayInputStream(frame))) {
            return in.readAllBytes();
        }
    }

    /** JSON-like lines, random bytes, or 64 KiB stretches of each in turn. */
    private static byte[] data(int size, String content) {
        Random random = new Random(size * 31L + content.hashCode());
        byte[] out = new byte[size];
        StringBuilder json = new StringBuilder();
        while (json.length() < size) {
            json.append("{\"ts\":")
                    .append(1_700_000_000_000L + random.nextInt(1_000_000))
                    .append(",\"level\":\"INFO\",\"msg\":\"request served\",\"ms\":")
                    .append(random.nextInt(500))
                    .append("}\n");
        }
        byte[] text = json.toString().getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < size; i++) {
            boolean randomHere = content.equals("random") || (content.equals("mixed") && (i / 65536) % 2 == 1);
            out[i] = randomHere ? (byte) random.nextInt() : text[i];
        }
        return out;
    }
}
