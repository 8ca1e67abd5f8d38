package io.stellflow.server.common.config;

import java.util.Locale;
import java.util.Properties;

/**
 * The typed reads of server properties that every config class of the broker and the controller
 * shares ({@code BrokerConfig}, {@code ClusterConfig}, {@code ReplicaFetcherConfig}, {@code
 * ControllerConfig}, {@link io.stellflow.server.common.telemetry.TelemetryConfig}), so a key is
 * parsed and refused the same way wherever it lives.
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
        return parseLong(key, raw, min, max);
    }

    /**
     * As {@link #longValue} for a key that has no default.
     *
     * @throws ConfigException when the key is absent, too
     */
    public static long requiredLong(Properties props, String key, long min, long max) {
        String raw = props.getProperty(key);
        if (raw == null) {
            throw new ConfigException(key, null, "is required");
        }
        return parseLong(key, raw, min, max);
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

    /**
     * The value with surrounding blanks removed, or {@code defaultValue} when the key is absent.
     *
     * @throws ConfigException when the value is blank
     */
    public static String string(Properties props, String key, String defaultValue) {
        String value = props.getProperty(key);
        if (value == null) {
            return defaultValue;
        }
        if (value.isBlank()) {
            throw new ConfigException(key, value, "must not be blank");
        }
        return value.trim();
    }

    private static long parseLong(String key, String raw, long min, long max) {
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
}
