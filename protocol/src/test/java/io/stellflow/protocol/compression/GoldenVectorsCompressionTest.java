package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * One fixed container per codec, decoded by our decompressors: the containers 9.o names, as the
 * reference tools write them (gzip, lz4 and zstd: made once with the Debian tools, commands below)
 * or, for snappy (no standard tool), derived by hand from the framing format. {@code
 * CliCrossCheckTest} checks the other direction against the tools themselves.
 */
class GoldenVectorsCompressionTest {
    private static final HexFormat HEX = HexFormat.of();
    /** The input of the tool-made vectors: {@code printf 'stellflow stellflow stellflow golden vector\n'}. */
    private static final byte[] TEXT =
            "stellflow stellflow stellflow golden vector\n".getBytes(StandardCharsets.US_ASCII);

    /** {@code gzip -n -9 -c} (gzip 1.12): header 1f8b 08 00 00000000 02 03, deflate, CRC-32, ISIZE 0x2c. */
    private static final String GZIP =
            "1f8b08000000000002032b2e49cdc949cbc92f5728c6c24acfcf4949cd53284b4d2ec92fe2020052be1e432c000000";

    /**
     * {@code lz4 -9 -c} (lz4 1.9.4): magic 04224d18, FLG 0x64 (version 01, block independence,
     * content checksum), BD 0x40 (64 KiB blocks), HC 0xa7, one compressed block of 0x1d bytes, end
     * mark, content checksum (xxHash32).
     */
    private static final String LZ4 =
            "04224d186440a71d000000af7374656c6c666c6f77200a0001e0676f6c64656e20766563746f720a000000008dd858a4";

    /**
     * {@code zstd -19 -q -c} (zstd 1.5.4): magic 28b52ffd, descriptor 0x24 (single segment, 1-byte
     * content size 0x2c, checksum), one compressed block, content checksum.
     */
    private static final String ZSTD =
            "28b52ffd242cf50000c07374656c6c666c6f7720676f6c64656e20766563746f720a0100a50b12daa0a9a7";

    /**
     * Derived by hand from the Snappy framing format: the stream identifier chunk {@code ff 060000
     * "sNaPpY"}; a compressed chunk (type 00, length 0x15) with the masked CRC-32C 0xeda97b5b of
     * "stellflow stellflow stellflow \n" (CRC-32C 0x4841a593, masked as ((c >>> 15) | (c << 17)) +
     * 0xa282ead8) and the raw Snappy block: varint length 0x1f, literal tag 0x24 with "stellflow ", a
     * two-byte-offset copy (tag 0x4e: length 20, offset 0x000a, overlapping), literal tag 0x00 with
     * "\n"; then an uncompressed chunk (type 01, length 0x0b) with the masked CRC 0x0dddecaa and
     * "golden\n".
     */
    private static final String SNAPPY =
            "ff060000734e61507059001500005b7ba9ed1f247374656c6c666c6f77204e0a00000a" + "010b0000aaecdd0d676f6c64656e0a";

    private static final byte[] SNAPPY_TEXT =
            "stellflow stellflow stellflow \ngolden\n".getBytes(StandardCharsets.US_ASCII);

    @Test
    void gzipToolOutputDecompresses() {
        assertDecodes(CompressionType.GZIP, GZIP, TEXT);
    }

    @Test
    void lz4ToolFrameWithContentChecksumDecompresses() {
        assertDecodes(CompressionType.LZ4, LZ4, TEXT);
    }

    @Test
    void zstdToolFrameWithChecksumDecompresses() {
        assertDecodes(CompressionType.ZSTD, ZSTD, TEXT);
    }

    @Test
    void handDerivedSnappyFramedStreamDecompresses() {
        assertDecodes(CompressionType.SNAPPY, SNAPPY, SNAPPY_TEXT);
    }

    @Test
    void snappyChunkWithAWrongChecksumIsMalformed() {
        byte[] bad = HEX.parseHex(SNAPPY);
        bad[14] ^= 0x01; // a byte of the first chunk's masked CRC
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.SNAPPY)) {
            Streams.Outcome out = Streams.decompress(codec, bad, 1 << 20);
            assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
            assertThat(out.failureReason()).isNotBlank();
        }
    }

    @Test
    void gzipTrailerCrcMismatchIsMalformedAndSaysSo() {
        byte[] bad = HEX.parseHex(GZIP);
        bad[bad.length - 8] ^= 0x01; // CRC-32 of the trailer
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.GZIP)) {
            Streams.Outcome out = Streams.decompress(codec, bad, 1 << 20);
            assertThat(out.code()).isEqualTo(Decompressor.MALFORMED);
            assertThat(out.failureReason()).contains("CRC-32 mismatch");
        }
    }

    @Test
    void ourContainersStartWithTheMagicOf9o() {
        byte[] data = "x".repeat(1000).getBytes(StandardCharsets.US_ASCII);
        assertThat(prefix(CompressionType.GZIP, data, 3)).isEqualTo("1f8b08");
        assertThat(prefix(CompressionType.SNAPPY, data, 10)).isEqualTo("ff060000734e61507059");
        assertThat(prefix(CompressionType.LZ4, data, 4)).isEqualTo("04224d18");
        assertThat(prefix(CompressionType.ZSTD, data, 4)).isEqualTo("28b52ffd");
    }

    private static String prefix(CompressionType type, byte[] data, int bytes) {
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] c = Streams.compress(codec, data);
            return HEX.formatHex(c, 0, bytes);
        }
    }

    private static void assertDecodes(CompressionType type, String hex, byte[] expected) {
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            byte[] container = HEX.parseHex(hex);
            Streams.Outcome out = Streams.decompress(codec, container, expected.length);
            assertThat(out.code()).as("%s: %s", type, out.failureReason()).isEqualTo(Decompressor.END_OF_STREAM);
            assertThat(out.bytes()).isEqualTo(expected);
            // one byte less of cap: the same container is over it
            assertThat(Streams.decompress(codec, container, expected.length - 1).code())
                    .isEqualTo(Decompressor.OVER_CAP);
        }
    }
}
