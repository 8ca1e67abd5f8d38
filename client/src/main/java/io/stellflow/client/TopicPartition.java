package io.stellflow.client;

import java.util.Objects;

/**
 * A topic name and a partition number. Immutable and thread-safe.
 *
 * @param topic the topic name, never null
 * @param partition the partition number, {@code >= 0}
 */
public record TopicPartition(String topic, int partition) {
    public TopicPartition {
        Objects.requireNonNull(topic, "topic");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
