package io.stellflow.broker.config;

import static io.stellflow.server.common.config.ConfigValues.longValue;

import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import java.util.Set;

/**
 * Settings of the replica fetchers (follower side of replication, issue #6), Kafka's key names and
 * defaults except {@code replica.fetch.max.in.flight}, which is Stellflow's.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>replica.fetch.max.bytes</td><td>1048576</td><td>&gt;= 1; soft cap per partition of a
 *       follower Fetch (the first batch is sent even if larger)</td></tr>
 *   <tr><td>replica.fetch.response.max.bytes</td><td>10485760</td><td>&gt;= 1; soft cap on a whole
 *       follower Fetch response</td></tr>
 *   <tr><td>replica.fetch.wait.max.ms</td><td>500</td><td>0..replica.socket.timeout.ms; the leader
 *       parks a Fetch up to this long while fewer than min bytes are readable</td></tr>
 *   <tr><td>replica.fetch.min.bytes</td><td>1</td><td>&gt;= 0</td></tr>
 *   <tr><td>replica.fetch.backoff.ms</td><td>1000</td><td>0..3600000; wait after a partition
 *       error or a lost connection before trying again</td></tr>
 *   <tr><td>replica.fetch.max.in.flight</td><td>2</td><td>1..64 outstanding Fetch requests per
 *       leader connection; the partitions are split across them, each partition in at most one</td></tr>
 *   <tr><td>replica.socket.timeout.ms</td><td>30000</td><td>&gt;= replica.fetch.wait.max.ms; a
 *       request unanswered this long closes the connection (then reconnect with backoff)</td></tr>
 * </table>
 *
 * <p>Thread-safety: immutable.
 *
 * @param fetchMaxBytes {@code replica.fetch.max.bytes}
 * @param responseMaxBytes {@code replica.fetch.response.max.bytes}
 * @param waitMaxMs {@code replica.fetch.wait.max.ms}
 * @param minBytes {@code replica.fetch.min.bytes}
 * @param backoffMs {@code replica.fetch.backoff.ms}
 * @param maxInFlight {@code replica.fetch.max.in.flight}
 * @param socketTimeoutMs {@code replica.socket.timeout.ms}
 */
public record ReplicaFetcherConfig(
        int fetchMaxBytes,
        int responseMaxBytes,
        int waitMaxMs,
        int minBytes,
        long backoffMs,
        int maxInFlight,
        long socketTimeoutMs) {

    /** The keys read here. */
    public static final Set<String> KEYS = Set.of(
            "replica.fetch.max.bytes",
            "replica.fetch.response.max.bytes",
            "replica.fetch.wait.max.ms",
            "replica.fetch.min.bytes",
            "replica.fetch.backoff.ms",
            "replica.fetch.max.in.flight",
            "replica.socket.timeout.ms");

    /** Every key at its default. */
    public static final ReplicaFetcherConfig DEFAULTS = parse(new Properties());

    /**
     * Reads and validates the keys.
     *
     * @throws ConfigException naming the bad key and value
     */
    public static ReplicaFetcherConfig parse(Properties props) {
        int fetchMax = (int) longValue(props, "replica.fetch.max.bytes", 1 << 20, 1, Integer.MAX_VALUE);
        int responseMax = (int) longValue(props, "replica.fetch.response.max.bytes", 10 << 20, 1, Integer.MAX_VALUE);
        long socketTimeoutMs = longValue(props, "replica.socket.timeout.ms", 30_000, 1, Integer.MAX_VALUE);
        int waitMaxMs = (int) longValue(props, "replica.fetch.wait.max.ms", 500, 0, Integer.MAX_VALUE);
        if (waitMaxMs > socketTimeoutMs) {
            throw new ConfigException(
                    "replica.fetch.wait.max.ms",
                    Integer.toString(waitMaxMs),
                    "must not exceed replica.socket.timeout.ms " + socketTimeoutMs);
        }
        int minBytes = (int) longValue(props, "replica.fetch.min.bytes", 1, 0, Integer.MAX_VALUE);
        long backoffMs = longValue(props, "replica.fetch.backoff.ms", 1000, 0, 3_600_000);
        int maxInFlight = (int) longValue(props, "replica.fetch.max.in.flight", 2, 1, 64);
        return new ReplicaFetcherConfig(
                fetchMax, responseMax, waitMaxMs, minBytes, backoffMs, maxInFlight, socketTimeoutMs);
    }
}
