package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Replica placement: round-robin over unfenced brokers, rack-aware when racks are set.
 *
 * <p>Brokers are ordered by id; when any broker has a rack, they are first interleaved by rack (first
 * broker of each rack in rack order, then the second of each, ...), so consecutive brokers of the
 * list sit in different racks. Partition {@code p} gets the {@code rf} consecutive brokers starting at
 * {@code (start + p) mod n}: leaders (first replicas) rotate over all brokers, and with racks the
 * replicas of a partition span {@code min(rf, racks)} racks.
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
        int base = Math.floorMod(start, n);
        List<List<Integer>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = firstPartition + i;
            List<Integer> replicas = new ArrayList<>(rf);
            for (int r = 0; r < rf; r++) {
                replicas.add(order.get((base + p + r) % n));
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
