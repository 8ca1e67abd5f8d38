package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Every decoder path on hostile input: random bytes, valid containers with bytes flipped, cut short
 * or followed by garbage, and decompression bombs. The contract: a code, never an exception, never a
 * byte past the cap, never a crash or a leak (the PARANOID leak detector and LeakCheck watch the
 * pooled buffers).
 */
class DecompressorFuzzTest {
    private static final long CAP_BYTES = 1 << 20;
    private static final byte[] SAMPLE = sample();

    @Property(tries = 400)
    void randomBytesGiveACodeNeverAnException(
            @ForAll("codecs") CompressionType type, @ForAll @Size(max = 4096) byte[] junk, @ForAll boolean withMagic) {
        byte[] input = withMagic ? withMagic(type, junk) : junk;
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            Streams.Outcome out = Streams.decompress(codec, input, CAP_BYTES);
            assertThat(out.code()).isIn(Decompressor.END_OF_STREAM, Decompressor.MALFORMED, Decompressor.OVER_CAP);
            if (out.code() == Decompressor.MALFORMED) {
                assertThat(out.failureReason()).isNotBlank();
            }
        }
    }

    @Property(tries = 400)
    void flippedBytesGiveACodeNeverAnException(
            @ForAll("codecs") CompressionType type,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 1_000_000) Integer> positions,
            @ForAll @IntRange(min = 1, max = 255) int xor) {
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] bad = Streams.compress(codec, SAMPLE);
            for (int p : positions) {
                bad[p % bad.length] ^= (byte) xor;
            }
            Streams.Outcome out = Streams.decompress(codec, bad, CAP_BYTES);
            assertThat(out.code()).isIn(Decompressor.END_OF_STREAM, Decompressor.MALFORMED, Decompressor.OVER_CAP);
            assertThat(out.bytes().length).isLessThanOrEqualTo((int) CAP_BYTES);
        }
    }

    @Property(tries = 200)
    void aTruncatedContainerNeverPassesForTheWholeData(
            @ForAll("codecs") CompressionType type, @ForAll @IntRange(min = 0, max = 1_000_000) int cutSeed) {
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] whole = Streams.compress(codec, SAMPLE);
            byte[] cut = Arrays.copyOf(whole, cutSeed % whole.length);
            Streams.Outcome out = Streams.decompress(codec, cut, CAP_BYTES);
            if (type == CompressionType.SNAPPY) {
                // The framing format has no end mark: a cut at a chunk boundary is a shorter valid
                // stream. It must then be a true prefix of the data, never garbage.
                assertThat(out.code()).isIn(Decompressor.END_OF_STREAM, Decompressor.MALFORMED);
                if (out.code() == Decompressor.END_OF_STREAM) {
                    assertThat(out.bytes().length).isLessThan(SAMPLE.length);
                    assertThat(out.bytes()).isEqualTo(Arrays.copyOf(SAMPLE, out.bytes().length));
                }
            } else {
                assertThat(out.code())
                        .as("%s cut at %d of %d", type, cut.length, whole.length)
                        .isEqualTo(Decompressor.MALFORMED);
            }
        }
    }

    @Property(tries = 100)
    void garbageAfterTheContainerIsMalformed(
            @ForAll("framed") CompressionType type, @ForAll @Size(min = 1, max = 64) byte[] garbage) {
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] whole = Streams.compress(codec, SAMPLE);
            byte[] bad = Arrays.copyOf(whole, whole.length + garbage.length);
            System.arraycopy(garbage, 0, bad, whole.length, garbage.length);
            Streams.Outcome out = Streams.decompress(codec, bad, CAP_BYTES);
            // the whole data may come out first (the garbage is found after it), never more
            assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
            assertThat(out.bytes().length).isLessThanOrEqualTo(SAMPLE.length);
        }
    }

    @Property(tries = 8)
    void aBombOfZerosStopsAtTheCap(@ForAll("codecs") CompressionType type) {
        byte[] zeros = new byte[16 << 20];
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] bomb = Streams.compress(codec, zeros);
            assertThat(bomb.length).isLessThan(zeros.length / 10);
            Streams.Outcome out = Streams.decompress(codec, bomb, CAP_BYTES);
            assertThat(out.code()).isEqualTo(Decompressor.OVER_CAP);
            assertThat(out.bytes()).hasSize((int) CAP_BYTES);
        }
    }

    /**
     * A 32 KiB zstd frame that expands to 1 GiB: 8192 RLE blocks of 128 KiB (block header: size << 3
     * | type 1 << 1 | last), window 128 KiB and no content size in the header. Refused at the 1 MiB
     * cap after 1 MiB of output, not 1 GiB.
     */
    @Example
    void aHandMadeZstdBombOfOneGibibyteIsRefusedAtTheCap() {
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.writeBytes(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, 0x00, (byte) ((17 - 10) << 3)});
        int blocks = (1 << 30) / (128 << 10);
        for (int i = 0; i < blocks; i++) {
            int header = (128 << 10) << 3 | 1 << 1 | (i == blocks - 1 ? 1 : 0);
            frame.writeBytes(new byte[] {(byte) header, (byte) (header >>> 8), (byte) (header >>> 16), 'x'});
        }
        byte[] bomb = frame.toByteArray();
        assertThat(bomb.length).isLessThan(33 << 10);
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD)) {
            long startNs = System.nanoTime();
            Streams.Outcome out = Streams.decompress(codec, bomb, CAP_BYTES);
            long tookMs = (System.nanoTime() - startNs) / 1_000_000;
            assertThat(out.code()).isEqualTo(Decompressor.OVER_CAP);
            assertThat(out.bytes()).hasSize((int) CAP_BYTES);
            assertThat(tookMs).as("stopped at the cap, not after 1 GiB").isLessThan(5_000);
            // the same frame, read to its end under a big enough cap, is whole: the bomb is real
            Streams.Outcome whole = Streams.decompress(codec, Arrays.copyOf(bomb, 6 + 4 * 16), 16 * (128 << 10));
            assertThat(whole.code()).isEqualTo(Decompressor.MALFORMED); // cut before the last block
        }
    }

    /**
     * A zstd frame that declares a 64 MiB window (single segment, 4-byte content size 0x04000000)
     * and holds one raw byte: zstd's own limit (2^27) would take it and fail later on the size; ours
     * (2^23) refuses it before any window is allocated.
     */
    @Example
    void aZstdFrameAskingForALargerWindowThanTheLimitIsMalformed() {
        byte[] frame = {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, (byte) 0xa0, 0, 0, 0, 0x04, 0x09, 0, 0, 'x'};
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.ZSTD)) {
            Streams.Outcome out = Streams.decompress(codec, frame, Long.MAX_VALUE);
            assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
            assertThat(out.failureReason()).contains("too much memory");
            assertThat(out.bytes()).isEmpty();
        }
    }

    @Example
    void emptyInputIsMalformedForEveryCodec() {
        for (CompressionType type :
                List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD)) {
            try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                assertThat(Streams.decompress(codec, new byte[0], CAP_BYTES).code())
                        .as(type.configName())
                        .isEqualTo(Decompressor.MALFORMED);
            }
        }
    }

    @Provide
    Arbitrary<CompressionType> codecs() {
        return Arbitraries.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD);
    }

    /** Codecs whose container has an end: snappy's framing has none, its garbage may be skippable chunks. */
    @Provide
    Arbitrary<CompressionType> framed() {
        return Arbitraries.of(CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD);
    }

    private static byte[] withMagic(CompressionType type, byte[] junk) {
        byte[] magic = switch (type) {
            case GZIP -> new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 255};
            case SNAPPY -> new byte[] {(byte) 0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'};
            case LZ4 -> new byte[] {4, 0x22, 0x4d, 0x18};
            case ZSTD -> new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd};
            case NONE -> new byte[0];
        };
        byte[] out = Arrays.copyOf(magic, magic.length + junk.length);
        System.arraycopy(junk, 0, out, magic.length, junk.length);
        return out;
    }

    private static byte[] sample() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; sb.length() < 200_000; i++) {
            sb.append("{\"ts\":")
                    .append(1_764_800_000_000L + i * 37L)
                    .append(",\"level\":\"")
                    .append(i % 7 == 0 ? "WARN" : "INFO")
                    .append("\",\"userId\":")
                    .append(i * 7919 % 100_003)
                    .append(",\"msg\":\"request served\"}\n");
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
