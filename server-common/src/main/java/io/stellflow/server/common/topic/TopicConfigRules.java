package io.stellflow.server.common.topic;

import java.util.Collections;
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
 * elections) are replication settings, not log settings.
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
 *   <tr><td>unclean.leader.election.enable</td><td>true or false (any case)</td></tr>
 * </table>
 * Values are taken with surrounding blanks removed ({@link #normalize}).
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicConfigRules {
    private enum Kind {
        INT,
        LONG,
        RATIO,
        BOOLEAN,
        CLEANUP_POLICY
    }

    /** A key's value rule; {@code log}: applied to the partition log ({@code LogConfig}). */
    private record Rule(Kind kind, long min, boolean log) {}

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
                    yield x >= rule.min() ? null : key + "=" + v + " must be >= " + rule.min();
                } catch (NumberFormatException e) {
                    yield key + "=" + v + " is not an int";
                }
            }
            case LONG -> {
                try {
                    long x = Long.parseLong(v);
                    yield x >= rule.min() ? null : key + "=" + v + " must be >= " + rule.min();
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
            case BOOLEAN ->
                v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")
                        ? null
                        : key + "=" + v + " must be true or false";
            case CLEANUP_POLICY -> cleanupPolicy(key, v);
        };
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
