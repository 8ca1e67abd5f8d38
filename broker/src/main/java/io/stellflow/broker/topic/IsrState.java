package io.stellflow.broker.topic;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;

/**
 * The ISR state machine of one partition (DESIGN §5, Kafka's rules), as its {@link Partition} keeps
 * it: the committed assignment from the controller (replicas, ISR, partition epoch), per follower
 * its log end offset (LEO, the offset of its last Fetch) and when it was last caught up, the pending
 * ISR change this broker proposed as leader, and the decisions made from them: which followers leave
 * or rejoin the ISR ({@link #propose}), what the high watermark (HW) may advance to ({@link
 * #highWatermarkCandidate}: the minimum LEO over the maximal ISR, the committed ISR united with a
 * pending proposal's) and the replication lag gauges. It holds no HW, role or log of its own: the
 * partition passes them in (offsets, ms since the epoch).
 *
 * <p>Shape: the state is one immutable snapshot ({@code ReplicaSet}) in a volatile field, replaced
 * whole; follower states are objects reused across snapshots while the replica stays assigned.
 *
 * <p>Thread-safety: readers run on any thread without a lock (one volatile read of the snapshot,
 * then volatile reads of follower LEOs; {@link #highWatermarkCandidate} allocates nothing). The
 * mutators ({@link #update}, {@link #resetForLeadership}, {@link #clearPending}, {@link #propose},
 * {@link #answered}, {@link #expireStale}) must be called holding the owning {@link Partition}'s
 * monitor, which serialises snapshot swaps (docs/ownership.md, lock order); {@link #recordFetch}
 * changes only a follower state, under that follower state's own monitor (a leaf lock).
 * Errors: none; unknown broker ids answer the documented sentinels.
 */
final class IsrState {
    /** A pending ISR change the controller refused as stale is dropped after this long without news. */
    static final long PENDING_AWAITING_METADATA_MAX_MS = 30_000;

    /** {@link #recordFetch}: {@code replicaId} is not a follower replica of the partition. */
    static final int NOT_A_FOLLOWER = 0;

    /** {@link #recordFetch}: the fetch offset is outside the leader's log; nothing recorded. */
    static final int OUT_OF_RANGE = 1;

    /** {@link #recordFetch}: the follower's LEO and caught-up time were recorded. */
    static final int RECORDED = 2;

    private final int localBrokerId;
    private volatile ReplicaSet replicas;

    /** Per-follower state on the leader; LEO read lock-free, the rest under the object's monitor. */
    private static final class FollowerState {
        final int brokerId;
        volatile long logEndOffset = Partition.UNKNOWN_OFFSET;
        volatile long lastCaughtUpTimeMs;
        /** The broker epoch of the process whose fetch set {@link #logEndOffset} (-1: unknown). */
        volatile long brokerEpoch = -1L;
        /** The broker's registration epoch in the last metadata seen (-1: none yet); partition monitor. */
        long registeredEpoch = -1L;

        private long lastFetchLeaderLogEndOffset = Partition.UNKNOWN_OFFSET;
        private long lastFetchTimeMs;

        FollowerState(int brokerId) {
            this.brokerId = brokerId;
        }

        /**
         * Kafka's rule: caught up at this fetch if it asked for the leader's LEO, or at the previous
         * fetch if it reached what the leader had then. A fetch of another known broker epoch comes
         * from a new process of that broker: what the previous one reached is forgotten first.
         */
        synchronized void onFetch(long fetchOffset, long leaderLogEndOffset, long nowMs, long replicaEpoch) {
            if (replicaEpoch >= 0 && brokerEpoch >= 0 && replicaEpoch != brokerEpoch) {
                lastFetchLeaderLogEndOffset = Partition.UNKNOWN_OFFSET;
                lastFetchTimeMs = 0;
                lastCaughtUpTimeMs = 0;
            }
            if (fetchOffset >= leaderLogEndOffset) {
                lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, nowMs);
            } else if (fetchOffset >= lastFetchLeaderLogEndOffset && lastFetchLeaderLogEndOffset >= 0) {
                lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
            }
            logEndOffset = fetchOffset;
            lastFetchLeaderLogEndOffset = leaderLogEndOffset;
            lastFetchTimeMs = nowMs;
            // Written last, read first by propose(): whoever sees this epoch sees this fetch's
            // LEO and caught-up time (volatile order), never the previous process's with it.
            brokerEpoch = replicaEpoch;
        }

        synchronized void reset(long caughtUpTimeMs) {
            logEndOffset = Partition.UNKNOWN_OFFSET;
            brokerEpoch = -1L;
            lastFetchLeaderLogEndOffset = Partition.UNKNOWN_OFFSET;
            lastFetchTimeMs = 0;
            lastCaughtUpTimeMs = caughtUpTimeMs;
        }
    }

    /**
     * The assignment as an immutable snapshot: replicas, committed ISR, partition epoch, the other
     * replicas' states (objects reused across snapshots), which of them count for the HW, and the
     * pending ISR change.
     */
    private record ReplicaSet(
            UUID topicId,
            List<Integer> replicas,
            List<Integer> isr,
            int partitionEpoch,
            FollowerState[] followers,
            boolean[] inMaximalIsr,
            PendingIsrChange pending) {

        FollowerState follower(int brokerId) {
            for (FollowerState f : followers) {
                if (f.brokerId == brokerId) {
                    return f;
                }
            }
            return null;
        }

        ReplicaSet withPending(PendingIsrChange change) {
            return new ReplicaSet(
                    topicId, replicas, isr, partitionEpoch, followers, maximalIsr(followers, isr, change), change);
        }
    }

    /**
     * Before the first assignment: replicas and ISR are this broker alone (empty when {@code
     * localBrokerId} is negative: a single node), no followers, partition epoch -1.
     */
    IsrState(int localBrokerId) {
        this.localBrokerId = localBrokerId;
        List<Integer> self = localBrokerId < 0 ? List.of() : List.of(localBrokerId);
        this.replicas = new ReplicaSet(null, self, self, -1, new FollowerState[0], new boolean[0], null);
    }

    /** The topic's id from the metadata, or null before the first assignment. */
    UUID topicId() {
        return replicas.topicId();
    }

    /** Assigned replica ids, preferred leader first. */
    List<Integer> replicas() {
        return replicas.replicas();
    }

    /** The committed ISR (broker ids). */
    List<Integer> isr() {
        return replicas.isr();
    }

    /** The committed partition epoch (-1 before the first assignment). */
    int partitionEpoch() {
        return replicas.partitionEpoch();
    }

    /** The pending ISR change, or null. */
    PendingIsrChange pending() {
        return replicas.pending();
    }

    /** Whether {@code brokerId} is an assigned replica other than this broker. */
    boolean isFollower(int brokerId) {
        return replicas.follower(brokerId) != null;
    }

    /** The follower's LEO as last recorded ({@link Partition#UNKNOWN_OFFSET} before its first fetch or when not a follower). */
    long followerLogEndOffset(int brokerId) {
        FollowerState f = replicas.follower(brokerId);
        return f == null ? Partition.UNKNOWN_OFFSET : f.logEndOffset;
    }

    /** When the follower was last caught up (ms since the epoch; 0: never; -1: not a follower). */
    long followerLastCaughtUpTimeMs(int brokerId) {
        FollowerState f = replicas.follower(brokerId);
        return f == null ? -1L : f.lastCaughtUpTimeMs;
    }

    /** The union of the committed ISR and a pending proposal's: the replicas the HW waits for. */
    List<Integer> maximalIsr() {
        ReplicaSet s = replicas;
        List<Integer> ids = new ArrayList<>(s.isr());
        if (s.pending() != null) {
            for (int id : s.pending().newIsr()) {
                if (!ids.contains(id)) {
                    ids.add(id);
                }
            }
        }
        return ids;
    }

    /**
     * Applies the committed assignment. Follower states of replicas that stay are kept; a pending ISR
     * change ends when the partition epoch moved past its base (committed or superseded).
     *
     * @return false when nothing changed (same assignment, same pending change)
     */
    boolean update(UUID topicId, List<Integer> replicaIds, List<Integer> isr, int partitionEpoch) {
        ReplicaSet s = replicas;
        PendingIsrChange pending = s.pending();
        if (pending != null && partitionEpoch != pending.basePartitionEpoch()) {
            pending = null;
        }
        if (partitionEpoch == s.partitionEpoch()
                && replicaIds.equals(s.replicas())
                && isr.equals(s.isr())
                && topicId.equals(s.topicId())
                && pending == s.pending()) {
            return false;
        }
        List<FollowerState> followers = new ArrayList<>(replicaIds.size());
        for (int id : replicaIds) {
            if (id != localBrokerId) {
                FollowerState f = s.follower(id);
                followers.add(f != null ? f : new FollowerState(id));
            }
        }
        FollowerState[] array = followers.toArray(new FollowerState[0]);
        replicas = new ReplicaSet(
                topicId,
                List.copyOf(replicaIds),
                List.copyOf(isr),
                partitionEpoch,
                array,
                maximalIsr(array, isr, pending),
                pending);
        return true;
    }

    /**
     * This broker becomes leader at {@code nowMs}: every follower's LEO becomes unknown until its
     * first Fetch; ISR members count as caught up at {@code nowMs} (so they get {@code
     * replica.lag.time.max.ms} to fetch before a shrink), others as never; a pending change is dropped.
     */
    void resetForLeadership(long nowMs) {
        ReplicaSet s = replicas;
        for (FollowerState f : s.followers()) {
            f.reset(s.isr().contains(f.brokerId) ? nowMs : 0L);
        }
        clearPending();
    }

    /**
     * Applies the metadata's broker registrations: a follower whose registration epoch changed
     * since the last call (a new process) has its fetch state forgotten (LEO unknown, never caught
     * up), so only its new process's fetches count for the HW and the ISR. Mutator: under the
     * partition's monitor.
     *
     * @param registeredEpoch a broker id's registration epoch, -1 when it is not registered
     * @return the followers whose state was forgotten (empty, without allocation, when none)
     */
    List<Integer> onRegistrations(IntToLongFunction registeredEpoch) {
        List<Integer> forgotten = List.of();
        for (FollowerState f : replicas.followers()) {
            long now = registeredEpoch.applyAsLong(f.brokerId);
            if (f.registeredEpoch >= 0 && now != f.registeredEpoch) {
                f.reset(0L);
                if (forgotten.isEmpty()) {
                    forgotten = new ArrayList<>();
                }
                forgotten.add(f.brokerId);
            }
            f.registeredEpoch = now;
        }
        return forgotten;
    }

    /** Drops the pending ISR change, if any (this broker stopped leading). */
    void clearPending() {
        ReplicaSet s = replicas;
        if (s.pending() != null) {
            replicas = s.withPending(null);
        }
    }

    /**
     * Records a follower Fetch at {@code fetchOffset} against the leader's log [{@code logStartOffset},
     * {@code logEndOffset}]: its LEO, its broker epoch ({@code replicaEpoch}, -1 when unknown) and
     * whether it is caught up. An offset outside the log records nothing (such a follower holds
     * offsets this leader does not have, so it counts neither towards the HW nor as caught up).
     *
     * @return {@link #NOT_A_FOLLOWER}, {@link #OUT_OF_RANGE} or {@link #RECORDED}
     */
    int recordFetch(
            int replicaId, long replicaEpoch, long fetchOffset, long logStartOffset, long logEndOffset, long nowMs) {
        FollowerState f = replicas.follower(replicaId);
        if (f == null) {
            return NOT_A_FOLLOWER;
        }
        if (fetchOffset > logEndOffset || fetchOffset < logStartOffset) {
            return OUT_OF_RANGE;
        }
        f.onFetch(fetchOffset, logEndOffset, nowMs, replicaEpoch);
        return RECORDED;
    }

    /** As {@link #recordFetch(int, long, long, long, long, long)} with the broker epoch unknown (-1). */
    int recordFetch(int replicaId, long fetchOffset, long logStartOffset, long logEndOffset, long nowMs) {
        return recordFetch(replicaId, -1L, fetchOffset, logStartOffset, logEndOffset, nowMs);
    }

    /**
     * Whether a follower outside the committed ISR that fetched at {@code fetchOffset} may rejoin (it
     * reached the HW and this leadership's start offset) while no change is pending: the ISR manager
     * is then asked to look. A hint; {@link #propose} decides.
     */
    boolean mayRejoin(int replicaId, long fetchOffset, long highWatermark, long leaderEpochStartOffset) {
        ReplicaSet s = replicas;
        return s.pending() == null
                && !s.isr().contains(replicaId)
                && fetchOffset >= highWatermark
                && fetchOffset >= leaderEpochStartOffset;
    }

    /**
     * The HW the leader may advance to: the minimum of {@code leaderLogEndOffset} and the LEOs of the
     * followers in the maximal ISR (a follower not fetched yet counts as {@link
     * Partition#UNKNOWN_OFFSET}, below any HW). One volatile read per follower, no allocation, no lock.
     */
    long highWatermarkCandidate(long leaderLogEndOffset) {
        ReplicaSet s = replicas;
        long min = leaderLogEndOffset;
        FollowerState[] followers = s.followers();
        boolean[] counted = s.inMaximalIsr();
        for (int i = 0; i < followers.length; i++) {
            if (counted[i]) {
                long leo = followers[i].logEndOffset;
                if (leo < min) {
                    min = leo;
                }
            }
        }
        return min;
    }

    /** Leader lag in records: the largest {@code leaderLogEndOffset - follower LEO} (a follower not fetched counts from 0). */
    long maxLagRecords(long leaderLogEndOffset) {
        long max = 0;
        for (FollowerState f : replicas.followers()) {
            max = Math.max(max, leaderLogEndOffset - Math.max(0, f.logEndOffset));
        }
        return max;
    }

    /**
     * Leader lag in time at {@code nowMs}: the largest time since a follower below {@code
     * leaderLogEndOffset} was caught up, counted from {@code leaderSinceMs} at the latest.
     */
    long maxLagTimeMs(long nowMs, long leaderLogEndOffset, long leaderSinceMs) {
        long max = 0;
        for (FollowerState f : replicas.followers()) {
            if (f.logEndOffset < leaderLogEndOffset) {
                max = Math.max(max, nowMs - Math.max(f.lastCaughtUpTimeMs, leaderSinceMs));
            }
        }
        return max;
    }

    /**
     * Leader only (the caller checks the role): decides whether the ISR should change and, if so,
     * records the proposal as pending and returns it. Out of the ISR: followers below {@code
     * logEndOffset} not caught up within {@code lagTimeMaxMs} (a follower at the LEO is in sync however
     * long ago it fetched); back in: followers outside the ISR whose LEO reached {@code highWatermark}
     * and {@code leaderEpochStartOffset}, caught up within {@code lagTimeMaxMs}. The leader stays.
     *
     * <p>Each follower the proposal adds goes with the broker epoch of the process whose fetches were
     * judged ({@link PendingIsrChange#newIsrBrokerEpochs}; -1 for members that stay and for followers
     * on Fetch v0/v1): the controller refuses to add a follower that registered again since.
     *
     * <p>A follower added to the maximal ISR must not be behind a HW some other thread computed before
     * the snapshot swap: after the swap, {@code currentHighWatermark} is read again and the proposal
     * withdrawn when an added follower is below it.
     *
     * @return the proposal, or null when nothing changes, a change is already pending, there is no
     *     assignment (single node), or the proposal was withdrawn
     */
    PendingIsrChange propose(
            long nowMs,
            long lagTimeMaxMs,
            int leaderEpoch,
            long highWatermark,
            long logEndOffset,
            long leaderEpochStartOffset,
            LongSupplier currentHighWatermark) {
        ReplicaSet s = replicas;
        if (s.topicId() == null || s.pending() != null) {
            return null;
        }
        List<Integer> next = new ArrayList<>(s.replicas().size());
        for (int id : s.isr()) {
            FollowerState f = s.follower(id);
            if (f == null || f.logEndOffset >= logEndOffset || nowMs - f.lastCaughtUpTimeMs <= lagTimeMaxMs) {
                next.add(id); // the leader itself, or a follower at the LEO or caught up recently
            }
        }
        List<Long> epochs = new ArrayList<>(s.replicas().size());
        for (int i = 0; i < next.size(); i++) {
            epochs.add(-1L); // members that stay are not checked by the controller
        }
        for (FollowerState f : s.followers()) {
            long epoch = f.brokerEpoch; // before the LEO: see FollowerState.onFetch
            long leo = f.logEndOffset;
            if (!s.isr().contains(f.brokerId)
                    && leo >= highWatermark
                    && leo >= leaderEpochStartOffset
                    && nowMs - f.lastCaughtUpTimeMs <= lagTimeMaxMs) {
                next.add(f.brokerId);
                epochs.add(epoch);
            }
        }
        if (next.size() == s.isr().size() && next.containsAll(s.isr())) {
            return null;
        }
        PendingIsrChange change = new PendingIsrChange(
                s.topicId(), leaderEpoch, s.partitionEpoch(), s.isr(), List.copyOf(next), epochs, nowMs, false);
        replicas = s.withPending(change);
        for (FollowerState f : s.followers()) {
            if (!s.isr().contains(f.brokerId)
                    && next.contains(f.brokerId)
                    && f.logEndOffset < currentHighWatermark.getAsLong()) {
                replicas = s.withPending(null);
                return null;
            }
        }
        return change;
    }

    /**
     * The controller answered {@code change}: {@code awaitMetadata} true (accepted, or refused as
     * stale) keeps it pending until the metadata moves the partition epoch; false (refused for good)
     * drops it.
     *
     * @return false (nothing done) when {@code change} is no longer the pending one
     */
    boolean answered(PendingIsrChange change, boolean awaitMetadata) {
        ReplicaSet s = replicas;
        if (s.pending() != change) {
            return false;
        }
        replicas = s.withPending(awaitMetadata ? change.answered() : null);
        return true;
    }

    /**
     * The controller refused {@code change} as {@code INELIGIBLE_REPLICA} (a member it adds is
     * fenced, reports its replica failed, or registered again since the fetches this leader saw):
     * dropped, and what the followers it would have added reached is forgotten, so they are judged
     * again from their next Fetch (proposing the same change again would only be refused again).
     *
     * @return false (nothing done) when {@code change} is no longer the pending one
     */
    boolean refusedIneligible(PendingIsrChange change) {
        ReplicaSet s = replicas;
        if (!answered(change, false)) {
            return false;
        }
        for (int id : change.newIsr()) {
            FollowerState f = s.follower(id);
            if (f != null && !s.isr().contains(id)) {
                f.reset(0L);
            }
        }
        return true;
    }

    /**
     * Drops a pending change the controller answered more than {@value #PENDING_AWAITING_METADATA_MAX_MS}
     * ms before {@code nowMs} without the metadata ever moving the partition epoch.
     *
     * @return the dropped change, or null when none was dropped
     */
    PendingIsrChange expireStale(long nowMs) {
        ReplicaSet s = replicas;
        PendingIsrChange p = s.pending();
        if (p != null && p.awaitingMetadata() && nowMs - p.sinceMs() > PENDING_AWAITING_METADATA_MAX_MS) {
            replicas = s.withPending(null);
            return p;
        }
        return null;
    }

    private static boolean[] maximalIsr(FollowerState[] followers, List<Integer> isr, PendingIsrChange pending) {
        boolean[] in = new boolean[followers.length];
        for (int i = 0; i < followers.length; i++) {
            int id = followers[i].brokerId;
            in[i] = isr.contains(id) || (pending != null && pending.newIsr().contains(id));
        }
        return in;
    }
}
