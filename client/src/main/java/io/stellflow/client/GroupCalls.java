package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * The blocking group calls of {@link StellflowConsumer} ({@code commitSync}, {@code committed}, the
 * wait for a leave): each queues its request on the {@link ConsumerMembership} and then drives the
 * member ({@link ConsumerMembership#poll}: heartbeats and reconciliation go on meanwhile) until the
 * request ends or the time is up, sleeping between events on the consumer's response queue.
 *
 * <p>Thread-safety: confined to the consumer's application thread.
 */
final class GroupCalls {
    private final ConsumerMembership group;
    private final ConsumerConfig config;
    /** Waits up to the given nanoseconds for any response (the consumer keeps fetch answers). */
    private final LongConsumer awaitResponseNs;

    GroupCalls(ConsumerMembership group, ConsumerConfig config, LongConsumer awaitResponseNs) {
        this.group = group;
        this.config = config;
        this.awaitResponseNs = awaitResponseNs;
    }

    /** Commits {@code offsets}, retrying coordinator errors until {@code timeout}; throws on failure. */
    void commitSync(Map<TopicPartition, Long> offsets, Duration timeout) {
        if (offsets.isEmpty()) {
            return;
        }
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        CompletableFuture<Void> f = group.commit(offsets, true, nowMs() + timeout.toMillis(), null);
        await(f, deadlineNs);
        result(f, "commit");
    }

    /** Sends a commit of {@code offsets} once; {@code callback} (may be null) runs from a later call. */
    void commitAsync(Map<TopicPartition, Long> offsets, OffsetCommitCallback callback) {
        if (offsets.isEmpty()) {
            if (callback != null) {
                callback.onComplete(Map.of(), null);
            }
            return;
        }
        group.commit(offsets, false, nowMs() + config.common().requestTimeoutMs(), callback);
        group.poll(nowMs());
    }

    /** The committed offsets of {@code partitions}; a partition without one is absent. */
    Map<TopicPartition, Long> committed(Set<TopicPartition> partitions, Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        CompletableFuture<Map<TopicPartition, Long>> f = group.fetchCommitted(partitions, nowMs() + timeout.toMillis());
        await(f, deadlineNs);
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        result(f, "committed").forEach((tp, offset) -> {
            if (offset >= 0) {
                out.put(tp, offset);
            }
        });
        return out;
    }

    /**
     * Leaves the group (revocation, then the leave heartbeat), waiting until {@code deadlineNs} at most;
     * past it the member is forgotten and the coordinator drops it after its session timeout.
     */
    void leave(long deadlineNs) {
        CompletableFuture<Void> left = group.leave(nowMs());
        try {
            await(left, deadlineNs);
        } finally {
            if (!left.isDone()) {
                group.reset();
            }
        }
    }

    /** Drives the member until {@code f} is done or the deadline passes. */
    private void await(CompletableFuture<?> f, long deadlineNs) {
        while (true) {
            group.poll(nowMs());
            long leftNs = deadlineNs - System.nanoTime();
            if (f.isDone() || leftNs <= 0) {
                return;
            }
            awaitResponseNs.accept(
                    Math.min(leftNs, TimeUnit.MILLISECONDS.toNanos(group.timeToNextEventMs(nowMs()) + 1)));
        }
    }

    private static <T> T result(CompletableFuture<T> f, String what) {
        if (!f.isDone()) {
            throw new StellflowException(StellflowException.NETWORK_ERROR, what + " timed out");
        }
        try {
            return f.join();
        } catch (CompletionException e) {
            Throwable c = NetworkClient.unwrap(e);
            throw c instanceof StellflowException se
                    ? se
                    : new StellflowException(Errors.UNKNOWN_SERVER_ERROR, what + " failed", c);
        }
    }

    /** The group member's clock: monotonic milliseconds. */
    static long nowMs() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    }
}
