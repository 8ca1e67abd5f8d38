package io.stellflow.broker.cluster;

import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The role changes the {@link ReplicaManager} applies to its hosted partitions from the committed
 * metadata: each applied image hands a partition its assignment ({@link Partition#updateAssignment})
 * and then makes it leader or follower with the image's leader epoch, logging {@code
 * PARTITION_LEADER_CHANGED} and, on a leader that stays leader, {@code ISR_SHRUNK} / {@code
 * ISR_EXPANDED}; a partition that leaves this broker stops leading ({@link #stop}). Every transition
 * is told to the {@link ReplicaStateListener}s and counted in the {@link ReplicationMetrics}.
 *
 * <p>Owns the listener chain and the metrics sink, both set before the first metadata arrives; the
 * partitions belong to the replica manager.
 *
 * <p>Thread-safety: {@link #apply} and {@link #stop} run on the metadata follower's thread under the
 * replica manager's reconcile lock; the setters on any thread (volatile fields).
 */
final class ReplicaRoles {
    /** The role events keep the category they always had: the replica manager's. */
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

    private final int brokerId;

    /** The replica manager's start-up log level, under its reconcile lock. */
    private final StartUpPartitionLog startUp;

    private volatile ReplicaStateListener roles;
    private volatile ReplicationMetrics metrics = ReplicationMetrics.NOOP;

    ReplicaRoles(int brokerId, StartUpPartitionLog startUp, ReplicaStateListener roles) {
        this.brokerId = brokerId;
        this.startUp = startUp;
        this.roles = roles;
    }

    /** {@link ReplicaManager#addReplicaStateListener}. */
    void addListener(ReplicaStateListener listener) {
        roles = ReplicaStateListener.both(roles, listener);
    }

    /** Where leader and ISR changes are counted (and what new partitions report HW advances to). */
    ReplicationMetrics metrics() {
        return metrics;
    }

    /** Replaces {@link #metrics()}; before the first metadata arrives. */
    void metrics(ReplicationMetrics replicationMetrics) {
        this.metrics = replicationMetrics;
    }

    /**
     * Gives {@code partition} the assignment and role of its committed image {@code p} (topic {@code
     * t}): leader with the image's epoch, or follower of the image's leader, telling the listeners;
     * an ISR change on a partition that stays leader is logged.
     */
    void apply(TopicImage t, Partition partition, PartitionImage p) {
        // The assignment first (every metadata change, not only role changes): the ISR a new leader
        // starts with, and ISR changes this leader proposed, take effect only here.
        List<Integer> oldIsr = partition.updateAssignment(t.id(), p.replicas(), p.isr(), p.partitionEpoch());
        if (p.leader() != PartitionImage.NO_LEADER) {
            startUp.hasLeader(partition);
        }
        if (p.leader() == brokerId) {
            if (!partition.isLeader() || partition.leaderEpoch() != p.leaderEpoch()) {
                boolean wasLeader = partition.isLeader();
                partition.becomeLeader(p.leaderEpoch());
                startUp.led();
                LOG.atLevel(startUp.level())
                        .log(
                                "{} partition={} role=leader leader={} leaderEpoch={} partitionEpoch={} isr={} highWatermark={}"
                                        + " logEndOffset={}",
                                LogEvents.PARTITION_LEADER_CHANGED,
                                partition,
                                brokerId,
                                p.leaderEpoch(),
                                p.partitionEpoch(),
                                p.isr(),
                                partition.highWatermark(),
                                partition.logEndOffset());
                if (!wasLeader) {
                    metrics.leaderChanged();
                }
                roles.onBecomeLeader(partition, p);
            } else if (oldIsr != null) {
                logIsrChange(partition, oldIsr, p);
            }
        } else if (partition.isLeader()
                || partition.leaderEpoch() != p.leaderEpoch()
                || partition.leaderId() != p.leader()) {
            boolean wasLeader = partition.isLeader();
            partition.becomeFollower(p.leader(), p.leaderEpoch());
            LOG.atLevel(startUp.level())
                    .log(
                            "{} partition={} role=follower leader={} leaderEpoch={} partitionEpoch={} isr={} highWatermark={}"
                                    + " logEndOffset={}",
                            LogEvents.PARTITION_LEADER_CHANGED,
                            partition,
                            p.leader(),
                            p.leaderEpoch(),
                            p.partitionEpoch(),
                            p.isr(),
                            partition.highWatermark(),
                            partition.logEndOffset());
            if (wasLeader) {
                metrics.leaderChanged();
            }
            roles.onBecomeFollower(partition, p);
        }
    }

    /** ISR_SHRUNK / ISR_EXPANDED (both when one change did both) on the leader, once per committed change. */
    private void logIsrChange(Partition partition, List<Integer> oldIsr, PartitionImage p) {
        List<Integer> removed = new ArrayList<>(oldIsr);
        removed.removeAll(p.isr());
        List<Integer> added = new ArrayList<>(p.isr());
        added.removeAll(oldIsr);
        if (!removed.isEmpty()) {
            metrics.isrShrunk();
            LOG.info(
                    "{} partition={} oldIsr={} newIsr={} removed={} leaderEpoch={} partitionEpoch={} highWatermark={}",
                    LogEvents.ISR_SHRUNK,
                    partition,
                    oldIsr,
                    p.isr(),
                    removed,
                    p.leaderEpoch(),
                    p.partitionEpoch(),
                    partition.highWatermark());
        }
        if (!added.isEmpty()) {
            metrics.isrExpanded();
            LOG.info(
                    "{} partition={} oldIsr={} newIsr={} added={} leaderEpoch={} partitionEpoch={} highWatermark={}",
                    LogEvents.ISR_EXPANDED,
                    partition,
                    oldIsr,
                    p.isr(),
                    added,
                    p.leaderEpoch(),
                    p.partitionEpoch(),
                    partition.highWatermark());
        }
    }

    /**
     * A hosted partition leaves this broker: it stops leading first (a request that still holds it
     * gets NOT_LEADER_OR_FOLLOWER, and no append queue is created for it again), then the listeners
     * let go of it (its fetcher, its append queue); its log is deleted next.
     */
    void stop(Partition p) {
        p.becomeFollower(PartitionImage.NO_LEADER, p.leaderEpoch());
        roles.onStopReplica(p);
    }
}
