package io.stellflow.broker.topic;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.telemetry.TopicThroughput;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import java.util.function.IntToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One topic partition hosted by this broker: its log, its role (leader or follower, as the
 * controller's metadata says; always leader on a single node without a controller), its leader
 * epoch, its replica state and the listeners waiting for it to move (parked Fetch and Produce
 * requests).
 *
 * <p>Replica state (DESIGN §5, Kafka's rules): the assignment comes from the controller's committed
 * metadata ({@link #updateAssignment}: replicas, ISR, partition epoch), never from local decisions.
 * As leader the partition keeps, per follower, the follower's LEO (the offset of its last Fetch)
 * and the last time it was caught up; the high watermark (HW) is the minimum LEO over the ISR, the
 * leader's own included, and never decreases. While an ISR change this leader proposed is pending
 * ({@link #prepareIsrChange}), the HW is computed over the union of the committed and the proposed
 * ISR ("maximal ISR"), so neither a shrink nor an expansion can let the HW pass a replica that may
 * be in the ISR once the change commits. A follower's HW is what the replica fetcher sets ({@link
 * #updateFollowerHighWatermark}); a new leader starts from the HW it had (checkpointed or learned as
 * follower), which may lag until its followers fetch. A partition made with the single-node
 * constructor (tests) has this broker alone as replicas and ISR, so the HW equals the log end offset
 * after every append. The replica state and the ISR decisions live in its {@link IsrState}; the
 * role, the failed state and the writes that depend on them in its {@link PartitionWriteGate}; the
 * HW value in a {@link HighWatermark}, the follower's view of its leader in a {@link
 * FollowerProgress}, the listeners in {@link PartitionListeners}. This class keeps the public
 * contract and decides when the HW moves, calling {@link IsrState}'s mutators under its monitor.
 *
 * <p>Listeners: append listeners are told after every append (parked follower Fetches read up to the
 * LEO); high-watermark listeners when the HW advanced or the replica state changed (parked consumer
 * Fetches read below the HW; parked acks=-1 Produces wait for it).
 *
 * <p>Thread-safety: any thread. Log writes and role changes hold the log's {@link
 * UnifiedLog#writeLock} (so a write never interleaves with a role change); the replica set (its
 * {@link IsrState}) is an immutable snapshot replaced under this object's monitor (taken before the
 * write lock, never after); a leader's HW only rises, by compare-and-set. Listeners run on the thread that moved the
 * partition. Which thread writes when: docs/ownership.md.
 */
public final class Partition {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    /** An offset not known (yet): a follower's LEO before its first Fetch at the current leader epoch. */
    public static final long UNKNOWN_OFFSET = -1L;

    /**
     * {@link #appendAsLeader} result instead of a base offset (&gt;= 0): this broker does not lead
     * the partition; nothing was appended, answer {@code NOT_LEADER_OR_FOLLOWER}. -3, distinct from
     * {@link #UNKNOWN_OFFSET} and {@link UnifiedLog#OFFSET_MISMATCH} (docs/ownership.md, "Return codes").
     */
    public static final long NOT_LEADER = -3L;

    /** {@link #topicMaxMessageBytes(int)}: the topic sets no {@code max.message.bytes}. */
    public static final int NO_TOPIC_MAX_MESSAGE_BYTES = -1;

    private final String topic;
    private final int partition;
    private final UnifiedLog log;
    private final int localBrokerId;
    private final PartitionWriteGate writes;
    private final HighWatermark highWatermark;
    /** Follower: the leader's HW of the last fetch response ({@link #updateFollowerHighWatermark}). */
    private final FollowerProgress followerProgress = new FollowerProgress();

    private final IsrState isrState;

    private volatile int minInsyncReplicas = 1;
    private volatile int topicMaxMessageBytes = NO_TOPIC_MAX_MESSAGE_BYTES;
    private volatile ReplicationMetrics metrics = ReplicationMetrics.NOOP;
    /** Its topic's throughput diagnostic counters, or null (the diagnostic is off). */
    private volatile TopicThroughput.Counters topicCounters;

    private volatile IsrChangeTrigger isrTrigger = IsrChangeTrigger.NONE;
    private final PartitionListeners listeners;

    /**
     * Asked to look at a partition's ISR soon (a follower caught up and may rejoin). Implementations
     * queue the work and return at once: it is called on request threads.
     */
    @FunctionalInterface
    public interface IsrChangeTrigger {
        /** No ISR management (single node): nothing to do. */
        IsrChangeTrigger NONE = p -> {};

        /** {@code partition} may need an ISR change. */
        void isrCheckNeeded(Partition partition);
    }

    /**
     * A partition this broker leads at {@code leaderEpoch} until told otherwise, on a single node:
     * replicas and ISR are this broker alone, the HW follows the log end offset.
     *
     * @param log the partition's open log; closed by whoever owns the partition
     */
    public Partition(String topic, int partition, int leaderEpoch, UnifiedLog log) {
        this(topic, partition, leaderEpoch, log, -1, log.logEndOffset());
    }

    /**
     * A partition of a cluster broker, as leader at {@code leaderEpoch} until the metadata says
     * otherwise; replicas and ISR are this broker alone until {@link #updateAssignment}.
     *
     * @param log the partition's open log; closed by whoever owns the partition
     * @param localBrokerId this broker's id
     * @param initialHighWatermark the HW to start from (the checkpointed one; clamped to the log's
     *     [log start offset, log end offset])
     */
    public Partition(
            String topic,
            int partition,
            int leaderEpoch,
            UnifiedLog log,
            int localBrokerId,
            long initialHighWatermark) {
        this.topic = topic;
        this.partition = partition;
        this.log = log;
        this.writes = new PartitionWriteGate(log, topic + "-" + partition, leaderEpoch);
        this.localBrokerId = localBrokerId;
        this.highWatermark =
                new HighWatermark(Math.max(log.logStartOffset(), Math.min(initialHighWatermark, log.logEndOffset())));
        this.isrState = new IsrState(localBrokerId);
        this.listeners = new PartitionListeners(topic, partition);
    }

    /** Makes this broker the leader at {@code newLeaderEpoch} (stamped into appends from now on). */
    public void becomeLeader(int newLeaderEpoch) {
        becomeLeader(newLeaderEpoch, System.currentTimeMillis());
    }

    /**
     * Makes this broker the leader at {@code newLeaderEpoch}. Every follower's LEO becomes unknown
     * until its first Fetch (the HW waits for the ISR's followers); ISR members count as caught up
     * at {@code nowMs}, so they get {@code replica.lag.time.max.ms} to fetch before a shrink.
     */
    public synchronized void becomeLeader(int newLeaderEpoch, long nowMs) {
        isrState.resetForLeadership(nowMs);
        writes.becomeLeader(newLeaderEpoch, nowMs);
        maybeIncrementHighWatermark();
        notifyHighWatermarkListeners();
    }

    /**
     * Makes this broker a follower of {@code newLeaderId} ({@code -1}: no leader) at
     * {@code newLeaderEpoch}: clients get {@code NOT_LEADER_OR_FOLLOWER} for Produce and Fetch.
     */
    public synchronized void becomeFollower(int newLeaderId, int newLeaderEpoch) {
        writes.becomeFollower(newLeaderId, newLeaderEpoch);
        isrState.clearPending();
        notifyHighWatermarkListeners();
    }

    /**
     * Runs {@code followerWork} (a fetcher's append of fetched batches, a truncation, a log start
     * offset change) only while this broker follows at {@code followerLeaderEpoch}, holding the log's
     * {@link UnifiedLog#writeLock}. {@link #becomeLeader} and {@link #becomeFollower} take the same
     * lock, so a follower-side change of the log never interleaves with a role change: a new leader's
     * epoch start offset (its LEO) is never followed by records the old leader sent, and a new
     * leader's log is never truncated by a fetcher that has not yet seen the change. {@code
     * followerWork} must not call a {@code synchronized} method of this class (lock order).
     *
     * @return true when the work ran; false (not run) when this broker leads the partition or
     *     follows at another leader epoch
     */
    public boolean runIfFollowing(int followerLeaderEpoch, Runnable followerWork) {
        return writes.runIfFollowing(followerLeaderEpoch, followerWork);
    }

    /**
     * Applies the committed assignment from the controller's metadata (called on every metadata
     * change, before the role). Follower states of replicas that stay are kept; a pending ISR change
     * ends when the partition epoch moved past its base (committed or superseded).
     *
     * @param topicId the topic's id
     * @param replicas assigned replica ids, preferred leader first
     * @param isr the committed ISR
     * @param partitionEpoch the committed partition epoch
     * @return the previous committed ISR when the ISR changed, else null
     */
    public synchronized List<Integer> updateAssignment(
            UUID topicId, List<Integer> replicas, List<Integer> isr, int partitionEpoch) {
        List<Integer> before = isrState.isr();
        if (!isrState.update(topicId, replicas, isr, partitionEpoch)) {
            return null;
        }
        if (writes.isLeader()) {
            maybeIncrementHighWatermark();
        }
        notifyHighWatermarkListeners();
        return isr.equals(before) ? null : before;
    }

    /** Whether this broker currently leads the partition (serves Produce, Fetch and ListOffsets). */
    public boolean isLeader() {
        return writes.isLeader();
    }

    /**
     * Whether this broker still leads the partition at {@code epoch}. A reader that read the HW, LSO
     * or log offsets and then gets true here read a leader's values at that epoch: a follower lowers
     * its HW only after {@link #becomeFollower} (which changes the role and the epoch) has been seen.
     * Fetch and ListOffsets check it after their reads (a parked Fetch outlives role changes).
     */
    public boolean leadsAt(int epoch) {
        return writes.leadsAt(epoch);
    }

    /** The leader this follower follows, or -1 (leader: -1, it is this broker). */
    public int leaderId() {
        return writes.leaderId();
    }

    /** Topic name. */
    public String topic() {
        return topic;
    }

    /** Partition id, 0-based. */
    public int partition() {
        return partition;
    }

    /** Current leader epoch; stamped into every appended batch and checked against request epochs. */
    public int leaderEpoch() {
        return writes.leaderEpoch();
    }

    /** The underlying log (reads; a follower's fetcher writes it inside {@link #runIfFollowing}). */
    public UnifiedLog log() {
        return log;
    }

    /** This broker's id, or -1 on a single node without a controller. */
    public int localBrokerId() {
        return localBrokerId;
    }

    /** The topic's id from the metadata, or null before the first assignment (single node). */
    public UUID topicId() {
        return isrState.topicId();
    }

    /** Assigned replicas, preferred leader first ({@code [self]} or empty on a single node). */
    public List<Integer> replicas() {
        return isrState.replicas();
    }

    /** The committed ISR. */
    public List<Integer> inSyncReplicas() {
        return isrState.isr();
    }

    /** Size of the committed ISR (1 on a single node): what acks=-1 compares with min.insync.replicas. */
    public int inSyncReplicaCount() {
        int n = isrState.isr().size();
        return n == 0 ? 1 : n;
    }

    /** The committed partition epoch (-1 before the first assignment). */
    public int partitionEpoch() {
        return isrState.partitionEpoch();
    }

    /** The offset this broker's leadership started at (its LEO when it became leader). */
    public long leaderEpochStartOffset() {
        return writes.leaderEpochStartOffset();
    }

    /**
     * Whether this leader's HW may still be below a HW its predecessor already exposed to consumers.
     * A new leader starts from the HW it knew as a follower, which lags the old leader's; the old
     * leader's HW was at most this broker's log end offset when it became leader ({@link
     * #leaderEpochStartOffset}, every ISR member had it). Until the HW reaches that offset, consumer
     * Fetch and ListOffsets answer {@code NOT_LEADER_OR_FOLLOWER} (retriable: the SDKs refresh
     * metadata and retry) rather than a HW lower than one a consumer may have seen, so the HW seen
     * by consumers never decreases (issue #6). Follower fetches are served: they move the HW.
     *
     * @return true only on a leader whose HW is below its leader epoch start offset
     */
    public boolean highWatermarkBelowEpochStart() {
        return writes.isLeader() && highWatermark() < writes.leaderEpochStartOffset();
    }

    /** {@code min.insync.replicas} for acks=-1 Produces (topic config, else the broker default). */
    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    /** Sets {@code min.insync.replicas} (&gt;= 1); wakes parked acks=-1 Produces to re-check. */
    public void minInsyncReplicas(int value) {
        if (value < 1) {
            throw new IllegalArgumentException("min.insync.replicas must be >= 1: " + value);
        }
        if (minInsyncReplicas != value) {
            minInsyncReplicas = value;
            notifyHighWatermarkListeners();
        }
    }

    /**
     * The largest batch in bytes (whole batch) a Produce to this partition may carry: the topic's
     * {@code max.message.bytes}, else {@code brokerMessageMaxBytes} (the broker's {@code
     * message.max.bytes}). The leader's Produce path checks batches against it (a follower copies any
     * batch its leader wrote, as Kafka's do); {@link DiskFullRecovery} waits for room for one such
     * batch, on a leader and a follower alike.
     */
    public int maxMessageBytes(int brokerMessageMaxBytes) {
        int topic = topicMaxMessageBytes;
        return topic == NO_TOPIC_MAX_MESSAGE_BYTES ? brokerMessageMaxBytes : topic;
    }

    /**
     * Sets the topic's {@code max.message.bytes}, or {@link #NO_TOPIC_MAX_MESSAGE_BYTES}; the caller
     * ({@code ReplicaManager}) passes only values in the range {@code TopicConfigRules} validates
     * (78 to 64 MiB - 64 KiB), this guard only refuses what is never a batch size.
     */
    public void topicMaxMessageBytes(int bytes) {
        if (bytes < 1 && bytes != NO_TOPIC_MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("max.message.bytes must be >= 1: " + bytes);
        }
        topicMaxMessageBytes = bytes;
    }

    /** Where HW advances are counted. */
    public void metrics(ReplicationMetrics replicationMetrics) {
        this.metrics = replicationMetrics;
    }

    /** Its topic's throughput counters ({@code metrics.topic.diagnostic.enabled}); set once when opened. */
    public void topicCounters(TopicThroughput.Counters counters) {
        this.topicCounters = counters;
    }

    /**
     * Its topic's throughput counters, or null when the per-topic diagnostic is off: the request path
     * checks for null and otherwise adds, with no lookup.
     */
    public TopicThroughput.Counters topicCounters() {
        return topicCounters;
    }

    /** Who is asked to look at the ISR when a follower caught up (the ISR manager). */
    public void isrChangeTrigger(IsrChangeTrigger trigger) {
        this.isrTrigger = trigger;
    }

    /**
     * Appends a validated RecordBatchSet as leader, wakes the append listeners and advances the HW
     * when the ISR allows (at once when this broker is the only ISR member).
     *
     * <p>The leadership check and the write hold the log's {@link UnifiedLog#writeLock}, which
     * {@link #becomeFollower} also takes: a request accepted while this broker led, but appended
     * after it learned it follows (an append queue drained late, a process paused and resumed), gets
     * {@link #NOT_LEADER} and writes nothing. Without that, the follower's log would gain a batch
     * stamped with the new leader's epoch that the new leader never wrote, which epoch-based
     * truncation cannot see. Kafka's {@code Partition.appendRecordsToLeader} holds its leader-ISR
     * lock for the same reason. One lock, uncontended on the append path (the append agent is the
     * only leader writer; role changes, retention and checkpoints are rare), held for the one write.
     *
     * @return the offset of the first appended record, or {@link #NOT_LEADER} (nothing appended)
     * @throws IOException when the write failed; nothing was acknowledged ({@link
     *     PartitionFailedException}: refused, the partition had failed before)
     */
    public long appendAsLeader(ByteBuf validatedRecords) throws IOException {
        return appendAsLeader(validatedRecords, null);
    }

    /**
     * As {@link #appendAsLeader(ByteBuf)}, with the real largest record timestamp of each batch as
     * the validation computed them ({@link UnifiedLog#appendAsLeader(ByteBuf, int,
     * BatchMaxTimestamps)}; null: the log reads them from the records).
     */
    public long appendAsLeader(ByteBuf validatedRecords, BatchMaxTimestamps maxTimestamps) throws IOException {
        return appendLeader(validatedRecords, maxTimestamps, false, -1, null, false);
    }

    /**
     * As {@link #appendAsLeader(ByteBuf, BatchMaxTimestamps)} for ONE validated batch of an
     * idempotent producer: the log checks its sequences first ({@link
     * UnifiedLog#appendIdempotentAsLeader}).
     *
     * @return the base offset (the original one for an exact retry), {@link #NOT_LEADER}, or one
     *     of {@link UnifiedLog#OUT_OF_ORDER_SEQUENCE}, {@link UnifiedLog#INVALID_PRODUCER_EPOCH},
     *     {@link UnifiedLog#TOO_MANY_PRODUCER_IDS}, {@link UnifiedLog#TOO_MANY_PRODUCER_IDS_ON_BROKER}
     *     (nothing written)
     */
    public long appendIdempotentAsLeader(ByteBuf validatedBatch, BatchMaxTimestamps maxTimestamps) throws IOException {
        return appendLeader(validatedBatch, maxTimestamps, true, -1, null, false);
    }

    /**
     * As {@link #appendIdempotentAsLeader} for a batch of a transaction ({@link
     * UnifiedLog#appendTransactionalAsLeader}: a BEGIN marker first when the producer has no open
     * transaction here); also {@link UnifiedLog#INVALID_TXN_STATE}. Called for a Produce whose
     * partition the transaction's coordinator registered.
     */
    public long appendTransactionalAsLeader(
            ByteBuf validatedBatch, BatchMaxTimestamps maxTimestamps, long transactionSequence) throws IOException {
        return appendLeader(validatedBatch, maxTimestamps, true, Math.max(transactionSequence, 0), null, false);
    }

    /**
     * The coordinator's COMMIT or ABORT marker for this partition ({@link
     * UnifiedLog#appendTransactionMarker}): its offset, {@link #NOT_LEADER}, or {@link
     * UnifiedLog#INVALID_PRODUCER_EPOCH}, {@link UnifiedLog#INVALID_TXN_STATE}, {@link
     * UnifiedLog#TRANSACTION_COORDINATOR_FENCED} (nothing written).
     */
    public long appendTransactionMarker(
            long producerId, short producerEpoch, boolean commit, int coordinatorEpoch, long transactionSequence)
            throws IOException {
        return appendLeader(
                null,
                null,
                false,
                -1,
                new long[] {producerId, producerEpoch, commit ? 1 : 0, coordinatorEpoch, transactionSequence},
                false);
    }

    /**
     * A coordinator's own transactional batch ({@link UnifiedLog#appendCoordinatorTransactional}: the
     * log stamps the producer's next sequence): the group coordinator's transactional offsets.
     * Returns as {@link #appendTransactionalAsLeader}.
     */
    public long appendCoordinatorTransactionalAsLeader(ByteBuf batch, long transactionSequence) throws IOException {
        return appendLeader(batch, null, true, Math.max(transactionSequence, 0), null, true);
    }

    /** {@link PartitionWriteGate#appendAsLeader}, then the append listeners and the HW. */
    private long appendLeader(
            ByteBuf records,
            BatchMaxTimestamps maxTimestamps,
            boolean idempotent,
            long txnSequence,
            long[] marker,
            boolean stampSequence)
            throws IOException {
        long baseOffset = writes.appendAsLeader(records, maxTimestamps, idempotent, txnSequence, marker, stampSequence);
        if (baseOffset >= 0) { // a refused idempotent batch wrote nothing
            listeners.notifyAppendListeners();
        }
        maybeIncrementHighWatermark();
        return baseOffset;
    }

    /**
     * Marks this partition failed: from now on its leader appends fail with a {@link
     * PartitionFailedException} (answered with an error) until it recovers in place ({@link
     * #recoverInPlace}) or the broker restarts. The first failure of an episode is kept, later calls
     * change nothing. Any thread.
     *
     * @return true when this call marked it, false when it had already failed
     */
    public boolean markFailed(PartitionFailure why) {
        return writes.markFailed(why);
    }

    /**
     * Marks this partition failed because its log dir went offline ({@link LogDirFailures}): replaces
     * any earlier failure, so a no-space failure on a dir that then went offline is not recovered in
     * place. Any thread.
     */
    public void markOffline(PartitionFailure why) {
        writes.markOffline(why);
    }

    /**
     * Recovers this failed partition in place, without a restart: holding the log's {@link
     * UnifiedLog#writeLock} (no append, follower write or role change runs meanwhile), reopens the
     * log ({@link UnifiedLog#reopen}: the files are loaded again and a torn tail is cut, as at a
     * start after a crash) and clears the failure. Writes resume in the role the partition has now:
     * as leader the next Produce appends at the recovered log end offset; as follower the replica
     * fetcher's next fetch starts there. Called by {@link DiskFullRecovery}; any thread.
     *
     * @param expected the failure being recovered; nothing is done when the partition's failure is
     *     another one (it recovered and failed again meanwhile) or none
     * @return the log end offset after the recovery, or {@link #UNKNOWN_OFFSET} when nothing was done
     * @throws IOException the reopen failed (the disk filled again): the partition stays failed
     */
    public long recoverInPlace(PartitionFailure expected) throws IOException {
        long logEndOffset = writes.recoverInPlace(expected, highWatermark);
        if (logEndOffset == UNKNOWN_OFFSET) {
            return UNKNOWN_OFFSET;
        }
        maybeIncrementHighWatermark();
        notifyHighWatermarkListeners();
        return logEndOffset;
    }

    /** The failure that stopped this partition's writes, or null while it is healthy. Any thread. */
    public PartitionFailure failure() {
        return writes.failure();
    }

    /** Log end offset: the offset the next record gets. */
    public long logEndOffset() {
        return log.logEndOffset();
    }

    /**
     * High watermark: records below it are on every ISR member. Leader: min LEO over the (maximal)
     * ISR, never decreasing; follower: the last value the replica fetcher set. Fetch answers to
     * consumers, ListOffsets, retention and compaction never go at or above it.
     */
    public long highWatermark() {
        return highWatermark.get();
    }

    /**
     * Follower only: the leader's HW from a fetch response; HW = min(leaderHighWatermark, log end
     * offset). Called by the replica fetcher after each response is applied; ignored on a leader.
     */
    public void updateFollowerHighWatermark(long leaderHighWatermark) {
        if (writes.isLeader()) {
            return;
        }
        long leo = log.logEndOffset();
        long hw = Math.min(leaderHighWatermark, leo);
        highWatermark.set(Math.max(hw, log.logStartOffset()));
        followerProgress.leaderHighWatermark(leaderHighWatermark, leo);
    }

    /**
     * Replication lag in records (a gauge, any thread): as leader the largest {@code LEO - follower
     * LEO} over the followers (a follower that has not fetched counts from 0); as follower {@code
     * leader HW - LEO} from the last fetch response (0 before one).
     */
    public long maxLagRecords() {
        long leo = log.logEndOffset();
        if (!writes.isLeader()) {
            return followerProgress.maxLagRecords(leo);
        }
        return isrState.maxLagRecords(leo);
    }

    /**
     * Time since a replica was last caught up, ms (a gauge, any thread; 0 when caught up): as leader
     * the largest over the followers at {@code nowMs}, a follower not caught up during this leadership
     * counting from its start; as follower since this log last reached the leader's HW.
     */
    public long maxLagTimeMs(long nowMs) {
        long leo = log.logEndOffset();
        if (!writes.isLeader()) {
            return followerProgress.maxLagTimeMs(nowMs, leo);
        }
        return isrState.maxLagTimeMs(nowMs, leo, writes.leaderSinceMs());
    }

    /** Follower only: after a truncation, HW = min(HW, log end offset). Ignored on a leader. */
    public void onFollowerTruncated() {
        if (writes.isLeader()) {
            return;
        }
        long leo = log.logEndOffset();
        if (highWatermark.get() > leo) {
            highWatermark.set(leo);
        }
    }

    /**
     * Leader side of a follower Fetch ({@code docs/spec/wire-protocol.md} §6.4, {@code replicaId >=
     * 0}): records {@code fetchOffset} as the follower's LEO and whether it is caught up, advances
     * the HW, and asks the ISR manager to look when a follower outside the ISR reached the HW.
     * Called once per partition per follower Fetch, before the read.
     *
     * <p>A fetch offset outside [log start offset, log end offset] records nothing: the read answers
     * it {@code OFFSET_OUT_OF_RANGE}, and a follower that asks for offsets this leader does not have
     * (after an unclean election, or a truncation that could only go to its own HW) does not hold
     * them, so it must count neither towards the HW nor as caught up for the ISR (Kafka updates a
     * follower's state only after a successful read for the same reason).
     *
     * <p>The follower's broker epoch (Fetch v2) is kept with its LEO: a proposal to add it to the ISR
     * carries that epoch, and the controller refuses it when the broker registered again since (a
     * restarted process whose log may have lost what its predecessor fetched, KIP-903's rule). A
     * Fetch with another epoch than the last one forgets what the previous process reached first.
     *
     * @param replicaId the follower's broker id
     * @param replicaEpoch the follower's broker epoch, -1 when unknown (Fetch v0/v1)
     * @param fetchOffset the offset the follower asked for (its LEO)
     * @param nowMs the arrival time, ms since the epoch
     * @return false when {@code replicaId} is not a follower replica of this partition (the Fetch gets
     *     {@code NOT_LEADER_OR_FOLLOWER} for it); true otherwise, whether or not the offset was in range
     */
    public boolean recordFollowerFetch(int replicaId, long replicaEpoch, long fetchOffset, long nowMs) {
        int recorded = isrState.recordFetch(
                replicaId, replicaEpoch, fetchOffset, log.logStartOffset(), log.logEndOffset(), nowMs);
        if (recorded == IsrState.NOT_A_FOLLOWER) {
            return false;
        }
        if (recorded == IsrState.RECORDED && writes.isLeader()) {
            maybeIncrementHighWatermark();
            if (isrState.mayRejoin(replicaId, fetchOffset, highWatermark.get(), writes.leaderEpochStartOffset())) {
                isrTrigger.isrCheckNeeded(this);
            }
        }
        return true;
    }

    /**
     * The metadata's broker registrations ({@code registeredEpoch}: a broker id's registration
     * epoch, -1 when not registered): a follower whose registration epoch changed since the last
     * call registered again (a new process, whose log may have lost what the earlier one fetched),
     * so what the earlier process reached is forgotten and it is judged from its own fetches (a
     * follower on Fetch v1 included, whose fetches carry no epoch). Called by the replica manager
     * for each metadata image; cheap when nothing changed.
     */
    public synchronized void onBrokerRegistrations(IntToLongFunction registeredEpoch) {
        List<Integer> forgotten = isrState.onRegistrations(registeredEpoch);
        if (!forgotten.isEmpty()) {
            LOG.info(
                    "FOLLOWER_STATE_RESET partition={} brokers={}: registered again; judged from their next fetches",
                    this,
                    forgotten);
        }
    }

    /** As {@link #recordFollowerFetch(int, long, long, long)} with the broker epoch unknown (-1). */
    public boolean recordFollowerFetch(int replicaId, long fetchOffset, long nowMs) {
        return recordFollowerFetch(replicaId, -1L, fetchOffset, nowMs);
    }

    /** Whether {@code brokerId} is an assigned replica of this partition other than this broker. */
    public boolean isFollowerReplica(int brokerId) {
        return isrState.isFollower(brokerId);
    }

    /** The follower's LEO as this leader last saw it ({@link #UNKNOWN_OFFSET} before its first fetch or when not a follower). */
    public long followerLogEndOffset(int replicaId) {
        return isrState.followerLogEndOffset(replicaId);
    }

    /** When the follower was last caught up to this leader's LEO (ms since the epoch; 0: never; -1: not a follower). */
    public long followerLastCaughtUpTimeMs(int replicaId) {
        return isrState.followerLastCaughtUpTimeMs(replicaId);
    }

    /** The union of the committed ISR and a pending proposal's: the replicas the HW waits for. */
    public List<Integer> maximalIsr() {
        return isrState.maximalIsr();
    }

    /** The pending ISR change, or null. */
    public PendingIsrChange pendingIsrChange() {
        return isrState.pending();
    }

    /**
     * Leader only: decides whether the ISR should change and, if so, records the proposal as pending
     * (the HW then waits for the union of both ISRs) and returns it for the caller to send with
     * AlterPartition. Out of the ISR: followers below the leader's LEO that were not caught up within
     * {@code lagTimeMaxMs} (Kafka's rule: a follower at the LEO is in sync however long ago it fetched); back in:
     * followers outside the ISR whose LEO reached the HW and this leadership's start offset. The
     * leader itself always stays.
     *
     * @return the proposal, or null when nothing changes, a change is already pending, this broker is
     *     not the leader, or there is no assignment (single node)
     */
    public synchronized PendingIsrChange prepareIsrChange(long nowMs, long lagTimeMaxMs) {
        if (!writes.isLeader()) {
            return null;
        }
        return isrState.propose(
                nowMs,
                lagTimeMaxMs,
                writes.leaderEpoch(),
                highWatermark.get(),
                log.logEndOffset(),
                writes.leaderEpochStartOffset(),
                this::highWatermark);
    }

    /**
     * The controller answered {@code change}: accepted ({@code awaitMetadata} true: it takes effect
     * when the metadata delivers it), refused as stale ({@code awaitMetadata} true: newer metadata is
     * on its way) or refused for good ({@code awaitMetadata} false: the proposal is dropped and the
     * next check may propose again). No-op when {@code change} is no longer the pending one.
     */
    public synchronized void isrChangeAnswered(PendingIsrChange change, boolean awaitMetadata) {
        if (!isrState.answered(change, awaitMetadata)) {
            return;
        }
        notifyHighWatermarkListeners();
        if (!awaitMetadata) {
            maybeIncrementHighWatermark();
        }
    }

    /**
     * The controller refused {@code change} as {@code INELIGIBLE_REPLICA}: dropped as {@link
     * #isrChangeAnswered} with {@code awaitMetadata} false, and what the followers it would have
     * added reached is forgotten (they are judged again from their next Fetch).
     */
    public synchronized void isrChangeRefusedIneligible(PendingIsrChange change) {
        if (!isrState.refusedIneligible(change)) {
            return;
        }
        notifyHighWatermarkListeners();
        maybeIncrementHighWatermark();
    }

    /**
     * Drops a pending change the controller answered long ago ({@value IsrState#PENDING_AWAITING_METADATA_MAX_MS}
     * ms) without the metadata ever moving the partition epoch, so ISR management cannot stall.
     */
    public synchronized void expireStalePendingIsrChange(long nowMs) {
        PendingIsrChange p = isrState.expireStale(nowMs);
        if (p != null) {
            LOG.warn(
                    "Pending ISR change of {} {} -> {} (partition epoch {}) never arrived in the metadata; dropped",
                    this,
                    p.oldIsr(),
                    p.newIsr(),
                    p.basePartitionEpoch());
            maybeIncrementHighWatermark();
        }
    }

    /**
     * Leader only: HW = min LEO over the maximal ISR if that is higher than the current HW. Runs after
     * every append and follower fetch: one volatile read per follower, no allocation, no lock.
     */
    private void maybeIncrementHighWatermark() {
        if (!writes.isLeader()) {
            return;
        }
        if (highWatermark.advanceTo(isrState.highWatermarkCandidate(log.logEndOffset()))) {
            metrics.highWatermarkAdvanced();
            notifyHighWatermarkListeners();
        }
    }

    private void notifyHighWatermarkListeners() {
        listeners.notifyHighWatermarkListeners();
    }

    /**
     * Last stable offset ({@code docs/spec/wire-protocol.md} §6.4): the minimum of the high
     * watermark and the first offset of the oldest open transaction ({@link
     * UnifiedLog#firstUnstableOffset}); the high watermark when none is open. Never decreases on a
     * leader: a transaction opens at the log end offset, at or above the high watermark. Any thread.
     */
    public long lastStableOffset() {
        return Math.min(highWatermark(), log.firstUnstableOffset());
    }

    /** First retained offset. */
    public long logStartOffset() {
        return log.logStartOffset();
    }

    /** Registers a listener told after every append (parked follower Fetches; idempotent). */
    public void addListener(AppendListener listener) {
        listeners.addListener(listener);
    }

    /** Removes an append listener (no-op when absent). */
    public void removeListener(AppendListener listener) {
        listeners.removeListener(listener);
    }

    /**
     * Registers a listener told when the HW advanced or the replica state (role, ISR,
     * min.insync.replicas) changed: parked consumer Fetches and acks=-1 Produces (idempotent).
     */
    public void addHighWatermarkListener(AppendListener listener) {
        listeners.addHighWatermarkListener(listener);
    }

    /** Removes a high-watermark listener (no-op when absent). */
    public void removeHighWatermarkListener(AppendListener listener) {
        listeners.removeHighWatermarkListener(listener);
    }

    /** Number of registered listeners of both kinds (tests and metrics). */
    public int listenerCount() {
        return listeners.count();
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
