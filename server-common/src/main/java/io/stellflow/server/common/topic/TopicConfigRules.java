package io.stellflow.server.common.topic;

import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The topic-config key table: every topic config override Stellflow knows, under Kafka's topic config
 * names, with its value rule. The controller validates CreateTopics configs and IncrementalAlterConfigs
 * with it; the storage's {@code TopicConfig} applies the {@link #LOG_KEYS} to a {@code LogConfig}
 * (a storage test checks that both accept and refuse the same values); {@code min.insync.replicas}
 * (read by partition leaders) and {@code unclean.leader.election.enable} (read by the controller's
 * elections) are replication settings, not log settings, and so is {@code max.message.bytes}, which
 * only a leader's Produce path reads (followers copy what the leader wrote, whatever its size, as
 * Kafka's do).
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Value</th></tr>
 *   <tr><td>cleanup.policy</td><td>delete, compact or compact,delete</td></tr>
 *   <tr><td>retention.ms, retention.bytes</td><td>long &gt;= -1 (-1: no limit)</td></tr>
 *   <tr><td>segment.bytes</td><td>int &gt;= 1024</td></tr>
 *   <tr><td>segment.ms</td><td>long &gt;= 1</td></tr>
 *   <tr><td>segment.index.bytes</td><td>int &gt;= 8</td></tr>
 *   <tr><td>index.interval.bytes</td><td>int &gt;= 0</td></tr>
 *   <tr><td>flush.messages</td><td>long &gt;= 1</td></tr>
 *   <tr><td>flush.ms, delete.retention.ms, file.delete.delay.ms</td><td>long &gt;= 0</td></tr>
 *   <tr><td>min.cleanable.dirty.ratio</td><td>double in [0, 1]</td></tr>
 *   <tr><td>min.insync.replicas</td><td>int &gt;= 1</td></tr>
 *   <tr><td>max.message.bytes</td><td>int in [{@value #MIN_MESSAGE_BYTES}, {@value #MAX_MESSAGE_BYTES}]
 *       (the broker's {@code message.max.bytes} range)</td></tr>
 *   <tr><td>unclean.leader.election.enable</td><td>true or false (any case)</td></tr>
 *   <tr><td>compression.type</td><td>producer, uncompressed, gzip, snappy, lz4 or zstd (lower case only,
 *       as Kafka's {@code ValidString})</td></tr>
 *   <tr><td>compression.gzip.level</td><td>1..9 or -1</td></tr>
 *   <tr><td>compression.lz4.level</td><td>1..17</td></tr>
 *   <tr><td>compression.zstd.level</td><td>-131072..22</td></tr>
 *   <tr><td>compression.produce.policy</td><td>accept or refuse (any case)</td></tr>
 *   <tr><td>preallocate</td><td>true or false (any case)</td></tr>
 * </table>
 * Values are taken with surrounding blanks removed ({@link #normalize}), as Kafka's {@code ConfigDef}
 * trims a value before its validator sees it.
 *
 * <p>These rules are for new values (create and alter). A stored {@code compression.type} in another
 * case, which the controller accepted before the rule was Kafka's, still loads: the storage's {@code
 * TopicConfig} reads it in any case.
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicConfigRules {
    private enum Kind {
        INT,
        LONG,
        RATIO,
        BOOLEAN,
        CLEANUP_POLICY,
        COMPRESSION_TYPE,
        PRODUCE_POLICY,
        GZIP_LEVEL
    }

    /**
     * A key's value rule: at least {@code min} and at most {@code max} (INT and LONG); {@code log}:
     * applied to the partition log ({@code LogConfig}).
     */
    private record Rule(Kind kind, long min, long max, boolean log) {
        Rule(Kind kind, long min, boolean log) {
            this(kind, min, Long.MAX_VALUE, log);
        }
    }

    /** The values of {@code compression.type}, Kafka's: keep the producer's codec, none, or that codec. */
    public static final List<String> COMPRESSION_TYPES =
            List.of("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd");

    /**
     * Smallest {@code max.message.bytes} (and broker {@code message.max.bytes}): one 78-byte minimal
     * batch ({@code docs/spec/wire-protocol.md} §7.7 step 2) must fit.
     */
    public static final int MIN_MESSAGE_BYTES = 78;

    /**
     * Largest {@code max.message.bytes} (and broker {@code message.max.bytes}), 64 MiB minus 64 KiB:
     * a batch of this size plus any Fetch response envelope (header, topic name of at most 249
     * bytes, partition fields) stays below the 67108860-byte frame limit ({@code
     * docs/spec/wire-protocol.md} §7.7).
     */
    public static final int MAX_MESSAGE_BYTES = 64 * 1024 * 1024 - 64 * 1024;

    private static final Map<String, Rule> RULES = rules();

    /** Every accepted key, sorted. */
    public static final SortedSet<String> KEYS = Collections.unmodifiableSortedSet(new TreeSet<>(RULES.keySet()));

    /** The keys that configure the partition log (all but the replication settings), sorted. */
    public static final SortedSet<String> LOG_KEYS = logKeys();

    private TopicConfigRules() {}

    private static Map<String, Rule> rules() {
        Map<String, Rule> r = new TreeMap<>();
        r.put("cleanup.policy", new Rule(Kind.CLEANUP_POLICY, 0, true));
        r.put("retention.ms", new Rule(Kind.LONG, -1, true));
        r.put("retention.bytes", new Rule(Kind.LONG, -1, true));
        r.put("segment.bytes", new Rule(Kind.INT, 1024, true));
        r.put("segment.ms", new Rule(Kind.LONG, 1, true));
        r.put("segment.index.bytes", new Rule(Kind.INT, 8, true));
        r.put("index.interval.bytes", new Rule(Kind.INT, 0, true));
        r.put("flush.messages", new Rule(Kind.LONG, 1, true));
        r.put("flush.ms", new Rule(Kind.LONG, 0, true));
        r.put("delete.retention.ms", new Rule(Kind.LONG, 0, true));
        r.put("min.cleanable.dirty.ratio", new Rule(Kind.RATIO, 0, true));
        r.put("file.delete.delay.ms", new Rule(Kind.LONG, 0, true));
        r.put("min.insync.replicas", new Rule(Kind.INT, 1, false));
        r.put("unclean.leader.election.enable", new Rule(Kind.BOOLEAN, 0, false));
        // Kafka's per-topic message.max.bytes; checked by the leader's Produce path only (not a log setting).
        r.put("max.message.bytes", new Rule(Kind.INT, MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES, false));
        // Kafka's codec levels; the ranges of protocol's CompressionConfig (a storage test checks).
        r.put("compression.type", new Rule(Kind.COMPRESSION_TYPE, 0, true));
        r.put("compression.gzip.level", new Rule(Kind.GZIP_LEVEL, -1, 9, true));
        r.put("compression.lz4.level", new Rule(Kind.INT, 1, 17, true));
        r.put("compression.zstd.level", new Rule(Kind.INT, -131072, 22, true));
        // Ours (Kafka has no such key): refuse compressed Produce on topics read by the public SDKs.
        r.put("compression.produce.policy", new Rule(Kind.PRODUCE_POLICY, 0, true));
        // Kafka's key; ours reserves blocks ahead of the active segment's end (storage LogConfig).
        r.put("preallocate", new Rule(Kind.BOOLEAN, 0, true));
        return Collections.unmodifiableMap(r);
    }

    private static SortedSet<String> logKeys() {
        SortedSet<String> keys = new TreeSet<>();
        RULES.forEach((key, rule) -> {
            if (rule.log()) {
                keys.add(key);
            }
        });
        return Collections.unmodifiableSortedSet(keys);
    }

    /** The value as stored: surrounding blanks removed (null stays null). */
    public static String normalize(String value) {
        return value == null ? null : value.strip();
    }

    /**
     * Checks one override.
     *
     * @return null when {@code key=value} is accepted, otherwise why not, naming the key and value
     *     (the message of an INVALID_CONFIG answer)
     */
    public static String validate(String key, String value) {
        Rule rule = key == null ? null : RULES.get(key);
        if (rule == null) {
            return "unknown topic config '" + key + "' (known: " + String.join(", ", KEYS) + ")";
        }
        String v = normalize(value);
        if (v == null) {
            return key + " has no value";
        }
        return switch (rule.kind()) {
            case INT -> {
                try {
                    int x = Integer.parseInt(v);
                    yield x >= rule.min() && x <= rule.max() ? null : key + "=" + v + bounds(rule);
                } catch (NumberFormatException e) {
                    yield key + "=" + v + " is not an int";
                }
            }
            case LONG -> {
                try {
                    long x = Long.parseLong(v);
                    yield x >= rule.min() && x <= rule.max() ? null : key + "=" + v + bounds(rule);
                } catch (NumberFormatException e) {
                    yield key + "=" + v + " is not a long";
                }
            }
            case RATIO -> {
                try {
                    double x = Double.parseDouble(v);
                    yield x >= 0 && x <= 1 ? null : key + "=" + v + " must be in [0, 1]";
                } catch (NumberFormatException e) {
                    yield key + "=" + v + " is not a number";
                }
            }
            case BOOLEAN -> isBoolean(v) ? null : key + "=" + v + " must be true or false";
            case CLEANUP_POLICY -> cleanupPolicy(key, v);
            case COMPRESSION_TYPE -> compressionType(key, v);
            case PRODUCE_POLICY ->
                v.equalsIgnoreCase("accept") || v.equalsIgnoreCase("refuse")
                        ? null
                        : key + "=" + v + " must be accept or refuse";
            case GZIP_LEVEL -> gzipLevel(key, v);
        };
    }

    private static String bounds(Rule rule) {
        return rule.max() == Long.MAX_VALUE
                ? " must be >= " + rule.min()
                : " must be in [" + rule.min() + ", " + rule.max() + "]";
    }

    /**
     * A {@code BOOLEAN} key's value: {@code true} or {@code false} in any case (surrounding blanks
     * already removed); anything else is refused, never read as false.
     *
     * @throws IllegalArgumentException "must be true or false"
     */
    public static boolean parseBoolean(String v) {
        if (!isBoolean(v)) {
            throw new IllegalArgumentException("must be true or false");
        }
        return Boolean.parseBoolean(v);
    }

    private static boolean isBoolean(String v) {
        return v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false");
    }

    /** Kafka's exact names only: {@code ZSTD} or {@code Gzip} is refused, as Kafka refuses them. */
    private static String compressionType(String key, String v) {
        if (COMPRESSION_TYPES.contains(v)) {
            return null;
        }
        String why = key + "=" + v + " must be one of " + String.join(", ", COMPRESSION_TYPES);
        return COMPRESSION_TYPES.contains(v.toLowerCase(Locale.ROOT)) ? why + " (lower case, as in Kafka)" : why;
    }

    private static String gzipLevel(String key, String v) {
        try {
            int x = Integer.parseInt(v);
            return x == -1 || (x >= 1 && x <= 9) ? null : key + "=" + v + " must be 1..9 or -1";
        } catch (NumberFormatException e) {
            return key + "=" + v + " is not an int";
        }
    }

    private static String cleanupPolicy(String key, String v) {
        for (String part : v.split(",", -1)) {
            String p = part.strip().toLowerCase(Locale.ROOT);
            if (!p.equals("compact") && !p.equals("delete")) {
                return key + "=" + v + " must be delete, compact or compact,delete";
            }
        }
        return null;
    }
}
