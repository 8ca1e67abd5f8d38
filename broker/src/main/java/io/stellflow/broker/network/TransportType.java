package io.stellflow.broker.network;

import io.stellflow.server.common.config.ConfigException;
import java.util.Locale;

/**
 * The {@code transport} setting: which Netty I/O transport the broker uses. {@link #AUTO} picks the
 * first available of epoll, io_uring and NIO at start (see {@code Transport#select}).
 */
public enum TransportType {
    AUTO,
    IO_URING,
    EPOLL,
    NIO;

    /** The name used in properties files and logs: {@code auto}, {@code io_uring}, {@code epoll}, {@code nio}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a {@code transport} value (case-insensitive).
     *
     * @throws ConfigException when the value is not one of auto, io_uring, epoll, nio
     */
    public static TransportType parse(String key, String value) {
        for (TransportType type : values()) {
            if (type.configName().equalsIgnoreCase(value.trim())) {
                return type;
            }
        }
        throw new ConfigException(key, value, "must be one of auto, io_uring, epoll, nio");
    }
}
