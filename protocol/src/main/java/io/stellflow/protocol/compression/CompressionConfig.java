package io.stellflow.protocol.compression;

import java.util.Map;

/**
 * Compression levels, Kafka's keys, defaults and ranges: {@code compression.gzip.level} (1-9, or -1
 * for zlib's default, 6; default -1), {@code compression.lz4.level} (1-17, default 9; the default 9
 * and 1-2 use the fast LZ4 compressor, the other levels LZ4 HC at that level: Kafka's producer uses
 * the fast compressor at its default level 9, so a Kafka user's default behaves the same here; see
 * {@link #lz4UsesFastCompressor(int)}) and {@code
 * compression.zstd.level} (-131072 to 22, default 3; negative levels are zstd's fast modes). Snappy
 * has no level. Levels only change how the compressor works; any level's output decompresses the
 * same way.
 *
 * @param gzipLevel {@code compression.gzip.level}
 * @param lz4Level {@code compression.lz4.level}
 * @param zstdLevel {@code compression.zstd.level}
 */
public record CompressionConfig(int gzipLevel, int lz4Level, int zstdLevel) {
    /** Key of the gzip level. */
    public static final String GZIP_LEVEL = "compression.gzip.level";
    /** Key of the lz4 level. */
    public static final String LZ4_LEVEL = "compression.lz4.level";
    /** Key of the zstd level. */
    public static final String ZSTD_LEVEL = "compression.zstd.level";

    /** zlib's default level (6), as {@link java.util.zip.Deflater#DEFAULT_COMPRESSION}. */
    public static final int GZIP_DEFAULT_LEVEL = -1;

    public static final int LZ4_MIN_LEVEL = 1;
    public static final int LZ4_MAX_LEVEL = 17;
    public static final int LZ4_DEFAULT_LEVEL = 9;
    /** Highest lz4 level below the default that uses the fast compressor rather than LZ4 HC. */
    public static final int LZ4_MAX_FAST_LEVEL = 2;

    /**
     * Whether lz4 at {@code level} uses the fast compressor: levels 1-2 and the default 9 (Kafka's
     * producer compresses with the fast compressor at its default level 9 and with LZ4 HC at every
     * other level; the {@code lz4} tool uses the fast one at 1-2). Every other level is LZ4 HC.
     *
     * @param level a level in {@code 1..17}
     * @return true for the fast compressor
     */
    public static boolean lz4UsesFastCompressor(int level) {
        return level <= LZ4_MAX_FAST_LEVEL || level == LZ4_DEFAULT_LEVEL;
    }

    /** zstd's most negative (fastest) level, {@code -(1 << 17)}. */
    public static final int ZSTD_MIN_LEVEL = -131072;

    public static final int ZSTD_MAX_LEVEL = 22;
    public static final int ZSTD_DEFAULT_LEVEL = 3;

    /** Kafka's defaults. */
    public static final CompressionConfig DEFAULT =
            new CompressionConfig(GZIP_DEFAULT_LEVEL, LZ4_DEFAULT_LEVEL, ZSTD_DEFAULT_LEVEL);

    /**
     * @throws IllegalArgumentException naming the key and the value of a level out of its range
     */
    public CompressionConfig {
        if (gzipLevel != GZIP_DEFAULT_LEVEL && (gzipLevel < 1 || gzipLevel > 9)) {
            throw outOfRange(GZIP_LEVEL, gzipLevel, "1..9 or -1");
        }
        if (lz4Level < LZ4_MIN_LEVEL || lz4Level > LZ4_MAX_LEVEL) {
            throw outOfRange(LZ4_LEVEL, lz4Level, LZ4_MIN_LEVEL + ".." + LZ4_MAX_LEVEL);
        }
        if (zstdLevel < ZSTD_MIN_LEVEL || zstdLevel > ZSTD_MAX_LEVEL) {
            throw outOfRange(ZSTD_LEVEL, zstdLevel, ZSTD_MIN_LEVEL + ".." + ZSTD_MAX_LEVEL);
        }
    }

    /**
     * The levels set in {@code props} (string values, Kafka's keys), the defaults for the others;
     * other keys are ignored.
     *
     * @throws IllegalArgumentException naming the key and value of a level that is not an integer or
     *     out of range
     */
    public static CompressionConfig from(Map<String, String> props) {
        return new CompressionConfig(
                level(props, GZIP_LEVEL, GZIP_DEFAULT_LEVEL),
                level(props, LZ4_LEVEL, LZ4_DEFAULT_LEVEL),
                level(props, ZSTD_LEVEL, ZSTD_DEFAULT_LEVEL));
    }

    /** The same levels with {@code type}'s level set to {@code level} (ignored for none and snappy). */
    public CompressionConfig withLevel(CompressionType type, int level) {
        return switch (type) {
            case GZIP -> new CompressionConfig(level, lz4Level, zstdLevel);
            case LZ4 -> new CompressionConfig(gzipLevel, level, zstdLevel);
            case ZSTD -> new CompressionConfig(gzipLevel, lz4Level, level);
            case NONE, SNAPPY -> this;
        };
    }

    private static int level(Map<String, String> props, String key, int defaultLevel) {
        String value = props.get(key);
        if (value == null) {
            return defaultLevel;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + value + ": not an integer", e);
        }
    }

    private static IllegalArgumentException outOfRange(String key, int value, String range) {
        return new IllegalArgumentException(key + "=" + value + ": out of range " + range);
    }
}
