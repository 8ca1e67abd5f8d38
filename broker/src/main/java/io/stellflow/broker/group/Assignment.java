package io.stellflow.broker.group;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiPredicate;

/**
 * A set of partitions grouped by topic (a member's assigned, pending or target partitions), in topic
 * then partition order. Immutable; the set operations return new instances. A topic never maps to
 * an empty set.
 */
public final class Assignment {
    /** No partitions. */
    public static final Assignment EMPTY = new Assignment(new TreeMap<>());

    private final SortedMap<String, SortedSet<Integer>> partitions;
    private final int size;

    private Assignment(TreeMap<String, TreeSet<Integer>> owned) {
        TreeMap<String, SortedSet<Integer>> copy = new TreeMap<>();
        int n = 0;
        for (Map.Entry<String, TreeSet<Integer>> e : owned.entrySet()) {
            if (!e.getValue().isEmpty()) {
                copy.put(e.getKey(), Collections.unmodifiableSortedSet(e.getValue()));
                n += e.getValue().size();
            }
        }
        this.partitions = Collections.unmodifiableSortedMap(copy);
        this.size = n;
    }

    /** The partitions of {@code byTopic} (copied). */
    public static Assignment of(Map<String, ? extends java.util.Collection<Integer>> byTopic) {
        TreeMap<String, TreeSet<Integer>> m = new TreeMap<>();
        byTopic.forEach((t, ps) -> {
            if (!ps.isEmpty()) {
                m.put(t, new TreeSet<>(ps));
            }
        });
        return m.isEmpty() ? EMPTY : new Assignment(m);
    }

    /** The given partitions. */
    public static Assignment ofPartitions(Iterable<TopicPartition> tps) {
        TreeMap<String, TreeSet<Integer>> m = new TreeMap<>();
        for (TopicPartition tp : tps) {
            m.computeIfAbsent(tp.topic(), t -> new TreeSet<>()).add(tp.partition());
        }
        return m.isEmpty() ? EMPTY : new Assignment(m);
    }

    /** Topic to partitions, unmodifiable, sorted. */
    public SortedMap<String, SortedSet<Integer>> byTopic() {
        return partitions;
    }

    /** Number of partitions. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public boolean contains(String topic, int partition) {
        SortedSet<Integer> ps = partitions.get(topic);
        return ps != null && ps.contains(partition);
    }

    /** The partitions as a list, in topic then partition order. */
    public List<TopicPartition> partitions() {
        List<TopicPartition> out = new ArrayList<>(size);
        partitions.forEach((t, ps) -> ps.forEach(p -> out.add(new TopicPartition(t, p))));
        return out;
    }

    /** The partitions of this set that are not in {@code other}. */
    public Assignment minus(Assignment other) {
        return filter((t, p) -> !other.contains(t, p));
    }

    /** The partitions in both sets. */
    public Assignment intersect(Assignment other) {
        return filter(other::contains);
    }

    /** The partitions in either set. */
    public Assignment union(Assignment other) {
        if (other.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return other;
        }
        TreeMap<String, TreeSet<Integer>> m = mutableCopy();
        other.partitions.forEach(
                (t, ps) -> m.computeIfAbsent(t, k -> new TreeSet<>()).addAll(ps));
        return new Assignment(m);
    }

    /** True when no partition is in both sets. */
    public boolean disjoint(Assignment other) {
        for (Map.Entry<String, SortedSet<Integer>> e : partitions.entrySet()) {
            for (int p : e.getValue()) {
                if (other.contains(e.getKey(), p)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The partitions for which {@code keep} answers true. */
    public Assignment filter(BiPredicate<String, Integer> keep) {
        TreeMap<String, TreeSet<Integer>> m = new TreeMap<>();
        partitions.forEach((t, ps) -> {
            for (int p : ps) {
                if (keep.test(t, p)) {
                    m.computeIfAbsent(t, k -> new TreeSet<>()).add(p);
                }
            }
        });
        if (m.isEmpty()) {
            return EMPTY;
        }
        return new Assignment(m);
    }

    private TreeMap<String, TreeSet<Integer>> mutableCopy() {
        TreeMap<String, TreeSet<Integer>> m = new TreeMap<>();
        partitions.forEach((t, ps) -> m.put(t, new TreeSet<>(ps)));
        return m;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Assignment a && partitions.equals(a.partitions);
    }

    @Override
    public int hashCode() {
        return partitions.hashCode();
    }

    @Override
    public String toString() {
        return partitions.toString();
    }
}
