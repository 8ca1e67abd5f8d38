package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A transactional producer's offset commit (TxnOffsetCommit v0, apiKey 31, {@code
 * docs/protocol-additions.md}; consume-transform-produce, {@code docs/exactly-once.md}
 * "Transactional offset commits"): FindCoordinator for the group, then TxnOffsetCommit to that
 * coordinator, which registers its {@code __consumer_offsets} partition in the transaction itself (no
 * AddOffsetsToTxn call). The offsets become the group's committed offsets when the transaction
 * commits, and are dropped when it aborts. Meant to back {@link
 * ProducerTransactions.TransactionalOffsetSender}, the seam of {@code
 * StellflowProducer.sendOffsetsToTransaction}: {@code (id, pid, epoch, seq, group, offsets) ->
 * commit(id, pid, epoch, seq, group, null, -1, offsets, maxBlockMs)}.
 *
 * <p>Retries until {@code timeoutMs}: a coordinator error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE
 * while it loads or its transaction coordinator cannot be reached, BROKER_NOT_AVAILABLE, a lost
 * connection or timeout) looks the coordinator up again; another retriable code asks the same one
 * again; both after {@code retry.backoff.ms} doubled per attempt (at most {@code
 * retry.backoff.max.ms}). Only the partitions not yet committed are sent again. Any other code fails
 * the call at once: INVALID_PRODUCER_EPOCH or PRODUCER_FENCED (a newer instance took over: fatal for
 * the producer), INVALID_TXN_STATE (no transaction open, or another one), the member checks
 * (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH), INVALID_REQUEST,
 * UNKNOWN_TOPIC_OR_PARTITION.
 *
 * <p>Blocking, as Kafka's {@code sendOffsetsToTransaction}; call it from the application's thread,
 * never from the client's I/O thread. Thread-safety: thread-safe (no state beyond the wire).
 */
final class TxnOffsetCommitCall {
    /** The two requests the call makes; futures fail with a {@link StellflowException}. */
    interface Wire {
        CompletableFuture<HostPort> findCoordinator(String groupId);

        CompletableFuture<OffsetCommitResponse> txnOffsetCommit(HostPort coordinator, TxnOffsetCommitRequest request);
    }

    private final Wire wire;
    private final ClientConfig config;
    private final LongSupplier nowMs;
    private final LongConsumer sleepMs;

    /** On the wire of {@code network}; FindCoordinator goes to a broker of {@code metadata}. */
    TxnOffsetCommitCall(NetworkClient network, MetadataCache metadata) {
        this(
                new Wire() {
                    @Override
                    public CompletableFuture<HostPort> findCoordinator(String groupId) {
                        return NetworkGroupTransport.findCoordinator(network, metadata, groupId);
                    }

                    @Override
                    public CompletableFuture<OffsetCommitResponse> txnOffsetCommit(
                            HostPort coordinator, TxnOffsetCommitRequest request) {
                        return network.send(
                                coordinator, ApiKeys.TXN_OFFSET_COMMIT, request::write, OffsetCommitResponse::read);
                    }
                },
                network.config(),
                System::currentTimeMillis,
                TxnOffsetCommitCall::sleep);
    }

    /** With a scripted wire and clock (tests). */
    TxnOffsetCommitCall(Wire wire, ClientConfig config, LongSupplier nowMs, LongConsumer sleepMs) {
        this.wire = wire;
        this.config = config;
        this.nowMs = nowMs;
        this.sleepMs = sleepMs;
    }

    /**
     * Commits {@code offsets} (the next offset to consume per partition, metadata "") of {@code
     * groupId} in the producer's open transaction.
     *
     * @param transactionSequence the transaction's sequence from BeginTransaction v1, -1 unknown
     * @param memberId the consumer's member id in the group, or null (then {@code memberEpoch} -1): no
     *     member check, the producer epoch fences
     * @param timeoutMs how long to retry (the producer's {@code max.block.ms})
     * @throws StellflowException with the first failed partition's code, or the last retriable code
     *     (NETWORK_ERROR for no answer) when {@code timeoutMs} passed
     */
    void commit(
            String transactionalId,
            long producerId,
            short producerEpoch,
            long transactionSequence,
            String groupId,
            String memberId,
            int memberEpoch,
            Map<TopicPartition, Long> offsets,
            long timeoutMs) {
        long deadlineMs = nowMs.getAsLong() + timeoutMs;
        Map<TopicPartition, Long> left = new LinkedHashMap<>(offsets);
        HostPort coordinator = null;
        short lastCode = StellflowException.NETWORK_ERROR;
        for (int attempt = 0; ; attempt++) {
            if (attempt > 0) {
                long waitMs = Math.min(config.retryBackoffMs(attempt), deadlineMs - nowMs.getAsLong());
                if (waitMs <= 0) {
                    throw new StellflowException(
                            lastCode,
                            "TxnOffsetCommit of group " + groupId + " for transactional id " + transactionalId
                                    + " not done within " + timeoutMs + " ms (last: " + Errors.name(lastCode) + ")");
                }
                sleepMs.accept(waitMs);
            }
            try {
                if (coordinator == null) {
                    coordinator = await(wire.findCoordinator(groupId));
                }
                OffsetCommitResponse r = await(wire.txnOffsetCommit(
                        coordinator,
                        new TxnOffsetCommitRequest(
                                transactionalId,
                                groupId,
                                producerId,
                                producerEpoch,
                                transactionSequence,
                                memberId,
                                memberId == null ? OffsetCommitRequest.NO_MEMBER_EPOCH : memberEpoch,
                                topics(left))));
                short retry = settle(r, left, groupId, transactionalId);
                if (left.isEmpty()) {
                    return;
                }
                lastCode = retry;
                if (CoordinatorCalls.isCoordinatorError(retry)) {
                    coordinator = null;
                }
            } catch (StellflowException e) {
                short code = e.errorCode();
                if (!CoordinatorCalls.isCoordinatorError(code) && !StellflowException.isRetriable(code)) {
                    throw e;
                }
                lastCode = code;
                coordinator = null;
            }
        }
    }

    /**
     * Removes the committed partitions from {@code left}; throws on a code retrying cannot fix.
     *
     * @return the code of the partitions still left (retriable), NONE when none is
     */
    private static short settle(
            OffsetCommitResponse r, Map<TopicPartition, Long> left, String groupId, String transactionalId) {
        short retry = Errors.NONE;
        for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
            for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                short code = p.errorCode();
                if (code == Errors.NONE) {
                    left.remove(tp);
                } else if (CoordinatorCalls.isCoordinatorError(code) || StellflowException.isRetriable(code)) {
                    retry = code;
                } else {
                    throw new StellflowException(
                            code,
                            "TxnOffsetCommit of " + tp + " for group " + groupId + " and transactional id "
                                    + transactionalId + " refused: " + Errors.name(code));
                }
            }
        }
        if (retry == Errors.NONE && !left.isEmpty()) {
            retry = Errors.UNKNOWN_SERVER_ERROR; // a partition the answer left out: ask again
        }
        return retry;
    }

    private static List<OffsetCommitRequest.OffsetCommitTopic> topics(Map<TopicPartition, Long> offsets) {
        Map<String, List<OffsetCommitRequest.OffsetCommitPartition>> byTopic = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                .add(new OffsetCommitRequest.OffsetCommitPartition(tp.partition(), offset, "")));
        List<OffsetCommitRequest.OffsetCommitTopic> topics = new ArrayList<>();
        byTopic.forEach((t, parts) -> topics.add(new OffsetCommitRequest.OffsetCommitTopic(t, parts)));
        return topics;
    }

    /** The future's value; its StellflowException, or NETWORK_ERROR for no answer in time. */
    private <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(config.requestTimeoutMs() + 1_000L, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (NetworkClient.unwrap(e.getCause()) instanceof StellflowException se) {
                throw se;
            }
            throw new StellflowException(StellflowException.NETWORK_ERROR, "TxnOffsetCommit: " + e.getCause(), e);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new StellflowException(StellflowException.NETWORK_ERROR, "TxnOffsetCommit: no answer in time", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "TxnOffsetCommit interrupted", e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "TxnOffsetCommit interrupted", e);
        }
    }
}
