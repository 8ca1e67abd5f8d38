package io.stellflow.client;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The four coordinator calls a group member makes, as futures, with the client's types instead of
 * wire records: the seam between {@link ConsumerMembership} (the member's logic, driven by a clock
 * and tested against a scripted coordinator) and the wire ({@link NetworkGroupTransport}).
 *
 * <p>Failures: a future fails with a {@link StellflowException} carrying the error code (a
 * header-level or request-level code, {@link StellflowException#NETWORK_ERROR} for a lost connection
 * or a timeout). Codes that belong to one partition come back in the result instead.
 *
 * <p>Thread-safety: implementations may complete futures on any thread; {@link ConsumerMembership}
 * only looks at them from its owner thread.
 */
interface GroupTransport {

    /** FindCoordinator (key type 0, a group): the coordinator's address. */
    CompletableFuture<HostPort> findCoordinator(String groupId);

    /** ConsumerGroupHeartbeat (key 20) to the coordinator. */
    CompletableFuture<HeartbeatReply> heartbeat(HostPort coordinator, HeartbeatCall call);

    /**
     * OffsetCommit v1, metadata "" for each partition.
     *
     * @param memberId null with {@code memberEpoch} -1: a commit from outside the group
     * @return each partition's error code (NONE when committed)
     */
    CompletableFuture<Map<TopicPartition, Short>> commitOffsets(
            HostPort coordinator, String groupId, String memberId, int memberEpoch, Map<TopicPartition, Long> offsets);

    /**
     * OffsetFetch v1 for {@code partitions}: each partition's committed offset, -1 when the group has
     * none. A group-level or partition-level error code fails the future with that code.
     */
    CompletableFuture<Map<TopicPartition, Long>> fetchOffsets(
            HostPort coordinator, String groupId, Set<TopicPartition> partitions);

    /**
     * One ConsumerGroupHeartbeat request's fields (key 20 v0, {@code docs/protocol-additions.md}).
     *
     * @param memberId null when joining (epoch 0): the coordinator assigns one
     * @param memberEpoch 0 join, -1 leave, -2 a static member leaves for a restart, {@code > 0} the
     *     current epoch
     * @param instanceId {@code group.instance.id}, or null
     * @param rebalanceTimeoutMs how long the coordinator waits for a revocation; -1 unchanged
     * @param subscribedTopics null when unchanged since the last heartbeat
     * @param serverAssignor {@code group.remote.assignor}; null for unchanged or the broker default
     * @param owned the partitions the member owns; null when unchanged
     */
    record HeartbeatCall(
            String groupId,
            String memberId,
            int memberEpoch,
            String instanceId,
            int rebalanceTimeoutMs,
            List<String> subscribedTopics,
            String serverAssignor,
            Set<TopicPartition> owned) {}

    /**
     * One ConsumerGroupHeartbeat answer.
     *
     * @param assignment the member's full assignment, or null when unchanged
     */
    record HeartbeatReply(
            short errorCode,
            String errorMessage,
            String memberId,
            int memberEpoch,
            int heartbeatIntervalMs,
            Set<TopicPartition> assignment) {}
}
