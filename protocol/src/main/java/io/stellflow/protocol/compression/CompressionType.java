package io.stellflow.protocol.compression;

import java.util.Locale;

/**
 * The codec of a record batch: bits 0-2 of the batch attributes ({@code docs/spec/wire-protocol.md}
 * §7.5 and decision 9.o). Ids 5-7 are undefined (a batch carrying one is {@code INVALID_RECORD});
 * {@link #forId} returns null for them.
 *
 * <p>Names are Kafka's {@code compression.type} values and the suffix of the {@code
 * compression.<name>} feature a broker advertises in ApiVersions.
 */
public enum CompressionType {
    /** No compression: the records follow the batch header as they are. */
    NONE(0, "none"),
    /** An RFC 1952 gzip stream (deflate, CRC-32 and size trailer). */
    GZIP(1, "gzip"),
    /** The Snappy framing format, stream identifier chunk first. */
    SNAPPY(2, "snappy"),
    /** The LZ4 frame format (magic {@code 04 22 4d 18}). */
    LZ4(3, "lz4"),
    /** A standard Zstandard frame (magic {@code 28 b5 2f fd}). */
    ZSTD(4, "zstd");

    /** Mask of the codec bits in the batch attributes (int16). */
    public static final int ATTRIBUTE_MASK = 0x07;

    private static final CompressionType[] BY_ID = {NONE, GZIP, SNAPPY, LZ4, ZSTD};

    private final int id;
    private final String configName;

    CompressionType(int id, String configName) {
        this.id = id;
        this.configName = configName;
    }

    /** The id in attribute bits 0-2 (0-4). */
    public int id() {
        return id;
    }

    /** The lower-case name used in configs ({@code compression.type}) and feature names. */
    public String configName() {
        return configName;
    }

    /** The type whose id is {@code id}, or null for any other value (5-7 are undefined). */
    public static CompressionType forId(int id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    /** The type named in the batch attributes, or null when bits 0-2 hold 5-7. */
    public static CompressionType fromAttributes(short attributes) {
        return forId(attributes & ATTRIBUTE_MASK);
    }

    /**
     * The type whose {@link #configName} is {@code name}, case-insensitive.
     *
     * @throws IllegalArgumentException naming the value when no type has that name
     */
    public static CompressionType forName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        for (CompressionType type : BY_ID) {
            if (type.configName.equals(lower)) {
                return type;
            }
        }
        throw new IllegalArgumentException(
                "unknown compression type '" + name + "': expected none, gzip, snappy, lz4 or zstd");
    }
}
