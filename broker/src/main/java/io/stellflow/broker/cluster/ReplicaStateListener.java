package io.stellflow.broker.cluster;

import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.image.PartitionImage;
import java.util.function.Consumer;

/**
 * Told when a hosted partition becomes leader or a follower of another broker (after {@link
 * ReplicaManager} changed the {@link Partition}'s role), or stops being hosted here (before its log is
 * deleted). The replication
 * implementation is {@link io.stellflow.broker.replication.ReplicaFetcherManager}: it adds a
 * follower's partition to the fetcher of its leader and takes it out of that fetcher on any other
 * change (the leader side, follower fetch offsets, lives in {@link Partition} itself).
 *
 * <p>Thread-safety: called on the metadata follower's single thread, in metadata order. Metadata
 * delivery waits for each call, so an implementation must not wait on anything slow: taking a
 * partition out of a fetcher waits for a fetch response being applied to that fetcher's logs
 * (normally milliseconds, at most 30 s before it is logged and given up; closing an emptied fetcher
 * waits for its thread the same way), as Kafka's
 * {@code removeFetcherForPartitions} waits for its fetcher's partition lock.
 */
public interface ReplicaStateListener {
    /** {@code partition} is now led by this broker at {@code state.leaderEpoch()}. */
    default void onBecomeLeader(Partition partition, PartitionImage state) {}

    /** {@code partition} now follows {@code state.leader()} (-1: no leader) at {@code state.leaderEpoch()}. */
    default void onBecomeFollower(Partition partition, PartitionImage state) {}

    /**
     * {@code partition} is no longer hosted here (topic deleted or replica moved): it already follows
     * no leader ({@link Partition#becomeFollower}), its log is deleted next.
     */
    default void onStopReplica(Partition partition) {}

    /** Runs {@code action} whenever a partition stops being led here: it became a follower or left. */
    static ReplicaStateListener whenNotLeading(Consumer<Partition> action) {
        return new ReplicaStateListener() {
            @Override
            public void onBecomeFollower(Partition partition, PartitionImage state) {
                action.accept(partition);
            }

            @Override
            public void onStopReplica(Partition partition) {
                action.accept(partition);
            }
        };
    }

    /** Tells {@code first}, then {@code second}, about every transition. */
    static ReplicaStateListener both(ReplicaStateListener first, ReplicaStateListener second) {
        return new ReplicaStateListener() {
            @Override
            public void onBecomeLeader(Partition partition, PartitionImage state) {
                first.onBecomeLeader(partition, state);
                second.onBecomeLeader(partition, state);
            }

            @Override
            public void onBecomeFollower(Partition partition, PartitionImage state) {
                first.onBecomeFollower(partition, state);
                second.onBecomeFollower(partition, state);
            }

            @Override
            public void onStopReplica(Partition partition) {
                first.onStopReplica(partition);
                second.onStopReplica(partition);
            }
        };
    }
}
