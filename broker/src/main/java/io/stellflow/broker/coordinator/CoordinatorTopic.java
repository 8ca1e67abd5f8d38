package io.stellflow.broker.coordinator;

import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.protocol.Errors;

/**
 * The internal topic of a coordinator ({@code __consumer_offsets}, {@code __transaction_state}):
 * created through the controller on first use, compacted, its partition count read from this broker's
 * metadata. {@link OffsetsTopic} and the transaction coordinator's topic are this with their names
 * and settings.
 *
 * <p>Thread-safety: thread-safe (the creation is {@link AutoTopicCreation}'s, one in flight at a
 * time).
 */
public final class CoordinatorTopic {
    private final String name;
    private final ReplicaManager replicas;
    private final AutoTopicCreation creation;

    /**
     * @param name the topic
     * @param replicas this broker's applied metadata
     * @param creation the creation through the controller of {@link #spec}; closed by the caller
     */
    public CoordinatorTopic(String name, ReplicaManager replicas, AutoTopicCreation creation) {
        this.name = name;
        this.replicas = replicas;
        this.creation = creation;
    }

    /**
     * The CreateTopics entry of a coordinator topic: {@code cleanup.policy=compact} (the last record
     * per key stays; tombstones remove deleted state) and {@code segment.bytes}.
     *
     * @param brokers brokers registered now (the replication factor is capped to it, at least 1, so a
     *     single broker still gets its coordinator)
     */
    public static CreatableTopic spec(
            String name, int numPartitions, int replicationFactor, int segmentBytes, int brokers) {
        return CreatableTopic.newBuilder()
                .setName(name)
                .setNumPartitions(numPartitions)
                .setReplicationFactor(Math.max(1, Math.min(replicationFactor, brokers)))
                .putConfig("cleanup.policy", "compact")
                .putConfig("segment.bytes", Integer.toString(segmentBytes))
                .build();
    }

    /** The topic's partition count in this broker's metadata, or -1 while it does not exist. */
    public int partitionCount() {
        TopicImage t = replicas.image().topic(name);
        return t == null ? -1 : t.partitions().size();
    }

    /**
     * Creates the topic when the metadata does not have it, waiting up to {@link
     * AutoTopicCreation#WAIT_MS}.
     *
     * @return {@code NONE} once it exists in this broker's metadata, else {@code
     *     COORDINATOR_NOT_AVAILABLE} (still being created, no controller answered, or refused: logged)
     */
    public short ensureExists() {
        if (partitionCount() > 0) {
            return Errors.NONE;
        }
        return creation.ensureExists(name) == Errors.NONE ? Errors.NONE : Errors.COORDINATOR_NOT_AVAILABLE;
    }
}
