package io.stellflow.broker.config;

import static io.stellflow.server.common.config.ConfigValues.intValue;
import static io.stellflow.server.common.config.ConfigValues.longValue;

import io.stellflow.server.common.config.ConfigException;
import java.util.Properties;
import java.util.Set;

/**
 * Settings of the transaction coordinator and its topic {@code __transaction_state} (issue #20),
 * Kafka's key names and defaults. The runtime's commit timeout and load step are the group
 * coordinator's ({@code offsets.commit.timeout.ms}, {@code offsets.load.buffer.size}).
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Range, meaning</th></tr>
 *   <tr><td>transaction.state.log.num.partitions</td><td>50</td><td>1..{@value
 *       BrokerConfig#MAX_PARTITIONS_PER_TOPIC}; never change it once the topic exists</td></tr>
 *   <tr><td>transaction.state.log.replication.factor</td><td>3</td><td>&gt;= 1, capped to the
 *       registered brokers at creation</td></tr>
 *   <tr><td>transaction.state.log.segment.bytes</td><td>104857600</td><td>&gt;= 1024</td></tr>
 *   <tr><td>transaction.default.timeout.ms</td><td>60000</td><td>1..transaction.max.timeout.ms; the
 *       timeout of a v0 producer (InitProducerId v0 carries none)</td></tr>
 *   <tr><td>transaction.max.timeout.ms</td><td>900000</td><td>&gt;= 1</td></tr>
 *   <tr><td>transaction.abort.timed.out.transaction.cleanup.interval.ms</td><td>10000</td><td>&gt;=
 *       1; how often timed-out transactions are aborted and PREPARE markers re-sent</td></tr>
 *   <tr><td>transactional.id.expiration.ms</td><td>604800000 (7 days)</td><td>&gt;= 1; an idle
 *       transactional id is forgotten (a tombstone) this long after its last change</td></tr>
 *   <tr><td>transactional.id.max.per.broker</td><td>{@value #DEFAULT_MAX_TRANSACTIONAL_IDS}</td><td>&gt;= 1;
 *       transactional ids the {@code __transaction_state} partitions loaded on this broker keep together:
 *       InitProducerId for a new id beyond it is answered COORDINATOR_NOT_AVAILABLE (nothing written)
 *       until ids expire; known ids go on</td></tr>
 * </table>
 *
 * <p>Thread-safety: immutable.
 */
public record TransactionCoordinatorConfig(
        int numPartitions,
        short replicationFactor,
        int segmentBytes,
        int defaultTimeoutMs,
        int maxTimeoutMs,
        long cleanupIntervalMs,
        long idExpirationMs,
        long maxTransactionalIds) {

    /**
     * Heap one idle transactional id takes (64-bit JVM, compressed references), the unit of the
     * default's arithmetic: the state object (72 B), its empty partition set ({@code TreeSet} over a
     * {@code TreeMap}, 64 B), the id ({@code String} of 32 Latin-1 characters: 24 + 48 B), the {@code
     * HashMap} node (32 B) and about 8 B of table slot: about 250 B, plus about 70 B for each
     * partition of an open transaction.
     */
    public static final int BYTES_PER_TRANSACTIONAL_ID = 250;

    /**
     * {@code transactional.id.max.per.broker} default: 100,000 x {@value #BYTES_PER_TRANSACTIONAL_ID}
     * B = 25 MB, under 3% of the broker's default 1 GiB heap (ids of a few hundred characters or
     * open transactions over many partitions take some times that, still far below it). Kafka
     * Streams with exactly-once takes one id per stream thread, a transactional application usually
     * one per instance: 100,000 live ids on one coordinator is far more than such fleets use, while
     * a client that makes up a new id per transaction (the leak this bounds) reaches it in hours
     * instead of filling the heap within {@code transactional.id.expiration.ms} (7 days).
     */
    public static final long DEFAULT_MAX_TRANSACTIONAL_IDS = 100_000;

    /** The keys read here. */
    public static final Set<String> KEYS = Set.of(
            "transaction.state.log.num.partitions",
            "transaction.state.log.replication.factor",
            "transaction.state.log.segment.bytes",
            "transaction.default.timeout.ms",
            "transaction.max.timeout.ms",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "transactional.id.expiration.ms",
            "transactional.id.max.per.broker");

    /** Every key at its default. */
    public static final TransactionCoordinatorConfig DEFAULTS = parse(new Properties());

    public TransactionCoordinatorConfig {
        if (defaultTimeoutMs < 1 || defaultTimeoutMs > maxTimeoutMs) {
            throw new ConfigException(
                    "transaction.default.timeout.ms",
                    Integer.toString(defaultTimeoutMs),
                    "must be 1..transaction.max.timeout.ms (" + maxTimeoutMs + ")");
        }
        if (maxTransactionalIds < 1) {
            throw new ConfigException(
                    "transactional.id.max.per.broker", Long.toString(maxTransactionalIds), "must be >= 1");
        }
    }

    /** With the default {@code transactional.id.max.per.broker}. */
    public TransactionCoordinatorConfig(
            int numPartitions,
            short replicationFactor,
            int segmentBytes,
            int defaultTimeoutMs,
            int maxTimeoutMs,
            long cleanupIntervalMs,
            long idExpirationMs) {
        this(
                numPartitions,
                replicationFactor,
                segmentBytes,
                defaultTimeoutMs,
                maxTimeoutMs,
                cleanupIntervalMs,
                idExpirationMs,
                DEFAULT_MAX_TRANSACTIONAL_IDS);
    }

    /** This config with {@code max} as {@code transactional.id.max.per.broker}. */
    public TransactionCoordinatorConfig withMaxTransactionalIds(long max) {
        return new TransactionCoordinatorConfig(
                numPartitions,
                replicationFactor,
                segmentBytes,
                defaultTimeoutMs,
                maxTimeoutMs,
                cleanupIntervalMs,
                idExpirationMs,
                max);
    }

    /**
     * Reads and validates the keys.
     *
     * @throws ConfigException naming the bad key and value
     */
    public static TransactionCoordinatorConfig parse(Properties props) {
        int max = intValue(props, "transaction.max.timeout.ms", 900_000, 1, Integer.MAX_VALUE);
        return new TransactionCoordinatorConfig(
                intValue(props, "transaction.state.log.num.partitions", 50, 1, BrokerConfig.MAX_PARTITIONS_PER_TOPIC),
                (short) intValue(props, "transaction.state.log.replication.factor", 3, 1, Short.MAX_VALUE),
                intValue(props, "transaction.state.log.segment.bytes", 100 << 20, 1024, Integer.MAX_VALUE),
                intValue(props, "transaction.default.timeout.ms", 60_000, 1, max),
                max,
                longValue(
                        props,
                        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                        10_000,
                        1,
                        Long.MAX_VALUE / 2),
                longValue(props, "transactional.id.expiration.ms", 7L * 24 * 3600 * 1000, 1, Long.MAX_VALUE / 2),
                longValue(props, "transactional.id.max.per.broker", DEFAULT_MAX_TRANSACTIONAL_IDS, 1, Long.MAX_VALUE));
    }
}
