package io.stellflow.broker.replication;

import io.stellflow.broker.topic.Partition;
import io.stellflow.storage.EpochEndOffset;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;

/**
 * Where a follower truncates its log given the leader's OffsetForLeaderEpoch answer for the
 * follower's latest epoch (Kafka's KIP-101 and KIP-279 rules), so that no record the leader does not
 * have at the same offset survives before fetching starts.
 *
 * <p>With {@code LEO} the follower's log end offset and {@code (E, L)} the leader's answer (the
 * largest epoch {@code E} &lt;= the asked one in the leader's log, and where it ends there):
 *
 * <ol>
 *   <li>{@code L} undefined (-1: the leader has no such epoch): truncate to the follower's high
 *       watermark (what it knows was committed), done.
 *   <li>{@code E} undefined but {@code L} defined: truncate to {@code min(L, LEO)}, done.
 *   <li>the follower's own answer for {@code E} ({@link UnifiedLog#endOffsetForEpoch}) is {@code (E',
 *       L')}: undefined (no history): {@code min(L, LEO)}, done; {@code E' != E} (the follower never
 *       wrote in {@code E}): truncate to {@code min(L', LEO)}, where its last epoch before {@code E}
 *       ends, and NOT done: ask again with the new latest epoch (each round removes at least one epoch
 *       of the follower's history, so rounds are bounded by its length); {@code E' == E}: truncate to
 *       {@code min(L', L, LEO)}, done.
 * </ol>
 *
 * <p>Example: follower epochs {1@0, 3@40}, LEO 55; leader epochs {1@0, 2@40, 4@48}. The follower asks
 * for epoch 3; the leader answers {@code (2, 48)}; the follower has no epoch 2 (its floor is 1, which
 * ends at 40), so it truncates to 40 and asks for epoch 1: {@code (1, 40)}, own {@code (1, 40)}:
 * truncate to 40, done; fetching resumes at 40.
 *
 * <p>Thread-safety: stateless; {@link #apply} is called by the partition's fetcher inside {@link
 * Partition#runIfFollowing} (the log's write lock held, so the decision and the truncation see the
 * same log).
 */
final class FollowerTruncation {
    private FollowerTruncation() {}

    /**
     * @param truncateTo the offset to truncate the log to (may be at or above the LEO: nothing to do)
     * @param complete whether the log is reconciled after that truncation (else ask again)
     */
    record Decision(long truncateTo, boolean complete) {}

    /** The decision for the leader's answer {@code (leaderEpoch, leaderEndOffset)} (rules above). */
    static Decision decide(UnifiedLog log, long highWatermark, int leaderEpoch, long leaderEndOffset) {
        long leo = log.logEndOffset();
        if (leaderEndOffset < 0) {
            return new Decision(Math.min(highWatermark, leo), true);
        }
        if (leaderEpoch < 0) {
            return new Decision(Math.min(leaderEndOffset, leo), true);
        }
        EpochEndOffset own = log.endOffsetForEpoch(leaderEpoch);
        if (own.endOffset() < 0) {
            return new Decision(Math.min(leaderEndOffset, leo), true);
        }
        if (own.leaderEpoch() != leaderEpoch) {
            return new Decision(Math.min(own.endOffset(), leo), false);
        }
        return new Decision(Math.min(Math.min(own.endOffset(), leaderEndOffset), leo), true);
    }

    /**
     * Applies {@code decision} to the partition's log and lowers the follower's HW to the new log end
     * ({@link Partition#onFollowerTruncated}). Returns whether reconciliation is complete: an
     * incomplete decision that did not lower the latest epoch is finished by truncating to the high
     * watermark instead (a history that cannot make progress must not loop).
     *
     * @throws IOException the truncation failed (the log refuses writes until reopened)
     */
    static boolean apply(Partition partition, Decision decision) throws IOException {
        UnifiedLog log = partition.log();
        int epochBefore = log.latestLeaderEpoch();
        log.truncateTo(decision.truncateTo());
        boolean complete = decision.complete();
        if (!complete && log.latestLeaderEpoch() >= epochBefore) {
            log.truncateTo(Math.min(partition.highWatermark(), log.logEndOffset()));
            complete = true;
        }
        partition.onFollowerTruncated();
        return complete;
    }
}
