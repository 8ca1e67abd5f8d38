package io.stellflow.broker.cluster;

import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.image.PartitionImage;

/**
 * The hook replication (issue #6) plugs into: told when a hosted partition becomes leader, becomes a
 * follower of another broker, or stops being hosted here. A follower would start its replica fetcher
 * in {@link #onBecomeFollower}; a leader would start tracking follower fetch offsets in
 * {@link #onBecomeLeader}.
 *
 * <p>Thread-safety: called on the metadata follower's single thread, in metadata order; an
 * implementation must not block for long (metadata delivery waits for it).
 */
public interface ReplicaStateListener {
    /** No replication yet: followers hold their log and serve nothing. */
    ReplicaStateListener NONE = new ReplicaStateListener() {};

    /** {@code partition} is now led by this broker at {@code state.leaderEpoch()}. */
    default void onBecomeLeader(Partition partition, PartitionImage state) {}

    /** {@code partition} now follows {@code state.leader()} (-1: no leader) at {@code state.leaderEpoch()}. */
    default void onBecomeFollower(Partition partition, PartitionImage state) {}

    /** {@code partition} is no longer hosted here (topic deleted or replica moved); its log is deleted next. */
    default void onStopReplica(Partition partition) {}
}
