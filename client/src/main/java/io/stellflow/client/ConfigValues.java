package io.stellflow.client;

import java.util.Properties;

/**
 * Typed, validated reads of Kafka-style client properties. Errors name the key and the value.
 *
 * <p>The client's own copy, not server-common's {@code ConfigValues}: the client depends on {@code
 * protocol} only (the layering test checks it), so an application embedding it pulls in no server code.
 */
final class ConfigValues {
    private final Properties props;

    ConfigValues(Properties props) {
        this.props = props == null ? new Properties() : props;
    }

    String string(String key, String defaultValue) {
        String v = props.getProperty(key);
        return v == null ? defaultValue : v.trim();
    }

    /** {@code true} or {@code false} (any case); anything else is an error naming the key. */
    boolean booleanValue(String key, boolean defaultValue) {
        String raw = props.getProperty(key);
        if (raw == null) {
            return defaultValue;
        }
        String v = raw.trim();
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("invalid value for " + key + ": '" + raw + "' (true or false)");
    }

    int intValue(String key, int defaultValue, int min, int max) {
        long v = longValue(key, defaultValue, min, max);
        return (int) v;
    }

    long longValue(String key, long defaultValue, long min, long max) {
        String raw = props.getProperty(key);
        if (raw == null) {
            return defaultValue;
        }
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid value for " + key + ": '" + raw + "' is not a number", e);
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(
                    "invalid value for " + key + ": " + v + " (allowed " + min + ".." + max + ")");
        }
        return v;
    }
}
