package io.stellflow.storage;

/**
 * Idempotent-producer settings of every log of a broker ({@link ProducerStateManager}).
 *
 * @param producerIdExpirationMs {@code producer.id.expiration.ms} (Kafka's key; default 1 day): a
 *     producer id with no append for this long is forgotten by a partition, after which its next
 *     batch must start at sequence 0 again
 * @param maxProducerIdsPerPartition {@code producer.id.max.per.partition}: most producer ids one
 *     partition keeps (default 10000, about 3.3 MB of heap per partition at {@value
 *     #BYTES_PER_PRODUCER_ID} bytes an id); a new id beyond it is refused until ids expire
 * @param maxProducerIdsPerBroker {@code producer.id.max.per.broker}: most producer ids all the
 *     partitions of the broker keep together, leaders and followers ({@link BrokerProducerIds}); a
 *     leader refuses a new id beyond it until ids expire
 */
public record ProducerStateConfig(
        long producerIdExpirationMs, int maxProducerIdsPerPartition, long maxProducerIdsPerBroker) {
    public static final long DEFAULT_PRODUCER_ID_EXPIRATION_MS = 24L * 60 * 60 * 1000;
    public static final int DEFAULT_MAX_PRODUCER_IDS_PER_PARTITION = 10_000;

    /**
     * Heap one producer id's entry takes (64-bit JVM, compressed references), the unit of the
     * defaults' arithmetic: the entry object (72 B: header, 6 scalar fields, 4 array references), its
     * two {@code int[5]} (40 B each) and two {@code long[5]} (56 B each), the {@code HashMap} node
     * (32 B), the boxed {@code Long} key (16 B) and 4-8 B of table slot: about 320 B; measured 329 B
     * an entry over 500,000 entries of 5 batches each (heap used after GC, JDK 25).
     */
    public static final int BYTES_PER_PRODUCER_ID = 330;

    /**
     * {@code producer.id.max.per.broker} default: 400,000 x {@value #BYTES_PER_PRODUCER_ID} B = 132
     * MB, an eighth of the broker's default 1 GiB heap ({@code bin/_launch.sh}). Without it the bound
     * was the per-partition one times the partitions: 1,000 partitions x 10,000 ids = 10 million
     * entries, 3.3 GB, an OutOfMemoryError long before. It still admits 40 partitions full to their
     * own bound, far above what a normal producer population needs (one id per producer instance and
     * partition it writes to). Raise it with the heap.
     */
    public static final long DEFAULT_MAX_PRODUCER_IDS_PER_BROKER = 400_000;

    /** The defaults. */
    public static final ProducerStateConfig DEFAULTS = new ProducerStateConfig(
            DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            DEFAULT_MAX_PRODUCER_IDS_PER_PARTITION,
            DEFAULT_MAX_PRODUCER_IDS_PER_BROKER);

    public ProducerStateConfig {
        if (producerIdExpirationMs <= 0) {
            throw new IllegalArgumentException("producer.id.expiration.ms must be > 0: " + producerIdExpirationMs);
        }
        if (maxProducerIdsPerPartition <= 0) {
            throw new IllegalArgumentException(
                    "producer.id.max.per.partition must be > 0: " + maxProducerIdsPerPartition);
        }
        if (maxProducerIdsPerBroker <= 0) {
            throw new IllegalArgumentException("producer.id.max.per.broker must be > 0: " + maxProducerIdsPerBroker);
        }
    }

    /** With the default {@code producer.id.max.per.broker}. */
    public ProducerStateConfig(long producerIdExpirationMs, int maxProducerIdsPerPartition) {
        this(producerIdExpirationMs, maxProducerIdsPerPartition, DEFAULT_MAX_PRODUCER_IDS_PER_BROKER);
    }
}
