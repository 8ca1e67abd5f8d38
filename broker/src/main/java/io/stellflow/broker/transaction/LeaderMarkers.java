package io.stellflow.broker.transaction;

import io.netty.util.Timer;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.append.IdempotentBatches;
import io.stellflow.broker.append.PendingProduce;
import io.stellflow.broker.append.TxnMarker;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The partition leader's side of a transaction marker: appends a COMMIT or ABORT marker to each
 * listed partition led here and reports, per partition, once the high watermark passed it (acks=-1,
 * as a Produce's {@code DelayedProduce}). With append agents the marker is queued on the partition's
 * agent behind the batches queued before it ({@link AppendService#submitMarker}), so it serialises
 * with the appends; without agents it is appended on the calling thread under the log's write lock.
 * Used for the partitions of the coordinator's own broker ({@link BrokerMarkerWriter}) and by the
 * WriteTxnMarkers handler for a remote coordinator.
 *
 * <p>Before a marker is queued the partition's registrations of the producer are forgotten ({@link
 * TxnRegistrations#forget}): the next transactional batch of that producer registers again.
 *
 * <p>Per-partition codes: {@code NONE}; {@code NOT_LEADER_OR_FOLLOWER}, {@code
 * UNKNOWN_TOPIC_OR_PARTITION}, {@code LEADER_NOT_AVAILABLE} (not led here); {@code
 * REQUEST_TIMED_OUT}, {@code NOT_ENOUGH_REPLICAS_AFTER_APPEND} (appended, not yet replicated);
 * {@code BROKER_NOT_AVAILABLE} (write failed, queue full or agent stuck); the log's refusals {@code
 * INVALID_PRODUCER_EPOCH}, {@code INVALID_TXN_STATE}, {@code TRANSACTION_COORDINATOR_FENCED}.
 *
 * <p>Thread-safety: any thread; the future completes on the thread that filled the last partition.
 */
public final class LeaderMarkers {
    /**
     * Told of each marker written and replicated in a partition led here (the group coordinator
     * applies or drops the transactional offsets of a {@code __consumer_offsets} partition).
     */
    @FunctionalInterface
    public interface MarkerListener {
        /**
         * Called on the thread that completes the write, before its future completes; must be short
         * (hand off to another thread).
         */
        void written(TransactionPartition partition, TxnMarker marker);

        MarkerListener NONE = (partition, marker) -> {};
    }

    private final PartitionRouter partitions;
    private final AppendService appends;
    private final Timer timer;
    private final TxnRegistrations registrations;
    private final MarkerListener listener;

    /**
     * @param partitions the partitions led here
     * @param appends the append agents, or null (appends on the calling thread)
     * @param timer expires the high-watermark waits
     * @param registrations the Produce path's registrations, forgotten per marker (null: none)
     */
    public LeaderMarkers(
            PartitionRouter partitions, AppendService appends, Timer timer, TxnRegistrations registrations) {
        this(partitions, appends, timer, registrations, MarkerListener.NONE);
    }

    /** As above; {@code listener} is told of each partition whose marker was written and replicated. */
    public LeaderMarkers(
            PartitionRouter partitions,
            AppendService appends,
            Timer timer,
            TxnRegistrations registrations,
            MarkerListener listener) {
        this.partitions = partitions;
        this.appends = appends;
        this.timer = timer;
        this.registrations = registrations;
        this.listener = listener;
    }

    /**
     * Appends {@code marker} to each of {@code targets} led here.
     *
     * @param timeoutMs how long to wait for each partition's high watermark to pass its marker
     * @return the error codes in {@code targets} order
     */
    public CompletableFuture<short[]> write(List<TransactionPartition> targets, TxnMarker marker, int timeoutMs) {
        CompletableFuture<short[]> done = new CompletableFuture<>();
        PendingProduce pending = new PendingProduce(
                slots -> {
                    short[] codes = new short[slots.length];
                    for (int i = 0; i < slots.length; i++) {
                        codes[i] = slots[i].errorCode();
                        if (codes[i] == Errors.NONE) {
                            listener.written(targets.get(i), marker);
                        }
                    }
                    done.complete(codes);
                },
                targets.size(),
                timeoutMs,
                timer);
        for (int slot = 0; slot < targets.size(); slot++) {
            TransactionPartition tp = targets.get(slot);
            Partition partition = partitions.leaderPartition(tp.topic(), tp.partition());
            if (partition == null) {
                pending.complete(slot, error(tp.partition(), partitions.errorFor(tp.topic(), tp.partition())));
                continue;
            }
            if (registrations != null) {
                registrations.forget(marker.producerId(), tp);
            }
            if (appends == null) {
                appendHere(pending, slot, partition, marker);
                continue;
            }
            int code = appends.submitMarker(partition, pending, slot, marker);
            if (code != AppendService.QUEUED) {
                pending.complete(
                        slot,
                        error(
                                tp.partition(),
                                code == AppendService.NOT_LEADER
                                        ? Errors.NOT_LEADER_OR_FOLLOWER
                                        : Errors.BROKER_NOT_AVAILABLE));
            }
        }
        return done;
    }

    private static void appendHere(PendingProduce pending, int slot, Partition partition, TxnMarker m) {
        long offset;
        try {
            offset = partition.appendTransactionMarker(
                    m.producerId(), m.producerEpoch(), m.commit(), m.coordinatorEpoch(), m.transactionSequence());
        } catch (Exception | Error e) {
            PartitionFailures.writeFailed(partition, "append", e, System.currentTimeMillis());
            pending.complete(slot, error(partition.partition(), Errors.BROKER_NOT_AVAILABLE));
            return;
        }
        if (offset < 0) {
            pending.complete(
                    slot,
                    error(
                            partition.partition(),
                            IdempotentBatches.error(offset, partition, System.currentTimeMillis())));
            return;
        }
        pending.appended(
                slot,
                partition,
                new PartitionResponse(partition.partition(), Errors.NONE, offset, partition.leaderEpoch(), -1L, -1L),
                offset + 1);
    }

    private static PartitionResponse error(int partition, short code) {
        return new PartitionResponse(partition, code, -1L, -1, -1L, -1L);
    }
}
