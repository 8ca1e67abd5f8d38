package io.stellflow.broker.topic;

/**
 * A follower partition's view of its leader: the leader's high watermark (HW) from the last fetch
 * response and when this log last reached it, for the follower-side replication lag gauges. The
 * {@link Partition} sets its own HW; this keeps only what the gauges need.
 *
 * <p>Thread-safety: written by the replica fetcher of the partition's leader ({@link
 * #leaderHighWatermark}), read by gauges on any thread (volatile fields).
 */
final class FollowerProgress {
    /** The leader's HW of the last fetch response ({@link Partition#UNKNOWN_OFFSET} before one). */
    private volatile long leaderHighWatermarkSeen = Partition.UNKNOWN_OFFSET;
    /** When this log last reached the leader's HW (ms since the epoch; 0: never). */
    private volatile long followerCaughtUpTimeMs;

    /** A fetch response carried {@code leaderHighWatermark}; this log ends at {@code logEndOffset}. */
    void leaderHighWatermark(long leaderHighWatermark, long logEndOffset) {
        leaderHighWatermarkSeen = leaderHighWatermark;
        if (logEndOffset >= leaderHighWatermark) {
            followerCaughtUpTimeMs = System.currentTimeMillis();
        }
    }

    /** {@code leader HW - LEO} from the last fetch response (0 before one). */
    long maxLagRecords(long logEndOffset) {
        long seen = leaderHighWatermarkSeen;
        return seen < 0 ? 0 : Math.max(0, seen - logEndOffset);
    }

    /** Ms since this log last reached the leader's HW at {@code nowMs} (0 when caught up or unknown). */
    long maxLagTimeMs(long nowMs, long logEndOffset) {
        long seen = leaderHighWatermarkSeen;
        long since = followerCaughtUpTimeMs;
        return seen < 0 || logEndOffset >= seen || since == 0 ? 0 : Math.max(0, nowMs - since);
    }
}
