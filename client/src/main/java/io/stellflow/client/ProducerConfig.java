package io.stellflow.client;

import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Producer settings (Kafka names). Immutable; validated at construction.
 *
 * @param common the shared client settings; {@code retries} defaults to {@link Integer#MAX_VALUE}
 *     for the producer (Kafka's default): a retriable failure (leader unreachable or moved) is
 *     retried with backoff until {@code delivery.timeout.ms}; a smaller {@code retries} still caps
 *     the attempts
 * @param batchSizeBytes {@code batch.size} (default 16384): a partition's batch is sent once it
 *     holds this many bytes; a single larger record gets a batch of its own
 * @param lingerMs {@code linger.ms} (default 5): how long a non-full batch waits for more records
 * @param acks {@code acks}: 0, 1 or -1 ({@code all}); default -1
 * @param maxInFlightPerConnection {@code max.in.flight.requests.per.connection} (default 5)
 * @param maxRequestBytes {@code max.request.size} (default 1048576): soft cap on the record bytes
 *     of one Produce request (a batch is not split to fit it; only one the broker refuses as too
 *     large is); a record whose serialized size (record and batch header) is above it fails its
 *     {@code send} at once with a {@link RecordTooLargeException}, as in Kafka
 * @param bufferMemoryBytes {@code buffer.memory} (default 33554432): batch memory before {@code
 *     send} blocks; a record above it when serialized fails its {@code send} at once with a {@link
 *     RecordTooLargeException}
 * @param maxBlockMs {@code max.block.ms} (default 60000): longest {@code send} blocks for memory or
 *     metadata
 * @param deliveryTimeoutMs {@code delivery.timeout.ms} (default 120000): a batch not acknowledged
 *     within this time after it was created fails with {@code NETWORK_ERROR} and a message naming the
 *     partition, the timeout, the attempts and the last error; it bounds the time spent in retries. A
 *     batch in flight is not expired: it fails at the latest when its request times out
 *     ({@code request.timeout.ms}, default 30000). Must be at least {@code linger.ms} + {@code
 *     request.timeout.ms} (Kafka's rule): set lower it is refused, left unset the default is raised
 *     to that sum with a WARN
 * @param requestTimeoutMsOnBroker {@code timeout.ms} sent in Produce (default 30000)
 * @param compressionType {@code compression.type} (default {@code none}): {@code none}, {@code
 *     gzip}, {@code snappy}, {@code lz4} or {@code zstd}; each batch is compressed whole once it is
 *     sealed (decision 9.o of {@code docs/spec/wire-protocol.md}), off the sender thread, and {@code
 *     batch.size} then counts estimated compressed bytes ({@code docs/compression.md})
 * @param compressionLevels {@code compression.gzip.level}, {@code compression.lz4.level}, {@code
 *     compression.zstd.level} (Kafka's defaults and ranges, {@link CompressionConfig})
 * @param enableIdempotence {@code enable.idempotence} (default {@code true}, as Kafka's since 3.0):
 *     the producer takes a producer id (InitProducerId) and stamps each batch with it and a
 *     per-partition sequence, so a retry never writes a batch twice and order holds across retries
 *     ({@code docs/exactly-once.md}, "Our producer"). Needs {@code acks=all}, {@code
 *     max.in.flight.requests.per.connection} at most 5 and {@code retries} above 0. Left unset, a
 *     conflicting setting turns it off with one INFO line naming the keys (Kafka's KIP-679 rule);
 *     set to {@code true}, a conflicting setting is refused
 * @param transactionalId {@code transactional.id} (default none): makes the producer transactional
 *     ({@link StellflowProducer#initTransactions()} ...; {@code docs/exactly-once.md}, "Our producer:
 *     transactions"). It implies idempotence: {@code enable.idempotence=false} with it, or a setting
 *     idempotence cannot work with, is refused naming the keys
 * @param transactionTimeoutMs {@code transaction.timeout.ms} (default 60000, Kafka's): sent in
 *     InitProducerId v1; the coordinator aborts a transaction open longer and fences the producer. A
 *     value above the brokers' {@code transaction.max.timeout.ms} fails {@code initTransactions}
 */
public record ProducerConfig(
        ClientConfig common,
        int batchSizeBytes,
        int lingerMs,
        short acks,
        int maxInFlightPerConnection,
        int maxRequestBytes,
        long bufferMemoryBytes,
        long maxBlockMs,
        long deliveryTimeoutMs,
        int requestTimeoutMsOnBroker,
        CompressionType compressionType,
        CompressionConfig compressionLevels,
        boolean enableIdempotence,
        String transactionalId,
        int transactionTimeoutMs) {

    private static final Logger LOG = LoggerFactory.getLogger(ProducerConfig.class);

    /** The producer's default {@code retries}: unbounded, {@code delivery.timeout.ms} ends a send. */
    public static final int DEFAULT_RETRIES = Integer.MAX_VALUE;

    /** The default {@code delivery.timeout.ms}, Kafka's: 2 minutes. */
    public static final long DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;

    /**
     * Most requests in flight per connection an idempotent producer may have (Kafka's bound): the
     * broker remembers the last 5 batches per producer and partition, so a retry of any batch still
     * in flight is recognised as a duplicate.
     */
    public static final int MAX_IDEMPOTENT_IN_FLIGHT = 5;

    /**
     * Reads the producer's keys. Kafka keys it cannot honour are refused ({@code security.protocol}
     * other than {@code PLAINTEXT}); keys it does not read are logged as one
     * WARN. Idempotence follows Kafka's rules (3.0 and KIP-679): on by default; {@code
     * enable.idempotence=true} with {@code acks} other than all, more than 5 requests in flight or
     * {@code retries=0} is refused naming the keys; {@code enable.idempotence} left unset with such a
     * setting gives a non-idempotent producer and one INFO line naming the keys. {@code
     * delivery.timeout.ms} below {@code linger.ms} + {@code request.timeout.ms} is refused when set,
     * raised with a WARN when left at its default ({@link #deliveryTimeoutMs}).
     *
     * @throws IllegalArgumentException naming the bad or refused key and its value
     */
    public static ProducerConfig from(Properties props) {
        ClientKeys.check(props, ClientKeys.PRODUCER, "producer");
        ConfigValues v = new ConfigValues(props);
        ClientConfig common = ClientConfig.from(props, "stellflow-producer");
        if (props.getProperty("retries") == null) {
            common = common.withRetries(DEFAULT_RETRIES);
        }
        int lingerMs = v.intValue("linger.ms", 5, 0, 3_600_000);
        ProducerConfig config = new ProducerConfig(
                common,
                v.intValue("batch.size", 16_384, 1, 64 << 20),
                lingerMs,
                parseAcks(v.string("acks", "-1")),
                v.intValue("max.in.flight.requests.per.connection", 5, 1, 1000),
                v.intValue("max.request.size", 1 << 20, 1, 64 << 20),
                v.longValue("buffer.memory", 32L << 20, 1024, Long.MAX_VALUE),
                v.longValue("max.block.ms", 60_000, 0, Long.MAX_VALUE),
                deliveryTimeoutMs(
                        v.longValue("delivery.timeout.ms", DEFAULT_DELIVERY_TIMEOUT_MS, 1, Long.MAX_VALUE),
                        props != null && props.getProperty("delivery.timeout.ms") != null,
                        lingerMs,
                        common.requestTimeoutMs()),
                v.intValue("timeout.ms", 30_000, 1, Integer.MAX_VALUE),
                compressionType(v.string("compression.type", "none")),
                CompressionConfig.from(levels(props)),
                v.booleanValue("enable.idempotence", true),
                transactionalId(props),
                v.intValue("transaction.timeout.ms", 60_000, 1, Integer.MAX_VALUE));
        List<String> conflicts = config.enableIdempotence() ? idempotenceConflicts(config) : List.of();
        if (config.transactionalId() != null) {
            if (!config.enableIdempotence()) {
                throw new IllegalArgumentException("transactional.id=" + config.transactionalId()
                        + " needs idempotence, not enable.idempotence=false: remove enable.idempotence or"
                        + " transactional.id");
            }
            if (!conflicts.isEmpty()) {
                throw new IllegalArgumentException("transactional.id=" + config.transactionalId()
                        + " implies enable.idempotence=true, which needs " + String.join("; ", conflicts));
            }
            return config;
        }
        if (conflicts.isEmpty()) {
            return config;
        }
        if (props.getProperty("enable.idempotence") != null) {
            throw new IllegalArgumentException("enable.idempotence=true needs " + String.join("; ", conflicts));
        }
        LOG.info(
                "enable.idempotence not set: the producer is not idempotent (a retry may write a batch twice)"
                        + " since idempotence needs {}",
                String.join("; ", conflicts));
        return config.withIdempotence(false);
    }

    /**
     * {@code delivery.timeout.ms} as Kafka checks it: at least {@code linger.ms} + {@code
     * request.timeout.ms}, so a batch gets one whole attempt after it lingered. A value set below
     * that is refused naming the three values; the default below it (a large {@code linger.ms} or
     * {@code request.timeout.ms}) is raised to the sum with one WARN, as Kafka's producer does.
     *
     * @param value {@code delivery.timeout.ms} as read (the default when not set)
     * @param set whether the properties set {@code delivery.timeout.ms}
     * @throws IllegalArgumentException {@code set} and {@code value} below the sum
     */
    static long deliveryTimeoutMs(long value, boolean set, int lingerMs, int requestTimeoutMs) {
        long floorMs = (long) lingerMs + requestTimeoutMs;
        if (value >= floorMs) {
            return value;
        }
        if (set) {
            throw new IllegalArgumentException("delivery.timeout.ms=" + value
                    + " must be >= linger.ms + request.timeout.ms = " + lingerMs + " + " + requestTimeoutMs + " = "
                    + floorMs + ": raise delivery.timeout.ms, or lower linger.ms or request.timeout.ms");
        }
        LOG.warn(
                "delivery.timeout.ms not set, and its default {} is below linger.ms + request.timeout.ms = {} + {}:"
                        + " using delivery.timeout.ms={}",
                value,
                lingerMs,
                requestTimeoutMs,
                floorMs);
        return floorMs;
    }

    /** This configuration with {@code enable.idempotence} set to {@code enabled}, nothing else changed. */
    ProducerConfig withIdempotence(boolean enabled) {
        return new ProducerConfig(
                common,
                batchSizeBytes,
                lingerMs,
                acks,
                maxInFlightPerConnection,
                maxRequestBytes,
                bufferMemoryBytes,
                maxBlockMs,
                deliveryTimeoutMs,
                requestTimeoutMsOnBroker,
                compressionType,
                compressionLevels,
                enabled,
                transactionalId,
                transactionTimeoutMs);
    }

    /** True with a {@code transactional.id}. */
    boolean transactional() {
        return transactionalId != null;
    }

    private static String transactionalId(Properties props) {
        String id = props == null ? null : props.getProperty("transactional.id");
        if (id == null) {
            return null;
        }
        if (id.isBlank()) {
            throw new IllegalArgumentException("transactional.id is empty: give an id or leave the key out");
        }
        return id;
    }

    /**
     * The settings of {@code c} that idempotence cannot work with (Kafka's rules), each as "what it
     * needs, what is set, how to fix it"; empty when there are none. Whether that is an error or
     * turns idempotence off depends on whether {@code enable.idempotence} was set ({@link #from}).
     */
    static List<String> idempotenceConflicts(ProducerConfig c) {
        List<String> conflicts = new ArrayList<>(3);
        if (c.acks() != -1) {
            conflicts.add("acks=all (-1), not acks=" + c.acks() + ": set acks=all or enable.idempotence=false");
        }
        if (c.maxInFlightPerConnection() > MAX_IDEMPOTENT_IN_FLIGHT) {
            conflicts.add("max.in.flight.requests.per.connection <= " + MAX_IDEMPOTENT_IN_FLIGHT + ", not "
                    + c.maxInFlightPerConnection() + ": lower it or set enable.idempotence=false");
        }
        if (c.common().retries() == 0) {
            conflicts.add("retries > 0, not retries=0: raise it or set enable.idempotence=false");
        }
        return conflicts;
    }

    private static CompressionType compressionType(String raw) {
        try {
            return CompressionType.forName(raw.trim());
        } catch (IllegalArgumentException e) {
            String value = raw.trim();
            String hint = value.equalsIgnoreCase("uncompressed") || value.equalsIgnoreCase("producer")
                    ? " ('uncompressed' and 'producer' are topic and broker values; a producer says none)"
                    : "";
            throw new IllegalArgumentException("compression.type=" + value + ": " + e.getMessage() + hint, e);
        }
    }

    /** The level keys of {@code props} as strings (CompressionConfig reads only its own keys). */
    private static Map<String, String> levels(Properties props) {
        Map<String, String> levels = new HashMap<>();
        for (String key :
                List.of(CompressionConfig.GZIP_LEVEL, CompressionConfig.LZ4_LEVEL, CompressionConfig.ZSTD_LEVEL)) {
            String value = props == null ? null : props.getProperty(key);
            if (value != null) {
                levels.put(key, value);
            }
        }
        return levels;
    }

    static short parseAcks(String raw) {
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "0" -> 0;
            case "1" -> 1;
            case "-1", "all" -> -1;
            default -> throw new IllegalArgumentException("invalid value for acks: '" + raw + "' (0, 1, -1 or all)");
        };
    }
}
