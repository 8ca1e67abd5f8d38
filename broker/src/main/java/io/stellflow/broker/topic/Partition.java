package io.stellflow.broker.topic;

import io.netty.buffer.ByteBuf;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One topic partition hosted by this broker: its log, its role (leader or follower, as the
 * controller's metadata says; always leader on a single node without a controller), its leader
 * epoch and the listeners waiting for appends (parked Fetch requests).
 *
 * <p>Without replication (issue #6) the high watermark equals the log end offset and, with no
 * transactions, the last stable offset equals the high watermark.
 *
 * <p>Thread-safety: all methods may be called from any thread. Appends are serialised by the
 * {@link UnifiedLog}; listeners are notified after each successful append on the appending thread.
 */
public final class Partition {
    private static final Logger LOG = LoggerFactory.getLogger(Partition.class);

    private final String topic;
    private final int partition;
    private final UnifiedLog log;
    private volatile int leaderEpoch;
    private volatile int leaderId;
    private volatile boolean leader = true;
    /** Follower only: the leader's HW capped at this log's end (replication seam, issue #6). */
    private volatile long followerHighWatermark;

    private final Set<AppendListener> listeners = ConcurrentHashMap.newKeySet();

    /**
     * A partition this broker leads at {@code leaderEpoch} until told otherwise.
     *
     * @param log the partition's open log; closed by whoever owns the partition
     */
    public Partition(String topic, int partition, int leaderEpoch, UnifiedLog log) {
        this.topic = topic;
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.log = log;
        this.leaderId = -1;
        this.followerHighWatermark = log.logStartOffset();
    }

    /** Makes this broker the leader at {@code newLeaderEpoch} (stamped into appends from now on). */
    public void becomeLeader(int newLeaderEpoch) {
        leaderEpoch = newLeaderEpoch;
        leaderId = -1;
        leader = true;
    }

    /**
     * Makes this broker a follower of {@code newLeaderId} ({@code -1}: no leader) at
     * {@code newLeaderEpoch}: clients get {@code NOT_LEADER_OR_FOLLOWER} for Produce and Fetch.
     */
    public void becomeFollower(int newLeaderId, int newLeaderEpoch) {
        leader = false;
        leaderEpoch = newLeaderEpoch;
        leaderId = newLeaderId;
    }

    /** Whether this broker currently leads the partition (serves Produce, Fetch and ListOffsets). */
    public boolean isLeader() {
        return leader;
    }

    /** The leader this follower follows, or -1 (leader: -1, it is this broker). */
    public int leaderId() {
        return leaderId;
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
        return leaderEpoch;
    }

    /** The underlying log (reads). */
    public UnifiedLog log() {
        return log;
    }

    /**
     * Appends a validated RecordBatchSet as leader and wakes the listeners.
     *
     * @return the offset of the first appended record
     * @throws IOException when the write failed; nothing was acknowledged
     */
    public long appendAsLeader(ByteBuf validatedRecords) throws IOException {
        long baseOffset = log.appendAsLeader(validatedRecords, leaderEpoch);
        for (AppendListener listener : listeners) {
            try {
                listener.onAppend();
            } catch (RuntimeException e) {
                LOG.error("Append listener failed on {}-{}", topic, partition, e);
            }
        }
        return baseOffset;
    }

    /** Log end offset: the offset the next record gets. */
    public long logEndOffset() {
        return log.logEndOffset();
    }

    /**
     * High watermark; equals the log end offset on a single node. This is the replication hook:
     * Fetch answers, retention and compaction ({@link TopicRegistry}'s log manager) never go at or
     * above it, so once followers exist it must become the ISR's minimum replicated offset.
     */
    public long highWatermark() {
        return leader ? log.logEndOffset() : Math.min(followerHighWatermark, log.logEndOffset());
    }

    /**
     * Follower only: HW = min({@code leaderHighWatermark}, log end offset); called by the replica
     * fetcher after each fetch response is applied. Any thread (the partition's fetcher).
     */
    public void updateFollowerHighWatermark(long leaderHighWatermark) {
        followerHighWatermark = Math.min(leaderHighWatermark, log.logEndOffset());
    }

    /** Follower only: HW = min(HW, log end offset) after the fetcher truncated the log. */
    public void onFollowerTruncated() {
        followerHighWatermark = Math.min(followerHighWatermark, log.logEndOffset());
    }

    /** Last stable offset; equals the high watermark without transactions. */
    public long lastStableOffset() {
        return highWatermark();
    }

    /** First retained offset. */
    public long logStartOffset() {
        return log.logStartOffset();
    }

    /** Registers a listener for appends (idempotent). */
    public void addListener(AppendListener listener) {
        listeners.add(listener);
    }

    /** Removes a listener (no-op when absent). */
    public void removeListener(AppendListener listener) {
        listeners.remove(listener);
    }

    /** Number of registered listeners (tests and metrics). */
    public int listenerCount() {
        return listeners.size();
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
