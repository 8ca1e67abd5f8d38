package io.stellflow.broker.group;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The "range" assignor: per topic, the subscribers in member id order each get a contiguous range
 * of partitions; with n partitions and m subscribers each gets n / m and the first n % m one more.
 * Members subscribed to the same topics with the same partition counts get the same partition
 * numbers of each topic (co-partitioning, for joins). Not sticky. Thread-safety: stateless.
 */
public final class RangeAssignor implements PartitionAssignor {
    /** The name members send. */
    public static final String NAME = "range";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, Assignment> assign(SortedMap<String, MemberSpec> members, Map<String, Integer> partitionCounts) {
        Map<String, TreeMap<String, List<Integer>>> out = new HashMap<>();
        TreeMap<String, List<String>> subscribers = new TreeMap<>();
        members.forEach((id, spec) -> {
            out.put(id, new TreeMap<>());
            for (String t : spec.subscribedTopics()) {
                if (partitionCounts.getOrDefault(t, 0) > 0) {
                    subscribers.computeIfAbsent(t, k -> new ArrayList<>()).add(id);
                }
            }
        });
        subscribers.forEach((topic, ids) -> {
            int n = partitionCounts.get(topic);
            int m = ids.size();
            int next = 0;
            for (int i = 0; i < m; i++) {
                int take = n / m + (i < n % m ? 1 : 0);
                List<Integer> ps = new ArrayList<>(take);
                for (int j = 0; j < take; j++) {
                    ps.add(next++);
                }
                out.get(ids.get(i)).put(topic, ps);
            }
        });
        Map<String, Assignment> result = new HashMap<>();
        out.forEach((id, m) -> result.put(id, Assignment.of(m)));
        return result;
    }
}
