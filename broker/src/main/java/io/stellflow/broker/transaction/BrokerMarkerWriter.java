package io.stellflow.broker.transaction;

import io.stellflow.broker.append.TxnMarker;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.WriteTxnMarkersRequest;
import io.stellflow.protocol.message.WriteTxnMarkersResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's {@link TransactionMarkerWriter}: sends each partition's marker to its leader (from
 * the latest metadata image), through {@link LeaderMarkers} for the partitions led here and
 * WriteTxnMarkers (apiKey 30) over {@link BrokerRequests} for the others, and completes once every
 * partition's leader reported its marker below the high watermark (acks=all).
 *
 * <p>Per partition: {@code NONE} is done; a partition whose topic is gone from the metadata is done
 * (nothing left to mark); a leader change, a missing leader, an unreachable broker, a marker not yet
 * replicated ({@code NOT_LEADER_OR_FOLLOWER}, {@code LEADER_NOT_AVAILABLE}, {@code
 * UNKNOWN_TOPIC_OR_PARTITION}, {@code REQUEST_TIMED_OUT}, {@code NOT_ENOUGH_REPLICAS*}, {@code
 * BROKER_NOT_AVAILABLE}) is sent again after {@value #RETRY_BACKOFF_MS} ms with the leaders of the
 * newest image, until {@value #DEADLINE_MS} ms have passed.
 *
 * <p>A refusal of the log means the partition's producer has already moved past this transaction,
 * and the partition counts as done with one WARN naming it and the code ({@link #closedByNewer}):
 * {@code INVALID_PRODUCER_EPOCH} (the partition saw a newer epoch of the producer, which the
 * coordinator hands out only after this transaction ended, or wrote under it the abort that closed
 * it), {@code INVALID_TXN_STATE} (a later transaction of the producer is open there, which the log
 * lets begin only after this one was closed there), {@code TRANSACTION_COORDINATOR_FENCED} (a newer
 * coordinator wrote a marker for the producer there; it completes the transaction itself, and this
 * deposed coordinator's completion fails at its own log). Each refusal is permanent, since the
 * partition's epoch, transaction sequence and coordinator epoch only grow: sending the marker again
 * could never succeed, and the transaction would stay in PREPARE, swept forever. Any other code, or
 * the deadline, fails the write, which the coordinator's sweeper sends again later. A marker
 * appended twice is harmless (the second closes nothing).
 *
 * <p>Thread-safety: any thread; never blocks; retries run on {@code retries}.
 */
public final class BrokerMarkerWriter implements TransactionMarkerWriter {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerMarkerWriter.class);

    /** Pause before a partition is sent its marker again (a leader election takes about this long). */
    static final long RETRY_BACKOFF_MS = 100;

    /** Retries stop here, below the coordinator's own {@link TransactionCoordinator#MARKER_WRITE_TIMEOUT_MS}. */
    static final long DEADLINE_MS = 25_000;

    /** Longest wait of one attempt for a leader's high watermark. */
    static final int ATTEMPT_TIMEOUT_MS = 5_000;

    /** Sends one leader its partitions' markers; the codes in {@code targets} order. */
    @FunctionalInterface
    interface Leaders {
        CompletableFuture<short[]> write(
                int leader, List<TransactionPartition> targets, TxnMarker marker, int timeoutMs);
    }

    private final Supplier<MetadataImage> image;
    private final Leaders leaders;
    private final ScheduledExecutorService retries;
    private final LongSupplier nowMs;

    /**
     * @param brokerId this broker's id
     * @param image the latest metadata image (the partitions' leaders)
     * @param local the marker appends of the partitions led here
     * @param remote the client to the other leaders
     * @param retries where retries are scheduled (a single thread is enough)
     * @param nowMs the clock of the deadline
     */
    public BrokerMarkerWriter(
            int brokerId,
            Supplier<MetadataImage> image,
            LeaderMarkers local,
            Supplier<BrokerRequests> remote,
            ScheduledExecutorService retries,
            LongSupplier nowMs) {
        this(
                image,
                (leader, targets, marker, timeoutMs) -> leader == brokerId
                        ? local.write(targets, marker, timeoutMs)
                        : sendRemote(remote.get(), leader, targets, marker, timeoutMs),
                retries,
                nowMs);
    }

    /** With {@code leaders} doing the sends (tests). */
    BrokerMarkerWriter(
            Supplier<MetadataImage> image, Leaders leaders, ScheduledExecutorService retries, LongSupplier nowMs) {
        this.image = image;
        this.leaders = leaders;
        this.retries = retries;
        this.nowMs = nowMs;
    }

    @Override
    public CompletableFuture<Void> writeMarkers(TransactionMarkerRequest request) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        attempt(request, request.partitions(), nowMs.getAsLong() + DEADLINE_MS, done);
        return done;
    }

    private void attempt(
            TransactionMarkerRequest request,
            List<TransactionPartition> pending,
            long deadlineMs,
            CompletableFuture<Void> done) {
        MetadataImage img = image.get();
        Map<Integer, List<TransactionPartition>> byLeader = new HashMap<>();
        List<TransactionPartition> retry = new ArrayList<>();
        for (TransactionPartition tp : pending) {
            TopicImage topic = img.topic(tp.topic());
            if (topic == null) {
                continue; // deleted: no partition left to mark
            }
            PartitionImage p = topic.partition(tp.partition());
            int leader = p == null ? PartitionImage.NO_LEADER : p.leader();
            if (leader == PartitionImage.NO_LEADER) {
                retry.add(tp);
            } else {
                byLeader.computeIfAbsent(leader, k -> new ArrayList<>()).add(tp);
            }
        }
        long left = deadlineMs - nowMs.getAsLong();
        int timeoutMs = (int) Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, left));
        TxnMarker marker = new TxnMarker(
                request.producerId(),
                request.producerEpoch(),
                request.commit(),
                request.coordinatorEpoch(),
                request.transactionSequence());
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        List<String> closed = new ArrayList<>();
        for (Map.Entry<Integer, List<TransactionPartition>> e : byLeader.entrySet()) {
            List<TransactionPartition> targets = e.getValue();
            CompletableFuture<short[]> codes;
            try {
                codes = leaders.write(e.getKey(), targets, marker, timeoutMs);
            } catch (RuntimeException x) {
                codes = CompletableFuture.failedFuture(x);
            }
            sends.add(codes.handle((c, x) -> {
                synchronized (retry) {
                    for (int i = 0; i < targets.size(); i++) {
                        short code = x != null ? Errors.BROKER_NOT_AVAILABLE : c[i];
                        if (code == Errors.NONE) {
                            continue;
                        }
                        if (retriable(code)) {
                            retry.add(targets.get(i));
                        } else if (closedByNewer(code)) {
                            closed.add(targets.get(i) + ": " + Errors.name(code));
                        } else {
                            refused.add(targets.get(i) + ": " + Errors.name(code));
                        }
                    }
                }
                return null;
            }));
        }
        CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).whenComplete((v, x) -> {
            synchronized (retry) {
                if (!closed.isEmpty()) {
                    LOG.warn(
                            "Markers of producer {} epoch {} (transactional id {}, sequence {}) refused as already"
                                    + " closed by a newer epoch, transaction or coordinator; counted as done: {}",
                            request.producerId(),
                            request.producerEpoch(),
                            request.transactionalId(),
                            request.transactionSequence(),
                            closed);
                }
                if (!refused.isEmpty()) {
                    done.completeExceptionally(new IllegalStateException(
                            "markers of producer " + request.producerId() + " refused: " + refused));
                } else if (retry.isEmpty()) {
                    done.complete(null);
                } else if (nowMs.getAsLong() + RETRY_BACKOFF_MS >= deadlineMs) {
                    done.completeExceptionally(new IllegalStateException("markers of producer " + request.producerId()
                            + " not written within " + DEADLINE_MS + " ms: " + retry));
                } else {
                    List<TransactionPartition> again = List.copyOf(retry);
                    try {
                        retries.schedule(
                                () -> attempt(request, again, deadlineMs, done),
                                RETRY_BACKOFF_MS,
                                TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException e) {
                        done.completeExceptionally(e); // closing
                    }
                }
            }
        });
    }

    private static CompletableFuture<short[]> sendRemote(
            BrokerRequests remote, int leader, List<TransactionPartition> targets, TxnMarker m, int timeoutMs) {
        List<WriteTxnMarkersRequest.TopicPartition> tps = new ArrayList<>(targets.size());
        for (TransactionPartition tp : targets) {
            tps.add(new WriteTxnMarkersRequest.TopicPartition(tp.topic(), tp.partition()));
        }
        WriteTxnMarkersRequest request = new WriteTxnMarkersRequest(
                m.producerId(),
                m.producerEpoch(),
                m.commit(),
                m.coordinatorEpoch(),
                m.transactionSequence(),
                timeoutMs,
                tps);
        return remote.send(leader, ApiKeys.WRITE_TXN_MARKERS, (short) 0, request, WriteTxnMarkersResponse::read)
                .thenApply(r -> {
                    short[] codes = new short[targets.size()];
                    for (int i = 0; i < codes.length; i++) {
                        codes[i] = i < r.partitions().size()
                                ? r.partitions().get(i).errorCode()
                                : Errors.BROKER_NOT_AVAILABLE;
                    }
                    return codes;
                });
    }

    /**
     * Whether a partition's code is a refusal of the log meaning its producer already moved past
     * the transaction (a newer epoch, transaction or coordinator): the partition needs no marker.
     */
    static boolean closedByNewer(short code) {
        return code == Errors.INVALID_PRODUCER_EPOCH
                || code == Errors.INVALID_TXN_STATE
                || code == Errors.TRANSACTION_COORDINATOR_FENCED;
    }

    /** Whether a partition's code means "send it again later" rather than a refusal. */
    static boolean retriable(short code) {
        return switch (code) {
            case Errors.NOT_LEADER_OR_FOLLOWER,
                    Errors.LEADER_NOT_AVAILABLE,
                    Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    Errors.REQUEST_TIMED_OUT,
                    Errors.NOT_ENOUGH_REPLICAS,
                    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                    Errors.BROKER_NOT_AVAILABLE -> true;
            default -> false;
        };
    }
}
