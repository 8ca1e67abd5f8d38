package io.stellflow.controller.image;

import java.util.List;

/**
 * One partition's replication state.
 *
 * @param partition partition index, 0-based
 * @param replicas assigned replica broker ids, preferred leader first
 * @param leader leader broker id, or {@link #NO_LEADER}
 * @param leaderEpoch bumped on every leader change
 * @param isr in-sync replica broker ids (a subset of {@code replicas})
 * @param partitionEpoch bumped on every change of leader or ISR; AlterPartition must name it
 */
public record PartitionImage(
        int partition, List<Integer> replicas, int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
    /** Leader id of a partition without a leader. */
    public static final int NO_LEADER = -1;

    public PartitionImage {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
    }
}
