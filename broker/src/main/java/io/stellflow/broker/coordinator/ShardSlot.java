package io.stellflow.broker.coordinator;

import io.stellflow.broker.topic.AppendListener;
import io.stellflow.broker.topic.Partition;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One coordinator partition led by this broker, as its runtime thread sees it: the {@link Partition}
 * and leader epoch it was loaded for, the shard, the load's progress and the writes waiting for the
 * high watermark.
 *
 * <p>Thread-safety: confined to its {@link CoordinatorThread}, except {@link #loaded} (read by any
 * thread for FindCoordinator) and {@link #commitCheckQueued} (set by whichever thread moved the
 * partition's high watermark).
 */
final class ShardSlot<S extends CoordinatorShard> {
    final int partitionIndex;
    final Partition partition;
    final int leaderEpoch;
    /** The thread this partition is pinned to. */
    final CoordinatorThread<S> owner;

    S shard;

    /** True once the load ended at the same leader epoch and commands may run. */
    volatile boolean loaded;

    long loadNextOffset;
    long loadStartNs;
    long loadedRecords;
    long skippedRecords;
    /** When a failed load is tried again (runtime clock, ms); Long.MAX_VALUE when none is due. */
    long retryLoadAtMs = Long.MAX_VALUE;

    /** Writes appended (or read-only answers behind them) waiting for the HW, in offset order. */
    final ArrayDeque<PendingWrite> pending = new ArrayDeque<>();

    /** A commit check is queued on the thread (coalesces HW notifications). */
    final AtomicBoolean commitCheckQueued = new AtomicBoolean();

    /** Registered on {@link #partition} while loaded. */
    AppendListener highWatermarkListener;

    ShardSlot(int partitionIndex, Partition partition, int leaderEpoch, S shard, CoordinatorThread<S> owner) {
        this.partitionIndex = partitionIndex;
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.shard = shard;
        this.owner = owner;
    }

    /** Whether this broker still leads the partition at the epoch this slot was made for. */
    boolean stillLeading() {
        return partition.isLeader() && partition.leaderEpoch() == leaderEpoch;
    }

    /**
     * A command's answer waiting until the high watermark reaches {@code endOffset}.
     *
     * @param endOffset the offset after the command's batch (or after the last earlier batch, for an
     *     answer that wrote nothing)
     * @param deadlineMs when it fails with COORDINATOR_NOT_AVAILABLE (runtime clock)
     * @param future completed with {@code response}; null for timer-driven writes
     */
    record PendingWrite(long endOffset, long deadlineMs, CompletableFuture<Object> future, Object response) {}

    @Override
    public String toString() {
        return partition.topic() + "-" + partitionIndex + "@" + leaderEpoch;
    }
}
