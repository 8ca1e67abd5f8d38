package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Replica placement: round-robin over unfenced brokers, rack-aware when racks are set.
 *
 * <p>Brokers are ordered by id; when any broker has a rack, they are first interleaved by rack (first
 * broker of each rack in rack order, then the second of each, ...). Partition {@code p} is led by the
 * broker at position {@code (start + p) mod n} of that order, so leaders rotate over all brokers and
 * each broker leads {@code count / n} or one more of the partitions. The other replicas are taken by
 * walking the order onwards from the leader, picking first brokers whose rack this partition does not
 * use yet (round-robin within a rack), and only when every rack is used any broker not yet a replica.
 * So the replicas of a partition span {@code min(rf, racks)} racks even when racks have unequal
 * sizes, and no broker appears twice. Without racks this is plain round-robin: partition {@code p}
 * gets the {@code rf} consecutive brokers starting at {@code (start + p) mod n}. Brokers without a rack
 * count as one rack (the empty one) when others have racks.
 *
 * <p>Thread-safety: stateless.
 */
public final class ReplicaPlacer {
    private ReplicaPlacer() {}

    /**
     * Assignments for partitions {@code firstPartition .. firstPartition + count - 1}.
     *
     * @param brokers unfenced brokers
     * @param start rotation start (the caller picks it at random to spread leaders over topics)
     * @throws IllegalArgumentException when {@code rf} is not in 1..brokers
     */
    public static List<List<Integer>> place(
            List<BrokerRegistration> brokers, int firstPartition, int count, int rf, int start) {
        if (rf < 1 || rf > brokers.size()) {
            throw new IllegalArgumentException(
                    "replication factor " + rf + " needs 1.." + brokers.size() + " unfenced brokers");
        }
        List<Integer> order = ordered(brokers);
        int n = order.size();
        Map<Integer, String> rackOf = new HashMap<>();
        brokers.forEach(b -> rackOf.put(b.id(), b.rack()));
        int racks = new HashSet<>(rackOf.values()).size();
        int base = Math.floorMod(start, n);
        List<List<Integer>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = firstPartition + i;
            int leaderPos = (base + p) % n;
            List<Integer> replicas = new ArrayList<>(rf);
            Set<String> usedRacks = new HashSet<>();
            boolean[] taken = new boolean[n];
            replicas.add(order.get(leaderPos));
            usedRacks.add(rackOf.get(order.get(leaderPos)));
            taken[leaderPos] = true;
            while (replicas.size() < rf) {
                boolean allRacksUsed = usedRacks.size() == racks;
                int pick = -1;
                for (int step = 1; step < n && pick < 0; step++) {
                    int pos = (leaderPos + step) % n;
                    if (!taken[pos] && (allRacksUsed || !usedRacks.contains(rackOf.get(order.get(pos))))) {
                        pick = pos;
                    }
                }
                taken[pick] = true;
                replicas.add(order.get(pick));
                usedRacks.add(rackOf.get(order.get(pick)));
            }
            out.add(List.copyOf(replicas));
        }
        return out;
    }

    /** Broker ids ordered by id, interleaved by rack when any rack is set. */
    static List<Integer> ordered(List<BrokerRegistration> brokers) {
        TreeMap<String, List<Integer>> byRack = new TreeMap<>();
        boolean anyRack = false;
        List<BrokerRegistration> sorted = new ArrayList<>(brokers);
        sorted.sort((a, b) -> Integer.compare(a.id(), b.id()));
        for (BrokerRegistration b : sorted) {
            anyRack |= !b.rack().isEmpty();
            byRack.computeIfAbsent(b.rack(), k -> new ArrayList<>()).add(b.id());
        }
        List<Integer> order = new ArrayList<>();
        if (!anyRack) {
            sorted.forEach(b -> order.add(b.id()));
            return order;
        }
        for (int round = 0; order.size() < sorted.size(); round++) {
            for (Map.Entry<String, List<Integer>> e : byRack.entrySet()) {
                if (round < e.getValue().size()) {
                    order.add(e.getValue().get(round));
                }
            }
        }
        return order;
    }
}
