package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Round trips of every codec on record-like data: JSON log lines built from realistic fields, and
 * plain random bytes (incompressible), at any valid level, read back in heap or direct chunks of any size, with
 * the cap at exactly the decompressed size (accepted) and one byte below (refused).
 */
class CodecRoundTripPropertyTest {
    private static final List<CompressionType> CODECS =
            List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD);

    @Property(tries = 120)
    void logLinesRoundTripAtDefaultLevels(
            @ForAll("codecs") CompressionType type,
            @ForAll("logLines") String lines,
            @ForAll @IntRange(min = 1, max = 100_000) int chunkBytes,
            @ForAll boolean heapChunk) {
        byte[] data = lines.getBytes(StandardCharsets.UTF_8);
        try (CompressionCodec codec = CompressionCodecs.codec(type);
                Decompressor d = codec.newDecompressor()) {
            byte[] compressed = Streams.compress(codec, data);
            Streams.Outcome exact = Streams.decompress(d, compressed, data.length, chunkBytes, heapChunk);
            assertThat(exact.code()).as(exact.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
            assertThat(exact.bytes()).isEqualTo(data);
            if (data.length > 0) {
                Streams.Outcome over = Streams.decompress(d, compressed, data.length - 1, chunkBytes, heapChunk);
                assertThat(over.code()).isEqualTo(Decompressor.OVER_CAP);
                assertThat(over.bytes()).hasSize(data.length - 1);
            }
        }
    }

    @Property(tries = 80)
    void anyValidLevelRoundTrips(
            @ForAll("leveled") CompressionType type,
            @ForAll("levels") int levelSeed,
            @ForAll("logLines") String lines) {
        int level = levelFor(type, levelSeed);
        byte[] data = lines.getBytes(StandardCharsets.UTF_8);
        try (CompressionCodec codec = CompressionCodecs.codec(type, CompressionConfig.DEFAULT.withLevel(type, level))) {
            byte[] compressed = Streams.compress(codec, data);
            Streams.Outcome out = Streams.decompress(codec, compressed, data.length);
            assertThat(out.code())
                    .as("%s level %d: %s", type, level, out.failureReason())
                    .isEqualTo(Decompressor.END_OF_STREAM);
            assertThat(out.bytes()).isEqualTo(data);
        }
    }

    @Property(tries = 60)
    void randomBytesRoundTripFromHeapAndDirectBuffers(
            @ForAll("codecs") CompressionType type,
            @ForAll @Size(max = 200_000) byte[] data,
            @ForAll boolean heapSource) {
        ByteBuf src = heapSource ? Unpooled.wrappedBuffer(data) : Streams.direct(data);
        ByteBuf dst = heapSource ? Unpooled.buffer(8) : PooledByteBufAllocator.DEFAULT.directBuffer(8);
        dst.writeBytes(new byte[] {7, 7, 7}); // compress appends after what dst already holds
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            int n = codec.compress(src, dst);
            assertThat(dst.readableBytes()).isEqualTo(3 + n);
            assertThat(dst.readByte()).isEqualTo((byte) 7);
            dst.skipBytes(2);
            Streams.Outcome out = Streams.decompress(codec, ByteBufUtil.getBytes(dst), data.length);
            assertThat(out.code()).as(out.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
            assertThat(out.bytes()).isEqualTo(data);
        } finally {
            src.release();
            dst.release();
        }
    }

    @Property(tries = 30)
    void oneDecompressorServesManyStreamsInTurn(
            @ForAll("codecs") CompressionType type,
            @ForAll @Size(min = 1, max = 6) List<@From("logLines") String> batches) {
        try (CompressionCodec codec = CompressionCodecs.codec(type);
                Decompressor d = codec.newDecompressor()) {
            for (String batch : batches) {
                byte[] data = batch.getBytes(StandardCharsets.UTF_8);
                Streams.Outcome out = Streams.decompress(d, Streams.compress(codec, data), data.length, 4096);
                assertThat(out.code()).isEqualTo(Decompressor.END_OF_STREAM);
                assertThat(out.bytes()).isEqualTo(data);
            }
        }
    }

    @Provide
    Arbitrary<CompressionType> codecs() {
        return Arbitraries.of(CODECS);
    }

    @Provide
    Arbitrary<CompressionType> leveled() {
        return Arbitraries.of(CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD);
    }

    @Provide
    Arbitrary<Integer> levels() {
        return Arbitraries.integers().between(0, 1_000_000);
    }

    /** A valid level of {@code type} picked by {@code seed}, zstd's negative (fast) levels included. */
    private static int levelFor(CompressionType type, int seed) {
        return switch (type) {
            case GZIP -> seed % 10 == 0 ? -1 : 1 + seed % 9;
            case LZ4 -> 1 + seed % CompressionConfig.LZ4_MAX_LEVEL;
            case ZSTD -> -7 + seed % 26; // -7..18: the fast modes and all but the slowest levels
            default -> throw new IllegalArgumentException(type.toString());
        };
    }

    /**
     * Batches of JSON log lines: timestamps, levels, service names, user ids, URLs, latencies and
     * free-text messages, 0 to 400 lines (0 to ~100 KiB).
     */
    @Provide
    Arbitrary<String> logLines() {
        Arbitrary<String> line = Combinators.combine(
                        Arbitraries.longs().between(1_700_000_000_000L, 1_800_000_000_000L),
                        Arbitraries.of("TRACE", "DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"),
                        Arbitraries.of("checkout", "payments", "search", "auth", "inventory", "gateway"),
                        Arbitraries.integers().between(1, 2_000_000),
                        Arbitraries.of("/api/v1/orders", "/api/v1/users/me", "/health", "/search?q=", "/cart/items")
                                .flatMap(p -> Arbitraries.strings()
                                        .alpha()
                                        .numeric()
                                        .ofMaxLength(12)
                                        .map(s -> p + s)),
                        Arbitraries.integers().between(0, 30_000),
                        Arbitraries.strings()
                                .withCharRange(' ', '~')
                                .withChars('é', 'ß', '→')
                                .ofMaxLength(80))
                .as((ts, level, service, user, url, latency, message) -> "{\"ts\":" + ts + ",\"level\":\"" + level
                        + "\",\"service\":\"" + service + "\",\"userId\":" + user + ",\"url\":\"" + url
                        + "\",\"latencyMs\":" + latency + ",\"msg\":\"" + message + "\"}\n");
        return line.list().ofMaxSize(400).map(l -> String.join("", l));
    }
}
