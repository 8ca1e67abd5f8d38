package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The target assignment of one {@link ConsumerGroup}: each member's target partitions and the
 * target (assignment) epoch, stored as TARGET_MEMBER and TARGET_EPOCH records; plus whether it is
 * stale (the group changed since it was computed) and the partition counts it was computed from.
 *
 * <p>Thread-safety: confined to the shard's thread.
 */
final class TargetAssignment {
    private final String groupId;
    private final TopicPartitionCounts counts;
    private final Map<String, Assignment> byMember = new HashMap<>();
    private int epoch;
    private boolean stale;
    private long staleSinceMs = Long.MAX_VALUE;
    /** Partition counts of the subscribed topics at the last computation; null after a load. */
    private Map<String, Integer> countsUsed;

    TargetAssignment(String groupId, TopicPartitionCounts counts) {
        this.groupId = groupId;
        this.counts = counts;
    }

    int epoch() {
        return epoch;
    }

    Assignment of(String memberId) {
        return byMember.getOrDefault(memberId, Assignment.EMPTY);
    }

    boolean contains(String topic, int partition) {
        for (Assignment a : byMember.values()) {
            if (a.contains(topic, partition)) {
                return true;
            }
        }
        return false;
    }

    boolean stale() {
        return stale;
    }

    /** When the target became stale (ms), MAX_VALUE when it is not. */
    long staleSinceMs() {
        return staleSinceMs;
    }

    void markStale(long nowMs) {
        if (!stale) {
            stale = true;
            staleSinceMs = nowMs;
        }
    }

    /** Drops a removed member's target (a tombstone when it had one). */
    void remove(String memberId, List<CoordinatorRecord> out) {
        if (byMember.remove(memberId) != null) {
            out.add(GroupRecords.targetMember(groupId, memberId, null));
        }
    }

    /** Moves a target to a new member id (a static member's replacement). */
    void rename(String from, String to, List<CoordinatorRecord> out) {
        Assignment t = byMember.remove(from);
        if (t != null) {
            out.add(GroupRecords.targetMember(groupId, from, null));
            byMember.put(to, t);
            out.add(GroupRecords.targetMember(groupId, to, t));
        }
    }

    /** Partition counts of the topics the members subscribe to (existing topics only). */
    TreeMap<String, Integer> subscribedCounts(Collection<ConsumerMember> members) {
        TreeMap<String, Integer> used = new TreeMap<>();
        for (ConsumerMember m : members) {
            for (String t : m.subscribedTopics) {
                int n = counts.partitionCount(t);
                if (n > 0) {
                    used.put(t, n);
                }
            }
        }
        return used;
    }

    /** The assignor's work for these members: members x subscribed partitions. */
    long work(Collection<ConsumerMember> members) {
        TreeSet<String> topics = new TreeSet<>();
        for (ConsumerMember m : members) {
            topics.addAll(m.subscribedTopics);
        }
        long partitions = 0;
        for (String t : topics) {
            partitions += Math.max(0, counts.partitionCount(t));
        }
        return partitions * Math.max(1, members.size());
    }

    /** Runs the assignor; the current targets are its stickiness input. */
    Map<String, Assignment> assign(PartitionAssignor assignor, Collection<ConsumerMember> members) {
        TreeMap<String, PartitionAssignor.MemberSpec> specs = new TreeMap<>();
        for (ConsumerMember m : members) {
            specs.put(m.memberId, new PartitionAssignor.MemberSpec(m.subscribedTopics, of(m.memberId)));
        }
        return assignor.assign(specs, subscribedCounts(members));
    }

    /** True when {@code result} gives some member another target than it has. */
    boolean differs(Map<String, Assignment> result, Collection<ConsumerMember> members) {
        for (ConsumerMember m : members) {
            if (!result.getOrDefault(m.memberId, Assignment.EMPTY).equals(of(m.memberId))) {
                return true;
            }
        }
        return false;
    }

    /** Installs {@code result} as the target of {@code newEpoch}, recording what changed. */
    void install(
            Map<String, Assignment> result,
            Collection<ConsumerMember> members,
            int newEpoch,
            List<CoordinatorRecord> out) {
        for (ConsumerMember m : members) {
            Assignment a = result.getOrDefault(m.memberId, Assignment.EMPTY);
            if (!a.equals(byMember.get(m.memberId))) {
                byMember.put(m.memberId, a);
                out.add(GroupRecords.targetMember(groupId, m.memberId, a));
            }
        }
        if (epoch != newEpoch) {
            epoch = newEpoch;
            out.add(GroupRecords.targetEpoch(groupId, epoch));
        }
        countsUsed = subscribedCounts(members);
        stale = false;
        staleSinceMs = Long.MAX_VALUE;
    }

    /** Marks the target stale when the subscribed topics' partition counts changed. */
    void checkMetadata(Collection<ConsumerMember> members, long nowMs) {
        if (!members.isEmpty() && !subscribedCounts(members).equals(countsUsed)) {
            markStale(nowMs);
        }
    }

    void stateRecords(List<CoordinatorRecord> out) {
        if (epoch > 0) {
            out.add(GroupRecords.targetEpoch(groupId, epoch));
        }
        new TreeMap<>(byMember).forEach((id, a) -> out.add(GroupRecords.targetMember(groupId, id, a)));
    }

    void load(String memberId, Assignment a) {
        if (a == null) {
            byMember.remove(memberId);
        } else {
            byMember.put(memberId, a);
        }
    }

    void loadEpoch(Integer e) {
        epoch = e == null ? 0 : e;
    }

    /** After a load: the counts used are unknown, so a group with members recomputes. */
    void onLoaded(boolean hasMembers, long nowMs) {
        countsUsed = null;
        if (hasMembers) {
            markStale(nowMs);
        }
    }
}
