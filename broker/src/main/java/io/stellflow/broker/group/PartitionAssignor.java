package io.stellflow.broker.group;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * A server-side assignor of our group protocol: computes a group's target assignment from its
 * members' subscriptions and the partition counts of their topics. Must be deterministic (the same
 * input gives the same output on every broker) and must assign each partition of a subscribed topic
 * to at most one member that subscribes to its topic.
 *
 * <p>Cost: implementations may be O(partitions x members); the coordinator runs them off the
 * heartbeat path for big groups ({@link ConsumerGroup}). Thread-safety: stateless implementations,
 * callable from any thread.
 */
public interface PartitionAssignor {
    /** The name members send as {@code serverAssignor}. */
    String name();

    /**
     * Computes the target assignment.
     *
     * @param members member id to its subscription and current target, sorted by member id
     * @param partitionCounts partition count of every subscribed topic that exists (positive counts
     *     only; an unknown topic is absent)
     * @return member id to its target, with an entry (possibly empty) for every member
     */
    Map<String, Assignment> assign(SortedMap<String, MemberSpec> members, Map<String, Integer> partitionCounts);

    /**
     * One member as an assignor sees it.
     *
     * @param subscribedTopics the topics the member subscribes to
     * @param current the member's current target (for stickiness), never null
     */
    record MemberSpec(List<String> subscribedTopics, Assignment current) {
        public MemberSpec {
            subscribedTopics = List.copyOf(subscribedTopics);
        }
    }
}
