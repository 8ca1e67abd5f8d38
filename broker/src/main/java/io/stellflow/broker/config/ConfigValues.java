package io.stellflow.broker.config;

import java.util.Locale;
import java.util.Properties;

/**
 * The typed reads of {@code server.properties} values that every config class of the broker shares
 * ({@link BrokerConfig}, {@link ClusterConfig}, {@link ReplicaFetcherConfig}, the telemetry config),
 * so a key is parsed and refused the same way wherever it lives.
 *
 * <p>Errors: a value that does not parse or is out of range throws {@link ConfigException} naming the
 * key, the raw value and the reason; an absent key gives the default.
 *
 * <p>Thread-safety: stateless.
 */
public final class ConfigValues {
    private ConfigValues() {}

    /**
     * A decimal integer in {@code [min, max]} (surrounding blanks ignored), or {@code defaultValue}
     * when the key is absent.
     */
    public static long longValue(Properties props, String key, long defaultValue, long min, long max) {
        String raw = props.getProperty(key);
        if (raw == null) {
            return defaultValue;
        }
        long value;
        try {
            value = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key, raw, "not an integer");
        }
        if (value < min || value > max) {
            throw new ConfigException(key, raw, "must be in " + min + ".." + max);
        }
        return value;
    }

    /** As {@link #longValue} for an int range. */
    public static int intValue(Properties props, String key, int defaultValue, int min, int max) {
        return (int) longValue(props, key, defaultValue, min, max);
    }

    /** {@code true} or {@code false} in any case, or {@code defaultValue} when the key is absent. */
    public static boolean bool(Properties props, String key, boolean defaultValue) {
        String raw = props.getProperty(key);
        if (raw == null) {
            return defaultValue;
        }
        return switch (raw.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new ConfigException(key, raw, "must be true or false");
        };
    }
}
