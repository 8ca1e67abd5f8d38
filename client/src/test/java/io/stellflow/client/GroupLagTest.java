package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link GroupLag#of}: the rows, the unknown values, the total and which lookups are made. */
class GroupLagTest {
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final TopicPartition T2 = new TopicPartition("t", 2);

    /** Topics with their log ends per partition; records every lookup. */
    private static final class Ends implements GroupLag.LogEnds {
        final Map<String, long[]> topics = new HashMap<>();
        final Map<TopicPartition, Short> errors = new HashMap<>();
        final List<String> countLookups = new ArrayList<>();
        final List<TopicPartition> endLookups = new ArrayList<>();

        @Override
        public int partitionCount(String topic) {
            countLookups.add(topic);
            long[] ends = topics.get(topic);
            return ends == null ? -1 : ends.length;
        }

        @Override
        public long logEndOffset(TopicPartition tp) {
            endLookups.add(tp);
            Short code = errors.get(tp);
            if (code != null) {
                throw new StellflowException(code, "ListOffsets " + tp);
            }
            return topics.get(tp.topic())[tp.partition()];
        }
    }

    private static DescribedMember member(String id, TopicPartitions... owned) {
        return new DescribedMember(id, null, "c-" + id, "/10.0.0.1", 3, List.of("t"), List.of(owned), List.of());
    }

    private static DescribedGroup group(DescribedMember... members) {
        return new DescribedGroup(Errors.NONE, "g", "consumer", "Stable", 3, 3, "uniform", List.of(members));
    }

    @Test
    void rowsJoinCommittedOffsetsAndOwnersWithTheLogEnds() {
        Ends ends = new Ends();
        ends.topics.put("t", new long[] {10, 20, 30});
        DescribedMember a = member("a", new TopicPartitions("t", List.of(1, 2)));
        DescribedMember idle = member("idle");
        GroupLag lag = GroupLag.of(group(a, idle), Map.of(T1, 15L, T0, 4L), ends);

        assertThat(lag.groupId()).isEqualTo("g");
        assertThat(lag.partitions())
                .containsExactly(
                        new GroupLag.PartitionLag(T0, 4, 10, null),
                        new GroupLag.PartitionLag(T1, 15, 20, a),
                        new GroupLag.PartitionLag(T2, GroupLag.UNKNOWN, 30, a));
        assertThat(lag.partitions()).extracting(GroupLag.PartitionLag::lag).containsExactly(6L, 5L, GroupLag.UNKNOWN);
        assertThat(lag.totalLag()).as("unknown lags add nothing").isEqualTo(11);
        assertThat(lag.lagComplete()).isFalse();
        assertThat(lag.idleMembers()).containsExactly(idle);
        assertThat(ends.countLookups).as("one Metadata lookup per topic").containsExactly("t");
    }

    @Test
    void aCommitAtOrPastTheLogEndHasNoLag() {
        Ends ends = new Ends();
        ends.topics.put("t", new long[] {10, 20});
        GroupLag lag = GroupLag.of(group(), Map.of(T0, 10L, T1, 25L), ends);
        assertThat(lag.partitions()).extracting(GroupLag.PartitionLag::lag).containsExactly(0L, 0L);
        assertThat(lag.totalLag()).isZero();
        assertThat(lag.lagComplete()).isTrue();
    }

    @Test
    void deletedTopicsAndPartitionsBeyondTheCountAreNotLookedUp() {
        Ends ends = new Ends();
        ends.topics.put("t", new long[] {10});
        TopicPartition gone = new TopicPartition("gone", 0);
        GroupLag lag = GroupLag.of(group(), Map.of(gone, 9L, T0, 7L, T2, 1L), ends);
        assertThat(lag.partitions())
                .containsExactly(
                        new GroupLag.PartitionLag(gone, 9, GroupLag.UNKNOWN, null),
                        new GroupLag.PartitionLag(T0, 7, 10, null),
                        new GroupLag.PartitionLag(T2, 1, GroupLag.UNKNOWN, null));
        assertThat(ends.endLookups).as("only the partition that exists").containsExactly(T0);
        assertThat(lag.totalLag()).isEqualTo(3);
    }

    @Test
    void aPartitionErrorLeavesTheLogEndUnknownButANetworkErrorIsThrown() {
        Ends ends = new Ends();
        ends.topics.put("t", new long[] {10, 20});
        ends.errors.put(T0, Errors.LEADER_NOT_AVAILABLE);
        GroupLag lag = GroupLag.of(group(), Map.of(T0, 1L, T1, 2L), ends);
        assertThat(lag.partitions())
                .extracting(GroupLag.PartitionLag::logEndOffset)
                .containsExactly(GroupLag.UNKNOWN, 20L);
        assertThat(lag.totalLag()).isEqualTo(18);

        ends.errors.put(T0, StellflowException.NETWORK_ERROR);
        assertThatThrownBy(() -> GroupLag.of(group(), Map.of(T0, 1L), ends))
                .isInstanceOfSatisfying(
                        StellflowException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(StellflowException.NETWORK_ERROR));
    }

    @Test
    void anUnknownGroupKeepsItsOffsetsAndTheListsAreImmutable() {
        Ends ends = new Ends();
        ends.topics.put("t", new long[] {10});
        GroupLag lag = GroupLag.of(DescribedGroup.error("g", Errors.GROUP_ID_NOT_FOUND), Map.of(T0, 3L), ends);
        assertThat(lag.group().errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(lag.partitions()).containsExactly(new GroupLag.PartitionLag(T0, 3, 10, null));
        assertThatThrownBy(() -> lag.partitions().clear()).isInstanceOf(UnsupportedOperationException.class);
    }
}
