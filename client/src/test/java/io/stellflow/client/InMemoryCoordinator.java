package io.stellflow.client;

import io.stellflow.protocol.Errors;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link GroupTransport} that answers at once, as a coordinator of one group with one member
 * would: the joining member gets every partition of its topics ({@code partitionsPerTopic}), commits
 * are stored, offset fetches read them. For consumer tests whose subject is not the membership.
 *
 * <p>Thread-safety: thread-safe (answers on the caller's thread).
 */
final class InMemoryCoordinator implements GroupTransport {
    static final HostPort ADDRESS = new HostPort("127.0.0.1", 1);

    final Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
    final List<HeartbeatCall> heartbeats = new CopyOnWriteArrayList<>();
    final List<Map<TopicPartition, Long>> commits = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> partitionsPerTopic;

    InMemoryCoordinator(Map<String, Integer> partitionsPerTopic) {
        this.partitionsPerTopic = Map.copyOf(partitionsPerTopic);
    }

    @Override
    public CompletableFuture<HostPort> findCoordinator(String groupId) {
        return CompletableFuture.completedFuture(ADDRESS);
    }

    @Override
    public CompletableFuture<HeartbeatReply> heartbeat(HostPort coordinator, HeartbeatCall call) {
        heartbeats.add(call);
        if (call.memberEpoch() < 0) {
            return CompletableFuture.completedFuture(
                    new HeartbeatReply(Errors.NONE, null, call.memberId(), call.memberEpoch(), 0, null));
        }
        Set<TopicPartition> assignment = null;
        if (call.memberEpoch() == 0) {
            assignment = new LinkedHashSet<>();
            for (String topic : call.subscribedTopics()) {
                for (int p = 0; p < partitionsPerTopic.getOrDefault(topic, 0); p++) {
                    assignment.add(new TopicPartition(topic, p));
                }
            }
        }
        return CompletableFuture.completedFuture(new HeartbeatReply(Errors.NONE, null, "m1", 1, 100, assignment));
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Short>> commitOffsets(
            HostPort coordinator, String groupId, String memberId, int memberEpoch, Map<TopicPartition, Long> offsets) {
        commits.add(Map.copyOf(offsets));
        committed.putAll(offsets);
        Map<TopicPartition, Short> codes = new LinkedHashMap<>();
        offsets.keySet().forEach(tp -> codes.put(tp, Errors.NONE));
        return CompletableFuture.completedFuture(codes);
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Long>> fetchOffsets(
            HostPort coordinator, String groupId, Set<TopicPartition> partitions) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        partitions.forEach(tp -> out.put(tp, committed.getOrDefault(tp, -1L)));
        return CompletableFuture.completedFuture(out);
    }
}
