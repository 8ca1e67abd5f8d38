package io.stellflow.server.common.config;

/**
 * A server setting (broker or controller) is missing, malformed or out of range. The message names
 * the key and the bad value, so an operator can fix the properties file from the log line alone.
 *
 * <p>An {@link IllegalArgumentException}, so callers that document "IllegalArgumentException for a
 * bad configuration" (for example {@code ControllerConfig}) keep that contract.
 *
 * <p>Thread-safety: immutable.
 */
public final class ConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String key;

    /**
     * @param key the configuration key, for example {@code broker.id}
     * @param value the offending raw value (may be null when the key is missing)
     * @param reason what is wrong, for example {@code must be >= 0}
     */
    public ConfigException(String key, String value, String reason) {
        super("Invalid value '" + value + "' for configuration key '" + key + "': " + reason);
        this.key = key;
    }

    /** The configuration key that failed validation. */
    public String key() {
        return key;
    }
}
