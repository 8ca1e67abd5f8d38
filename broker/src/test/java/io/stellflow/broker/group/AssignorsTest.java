package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.group.PartitionAssignor.MemberSpec;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The uniform and range assignors: validity, balance, stickiness, co-partitioning and speed. */
class AssignorsTest {
    private final UniformAssignor uniform = new UniformAssignor();
    private final RangeAssignor range = new RangeAssignor();

    private static TreeMap<String, MemberSpec> members(int n, List<String> topics) {
        TreeMap<String, MemberSpec> m = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            m.put(String.format("m%03d", i), new MemberSpec(topics, Assignment.EMPTY));
        }
        return m;
    }

    /** Each partition of every subscribed topic once, to a subscriber; returns per-member sizes. */
    private static Map<String, Integer> checkValid(
            Map<String, MemberSpec> members, Map<String, Integer> counts, Map<String, Assignment> result) {
        assertThat(result.keySet()).isEqualTo(members.keySet());
        Set<TopicPartition> seen = new HashSet<>();
        List<String> problems = new ArrayList<>();
        Map<String, Integer> sizes = new HashMap<>();
        result.forEach((id, a) -> {
            for (TopicPartition tp : a.partitions()) {
                if (!members.get(id).subscribedTopics().contains(tp.topic())) {
                    problems.add(tp + " to non-subscriber " + id);
                }
                if (tp.partition() < 0 || tp.partition() >= counts.get(tp.topic())) {
                    problems.add(tp + " does not exist");
                }
                if (!seen.add(tp)) {
                    problems.add(tp + " assigned twice");
                }
            }
            sizes.put(id, a.size());
        });
        assertThat(problems).isEmpty();
        Set<String> subscribed = new HashSet<>();
        members.values().forEach(s -> subscribed.addAll(s.subscribedTopics()));
        int expected =
                subscribed.stream().mapToInt(t -> counts.getOrDefault(t, 0)).sum();
        assertThat(seen).hasSize(expected);
        return sizes;
    }

    @Test
    void uniformBalancesIdenticalSubscriptionsWithinOne() {
        TreeMap<String, MemberSpec> m = members(7, List.of("a", "b"));
        Map<String, Integer> counts = Map.of("a", 10, "b", 13, "unused", 4);
        Map<String, Integer> sizes = checkValid(m, counts, uniform.assign(m, counts));
        assertThat(sizes.values()).allSatisfy(s -> assertThat(s).isBetween(23 / 7, 23 / 7 + 1));
    }

    @Test
    void uniformIsStickyWhenAMemberJoinsAndWhenOneLeaves() {
        TreeMap<String, MemberSpec> m = members(4, List.of("t"));
        Map<String, Integer> counts = Map.of("t", 12);
        Map<String, Assignment> first = uniform.assign(m, counts);
        // A fifth member joins: the four keep all but what the newcomer needs (12/5: 2 or 3 each).
        TreeMap<String, MemberSpec> five = new TreeMap<>();
        first.forEach((id, a) -> five.put(id, new MemberSpec(List.of("t"), a)));
        five.put("m999", new MemberSpec(List.of("t"), Assignment.EMPTY));
        Map<String, Assignment> second = uniform.assign(five, counts);
        Map<String, Integer> sizes = checkValid(five, counts, second);
        assertThat(sizes.values()).allSatisfy(s -> assertThat(s).isBetween(2, 3));
        int moved = 0;
        for (String id : first.keySet()) {
            assertThat(first.get(id).partitions()).containsAll(second.get(id).partitions());
            moved += first.get(id).size() - second.get(id).size();
        }
        assertThat(moved).isEqualTo(second.get("m999").size()).isEqualTo(2);
        // One leaves: the others keep everything and share its partitions.
        TreeMap<String, MemberSpec> four = new TreeMap<>();
        second.forEach((id, a) -> {
            if (!id.equals("m000")) {
                four.put(id, new MemberSpec(List.of("t"), a));
            }
        });
        Map<String, Assignment> third = uniform.assign(four, counts);
        checkValid(four, counts, third);
        four.keySet()
                .forEach(id -> assertThat(third.get(id).partitions())
                        .containsAll(second.get(id).partitions()));
    }

    @Test
    void uniformHandlesDifferentSubscriptionsAndDropsVanishedPartitions() {
        TreeMap<String, MemberSpec> m = new TreeMap<>();
        m.put("a", new MemberSpec(List.of("x"), Assignment.of(Map.of("x", List.of(0, 1, 2, 3, 9)))));
        m.put("b", new MemberSpec(List.of("x", "y"), Assignment.EMPTY));
        m.put("c", new MemberSpec(List.of("y"), Assignment.of(Map.of("x", List.of(4)))));
        Map<String, Integer> counts = Map.of("x", 6, "y", 4);
        Map<String, Assignment> r = uniform.assign(m, counts);
        checkValid(m, counts, r); // x-9 no longer exists, c no longer subscribes to x
        // 10 partitions over 3 members where b can take either topic: 3..4 each.
        r.values().forEach(a -> assertThat(a.size()).isBetween(3, 4));
        assertThat(r.get("c").byTopic().keySet()).containsExactly("y");
    }

    @Test
    void uniformAssignsAHundredMembersAThousandPartitionsWellUnderASecond() {
        TreeMap<String, MemberSpec> m = members(100, List.of("a", "b", "c", "d"));
        Map<String, Integer> counts = Map.of("a", 250, "b", 250, "c", 250, "d", 250);
        // CPU time of this thread, not wall time: the build machine is shared.
        long startNs = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        Map<String, Assignment> first = uniform.assign(m, counts);
        // Then one member leaves and the other 99 rebalance from their current targets.
        TreeMap<String, MemberSpec> next = new TreeMap<>();
        first.forEach((id, a) -> {
            if (!id.equals("m050")) {
                next.put(id, new MemberSpec(List.of("a", "b", "c", "d"), a));
            }
        });
        Map<String, Assignment> second = uniform.assign(next, counts);
        long elapsedMs = (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - startNs) / 1_000_000;
        assertThat(elapsedMs).isLessThan(1_000);
        assertThat(checkValid(m, counts, first).values()).containsOnly(10);
        assertThat(checkValid(next, counts, second).values())
                .allSatisfy(s -> assertThat(s).isBetween(10, 11));
    }

    @Test
    void rangeGivesContiguousRangesAndCoPartitions() {
        TreeMap<String, MemberSpec> m = members(3, List.of("a", "b"));
        Map<String, Integer> counts = Map.of("a", 7, "b", 7);
        Map<String, Assignment> r = range.assign(m, counts);
        checkValid(m, counts, r);
        assertThat(r.get("m000").byTopic().get("a")).containsExactly(0, 1, 2);
        assertThat(r.get("m001").byTopic().get("a")).containsExactly(3, 4);
        assertThat(r.get("m002").byTopic().get("a")).containsExactly(5, 6);
        r.values()
                .forEach(a ->
                        assertThat(a.byTopic().get("a")).isEqualTo(a.byTopic().get("b")));
    }

    @Test
    void unknownTopicsGiveNothingAndEveryMemberGetsAnEntry() {
        TreeMap<String, MemberSpec> m = members(2, List.of("missing"));
        for (PartitionAssignor a : List.of(uniform, range)) {
            Map<String, Assignment> r = a.assign(m, Map.of());
            assertThat(r).containsOnlyKeys("m000", "m001");
            r.values().forEach(x -> assertThat(x.isEmpty()).isTrue());
        }
    }
}
