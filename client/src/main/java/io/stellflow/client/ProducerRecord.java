package io.stellflow.client;

import java.util.Objects;

/**
 * One record to send. Immutable and thread-safe (the byte arrays are not copied: do not modify
 * them until the send completes).
 *
 * @param topic the topic, never null
 * @param partition the partition, or null to let the partitioner choose (key hash, else sticky)
 * @param key the key bytes, may be null
 * @param value the value bytes, may be null
 * @param timestampMs the record's CreateTime in epoch milliseconds, or {@link #NO_TIMESTAMP} to
 *     use the wall clock at {@code send}
 */
public record ProducerRecord(String topic, Integer partition, byte[] key, byte[] value, long timestampMs) {
    /** Marker for "stamp the record with the current wall-clock time". */
    public static final long NO_TIMESTAMP = -1L;

    public ProducerRecord {
        Objects.requireNonNull(topic, "topic");
        if (partition != null && partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
        if (timestampMs < 0 && timestampMs != NO_TIMESTAMP) {
            throw new IllegalArgumentException("timestampMs must be >= 0 or NO_TIMESTAMP: " + timestampMs);
        }
    }

    /** A record stamped with the current time at send. */
    public ProducerRecord(String topic, Integer partition, byte[] key, byte[] value) {
        this(topic, partition, key, value, NO_TIMESTAMP);
    }

    /** A record without key whose partition the partitioner chooses. */
    public ProducerRecord(String topic, byte[] value) {
        this(topic, null, null, value, NO_TIMESTAMP);
    }
}
