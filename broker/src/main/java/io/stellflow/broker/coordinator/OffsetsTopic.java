package io.stellflow.broker.coordinator;

import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.server.common.topic.TopicNames;

/**
 * The internal topic {@code __consumer_offsets}: its name, how it is created, and its partition
 * count. It is created through the controller on first use (the first FindCoordinator or group
 * request any broker sees) with {@code offsets.topic.num.partitions} partitions and {@code
 * offsets.topic.replication.factor} replicas, or as many as there are registered brokers when fewer
 * (a single broker still gets its coordinator), {@code cleanup.policy=compact} (the last record per
 * key stays; tombstones remove deleted groups and offsets) and {@code offsets.topic.segment.bytes}.
 * Metadata reports it with {@code isInternal} set ({@link TopicNames#isInternal}).
 *
 * <p>Thread-safety: thread-safe (the creation is {@link AutoTopicCreation}'s, one in flight at a
 * time).
 */
public final class OffsetsTopic {
    /** The topic's name. */
    public static final String NAME = TopicNames.CONSUMER_OFFSETS;

    private final CoordinatorTopic topic;

    /**
     * @param replicas this broker's applied metadata
     * @param creation the creation through the controller of {@link #spec}; closed by the caller
     */
    public OffsetsTopic(ReplicaManager replicas, AutoTopicCreation creation) {
        this.topic = new CoordinatorTopic(NAME, replicas, creation);
    }

    /**
     * The CreateTopics entry for {@code __consumer_offsets}.
     *
     * @param numPartitions {@code offsets.topic.num.partitions}
     * @param replicationFactor {@code offsets.topic.replication.factor}
     * @param segmentBytes {@code offsets.topic.segment.bytes}
     * @param brokers brokers registered now (the replication factor is capped to it, at least 1)
     */
    public static CreatableTopic spec(int numPartitions, int replicationFactor, int segmentBytes, int brokers) {
        return CoordinatorTopic.spec(NAME, numPartitions, replicationFactor, segmentBytes, brokers);
    }

    /** The topic's partition count in this broker's metadata, or -1 while it does not exist. */
    public int partitionCount() {
        return topic.partitionCount();
    }

    /**
     * Creates the topic when the metadata does not have it, waiting up to {@link
     * AutoTopicCreation#WAIT_MS}.
     *
     * @return {@code NONE} once it exists in this broker's metadata, else {@code
     *     COORDINATOR_NOT_AVAILABLE} (still being created, no controller answered, or refused: logged)
     */
    public short ensureExists() {
        return topic.ensureExists();
    }
}
