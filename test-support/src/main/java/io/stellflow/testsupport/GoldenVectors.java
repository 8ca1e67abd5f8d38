package io.stellflow.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The golden vectors G1-G7 of {@code docs/spec/wire-protocol.md} section 10, as lowercase hex: whole
 * frames (the 4-byte frameLength included) except G2, the bare worked RecordBatch of section 7.8.
 * Each is a resource file {@code io/stellflow/testsupport/golden/G<n>.hex} of this module (hex, any
 * whitespace, {@code #} comment lines), loaded once when this class initialises. Used by protocol's
 * {@code GoldenVectorsTest} (both directions, byte for byte) and broker's (a real broker answering
 * them); {@code GoldenVectorsTest} of this module checks the files against the spec text.
 *
 * <p>Thread-safety: immutable.
 */
public final class GoldenVectors {
    /** ApiVersions request, correlationId 1; 65 bytes. */
    public static final String G1 = hex("G1");
    /** The worked RecordBatch (section 7.8): one record, CRC 0xA99A047F; 144 bytes, no frame. */
    public static final String G2 = hex("G2");
    /** Produce request carrying G2 to {@code orders}/0, correlationId 2; 210 bytes. */
    public static final String G3 = hex("G3");
    /** Fetch request for {@code orders}/0 from offset 100, correlationId 3; 99 bytes. */
    public static final String G4 = hex("G4");
    /** Header-only error response UNSUPPORTED_VERSION, correlationId 1; 16 bytes. */
    public static final String G5 = hex("G5");
    /** Produce response to G3: baseOffset 100, leader epoch 3; 66 bytes. */
    public static final String G6 = hex("G6");
    /** Fetch response to G4: G2 stored at offsets 100 and 101 in epoch 3; 362 bytes. */
    public static final String G7 = hex("G7");

    private static final HexFormat HEX = HexFormat.of();

    private GoldenVectors() {}

    /** The bytes of a vector given as hex (one of the constants, or a patched copy of one). */
    public static byte[] bytes(String hex) {
        return HEX.parseHex(hex);
    }

    /**
     * G2 as G7 carries it: {@code baseOffsetDelta} (bytes 0-3) = {@code delta} and {@code
     * partitionLeaderEpoch} (bytes 8-11) = 3; the CRC does not cover either, so it stays.
     */
    public static String storedG2(int delta) {
        return String.format("%08x", delta) + G2.substring(8, 16) + "00000003" + G2.substring(24);
    }

    /**
     * The hex of resource {@code golden/<name>.hex}: comment lines and whitespace dropped, checked to
     * be an even number of hex digits.
     *
     * @throws IllegalStateException when the file is missing or not hex
     */
    static String hex(String name) {
        String resource = "golden/" + name + ".hex";
        try (InputStream in = GoldenVectors.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("golden vector resource missing: io/stellflow/testsupport/" + resource);
            }
            return parse(resource, new String(in.readAllBytes(), StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read golden vector " + resource, e);
        }
    }

    /** The hex digits of a {@code .hex} file's text, lowercase; {@code #} lines are comments. */
    static String parse(String source, String text) {
        StringBuilder hex = new StringBuilder(text.length());
        for (String line : text.split("\n", -1)) {
            String l = line.strip();
            if (l.startsWith("#")) {
                continue;
            }
            for (int i = 0; i < l.length(); i++) {
                char c = l.charAt(i);
                if (Character.isWhitespace(c)) {
                    continue;
                }
                if (Character.digit(c, 16) < 0) {
                    throw new IllegalStateException(source + ": not a hex digit '" + c + "' in line: " + l);
                }
                hex.append(Character.toLowerCase(c));
            }
        }
        if (hex.isEmpty() || hex.length() % 2 != 0) {
            throw new IllegalStateException(source + ": " + hex.length() + " hex digits, need a positive even count");
        }
        return hex.toString();
    }
}
