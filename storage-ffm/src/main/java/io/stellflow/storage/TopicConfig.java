package io.stellflow.storage;

import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.server.common.topic.TopicConfigRules;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Topic-level overrides of a broker's {@link LogConfig}, under Kafka's topic config names, as given
 * when a topic is created and persisted with it. The keys and their value rules are those of {@link
 * TopicConfigRules}; this class maps each log key to its {@link LogConfig} setting.
 *
 * <table>
 *   <caption>Keys (broker-level name in parentheses)</caption>
 *   <tr><td>cleanup.policy</td><td>log.cleanup.policy: delete, compact or compact,delete</td></tr>
 *   <tr><td>retention.ms</td><td>log.retention.ms</td></tr>
 *   <tr><td>retention.bytes</td><td>log.retention.bytes</td></tr>
 *   <tr><td>segment.bytes</td><td>log.segment.bytes</td></tr>
 *   <tr><td>segment.ms</td><td>log.roll.ms</td></tr>
 *   <tr><td>segment.index.bytes</td><td>log.index.size.max.bytes</td></tr>
 *   <tr><td>index.interval.bytes</td><td>log.index.interval.bytes</td></tr>
 *   <tr><td>flush.messages</td><td>log.flush.interval.messages</td></tr>
 *   <tr><td>flush.ms</td><td>log.flush.interval.ms</td></tr>
 *   <tr><td>delete.retention.ms</td><td>log.cleaner.delete.retention.ms</td></tr>
 *   <tr><td>min.cleanable.dirty.ratio</td><td>log.cleaner.min.cleanable.ratio</td></tr>
 *   <tr><td>file.delete.delay.ms</td><td>log.segment.delete.delay.ms</td></tr>
 *   <tr><td>compression.type</td><td>compression.type: producer, uncompressed, gzip, snappy, lz4, zstd</td></tr>
 *   <tr><td>compression.gzip.level, compression.lz4.level, compression.zstd.level</td><td>the same</td></tr>
 *   <tr><td>compression.produce.policy</td><td>compression.produce.policy: accept or refuse</td></tr>
 *   <tr><td>preallocate</td><td>log.preallocate: true or false</td></tr>
 * </table>
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicConfig {
    /**
     * Every topic-level key {@link #apply} accepts: the log keys of the one topic-config key table,
     * {@link TopicConfigRules#LOG_KEYS}.
     */
    public static final Set<String> KEYS = TopicConfigRules.LOG_KEYS;

    private TopicConfig() {}

    /**
     * {@code base} with {@code overrides} applied.
     *
     * @throws IllegalArgumentException an unknown key, a value that does not parse or is out of
     *     range; the message names the topic key and the value
     */
    public static LogConfig apply(LogConfig base, Map<String, String> overrides) {
        if (overrides.isEmpty()) {
            return base;
        }
        LogConfig.Builder b = base.toBuilder();
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            String key = e.getKey();
            String value = e.getValue() == null ? "" : e.getValue().strip();
            try {
                set(b, key, value);
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("topic config " + key + "=" + value + ": " + ex.getMessage(), ex);
            }
        }
        try {
            return b.build();
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException("topic config " + overrides + ": " + ex.getMessage(), ex);
        }
    }

    private static void set(LogConfig.Builder b, String key, String value) {
        switch (key) {
            case "cleanup.policy" -> b.cleanupPolicy(value.toLowerCase(Locale.ROOT));
            case "retention.ms" -> b.retentionMs(Long.parseLong(value));
            case "retention.bytes" -> b.retentionBytes(Long.parseLong(value));
            case "segment.bytes" -> b.segmentBytes(Integer.parseInt(value));
            case "segment.ms" -> b.segmentMs(Long.parseLong(value));
            case "segment.index.bytes" -> b.indexMaxBytes(Integer.parseInt(value));
            case "index.interval.bytes" -> b.indexIntervalBytes(Integer.parseInt(value));
            case "flush.messages" -> b.flushMessages(Long.parseLong(value));
            case "flush.ms" -> b.flushMs(Long.parseLong(value));
            case "delete.retention.ms" -> b.deleteRetentionMs(Long.parseLong(value));
            case "min.cleanable.dirty.ratio" -> b.minCleanableDirtyRatio(Double.parseDouble(value));
            case "file.delete.delay.ms" -> b.fileDeleteDelayMs(Long.parseLong(value));
            case "compression.type" -> b.compressionType(value);
            case "compression.produce.policy" -> b.compressionProducePolicy(value);
            case "compression.gzip.level" -> b.compressionLevel(CompressionType.GZIP, Integer.parseInt(value));
            case "compression.lz4.level" -> b.compressionLevel(CompressionType.LZ4, Integer.parseInt(value));
            case "compression.zstd.level" -> b.compressionLevel(CompressionType.ZSTD, Integer.parseInt(value));
            case "preallocate" -> b.preallocate(TopicConfigRules.parseBoolean(value));
            default -> throw new IllegalArgumentException("unknown topic config key; known: " + KEYS);
        }
    }
}
