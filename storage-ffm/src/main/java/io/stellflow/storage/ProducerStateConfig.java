package io.stellflow.storage;

/**
 * Idempotent-producer settings of every log of a broker ({@link ProducerStateManager}).
 *
 * @param producerIdExpirationMs {@code producer.id.expiration.ms} (Kafka's key; default 1 day): a
 *     producer id with no append for this long is forgotten by a partition, after which its next
 *     batch must start at sequence 0 again
 * @param maxProducerIdsPerPartition {@code producer.id.max.per.partition}: most producer ids one
 *     partition keeps (default 10000, about 1.5 MB of state per partition at 150 bytes an id); a new
 *     id beyond it is refused until ids expire
 */
public record ProducerStateConfig(long producerIdExpirationMs, int maxProducerIdsPerPartition) {
    public static final long DEFAULT_PRODUCER_ID_EXPIRATION_MS = 24L * 60 * 60 * 1000;
    public static final int DEFAULT_MAX_PRODUCER_IDS_PER_PARTITION = 10_000;

    /** The defaults. */
    public static final ProducerStateConfig DEFAULTS =
            new ProducerStateConfig(DEFAULT_PRODUCER_ID_EXPIRATION_MS, DEFAULT_MAX_PRODUCER_IDS_PER_PARTITION);

    public ProducerStateConfig {
        if (producerIdExpirationMs <= 0) {
            throw new IllegalArgumentException("producer.id.expiration.ms must be > 0: " + producerIdExpirationMs);
        }
        if (maxProducerIdsPerPartition <= 0) {
            throw new IllegalArgumentException(
                    "producer.id.max.per.partition must be > 0: " + maxProducerIdsPerPartition);
        }
    }
}
