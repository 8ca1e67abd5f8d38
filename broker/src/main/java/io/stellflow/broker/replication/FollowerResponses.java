package io.stellflow.broker.replication;

import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a leader's answers to the partitions a {@link ReplicaFetcher} follows: Fetch data
 * (appended by {@link FollowerAppend}, then the follower's HW and log start offset; a divergence
 * truncates to the leader's batch; OFFSET_OUT_OF_RANGE restarts the log or reconciles again, as
 * {@link FetchState#outOfRange} decides) and OffsetForLeaderEpoch end offsets (truncation by epoch,
 * {@link FollowerTruncation}). Every write runs inside {@link Partition#runIfFollowing} at the
 * state's leader epoch; answers for removed states are skipped. A failed write is logged and the
 * partition backs off; a response that does not match its request throws IllegalStateException (the
 * channel then reconnects).
 *
 * <p>Log events ({@code REPLICA_*}) keep the {@link ReplicaFetcher} logger they always had.
 *
 * <p>Thread-safety: none; confined to the fetcher's thread.
 */
final class FollowerResponses {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

    private final int leaderId;
    private final LongSupplier nanoClock;
    private final long backoffNanos;
    private final ReplicationMetrics metrics;

    /**
     * @param leaderId the leader the answers come from (named in log events)
     * @param nanoClock the fetcher's clock, for backoffs
     * @param backoffNanos {@code replica.fetch.backoff.ms} in ns
     * @param metrics counts failed follower writes after the first of an episode
     */
    FollowerResponses(int leaderId, LongSupplier nanoClock, long backoffNanos, ReplicationMetrics metrics) {
        this.leaderId = leaderId;
        this.nanoClock = nanoClock;
        this.backoffNanos = backoffNanos;
        this.metrics = metrics;
    }

    private void backoff(FetchState s) {
        s.backoff(nanoClock.getAsLong(), backoffNanos);
    }

    /**
     * Applies a Fetch response to {@code states}, the partitions of its request in request order.
     *
     * @throws IllegalStateException when the response's partitions are not the request's
     */
    void onFetch(List<FetchState> states, FetchResponseV1 response) {
        int i = 0;
        for (FetchResponseV1.Topic t : response.responses()) {
            for (FetchResponseV1.PartitionData d : t.partitions()) {
                FetchState s = matching(states, i++, t.topic(), d.partition());
                if (!s.removed()) {
                    s.partition().runIfFollowing(s.leaderEpoch(), () -> onFetched(s, d));
                }
            }
        }
        if (i != states.size()) {
            throw new IllegalStateException("Fetch response has " + i + " partitions, the request " + states.size());
        }
    }

    private static FetchState matching(List<FetchState> states, int i, String topic, int partition) {
        if (i >= states.size()
                || states.get(i).partition().partition() != partition
                || !states.get(i).partition().topic().equals(topic)) {
            throw new IllegalStateException(
                    "response entry " + i + " (" + topic + "-" + partition + ") does not match the request");
        }
        return states.get(i);
    }

    private void onFetched(FetchState s, FetchResponseV1.PartitionData d) {
        Partition p = s.partition();
        try {
            switch (d.errorCode()) {
                case Errors.NONE -> {
                    int result = FollowerAppend.apply(p, d.records(), d.recordsBaseOffset(), d.highWatermark());
                    if (result == FollowerAppend.CORRUPT) {
                        LOG.warn(
                                "REPLICA_FETCH_CORRUPT partition={} leader={}: a fetched batch fails its checks",
                                p,
                                leaderId);
                        backoff(s);
                    } else if (result == FollowerAppend.OFFSET_MISMATCH) {
                        onDiverged(s, d);
                        return;
                    }
                    s.fetched();
                    UnifiedLog log = p.log();
                    if (d.logStartOffset() > log.logStartOffset()) {
                        log.maybeIncrementLogStartOffset(d.logStartOffset(), p.highWatermark());
                    }
                }
                case Errors.OFFSET_OUT_OF_RANGE -> onOutOfRange(s, d.logStartOffset());
                default -> {
                    // The error table decides: a leadership or epoch change in flight is expected
                    // (the metadata catches up, then the fetch succeeds); anything else is worth a WARN.
                    if (Errors.isStaleMetadata(d.errorCode())) {
                        LOG.debug(
                                "Fetch of {} from leader {}: {}; waiting for metadata",
                                p,
                                leaderId,
                                Errors.name(d.errorCode()));
                    } else {
                        LOG.warn("Fetch of {} from leader {} failed: {}", p, leaderId, Errors.name(d.errorCode()));
                    }
                    backoff(s);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            // Fails the partition (one event per episode, then counted), never the fetcher thread.
            if (PartitionFailures.writeFailed(p, "follower-append", e, System.currentTimeMillis())) {
                LOG.error("REPLICA_APPEND_FAILED partition={} leader={}: {}", p, leaderId, e.toString());
            }
            metrics.logWriteFailed();
            backoff(s);
        }
    }

    /**
     * The leader's batches do not continue this log: the log end offset falls inside one of the
     * leader's batches, so this log holds a batch the leader does not have although epoch-based
     * truncation found nothing to remove (a leader epoch history that disagrees with the batches).
     * The log is truncated to the base offset of that leader batch (where the two logs part; the
     * records below it are the leader's at the same offsets as far as this fetch shows), then
     * reconciled by epoch again after the backoff. Never to the high watermark: records between this
     * follower's HW and the leader's may be committed and this replica may be elected (KIP-101). Each
     * occurrence is logged at WARN; the fetcher never refetches the same offset in a loop.
     */
    private void onDiverged(FetchState s, FetchResponseV1.PartitionData d) throws IOException {
        Partition p = s.partition();
        UnifiedLog log = p.log();
        long leo = log.logEndOffset();
        // Only called after FollowerAppend found a well-framed batch reaching the LEO.
        int pos = FollowerAppend.batchHolding(d.records(), d.recordsBaseOffset(), leo);
        long leaderBatchBase =
                pos < 0 ? leo : d.recordsBaseOffset() + RecordBatchLayout.baseOffsetDelta(d.records(), pos);
        long target = Math.min(leaderBatchBase, leo);
        FollowerTruncation.apply(p, new FollowerTruncation.Decision(target, true));
        s.truncating(true);
        backoff(s);
        LOG.warn(
                "REPLICA_FETCH_DIVERGED partition={} leader={} leaderEpoch={}: the leader's batch from offset {}"
                        + " does not continue logEndOffset {}; truncated to {} and reconciling again",
                p,
                leaderId,
                s.leaderEpoch(),
                leaderBatchBase,
                leo,
                log.logEndOffset());
    }

    /**
     * The fetch offset is outside the leader's log: below its log start (this log is emptied and
     * restarts at the leader's log start) or above its end (this log has a tail the leader does not:
     * reconcile by epoch again). Out of range above the end a second time in a row, right after
     * reconciling, means the epochs could not find where the logs part (the fallback to this log's own
     * high watermark, when the leader knows none of its epochs, can stay above the leader's end after
     * an unclean election or a leader that lost its unflushed tail): this log is emptied and restarts
     * at the leader's log start too. Kafka cuts to the leader's end offset there; starting over costs
     * a refetch but keeps no prefix that nothing compared.
     */
    private void onOutOfRange(FetchState s, long leaderLogStart) throws IOException {
        Partition p = s.partition();
        UnifiedLog log = p.log();
        long leo = log.logEndOffset();
        int decision = s.outOfRange(leaderLogStart, leo, nanoClock.getAsLong(), backoffNanos);
        if (decision == FetchState.RECONCILE) {
            return;
        }
        log.truncateFullyAndStartAt(leaderLogStart);
        p.onFollowerTruncated();
        p.updateFollowerHighWatermark(leaderLogStart);
        if (decision == FetchState.RESTART_UNRECONCILABLE) {
            LOG.warn(
                    "REPLICA_TRUNCATED_FULLY partition={} leader={} oldLogEndOffset={} logStartOffset={}: still"
                            + " above the leader's log end after reconciling by epoch",
                    p,
                    leaderId,
                    leo,
                    leaderLogStart);
        } else {
            LOG.info(
                    "REPLICA_TRUNCATED_FULLY partition={} leader={} oldLogEndOffset={} logStartOffset={}",
                    p,
                    leaderId,
                    leo,
                    leaderLogStart);
        }
    }

    /**
     * Applies an OffsetForLeaderEpoch response to {@code states} (request order): truncates each log
     * as the leader's epoch end offset says; a partition reconciled goes on to fetching.
     *
     * @throws IllegalStateException when the response's partitions are not the request's
     */
    void onEpochs(List<FetchState> states, OffsetForLeaderEpochResponse response) {
        int i = 0;
        for (OffsetForLeaderEpochResponse.Topic t : response.topics()) {
            for (OffsetForLeaderEpochResponse.EpochEndOffset e : t.partitions()) {
                FetchState s = matching(states, i++, t.topic(), e.partition());
                if (!s.removed()) {
                    s.partition().runIfFollowing(s.leaderEpoch(), () -> onEpochEnd(s, e));
                }
            }
        }
        if (i != states.size()) {
            throw new IllegalStateException(
                    "OffsetForLeaderEpoch response has " + i + " partitions, the request " + states.size());
        }
    }

    private void onEpochEnd(FetchState s, OffsetForLeaderEpochResponse.EpochEndOffset e) {
        Partition p = s.partition();
        if (e.errorCode() != Errors.NONE) {
            LOG.debug("OffsetForLeaderEpoch of {} from leader {}: {}", p, leaderId, Errors.name(e.errorCode()));
            backoff(s);
            return;
        }
        UnifiedLog log = p.log();
        long before = log.logEndOffset();
        int askedEpoch = log.latestLeaderEpoch();
        try {
            FollowerTruncation.Decision d =
                    FollowerTruncation.decide(log, p.highWatermark(), e.leaderEpoch(), e.endOffset());
            s.truncating(!FollowerTruncation.apply(p, d));
            if (log.logEndOffset() != before || !s.truncating()) {
                LOG.info(
                        "REPLICA_TRUNCATED partition={} leader={} leaderEpoch={} askedEpoch={} answer=({}, {}) "
                                + "logEndOffset {} -> {} complete={}",
                        p,
                        leaderId,
                        s.leaderEpoch(),
                        askedEpoch,
                        e.leaderEpoch(),
                        e.endOffset(),
                        before,
                        log.logEndOffset(),
                        !s.truncating());
            }
        } catch (IOException | RuntimeException ex) {
            LOG.error("REPLICA_TRUNCATION_FAILED partition={} leader={}", p, leaderId, ex);
            backoff(s);
        }
    }

    /**
     * A log without epoch history has nothing to ask: truncate to the HW (a no-op when empty), only
     * while still following at the fetcher's epoch (as every follower write).
     */
    void truncateLocally(FetchState s) {
        s.partition().runIfFollowing(s.leaderEpoch(), () -> {
            Partition p = s.partition();
            try {
                FollowerTruncation.apply(p, new FollowerTruncation.Decision(p.highWatermark(), true));
                s.truncating(false);
            } catch (IOException | RuntimeException e) {
                LOG.error("REPLICA_TRUNCATION_FAILED partition={} leader={}", p, leaderId, e);
                backoff(s);
            }
        });
    }
}
