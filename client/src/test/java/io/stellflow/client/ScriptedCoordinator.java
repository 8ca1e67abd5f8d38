package io.stellflow.client;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A {@link GroupTransport} for tests: every call is recorded with its address and returns a future
 * the test completes when it likes, so a test scripts the coordinator's answers and their timing.
 * No sockets, no threads. Each call is also appended to a shared event log (see {@link #events}).
 *
 * <p>Thread-safety: test thread only.
 */
final class ScriptedCoordinator implements GroupTransport {
    record Find(String groupId, CompletableFuture<HostPort> answer) {}

    record Heartbeat(HostPort to, HeartbeatCall call, CompletableFuture<HeartbeatReply> answer) {}

    record Commit(
            HostPort to,
            String memberId,
            int memberEpoch,
            Map<TopicPartition, Long> offsets,
            CompletableFuture<Map<TopicPartition, Short>> answer) {}

    record Fetch(HostPort to, Set<TopicPartition> partitions, CompletableFuture<Map<TopicPartition, Long>> answer) {}

    final ArrayDeque<Find> finds = new ArrayDeque<>();
    final ArrayDeque<Heartbeat> heartbeats = new ArrayDeque<>();
    final ArrayDeque<Commit> commits = new ArrayDeque<>();
    final ArrayDeque<Fetch> fetches = new ArrayDeque<>();
    private final List<String> events;

    ScriptedCoordinator(List<String> events) {
        this.events = events;
    }

    @Override
    public CompletableFuture<HostPort> findCoordinator(String groupId) {
        Find f = new Find(groupId, new CompletableFuture<>());
        finds.add(f);
        events.add("find");
        return f.answer();
    }

    @Override
    public CompletableFuture<HeartbeatReply> heartbeat(HostPort coordinator, HeartbeatCall call) {
        Heartbeat h = new Heartbeat(coordinator, call, new CompletableFuture<>());
        heartbeats.add(h);
        events.add("heartbeat epoch=" + call.memberEpoch() + " owned=" + names(call.owned()));
        return h.answer();
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Short>> commitOffsets(
            HostPort coordinator, String groupId, String memberId, int memberEpoch, Map<TopicPartition, Long> offsets) {
        Commit c = new Commit(coordinator, memberId, memberEpoch, offsets, new CompletableFuture<>());
        commits.add(c);
        events.add("commit " + sorted(offsets));
        return c.answer();
    }

    /** "[t-0, t-1]" in name order, or "null". */
    static String names(java.util.Collection<TopicPartition> partitions) {
        return partitions == null
                ? "null"
                : partitions.stream()
                        .map(TopicPartition::toString)
                        .sorted()
                        .toList()
                        .toString();
    }

    /** "t-0=5, t-1=7": a map's entries in name order, for readable event logs. */
    static String sorted(Map<TopicPartition, Long> offsets) {
        return offsets.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .sorted()
                .collect(java.util.stream.Collectors.joining(", "));
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Long>> fetchOffsets(
            HostPort coordinator, String groupId, Set<TopicPartition> partitions) {
        Fetch f = new Fetch(coordinator, partitions, new CompletableFuture<>());
        fetches.add(f);
        events.add("offsetFetch " + partitions.size());
        return f.answer();
    }
}
