package io.stellflow.broker.transaction;

import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorTopic;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.topic.TopicNames;

/**
 * The internal topic {@code __transaction_state}, made like {@code __consumer_offsets} ({@link
 * io.stellflow.broker.coordinator.OffsetsTopic}): created through the controller on first use (the
 * first transactional request any broker sees) with {@code transaction.state.log.num.partitions}
 * partitions (50) and {@code transaction.state.log.replication.factor} replicas (3, or as many as
 * there are registered brokers when fewer), {@code cleanup.policy=compact} and {@code
 * transaction.state.log.segment.bytes}. Metadata reports it with {@code isInternal} set and clients'
 * Produce to it is refused ({@link TopicNames#isInternal}). A transactional id belongs to partition
 * {@code GroupPartitioner.partitionFor(transactionalId, partitions)}, the rule of groups.
 *
 * <p>Thread-safety: thread-safe (the creation is {@link AutoTopicCreation}'s).
 */
public final class TransactionStateTopic implements AutoCloseable {
    /** The topic's name. */
    public static final String NAME = TopicNames.TRANSACTION_STATE;

    private final CoordinatorTopic topic;
    private final AutoTopicCreation creation;

    /**
     * @param replicas this broker's applied metadata
     * @param creation the creation through the controller of {@link #spec}; closed by {@link #close}
     */
    public TransactionStateTopic(ReplicaManager replicas, AutoTopicCreation creation) {
        this.topic = new CoordinatorTopic(NAME, replicas, creation);
        this.creation = creation;
    }

    /** The topic of a broker, created through {@code controller} as {@link #spec} says. */
    public static TransactionStateTopic create(
            ControllerClient controller, ReplicaManager replicas, TransactionCoordinatorConfig config) {
        return new TransactionStateTopic(
                replicas,
                new AutoTopicCreation(
                        controller,
                        replicas,
                        topic -> spec(
                                config.numPartitions(),
                                config.replicationFactor(),
                                config.segmentBytes(),
                                replicas.image().unfencedBrokerIds().size())));
    }

    /**
     * The CreateTopics entry for {@code __transaction_state} ({@link CoordinatorTopic#spec}).
     *
     * @param brokers brokers registered now (the replication factor is capped to it, at least 1)
     */
    public static CreatableTopic spec(int numPartitions, int replicationFactor, int segmentBytes, int brokers) {
        return CoordinatorTopic.spec(NAME, numPartitions, replicationFactor, segmentBytes, brokers);
    }

    /** The topic's partition count in this broker's metadata, or -1 while it does not exist. */
    public int partitionCount() {
        return topic.partitionCount();
    }

    /** The partition count, creating the topic first when it is missing; -1 while it cannot be had. */
    public int partitionCountCreating() {
        return topic.ensureExists() == Errors.NONE ? topic.partitionCount() : -1;
    }

    @Override
    public void close() {
        creation.close();
    }
}
