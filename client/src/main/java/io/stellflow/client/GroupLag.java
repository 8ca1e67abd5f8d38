package io.stellflow.client;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A consumer group's lag, as {@link AdminGroups#describeLag} reads it: one row per partition the group
 * has a committed offset for or a member owns, in {@link AdminGroups#PARTITION_ORDER}. A partition's
 * lag is its log end offset (the high watermark, what ListOffsets "latest" answers: the end a consumer
 * can read up to) minus the committed offset, in records (offsets), never below 0. Immutable.
 *
 * <p>A value that is not known is {@link #UNKNOWN} (-1): a partition without a committed offset, or
 * whose log end could not be read (its topic was deleted, the partition is beyond the topic's count,
 * or no leader answered within the retries); its lag is then {@link #UNKNOWN} too and it adds nothing
 * to {@link #totalLag}.
 *
 * @param group the group as DescribeGroups answered (state, members; errorCode 45 GROUP_ID_NOT_FOUND
 *     and no members for a group the coordinator does not know, which may still have offsets)
 * @param partitions the rows, by topic then partition
 * @param idleMembers members that own no partition, in the coordinator's order
 * @param totalLag the sum of the known lags, in records
 */
public record GroupLag(
        DescribedGroup group, List<PartitionLag> partitions, List<DescribedMember> idleMembers, long totalLag) {
    /** A committed offset, log end or lag that is not known. */
    public static final long UNKNOWN = -1L;

    public GroupLag {
        partitions = List.copyOf(partitions);
        idleMembers = List.copyOf(idleMembers);
    }

    /** The group id. */
    public String groupId() {
        return group.groupId();
    }

    /** True when every row's lag is known (so {@link #totalLag} covers every partition). */
    public boolean lagComplete() {
        return partitions.stream().allMatch(p -> p.lag() != UNKNOWN);
    }

    /**
     * One partition's row.
     *
     * @param partition the partition
     * @param committedOffset the group's committed offset (the next offset to consume), or {@link
     *     #UNKNOWN} when it has none
     * @param logEndOffset the partition's high watermark, or {@link #UNKNOWN} when it could not be read
     * @param owner the member that owns the partition, or null when no member does
     */
    public record PartitionLag(
            TopicPartition partition, long committedOffset, long logEndOffset, DescribedMember owner) {
        /** Log end minus committed offset in records (0 when the commit is at or past the end), or {@link #UNKNOWN}. */
        public long lag() {
            return committedOffset < 0 || logEndOffset < 0 ? UNKNOWN : Math.max(0, logEndOffset - committedOffset);
        }
    }

    /**
     * Where {@link #of} reads log ends. {@link AdminGroups} asks the cluster (Metadata, ListOffsets);
     * tests and tools may give their own. Thread-safety: called from the caller's thread only.
     */
    public interface LogEnds {
        /** The partition count of {@code topic}, or -1 when it does not exist. */
        int partitionCount(String topic);

        /**
         * The high watermark of {@code tp} (ListOffsets latest).
         *
         * @throws StellflowException the partition's error code once the retries ran out
         */
        long logEndOffset(TopicPartition tp);
    }

    /**
     * Computes the lag of {@code group} from its committed offsets and the log ends. Topics are looked
     * up once each; a partition of a topic that does not exist (deleted) or beyond its partition count
     * is not looked up (the lookup would retry until the client's retries ran out) and gets an
     * unknown log end, as does a partition whose lookup failed with a partition error.
     *
     * @param committed the group's committed offsets (partitions absent have none)
     * @throws StellflowException NETWORK_ERROR or UNKNOWN_SERVER_ERROR from a lookup (the cluster did
     *     not answer: nothing is known, so nothing is guessed)
     */
    public static GroupLag of(DescribedGroup group, Map<TopicPartition, Long> committed, LogEnds ends) {
        Map<TopicPartition, DescribedMember> owner = new TreeMap<>(AdminGroups.PARTITION_ORDER);
        List<DescribedMember> idle = new ArrayList<>();
        for (DescribedMember m : group.members()) {
            int owned = 0;
            for (TopicPartitions t : m.assignment()) {
                for (int p : t.partitions()) {
                    owner.put(new TopicPartition(t.topic(), p), m);
                    owned++;
                }
            }
            if (owned == 0) {
                idle.add(m);
            }
        }
        Map<TopicPartition, Long> rows = new TreeMap<>(AdminGroups.PARTITION_ORDER);
        rows.putAll(committed);
        owner.keySet().forEach(tp -> rows.putIfAbsent(tp, UNKNOWN));
        Map<String, Integer> partitionCounts = new HashMap<>();
        List<PartitionLag> out = new ArrayList<>(rows.size());
        long total = 0;
        for (Map.Entry<TopicPartition, Long> e : rows.entrySet()) {
            TopicPartition tp = e.getKey();
            int count = partitionCounts.computeIfAbsent(tp.topic(), ends::partitionCount);
            long end = tp.partition() < count ? logEnd(ends, tp) : UNKNOWN;
            PartitionLag row = new PartitionLag(tp, e.getValue() < 0 ? UNKNOWN : e.getValue(), end, owner.get(tp));
            out.add(row);
            if (row.lag() != UNKNOWN) {
                total += row.lag();
            }
        }
        return new GroupLag(group, out, idle, total);
    }

    /** The log end, or {@link #UNKNOWN} when the partition answered an error (deleted, no leader). */
    private static long logEnd(LogEnds ends, TopicPartition tp) {
        try {
            return ends.logEndOffset(tp);
        } catch (StellflowException e) {
            if (e.errorCode() == StellflowException.NETWORK_ERROR || e.errorCode() == Errors.UNKNOWN_SERVER_ERROR) {
                throw e;
            }
            return UNKNOWN;
        }
    }
}
