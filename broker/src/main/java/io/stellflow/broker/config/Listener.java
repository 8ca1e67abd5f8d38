package io.stellflow.broker.config;

import io.stellflow.server.common.config.ConfigException;

/**
 * One listener endpoint parsed from {@code listeners} or {@code advertised.listeners}, in Kafka's
 * {@code PLAINTEXT://host:port} form. Only the PLAINTEXT security protocol exists in this slice.
 *
 * <p>Thread-safety: immutable.
 *
 * @param securityProtocol always {@code PLAINTEXT}
 * @param host host name or IP literal; empty means every interface (bind) or unset (advertise)
 * @param port TCP port, 0..65535; 0 binds an ephemeral port
 */
public record Listener(String securityProtocol, String host, int port) {

    /**
     * Parses exactly one listener.
     *
     * @throws ConfigException naming {@code key} and the value when it is not {@code PLAINTEXT://host:port}
     */
    public static Listener parse(String key, String value) {
        String trimmed = value.trim();
        if (trimmed.contains(",")) {
            throw new ConfigException(key, value, "only one listener is supported");
        }
        int schemeEnd = trimmed.indexOf("://");
        if (schemeEnd <= 0) {
            throw new ConfigException(key, value, "expected PLAINTEXT://host:port");
        }
        String protocol = trimmed.substring(0, schemeEnd);
        if (!protocol.equals("PLAINTEXT")) {
            throw new ConfigException(key, value, "only the PLAINTEXT security protocol is supported");
        }
        String hostPort = trimmed.substring(schemeEnd + 3);
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new ConfigException(key, value, "missing :port");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException(key, value, "port is not a number");
        }
        if (port < 0 || port > 65_535) {
            throw new ConfigException(key, value, "port must be in 0..65535");
        }
        return new Listener(protocol, host, port);
    }

    @Override
    public String toString() {
        return securityProtocol + "://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
