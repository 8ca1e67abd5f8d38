package io.stellflow.broker.topic;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may write one partition's log now, and the writes that depend on it: the partition's role
 * (leader or follower, leader epoch, leader id, the offset and time its leadership started) and its
 * failed state, checked and changed holding the log's {@link UnifiedLog#writeLock} (role changes,
 * leader appends, follower work, the in-place recovery), so a write never interleaves with a role
 * change. Its {@link Partition} keeps the public contract, the HW and the listeners, and calls it
 * (under its monitor where docs/ownership.md says so; the monitor is taken before the write lock,
 * never after).
 *
 * <p>Thread-safety: any thread. The role fields are volatile, read without a lock and written only
 * under the write lock; the failure is set by compare-and-set from any thread and cleared under the
 * write lock.
 */
final class PartitionWriteGate {
    /** Partition's logger: the moved events keep their category. */
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final UnifiedLog log;
    /** The partition's name for messages ({@code topic-partition}, as {@link Partition#toString}). */
    private final String name;

    private volatile int leaderEpoch;
    private volatile int leaderId;
    private volatile boolean leader = true;
    private volatile long leaderEpochStartOffset;
    /** When this broker last became leader, ms since the epoch (0 before). */
    private volatile long leaderSinceMs;
    /** Set once by the first failed write ({@link PartitionFailures}); null while the partition is healthy. */
    private final AtomicReference<PartitionFailure> failure = new AtomicReference<>();

    PartitionWriteGate(UnifiedLog log, String name, int leaderEpoch) {
        this.log = log;
        this.name = name;
        this.leaderEpoch = leaderEpoch;
        this.leaderId = -1;
    }

    boolean isLeader() {
        return leader;
    }

    /** See {@link Partition#leadsAt}: the role first, then the epoch. */
    boolean leadsAt(int epoch) {
        return leader && leaderEpoch == epoch;
    }

    int leaderId() {
        return leaderId;
    }

    int leaderEpoch() {
        return leaderEpoch;
    }

    long leaderEpochStartOffset() {
        return leaderEpochStartOffset;
    }

    long leaderSinceMs() {
        return leaderSinceMs;
    }

    PartitionFailure failure() {
        return failure.get();
    }

    /** See {@link Partition#markFailed}. */
    boolean markFailed(PartitionFailure why) {
        return failure.compareAndSet(null, why);
    }

    /** See {@link Partition#markOffline}. */
    void markOffline(PartitionFailure why) {
        failure.set(why);
    }

    /** The role part of {@link Partition#becomeLeader(int, long)}, under the write lock. */
    void becomeLeader(int newLeaderEpoch, long nowMs) {
        Lock writes = log.writeLock();
        writes.lock(); // after a follower write in progress: the epoch starts at the LEO it leaves
        try {
            leaderEpochStartOffset = log.logEndOffset();
            leaderSinceMs = nowMs;
            leaderEpoch = newLeaderEpoch;
            leaderId = -1;
            leader = true;
        } finally {
            writes.unlock();
        }
    }

    /** The role part of {@link Partition#becomeFollower}, under the write lock. */
    void becomeFollower(int newLeaderId, int newLeaderEpoch) {
        Lock writes = log.writeLock();
        writes.lock(); // after a leader append in progress; none starts after this
        try {
            leader = false;
            leaderEpoch = newLeaderEpoch;
            leaderId = newLeaderId;
        } finally {
            writes.unlock();
        }
    }

    /** See {@link Partition#runIfFollowing}. */
    boolean runIfFollowing(int followerLeaderEpoch, Runnable followerWork) {
        Lock writes = log.writeLock();
        writes.lock();
        try {
            if (leader || leaderEpoch != followerLeaderEpoch) {
                return false;
            }
            followerWork.run();
            return true;
        } finally {
            writes.unlock();
        }
    }

    /**
     * The leader write of {@link Partition}'s append methods: the role and failure checks and the
     * write, under the write lock.
     *
     * @param txnSequence &gt;= 0: a transactional batch; -1 otherwise
     * @param marker null, or a marker's producerId, epoch, commit (1/0), coordinatorEpoch and
     *     transactionSequence (then {@code records} is null)
     * @param stampSequence a coordinator's transactional batch whose sequence the log stamps
     * @return the log's answer, or {@link Partition#NOT_LEADER} (nothing written)
     */
    long appendAsLeader(
            ByteBuf records,
            BatchMaxTimestamps maxTimestamps,
            boolean idempotent,
            long txnSequence,
            long[] marker,
            boolean stampSequence)
            throws IOException {
        Lock writes = log.writeLock();
        writes.lock();
        try {
            if (!leader) {
                return Partition.NOT_LEADER;
            }
            PartitionFailure failed = failure.get();
            if (failed != null) {
                throw new PartitionFailedException(
                        "partition " + name + " failed at " + failed.operation() + ": " + failed.reason());
            }
            if (marker != null) {
                return log.appendTransactionMarker(
                        marker[0], (short) marker[1], marker[2] == 1, (int) marker[3], marker[4], leaderEpoch);
            } else if (stampSequence) {
                return log.appendCoordinatorTransactional(records, leaderEpoch, txnSequence);
            } else if (txnSequence >= 0) {
                return log.appendTransactionalAsLeader(records, leaderEpoch, maxTimestamps, txnSequence);
            } else {
                return idempotent
                        ? log.appendIdempotentAsLeader(records, leaderEpoch, maxTimestamps)
                        : log.appendAsLeader(records, leaderEpoch, maxTimestamps);
            }
        } finally {
            writes.unlock();
        }
    }

    /**
     * The locked part of {@link Partition#recoverInPlace}: reopens the log, lowers {@code
     * highWatermark} to the recovered log end offset if it was above, clears the failure.
     *
     * @return the log end offset after the recovery, or {@link Partition#UNKNOWN_OFFSET} when the
     *     failure is not {@code expected} (nothing done)
     */
    long recoverInPlace(PartitionFailure expected, HighWatermark highWatermark) throws IOException {
        long logEndOffset;
        Lock writes = log.writeLock();
        writes.lock();
        try {
            if (failure.get() != expected) {
                return Partition.UNKNOWN_OFFSET;
            }
            logEndOffset = log.reopen();
            if (highWatermark.get() > logEndOffset) {
                // Not expected: recovery cuts only bytes that were never published.
                LOG.warn(
                        "{} recovered with log end offset {} below its HW {}", name, logEndOffset, highWatermark.get());
                highWatermark.set(logEndOffset);
            }
            failure.compareAndSet(expected, null);
        } finally {
            writes.unlock();
        }
        return logEndOffset;
    }
}
