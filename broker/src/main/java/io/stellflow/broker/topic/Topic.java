package io.stellflow.broker.topic;

import io.stellflow.server.common.topic.TopicNames;
import java.util.List;
import java.util.UUID;

/**
 * A topic: its name, id and partitions. The partition count never changes in this slice.
 *
 * <p>Thread-safety: immutable; the partitions are thread-safe.
 *
 * @param name the topic name (valid per {@link TopicNames})
 * @param topicId the random id assigned at creation
 * @param leaderEpoch the leader epoch of every partition (0 on a single node)
 * @param partitions partitions by id, 0..n-1
 */
public record Topic(String name, UUID topicId, int leaderEpoch, List<Partition> partitions) {

    /** The partition with this id, or null when it does not exist. */
    public Partition partition(int partitionId) {
        return partitionId >= 0 && partitionId < partitions.size() ? partitions.get(partitionId) : null;
    }

    /** Number of partitions. */
    public int partitionCount() {
        return partitions.size();
    }
}
