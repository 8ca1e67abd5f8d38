package io.stellflow.protocol.compression;

/** Makes the {@link CompressionCodec} of each {@link CompressionType}. Thread-safety: stateless. */
public final class CompressionCodecs {
    private CompressionCodecs() {}

    /**
     * A new codec for {@code type} at {@code config}'s level; the caller owns it (one per thread) and
     * closes it.
     *
     * @throws IllegalArgumentException for {@link CompressionType#NONE}, which has no codec
     */
    public static CompressionCodec codec(CompressionType type, CompressionConfig config) {
        return switch (type) {
            case GZIP -> new GzipCodec(config.gzipLevel());
            case SNAPPY -> new SnappyCodec();
            case LZ4 -> new Lz4Codec(config.lz4Level());
            case ZSTD -> new ZstdCodec(config.zstdLevel());
            case NONE -> throw new IllegalArgumentException("compression type none has no codec");
        };
    }

    /** As {@link #codec(CompressionType, CompressionConfig)} with Kafka's default levels. */
    public static CompressionCodec codec(CompressionType type) {
        return codec(type, CompressionConfig.DEFAULT);
    }
}
