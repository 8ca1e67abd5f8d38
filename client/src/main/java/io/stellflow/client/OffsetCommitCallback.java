package io.stellflow.client;

import java.util.Map;

/**
 * What {@link StellflowConsumer#commitAsync(OffsetCommitCallback)} calls once when its commit ends.
 * Called on the application thread from inside a later {@link StellflowConsumer#poll} (or another
 * consumer call that waits: {@code commitSync}, {@code close}); it must not block for long.
 */
@FunctionalInterface
public interface OffsetCommitCallback {
    /**
     * @param offsets the committed offsets (the next offset to read, per partition)
     * @param exception null on success, else why nothing was committed: a {@link StellflowException}
     *     with the error code (FENCED_MEMBER_EPOCH, STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID: the member
     *     no longer owns a partition; NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or NETWORK_ERROR: the
     *     coordinator could not be reached; async commits are not retried, a later commit covers them)
     */
    void onComplete(Map<TopicPartition, Long> offsets, Exception exception);
}
