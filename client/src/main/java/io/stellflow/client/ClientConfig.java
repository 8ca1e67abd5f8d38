package io.stellflow.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Settings shared by the producer, consumer and admin client, read from Kafka-style properties.
 * Immutable; validated at construction ({@link IllegalArgumentException} names the bad key).
 *
 * @param bootstrapServers {@code bootstrap.servers}: host:port list, at least one entry
 * @param clientId {@code client.id}: sent in every request header
 * @param requestTimeoutMs {@code request.timeout.ms} (default 30000): how long a request may wait
 *     for its response before it fails with a retriable network error
 * @param retries {@code retries}: attempts after the first for retriable errors (default 10 for the
 *     admin client and the consumer's offset lookups; the producer's default is
 *     {@link Integer#MAX_VALUE}, as Kafka's: its sends are bounded by {@code delivery.timeout.ms})
 * @param retryBackoffMs {@code retry.backoff.ms} (default 100): pause before the first retry
 * @param retryBackoffMaxMs {@code retry.backoff.max.ms} (default 1000): the pause doubles with each
 *     further retry of the same request up to this bound (so 10 retries span only about 7.5 s, less
 *     than the controllers' default {@code broker.session.timeout.ms} of 9 s: the producer therefore
 *     retries until {@code delivery.timeout.ms} instead of counting)
 * @param connectTimeoutMs {@code socket.connection.setup.timeout.ms} (default 10000)
 */
public record ClientConfig(
        List<HostPort> bootstrapServers,
        String clientId,
        int requestTimeoutMs,
        int retries,
        int retryBackoffMs,
        int retryBackoffMaxMs,
        int connectTimeoutMs) {

    public ClientConfig {
        if (bootstrapServers.isEmpty()) {
            throw new IllegalArgumentException("bootstrap.servers must name at least one host:port");
        }
        bootstrapServers = List.copyOf(bootstrapServers);
        if (retryBackoffMaxMs < retryBackoffMs) {
            throw new IllegalArgumentException(
                    "retry.backoff.max.ms " + retryBackoffMaxMs + " must be >= retry.backoff.ms " + retryBackoffMs);
        }
    }

    /**
     * The pause before retry number {@code attempt} (1 = the first retry): {@code retry.backoff.ms}
     * doubled per earlier retry, at most {@code retry.backoff.max.ms}.
     */
    public long retryBackoffMs(int attempt) {
        long ms = retryBackoffMs;
        for (int i = 1; i < attempt && ms < retryBackoffMaxMs; i++) {
            ms *= 2;
        }
        return Math.min(ms, retryBackoffMaxMs);
    }

    /** This configuration with {@code retries} replaced. */
    public ClientConfig withRetries(int retries) {
        return new ClientConfig(
                bootstrapServers,
                clientId,
                requestTimeoutMs,
                retries,
                retryBackoffMs,
                retryBackoffMaxMs,
                connectTimeoutMs);
    }

    /** Reads the common keys; {@code defaultClientId} is used when {@code client.id} is absent. */
    public static ClientConfig from(Properties props, String defaultClientId) {
        ConfigValues v = new ConfigValues(props);
        String servers = v.string("bootstrap.servers", null);
        if (servers == null || servers.isBlank()) {
            throw new IllegalArgumentException("bootstrap.servers is required (host:port[,host:port...])");
        }
        List<HostPort> list = new ArrayList<>();
        for (String s : servers.split(",")) {
            if (!s.isBlank()) {
                list.add(HostPort.parse(s.trim()));
            }
        }
        return new ClientConfig(
                list,
                v.string("client.id", defaultClientId),
                v.intValue("request.timeout.ms", 30_000, 1, Integer.MAX_VALUE),
                v.intValue("retries", 10, 0, Integer.MAX_VALUE),
                v.intValue("retry.backoff.ms", 100, 0, 600_000),
                v.intValue(
                        "retry.backoff.max.ms",
                        Math.max(1000, v.intValue("retry.backoff.ms", 100, 0, 600_000)),
                        0,
                        600_000),
                v.intValue("socket.connection.setup.timeout.ms", 10_000, 1, Integer.MAX_VALUE));
    }
}
