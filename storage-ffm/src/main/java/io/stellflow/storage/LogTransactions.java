package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.util.List;

/**
 * The transactional side of one log's producer state ({@code docs/exactly-once.md}, "Markers, last
 * stable offset, aborted index"): control batches ({@link ControlRecordLayout}) applied to the
 * {@link ProducerStateManager} on leaders, followers and replay alike, the BEGIN marker a leader
 * writes before a producer's first transactional batch in the partition, the COMMIT/ABORT markers
 * of the coordinator, the {@link AbortedTxnIndex}, and the first unstable offset published to
 * lock-free readers.
 *
 * <p>Why BEGIN markers: the Go SDK never sets the isTransactional bit and the broker must not set
 * it (CRC, {@code docs/spec/wire-protocol.md} §6.13), so a transactional batch cannot be told from
 * its bytes. The marker in front of the first one makes every replica and every replay agree: from
 * a BEGIN to the producer's next COMMIT or ABORT, the producer's batches belong to the transaction.
 *
 * <p>Thread-safety: writes under the owning log's write lock; {@link #firstUnstableOffset} and
 * {@link #overlapping} from any thread.
 */
final class LogTransactions {
    private final UnifiedLog log;
    private final LogProducerState producers;
    private final ProducerStateManager state;
    final AbortedTxnIndex aborted;

    /** {@link ProducerStateManager#firstUnstableOffset} as of the last change, for readers. */
    private volatile long firstUnstableOffset = ProducerStateManager.NO_OPEN_TRANSACTION;

    LogTransactions(UnifiedLog log, LogProducerState producers) {
        this.log = log;
        this.producers = producers;
        this.state = producers.state;
        this.aborted = new AbortedTxnIndex(log.dir());
    }

    /**
     * Applies a stored control batch (whole, at {@code pos} of {@code b}) whose base offset is
     * {@code base}: BEGIN opens its producer's transaction, COMMIT/ABORT closes it; an ABORT that
     * closed one is written to the aborted index of the segment holding the marker. A control
     * batch that is not one of ours ({@link ControlRecordLayout#invalidReason}) changes nothing.
     */
    void applyControl(ByteBuf b, int pos, long base, long timestampMs) throws IOException {
        if (ControlRecordLayout.invalidReason(b, pos, b.writerIndex() - pos) != null) {
            return;
        }
        long pid = RecordBatchLayout.producerId(b, pos);
        short epoch = RecordBatchLayout.producerEpoch(b, pos);
        short type = ControlRecordLayout.type(b, pos);
        if (type == ControlRecordLayout.BEGIN) {
            state.beginTransaction(pid, epoch, base, ControlRecordLayout.transactionSequence(b, pos), timestampMs);
        } else {
            long first = state.endTransaction(pid, epoch, ControlRecordLayout.coordinatorEpoch(b, pos), timestampMs);
            if (type == ControlRecordLayout.ABORT && first >= 0) {
                long stable = Math.min(state.firstUnstableOffset(), base + 1);
                aborted.append(segmentBaseOf(base), new AbortedTxn(pid, first, base, stable), log.logStartOffset());
            }
        }
        publish();
    }

    /**
     * Leader, before appending a validated transactional batch of producer {@code pid} that passed
     * its sequence check: appends a BEGIN marker when the producer has no open transaction here.
     *
     * @return 0, or {@link UnifiedLog#INVALID_TXN_STATE} when the producer's open transaction has
     *     another transactionSequence (a late batch of an earlier transaction; nothing written)
     */
    long beginIfNeeded(ByteBuf batch, int pos, int leaderEpoch, long transactionSequence, long nowMs)
            throws IOException {
        long pid = RecordBatchLayout.producerId(batch, pos);
        if (state.openTransactionFirstOffset(pid) >= 0) {
            return state.openTransactionSequence(pid) == transactionSequence ? 0 : UnifiedLog.INVALID_TXN_STATE;
        }
        appendControl(
                ControlRecordLayout.BEGIN,
                pid,
                RecordBatchLayout.producerEpoch(batch, pos),
                -1,
                transactionSequence,
                leaderEpoch,
                nowMs);
        return 0;
    }

    /**
     * The coordinator's COMMIT or ABORT marker ({@link UnifiedLog#appendTransactionMarker}): an
     * epoch older than the producer's is refused, and so is a transactionSequence below the open
     * transaction's (a late marker of an earlier transaction must not close the next one), and a
     * coordinatorEpoch below one of the producer's earlier markers (a deposed coordinator); a
     * marker for a producer without an open transaction is appended and changes nothing (a
     * retried marker is harmless, as in Kafka).
     *
     * @return the marker's offset, or {@link UnifiedLog#INVALID_PRODUCER_EPOCH}, {@link
     *     UnifiedLog#INVALID_TXN_STATE} or {@link UnifiedLog#TRANSACTION_COORDINATOR_FENCED}
     *     (nothing written)
     * @throws IOException as {@link UnifiedLog#appendAsLeader} (the log then refuses writes)
     * @throws IllegalStateException the log is closed
     */
    long appendMarker(
            long pid,
            short epoch,
            boolean commit,
            int coordinatorEpoch,
            long transactionSequence,
            int leaderEpoch,
            long nowMs)
            throws IOException {
        if (pid < 0) {
            throw new IllegalArgumentException("marker for producer id " + pid + " in " + log.dir());
        }
        log.writeLock().lock();
        try {
            long offset = checkedMarker(pid, epoch, commit, coordinatorEpoch, transactionSequence, leaderEpoch, nowMs);
            producers.maybeSnapshotAfterRoll(log.activeSegmentBaseOffset(), log.logEndOffset());
            return offset;
        } finally {
            log.writeLock().unlock();
        }
    }

    private long checkedMarker(
            long pid,
            short epoch,
            boolean commit,
            int coordinatorEpoch,
            long transactionSequence,
            int leaderEpoch,
            long nowMs)
            throws IOException {
        short known = state.epoch(pid);
        if (known >= 0 && epoch < known) {
            return UnifiedLog.INVALID_PRODUCER_EPOCH;
        }
        if (coordinatorEpoch < state.coordinatorEpoch(pid)) {
            return UnifiedLog.TRANSACTION_COORDINATOR_FENCED;
        }
        long openSequence = state.openTransactionSequence(pid);
        if (openSequence >= 0 && transactionSequence < openSequence) {
            return UnifiedLog.INVALID_TXN_STATE;
        }
        return appendControl(
                commit ? ControlRecordLayout.COMMIT : ControlRecordLayout.ABORT,
                pid,
                epoch,
                coordinatorEpoch,
                transactionSequence,
                leaderEpoch,
                nowMs);
    }

    private long appendControl(
            short type, long pid, short epoch, int coordinatorEpoch, long sequence, int leaderEpoch, long nowMs)
            throws IOException {
        ByteBuf marker = ControlRecordLayout.build(
                PooledByteBufAllocator.DEFAULT, type, pid, epoch, coordinatorEpoch, sequence, nowMs);
        try {
            long base = log.appendControl(marker, leaderEpoch);
            applyControl(marker, 0, base, nowMs);
            return base;
        } finally {
            marker.release();
        }
    }

    /** Publishes the state's first unstable offset to readers (after a load or a change). */
    void publish() {
        firstUnstableOffset = state.firstUnstableOffset();
    }

    /** The smallest first offset of an open transaction, or {@link ProducerStateManager#NO_OPEN_TRANSACTION}. */
    long firstUnstableOffset() {
        return firstUnstableOffset;
    }

    /** {@link AbortedTxnIndex#overlapping}. Any thread. */
    List<AbortedTxn> overlapping(long fromOffset, long upperExclusive) {
        return aborted.overlapping(fromOffset, upperExclusive);
    }

    /** Base offsets of the log's segments, oldest first. */
    long[] segmentBases() {
        LogSegment[] segs = log.segments();
        long[] bases = new long[segs.length];
        for (int i = 0; i < segs.length; i++) {
            bases[i] = segs[i].baseOffset;
        }
        return bases;
    }

    /** Base offset of the segment holding {@code offset} (the last one starting at or below it). */
    private long segmentBaseOf(long offset) {
        LogSegment[] segs = log.segments();
        for (int i = segs.length - 1; i > 0; i--) {
            if (segs[i].baseOffset <= offset) {
                return segs[i].baseOffset;
            }
        }
        return segs[0].baseOffset;
    }
}
