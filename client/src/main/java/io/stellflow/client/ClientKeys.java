package io.stellflow.client;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client keys each client reads, and the Kafka keys it knows but cannot honour. Checked once when
 * a producer, consumer or admin client is configured: a Kafka key whose value would change what the
 * client does (transactions, TLS or SASL) is refused with the reason, since
 * ignoring it would silently give the application something else than it asked for; a key no client
 * reads is logged as one WARN naming it (Kafka does the same), since it is usually a typo.
 *
 * <p>Thread-safety: stateless.
 */
final class ClientKeys {
    private static final Logger LOG = LoggerFactory.getLogger(ClientKeys.class);

    /** Keys every client reads ({@link ClientConfig}). */
    static final Set<String> COMMON = Set.of(
            "bootstrap.servers",
            "client.id",
            "request.timeout.ms",
            "retries",
            "retry.backoff.ms",
            "retry.backoff.max.ms",
            "socket.connection.setup.timeout.ms");

    /** Keys the producer reads ({@link ProducerConfig}), and the refusable ones it accepts at their no-op values. */
    static final Set<String> PRODUCER = union(
            COMMON,
            "batch.size",
            "linger.ms",
            "acks",
            "max.in.flight.requests.per.connection",
            "max.request.size",
            "buffer.memory",
            "max.block.ms",
            "delivery.timeout.ms",
            "timeout.ms",
            "transactional.id",
            "transaction.timeout.ms",
            "compression.type",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "enable.idempotence",
            "security.protocol");

    /** Keys the consumer reads ({@link ConsumerConfig}). */
    static final Set<String> CONSUMER = union(
            COMMON,
            "group.id",
            "group.instance.id",
            "enable.auto.commit",
            "auto.commit.interval.ms",
            "auto.offset.reset",
            "group.remote.assignor",
            "max.poll.interval.ms",
            "default.api.timeout.ms",
            "fetch.max.wait.ms",
            "fetch.min.bytes",
            "fetch.max.bytes",
            "max.partition.fetch.bytes",
            "check.crcs",
            "compression.max.decompressed.bytes",
            "isolation.level",
            "security.protocol");

    /** Keys the admin client reads. */
    static final Set<String> ADMIN = union(COMMON, "security.protocol");

    private ClientKeys() {}

    /**
     * Refuses a known-but-unsupported key at a value the client cannot honour, then logs one WARN
     * naming the keys {@code known} does not hold.
     *
     * @param clientType "producer", "consumer" or "admin", for the messages
     * @throws IllegalArgumentException naming the key, its value and why it is refused
     */
    static void check(Properties props, Set<String> known, String clientType) {
        if (props == null) {
            return;
        }
        refuseUnless(props, "security.protocol", "PLAINTEXT", "the client speaks PLAINTEXT only (no TLS or SASL)");
        Set<String> unknown = new TreeSet<>();
        for (String key : props.stringPropertyNames()) {
            if (!known.contains(key)) {
                unknown.add(key);
            }
        }
        if (!unknown.isEmpty()) {
            LOG.warn(
                    "ignoring unknown {} config key(s) {}: the {} does not read them", clientType, unknown, clientType);
        }
    }

    private static void refuseUnless(Properties props, String key, String supported, String why) {
        String v = props.getProperty(key);
        if (v != null && !v.trim().toLowerCase(Locale.ROOT).equals(supported.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException(key + "=" + v.trim() + " is not supported: " + why + "; use " + key + "="
                    + supported + " or leave the key out");
        }
    }

    private static Set<String> union(Set<String> base, String... more) {
        Set<String> all = new HashSet<>(base);
        all.addAll(List.of(more));
        return Set.copyOf(all);
    }
}
