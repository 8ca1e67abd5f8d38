package io.stellflow.client;

import java.util.Collection;
import java.util.Map;

/**
 * What a group member asks of the consumer that fetches for it ({@link StellflowConsumer}; a
 * recording fake in tests): positions to commit, and partitions to stop or start fetching.
 * Thread-safety: called on the consumer's application thread only.
 */
interface PartitionOwner {
    /** Positions (next offset to read) of every assigned partition that has one. */
    Map<TopicPartition, Long> positions();

    /** Stops fetching {@code partitions} and forgets their positions. */
    void partitionsRevoked(Collection<TopicPartition> partitions);

    /**
     * Starts fetching the given partitions from the group's committed offset; -1: none committed, the
     * position comes from {@code auto.offset.reset}.
     */
    void partitionsAssigned(Map<TopicPartition, Long> committedOffsets);
}
