package io.stellflow.broker.replication;

import io.grpc.StatusRuntimeException;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PendingIsrChange;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.server.common.concurrent.ExecutorClose;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ISR management of the partitions this broker leads (DESIGN §5): every {@code
 * replica.lag.time.max.ms / 2} it looks at each led partition ({@link Partition#prepareIsrChange}):
 * followers below the leader's LEO and not caught up within {@code replica.lag.time.max.ms} leave
 * the ISR, followers outside it whose LEO reached the high watermark (and this leadership's start
 * offset) return; a follower Fetch that reaches the HW asks for a look at once ({@link
 * #isrCheckNeeded}). Each change is proposed to the controller with AlterPartition (broker epoch,
 * leader epoch, partition epoch) and takes effect only when the committed metadata delivers it to
 * the {@code ReplicaManager}; meanwhile the HW waits for the union of both ISRs.
 *
 * <p>Controller answers: accepted, or {@code INVALID_UPDATE_VERSION} / {@code FENCED_LEADER_EPOCH}
 * (this broker's view is stale): wait for the next metadata, which ends the pending change;
 * {@code REQUEST_TIMED_OUT}, no active controller or a transport failure: the same proposal is sent
 * again at the next check (the partition epoch makes a repeat harmless); any other refusal drops the
 * proposal and the next check decides afresh.
 *
 * <p>Threads: one daemon thread ({@code sf-isr}) runs the checks and the blocking AlterPartition
 * calls, one at a time; {@link #isrCheckNeeded} only queues.
 *
 * <p>Thread-safety: {@link #isrCheckNeeded} from any thread; {@link #start} once, {@link #close}
 * idempotent.
 */
public final class IsrManager implements Partition.IsrChangeTrigger, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IsrManager.class);

    private final int brokerId;
    private final Function<AlterPartitionRequest, AlterPartitionResponse> alterPartition;
    private final LongSupplier brokerEpoch;
    private final Consumer<Consumer<Partition>> ledPartitions;
    private final long lagTimeMaxMs;
    private final LongSupplier clockMs;
    private final ScheduledExecutorService executor;
    private final Set<Partition> queued = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param brokerId this broker's id
     * @param alterPartition sends one AlterPartition to the active controller ({@code
     *     ControllerClient::alterPartition}); may block; may throw {@link
     *     ControllerUnavailableException} or {@link StatusRuntimeException}
     * @param brokerEpoch this broker's current broker epoch (-1 before registration: no proposals)
     * @param partitions visits every hosted partition (the leaders are checked)
     * @param lagTimeMaxMs {@code replica.lag.time.max.ms}
     * @param clockMs wall clock, ms since the epoch (tests drive it)
     */
    public IsrManager(
            int brokerId,
            Function<AlterPartitionRequest, AlterPartitionResponse> alterPartition,
            LongSupplier brokerEpoch,
            Consumer<Consumer<Partition>> partitions,
            long lagTimeMaxMs,
            LongSupplier clockMs) {
        if (lagTimeMaxMs < 1) {
            throw new IllegalArgumentException("replica.lag.time.max.ms must be >= 1: " + lagTimeMaxMs);
        }
        this.brokerId = brokerId;
        this.alterPartition = alterPartition;
        this.brokerEpoch = brokerEpoch;
        this.ledPartitions = partitions;
        this.lagTimeMaxMs = lagTimeMaxMs;
        this.clockMs = clockMs;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sf-isr");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the periodic check, every {@code max(1, replica.lag.time.max.ms / 2)} ms. */
    public void start() {
        long periodMs = Math.max(1, lagTimeMaxMs / 2);
        executor.scheduleWithFixedDelay(this::checkAllQuietly, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void isrCheckNeeded(Partition partition) {
        if (closed || !queued.add(partition)) {
            return;
        }
        try {
            executor.execute(() -> {
                queued.remove(partition);
                check(partition, clockMs.getAsLong());
            });
        } catch (RejectedExecutionException e) {
            queued.remove(partition); // closing
        }
    }

    private void checkAllQuietly() {
        try {
            checkAll();
        } catch (RuntimeException e) {
            LOG.error("ISR check failed", e);
        }
    }

    /** One pass over every led partition on the calling thread (the ISR thread; tests call it directly). */
    public void checkAll() {
        long nowMs = clockMs.getAsLong();
        ledPartitions.accept(p -> {
            if (p.isLeader() && !closed) {
                check(p, nowMs);
            }
        });
    }

    private void check(Partition p, long nowMs) {
        if (!p.isLeader()) {
            return;
        }
        p.expireStalePendingIsrChange(nowMs);
        PendingIsrChange pending = p.pendingIsrChange();
        if (pending != null) {
            if (!pending.awaitingMetadata()) {
                send(p, pending); // an earlier attempt got no definite answer
            }
            return;
        }
        PendingIsrChange change = p.prepareIsrChange(nowMs, lagTimeMaxMs);
        if (change != null) {
            LOG.info(
                    "ISR_CHANGE_PROPOSED partition={} oldIsr={} newIsr={} leaderEpoch={} partitionEpoch={} highWatermark={}",
                    p,
                    change.oldIsr(),
                    change.newIsr(),
                    change.leaderEpoch(),
                    change.basePartitionEpoch(),
                    p.highWatermark());
            send(p, change);
        }
    }

    private void send(Partition p, PendingIsrChange change) {
        long epoch = brokerEpoch.getAsLong();
        if (epoch < 0 || closed) {
            return; // not registered yet: the next check sends it
        }
        AlterPartitionRequest request = AlterPartitionRequest.newBuilder()
                .setBrokerId(brokerId)
                .setBrokerEpoch(epoch)
                .setTopicId(MetadataRecords.uuid(change.topicId()))
                .setPartition(p.partition())
                .setLeaderEpoch(change.leaderEpoch())
                .setPartitionEpoch(change.basePartitionEpoch())
                .addAllNewIsr(change.newIsr())
                .addAllNewIsrBrokerEpochs(change.newIsrBrokerEpochs())
                .build();
        AlterPartitionResponse response;
        try {
            response = alterPartition.apply(request);
        } catch (ControllerUnavailableException | StatusRuntimeException e) {
            LOG.warn(
                    "AlterPartition of {} ({} -> {}) not answered: {}; retried",
                    p,
                    change.oldIsr(),
                    change.newIsr(),
                    e.toString());
            return;
        }
        ErrorCode error = response.getError();
        switch (error) {
            case NONE -> p.isrChangeAnswered(change, true);
            case INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH -> {
                LOG.info(
                        "AlterPartition of {} refused ({}: {}); waiting for the next metadata",
                        p,
                        error,
                        response.getErrorMessage());
                p.isrChangeAnswered(change, true);
            }
            case REQUEST_TIMED_OUT, NOT_CONTROLLER ->
                LOG.warn("AlterPartition of {} answered {}; retried at the next check", p, error);
            default -> {
                LOG.warn(
                        "AlterPartition of {} ({} -> {}) refused: {} {}; dropped",
                        p,
                        change.oldIsr(),
                        change.newIsr(),
                        error,
                        response.getErrorMessage());
                if (error == ErrorCode.INELIGIBLE_REPLICA) {
                    p.isrChangeRefusedIneligible(change);
                } else {
                    p.isrChangeAnswered(change, false);
                }
            }
        }
    }

    /** Stops the ISR thread (a blocked AlterPartition is interrupted). Idempotent. */
    @Override
    public void close() {
        closed = true;
        ExecutorClose.shutdownNowAndAwait(executor, 5_000);
    }
}
