package io.stellflow.tools;

import io.stellflow.client.AdminGroups;
import io.stellflow.client.GroupLag;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An in-memory cluster for {@link ConsumerGroupsCommand}'s tests: topics whose partitions have a log
 * start and one timestamp per offset up to the log end, groups with their description and committed
 * offsets, and the journal. Commits and deletions change the state as a coordinator would (commits
 * from outside refused with UNKNOWN_MEMBER_ID while the group has members). {@link #unreachable} makes
 * every call fail as an unreachable cluster does.
 */
final class FakeGroupAdmin implements GroupAdmin {
    /** One partition: offsets [logStart, logStart + timestamps.length), the record timestamps in ms. */
    record Log(long logStart, long[] timestampsMs) {
        long logEnd() {
            return logStart + timestampsMs.length;
        }
    }

    final Map<String, List<Log>> topics = new HashMap<>();
    final Map<String, DescribedGroup> groups = new TreeMap<>();
    final Map<String, Map<TopicPartition, Long>> committed = new HashMap<>();
    final List<OffsetHistoryResponse.OffsetHistoryEntry> journal = new ArrayList<>();
    /** Commit requests received, in order. */
    final List<Map<TopicPartition, Long>> commits = new ArrayList<>();
    /** Error code forced on the commit of these partitions. */
    final Map<TopicPartition, Short> commitErrors = new HashMap<>();

    StellflowException unreachable;
    /** Offset lookups of partitions that do not exist (the real client retries those for seconds). */
    int missingPartitionLookups;

    boolean closed;

    void topic(String name, Log... partitions) {
        topics.put(name, List.of(partitions));
    }

    /** An Empty group (no members) with {@code offsets}. */
    void emptyGroup(String id, Map<TopicPartition, Long> offsets) {
        groups.put(id, new DescribedGroup(Errors.NONE, id, "consumer", "Empty", 4, 4, "uniform", List.of()));
        committed.put(id, new TreeMap<>(AdminGroups.PARTITION_ORDER));
        committed.get(id).putAll(offsets);
    }

    void group(DescribedGroup g, Map<TopicPartition, Long> offsets) {
        groups.put(g.groupId(), g);
        committed.put(g.groupId(), new TreeMap<>(AdminGroups.PARTITION_ORDER));
        committed.get(g.groupId()).putAll(offsets);
    }

    private void check() {
        if (unreachable != null) {
            throw unreachable;
        }
    }

    private Log log(TopicPartition tp) {
        List<Log> t = topics.get(tp.topic());
        if (t == null || tp.partition() >= t.size()) {
            missingPartitionLookups++;
            throw new StellflowException(Errors.UNKNOWN_TOPIC_OR_PARTITION, "no leader for " + tp);
        }
        return t.get(tp.partition());
    }

    @Override
    public List<ListGroupsResponse.ListedGroup> listGroups() {
        check();
        List<ListGroupsResponse.ListedGroup> out = new ArrayList<>();
        groups.values()
                .forEach(g -> out.add(new ListGroupsResponse.ListedGroup(g.groupId(), g.protocolType(), g.state())));
        return out;
    }

    @Override
    public DescribedGroup describeGroup(String groupId) {
        check();
        DescribedGroup g = groups.get(groupId);
        return g != null ? g : DescribeGroupsResponse.DescribedGroup.error(groupId, Errors.GROUP_ID_NOT_FOUND);
    }

    @Override
    public Map<TopicPartition, Long> committedOffsets(String groupId) {
        check();
        Map<TopicPartition, Long> c = committed.get(groupId);
        return c == null ? Map.of() : new LinkedHashMap<>(c);
    }

    /** The client's computation ({@link GroupLag#of}) over this fake's groups and logs. */
    @Override
    public GroupLag describeLag(String groupId) {
        check();
        return GroupLag.of(describeGroup(groupId), committedOffsets(groupId), new GroupLag.LogEnds() {
            @Override
            public int partitionCount(String topic) {
                return FakeGroupAdmin.this.partitionCount(topic);
            }

            @Override
            public long logEndOffset(TopicPartition tp) {
                return latestOffset(tp);
            }
        });
    }

    @Override
    public int partitionCount(String topic) {
        check();
        List<Log> t = topics.get(topic);
        return t == null ? -1 : t.size();
    }

    @Override
    public long earliestOffset(TopicPartition tp) {
        check();
        return log(tp).logStart();
    }

    @Override
    public long latestOffset(TopicPartition tp) {
        check();
        return log(tp).logEnd();
    }

    @Override
    public long offsetForTime(TopicPartition tp, long timestampMs) {
        check();
        Log l = log(tp);
        for (int i = 0; i < l.timestampsMs().length; i++) {
            if (l.timestampsMs()[i] >= timestampMs) {
                return l.logStart() + i;
            }
        }
        return -1;
    }

    @Override
    public Map<TopicPartition, Short> commitOffsets(String groupId, Map<TopicPartition, Long> offsets) {
        check();
        commits.add(new LinkedHashMap<>(offsets));
        DescribedGroup g = groups.get(groupId);
        Map<TopicPartition, Short> out = new TreeMap<>(AdminGroups.PARTITION_ORDER);
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            short code = g != null && !g.members().isEmpty()
                    ? Errors.UNKNOWN_MEMBER_ID
                    : commitErrors.getOrDefault(e.getKey(), Errors.NONE);
            if (code == Errors.NONE) {
                Map<TopicPartition, Long> c =
                        committed.computeIfAbsent(groupId, k -> new TreeMap<>(AdminGroups.PARTITION_ORDER));
                Long old = c.put(e.getKey(), e.getValue());
                journal.add(new OffsetHistoryResponse.OffsetHistoryEntry(
                        1_000L * journal.size(),
                        e.getKey().topic(),
                        e.getKey().partition(),
                        old == null ? -1 : old,
                        e.getValue(),
                        "reset",
                        "ANONYMOUS",
                        "stellflow-consumer-groups",
                        null));
            }
            out.put(e.getKey(), code);
        }
        return out;
    }

    @Override
    public void deleteGroup(String groupId) {
        check();
        DescribedGroup g = groups.get(groupId);
        if (g == null) {
            throw new StellflowException(Errors.GROUP_ID_NOT_FOUND, "DeleteGroups " + groupId + " refused");
        }
        if (!g.members().isEmpty()) {
            throw new StellflowException(Errors.NON_EMPTY_GROUP, "DeleteGroups " + groupId + " refused");
        }
        groups.remove(groupId);
        committed.remove(groupId);
    }

    @Override
    public Map<TopicPartition, Short> deleteOffsets(String groupId, Collection<TopicPartition> partitions) {
        check();
        DescribedGroup g = groups.get(groupId);
        if (g == null) {
            throw new StellflowException(Errors.GROUP_ID_NOT_FOUND, "OffsetDelete " + groupId + " refused");
        }
        List<TopicPartition> owned = new ArrayList<>();
        g.members().forEach(m -> owned.addAll(GroupReports.partitions(m.assignment())));
        Map<TopicPartition, Short> out = new TreeMap<>(AdminGroups.PARTITION_ORDER);
        for (TopicPartition tp : partitions) {
            if (owned.contains(tp)) {
                out.put(tp, Errors.GROUP_SUBSCRIBED_TO_TOPIC);
            } else {
                committed.get(groupId).remove(tp);
                out.put(tp, Errors.NONE);
            }
        }
        return out;
    }

    @Override
    public List<OffsetHistoryResponse.OffsetHistoryEntry> offsetHistory(String groupId, int maxEntries) {
        check();
        if (!groups.containsKey(groupId)) {
            throw new StellflowException(Errors.GROUP_ID_NOT_FOUND, "OffsetHistory " + groupId + " refused");
        }
        return List.copyOf(journal.subList(Math.max(0, journal.size() - maxEntries), journal.size()));
    }

    @Override
    public void close() {
        closed = true;
    }
}
