package io.stellflow.broker.group;

/**
 * The coordinator's view of topic metadata: how many partitions a topic has. The assignors read it
 * when they compute a target assignment.
 *
 * <p>Thread-safety: called on the shard's thread; implementations read the broker's metadata image.
 */
@FunctionalInterface
public interface TopicPartitionCounts {
    /** The partition count of {@code topic}, or -1 when the topic is unknown (it gets no partitions). */
    int partitionCount(String topic);
}
