package io.stellflow.storage;

import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import java.util.Locale;

/**
 * A log's {@code compression.type} (broker: {@code compression.type}, topic: {@code
 * compression.type}, Kafka's names and values) and the codec levels it recompresses with ({@code
 * compression.gzip.level}, {@code compression.lz4.level}, {@code compression.zstd.level}).
 *
 * <p>{@code producer} (the default) stores every batch as produced. {@code uncompressed} stores
 * every batch uncompressed: the leader decompresses a compressed one (the setting for topics read by
 * the public SDKs, which cannot decompress; {@code docs/compression.md}, "SDK policy"). A codec name
 * stores every batch in that codec: the leader recompresses a batch produced with another codec, or
 * none, at the configured level. The leader decides once per batch with {@link #rewrites}.
 *
 * <p>{@code compression.produce.policy} (broker and topic key of the same name, ours: Kafka has none)
 * is {@code accept} (the default) or {@code refuse}: with {@code refuse} the leader answers a Produce
 * whose set holds a compressed batch (codec bits non-zero) with {@code FEATURE_NOT_ENABLED} and
 * appends nothing, whatever {@code compression.type} says ({@code docs/compression.md}, "SDK
 * policy").
 *
 * <p>Thread-safety: immutable.
 *
 * @param name the configured value, lower case: producer, uncompressed, gzip, snappy, lz4 or zstd
 * @param levels the levels a recompression uses
 * @param refuseCompressedProduce {@code compression.produce.policy=refuse}
 */
public record LogCompression(String name, CompressionConfig levels, boolean refuseCompressedProduce) {
    /** Keep the producer's codec (Kafka's default). */
    public static final String PRODUCER = "producer";
    /** Store uncompressed (Kafka's name for no codec in this key). */
    public static final String UNCOMPRESSED = "uncompressed";

    /** {@code compression.type=producer} at Kafka's default levels. */
    public static final LogCompression DEFAULT = new LogCompression(PRODUCER, CompressionConfig.DEFAULT);

    /** {@code compression.produce.policy} value: compressed Produce is accepted (the default). */
    public static final String ACCEPT = "accept";
    /** {@code compression.produce.policy} value: compressed Produce is refused. */
    public static final String REFUSE = "refuse";

    /** {@code compression.type} {@code name} at {@code levels}, compressed Produce accepted. */
    public LogCompression(String name, CompressionConfig levels) {
        this(name, levels, false);
    }

    /** @throws IllegalArgumentException naming the value when it is not one of the six names */
    public LogCompression {
        if (name == null) {
            throw new IllegalArgumentException("compression.type must not be null");
        }
        name = name.strip().toLowerCase(Locale.ROOT);
        if (!name.equals(PRODUCER) && !name.equals(UNCOMPRESSED) && !isCodecName(name)) {
            throw new IllegalArgumentException(
                    "compression.type must be producer, uncompressed, gzip, snappy, lz4 or zstd: " + name);
        }
        if (levels == null) {
            throw new IllegalArgumentException("compression levels must not be null");
        }
    }

    private static boolean isCodecName(String name) {
        for (CompressionType t : CompressionType.values()) {
            if (t != CompressionType.NONE && t.configName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** The codec every stored batch must have; null for {@code producer} (keep what was produced). */
    public CompressionType target() {
        return switch (name) {
            case PRODUCER -> null;
            case UNCOMPRESSED -> CompressionType.NONE;
            default -> CompressionType.forName(name);
        };
    }

    /** Whether a batch produced with codec {@code codecId} (attribute bits 0-2) is stored rewritten. */
    public boolean rewrites(int codecId) {
        CompressionType target = target();
        return target != null && target.id() != codecId;
    }

    /** This setting with another {@code compression.type}. */
    public LogCompression withName(String newName) {
        return new LogCompression(newName, levels, refuseCompressedProduce);
    }

    /**
     * This setting with another {@code compression.produce.policy}.
     *
     * @param policy {@code accept} or {@code refuse}, any case, blanks around ignored
     * @throws IllegalArgumentException naming the value when it is neither
     */
    public LogCompression withProducePolicy(String policy) {
        String p = policy == null ? "" : policy.strip().toLowerCase(Locale.ROOT);
        return switch (p) {
            case ACCEPT -> new LogCompression(name, levels, false);
            case REFUSE -> new LogCompression(name, levels, true);
            default ->
                throw new IllegalArgumentException("compression.produce.policy must be accept or refuse: " + policy);
        };
    }

    /** The configured {@code compression.produce.policy}: {@code accept} or {@code refuse}. */
    public String producePolicy() {
        return refuseCompressedProduce ? REFUSE : ACCEPT;
    }

    /** This setting with {@code type}'s level changed. */
    public LogCompression withLevel(CompressionType type, int level) {
        return new LogCompression(name, levels.withLevel(type, level), refuseCompressedProduce);
    }
}
