package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CompressionConfigTest {
    @Test
    void defaultsAreKafkas() {
        CompressionConfig c = CompressionConfig.from(Map.of());
        assertThat(c).isEqualTo(CompressionConfig.DEFAULT);
        assertThat(c.gzipLevel()).isEqualTo(-1);
        assertThat(c.lz4Level()).isEqualTo(9);
        assertThat(c.zstdLevel()).isEqualTo(3);
    }

    @Test
    void levelsAreReadFromKafkasKeys() {
        CompressionConfig c = CompressionConfig.from(
                Map.of("compression.gzip.level", "9", "compression.lz4.level", " 1 ", "compression.zstd.level", "-5"));
        assertThat(c).isEqualTo(new CompressionConfig(9, 1, -5));
    }

    @Test
    void outOfRangeOrNonNumericLevelsNameTheKeyAndValue() {
        assertThatThrownBy(() -> CompressionConfig.from(Map.of("compression.gzip.level", "0")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("compression.gzip.level=0");
        assertThatThrownBy(() -> CompressionConfig.from(Map.of("compression.lz4.level", "18")))
                .hasMessageContaining("compression.lz4.level=18");
        assertThatThrownBy(() -> CompressionConfig.from(Map.of("compression.zstd.level", "23")))
                .hasMessageContaining("compression.zstd.level=23");
        assertThatThrownBy(() -> CompressionConfig.from(Map.of("compression.zstd.level", "fast")))
                .hasMessageContaining("compression.zstd.level=fast: not an integer");
    }

    @Test
    void lz4DefaultLevelUsesTheFastCompressorAsKafkasProducerDoes() throws Exception {
        assertThat(CompressionConfig.lz4UsesFastCompressor(9)).isTrue();
        assertThat(CompressionConfig.lz4UsesFastCompressor(1)).isTrue();
        assertThat(CompressionConfig.lz4UsesFastCompressor(3)).isFalse();
        assertThat(CompressionConfig.lz4UsesFastCompressor(10)).isFalse();
        // The output shows which compressor ran: the default level writes what level 1 writes, and
        // an HC level writes something else (smaller on repetitive text).
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 4000; i++) {
            text.append("{\"level\":\"INFO\",\"service\":\"svc-")
                    .append(i % 17)
                    .append("\",\"n\":")
                    .append(i * 31 % 977)
                    .append("}\n");
        }
        byte[] in = text.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] fast = lz4(in, 1);
        assertThat(lz4(in, 9)).isEqualTo(fast);
        assertThat(lz4(in, 10)).isNotEqualTo(fast).hasSizeLessThan(fast.length);
    }

    private static byte[] lz4(byte[] in, int level) throws Exception {
        io.netty.buffer.ByteBuf src = io.netty.buffer.Unpooled.wrappedBuffer(in);
        io.netty.buffer.ByteBuf out = io.netty.buffer.Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(
                CompressionType.LZ4, CompressionConfig.DEFAULT.withLevel(CompressionType.LZ4, level))) {
            codec.compress(src, out);
            return io.netty.buffer.ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    @Test
    void typeIdsAndNamesFollow9o() {
        assertThat(CompressionType.forId(0)).isEqualTo(CompressionType.NONE);
        assertThat(CompressionType.forId(4)).isEqualTo(CompressionType.ZSTD);
        assertThat(CompressionType.forId(5)).isNull();
        assertThat(CompressionType.fromAttributes((short) 0x0013)).isEqualTo(CompressionType.LZ4);
        assertThat(CompressionType.fromAttributes((short) 0x0007)).isNull();
        assertThat(CompressionType.forName("Snappy")).isEqualTo(CompressionType.SNAPPY);
        assertThatThrownBy(() -> CompressionType.forName("brotli")).hasMessageContaining("'brotli'");
        assertThatThrownBy(() -> CompressionCodecs.codec(CompressionType.NONE))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
