package io.stellflow.broker.append;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.stellflow.broker.topic.AppendListener;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One partition of an acks=-1 Produce, appended on the leader and waiting for the high watermark to
 * pass it ({@code docs/spec/wire-protocol.md} §6.3 step 8). It holds no thread: it is a
 * high-watermark listener of the partition ({@link Partition#addHighWatermarkListener}: told when
 * the HW advances or the ISR, role or min.insync.replicas change) with a timeout in the broker's
 * timer wheel. It ends, exactly once, with:
 *
 * <ul>
 *   <li>the append's response (errorCode 0) once HW &gt;= {@code requiredOffset} (every ISR member has
 *       the records);
 *   <li>{@code NOT_LEADER_OR_FOLLOWER} when this broker stopped leading the partition or its leader
 *       epoch changed (the records may be truncated);
 *   <li>{@code NOT_ENOUGH_REPLICAS_AFTER_APPEND} when the committed ISR fell below {@code
 *       min.insync.replicas} while waiting (checked before the HW: a shrunk ISR lets the HW pass
 *       records that fewer replicas than required hold);
 *   <li>{@code REQUEST_TIMED_OUT} after the request's timeoutMs.
 * </ul>
 *
 * Error codes from 32 up become 7 in v0 responses ({@link PendingProduce}). The records stay in the
 * log in every case; a client retry may duplicate them.
 *
 * <p>Thread-safety: checks run on whichever thread moved the partition (an append agent, a request
 * thread serving a follower Fetch, the metadata thread) or the timer thread; {@code done} lets exactly
 * one of them answer.
 */
final class DelayedProduce implements AppendListener {
    private final PendingProduce pending;
    private final int slot;
    private final Partition partition;
    private final PartitionResponse response;
    private final long requiredOffset;
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Timeout timeout;

    private DelayedProduce(
            PendingProduce pending, int slot, Partition partition, PartitionResponse response, long requiredOffset) {
        this.pending = pending;
        this.slot = slot;
        this.partition = partition;
        this.response = response;
        this.requiredOffset = requiredOffset;
    }

    /**
     * Parks slot {@code slot} until HW &gt;= {@code requiredOffset} or {@code timeoutMs} passes.
     *
     * @param response the append's successful response (baseOffset, leader epoch of the append)
     * @param requiredOffset the offset after the appended records
     */
    static DelayedProduce park(
            PendingProduce pending,
            int slot,
            Partition partition,
            PartitionResponse response,
            long requiredOffset,
            int timeoutMs,
            Timer timer) {
        DelayedProduce d = new DelayedProduce(pending, slot, partition, response, requiredOffset);
        partition.addHighWatermarkListener(d);
        try {
            d.timeout = timer.newTimeout(t -> d.expire(), Math.max(1, timeoutMs), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException | IllegalStateException e) {
            d.expire(); // the timer is stopped: shutting down
            return d;
        }
        d.onAppend(); // the HW may have moved before the listener was registered
        return d;
    }

    /** Whether the slot was answered. */
    boolean isDone() {
        return done.get();
    }

    @Override
    public void onAppend() {
        if (done.get()) {
            return;
        }
        if (!partition.isLeader() || partition.leaderEpoch() != response.currentLeaderEpoch()) {
            finish(Errors.NOT_LEADER_OR_FOLLOWER);
        } else if (partition.inSyncReplicaCount() < partition.minInsyncReplicas()) {
            finish(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        } else if (partition.highWatermark() >= requiredOffset) {
            finish(Errors.NONE);
        }
    }

    private void expire() {
        onAppend();
        finish(Errors.REQUEST_TIMED_OUT);
    }

    private void finish(short code) {
        if (!done.compareAndSet(false, true)) {
            return;
        }
        partition.removeHighWatermarkListener(this);
        Timeout t = timeout;
        if (t != null) {
            t.cancel();
        }
        pending.complete(
                slot,
                code == Errors.NONE
                        ? response
                        : new PartitionResponse(
                                response.partition(),
                                code,
                                -1L,
                                partition.leaderEpoch(),
                                response.logAppendTimeMs(),
                                partition.logStartOffset()));
    }
}
