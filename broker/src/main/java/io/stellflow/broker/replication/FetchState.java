package io.stellflow.broker.replication;

import io.stellflow.broker.topic.Partition;

/**
 * The fetch state of one partition a {@link ReplicaFetcher} follows: the leader epoch it follows at,
 * whether it is <b>truncating</b> (reconciling its log with the leader's by epoch) or fetching,
 * whether a request for it is in flight, whether it was removed (answers for it are then ignored),
 * the out-of-range memory of the last Fetch, and the earliest time it may be sent again ({@code
 * notBefore}, a backoff on the fetcher's nano clock). The fetch offset itself is the log's end
 * offset, read from the log when a Fetch is built.
 *
 * <p>Shape: times are {@link System#nanoTime}-style readings of the fetcher's injected clock,
 * compared by difference (they may be negative; there is no 0 sentinel).
 *
 * <p>Thread-safety: none; confined to the fetcher's thread. Errors: none.
 */
final class FetchState {
    /** {@link #outOfRange}: empty the log and restart it at the leader's log start offset. */
    static final int RESTART_AT_LEADER_LOG_START = 0;

    /**
     * {@link #outOfRange}: as {@link #RESTART_AT_LEADER_LOG_START}, although the leader's log start is
     * not above this log's end: out of range above the leader's end twice in a row, right after
     * reconciling by epoch (the logs could not be reconciled; logged at WARN).
     */
    static final int RESTART_UNRECONCILABLE = 1;

    /** {@link #outOfRange}: reconcile by epoch again (truncating), with or without a backoff. */
    static final int RECONCILE = 2;

    private final Partition partition;
    private final int leaderEpoch;
    private boolean truncating = true;
    private boolean inFlight;
    private boolean removed;
    private boolean outOfRangeBefore;
    private long notBeforeNanos;

    /** A partition to follow at {@code leaderEpoch}, truncating first, ready at {@code nowNanos}. */
    FetchState(Partition partition, int leaderEpoch, long nowNanos) {
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.notBeforeNanos = nowNanos;
    }

    Partition partition() {
        return partition;
    }

    /** The leader epoch this partition is followed at (the Fetch's {@code currentLeaderEpoch}). */
    int leaderEpoch() {
        return leaderEpoch;
    }

    /** Whether it is reconciling by epoch (OffsetForLeaderEpoch) rather than fetching. */
    boolean truncating() {
        return truncating;
    }

    /** Sets truncating (true: reconcile by epoch next; false: reconciled, fetch next). */
    void truncating(boolean value) {
        truncating = value;
    }

    /** Whether a request carrying it is outstanding. */
    boolean inFlight() {
        return inFlight;
    }

    void inFlight(boolean value) {
        inFlight = value;
    }

    /** Whether the fetcher stopped following it (replaced or removed): answers are ignored. */
    boolean removed() {
        return removed;
    }

    void markRemoved() {
        removed = true;
    }

    /** Whether it may be sent at {@code nowNanos} (its backoff, if any, has passed). */
    boolean readyAt(long nowNanos) {
        return notBeforeNanos - nowNanos <= 0;
    }

    /** The earliest time it may be sent (meaningful while not {@link #readyAt}). */
    long notBeforeNanos() {
        return notBeforeNanos;
    }

    /** Not sent again before {@code nowNanos + backoffNanos}. */
    void backoff(long nowNanos, long backoffNanos) {
        notBeforeNanos = nowNanos + backoffNanos;
    }

    /** A Fetch for it was applied (records appended or none): the out-of-range memory ends. */
    void fetched() {
        outOfRangeBefore = false;
    }

    /**
     * The leader answered {@code OFFSET_OUT_OF_RANGE} with its log start offset {@code
     * leaderLogStart} (negative: unknown) while this log ends at {@code logEndOffset}. Below the
     * leader's log start the log restarts there; above the leader's end the partition reconciles by
     * epoch again, backing off when this is the second time in a row or the leader's log start is
     * unknown; a second time in a row with a known log start restarts the log too.
     *
     * @return {@link #RESTART_AT_LEADER_LOG_START}, {@link #RESTART_UNRECONCILABLE} or {@link
     *     #RECONCILE}; the state is updated accordingly (a restart leaves it fetching)
     */
    int outOfRange(long leaderLogStart, long logEndOffset, long nowNanos, long backoffNanos) {
        boolean unreconcilable = outOfRangeBefore && leaderLogStart >= 0;
        if (leaderLogStart > logEndOffset || unreconcilable) {
            outOfRangeBefore = false;
            return leaderLogStart > logEndOffset ? RESTART_AT_LEADER_LOG_START : RESTART_UNRECONCILABLE;
        }
        truncating = true;
        if (outOfRangeBefore || leaderLogStart < 0) {
            backoff(nowNanos, backoffNanos);
        }
        outOfRangeBefore = true;
        return RECONCILE;
    }
}
