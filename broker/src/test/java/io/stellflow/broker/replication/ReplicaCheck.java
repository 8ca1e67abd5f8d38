package io.stellflow.broker.replication;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compares the replicas of one partition read from disk ({@link ReplicaLog}) with each other and with
 * the acknowledged records of a {@link Ledger}, below a bound up to which every replica given must
 * hold the committed log. Violations go to the ledger under the given round:
 *
 * <ul>
 *   <li>{@code REPLICA_GAP}: a replica's batches are not contiguous;
 *   <li>{@code REPLICA_MISSING}: a replica lacks an offset below the bound that another one holds;
 *   <li>{@code REPLICA_DIVERGED}: two replicas hold different values at one offset;
 *   <li>{@code REPLICA_BYTES_DIFFER}: a batch below the bound is not byte-identical on all replicas;
 *   <li>{@code ACKED_MISSING_ON_REPLICA}: an acknowledged record is not at its offset on a replica;
 *   <li>{@code REPLICA_LEO_DIFFERS} (when {@code requireEqualEnds}): replicas end at different offsets.
 * </ul>
 *
 * <p>Offsets below a replica's log start are not compared (retention may have removed them).
 *
 * <p>Thread-safety: stateless.
 */
final class ReplicaCheck {
    private ReplicaCheck() {}

    /**
     * @param bound offsets below it are committed and must be on every replica in {@code replicas};
     *     {@code Long.MAX_VALUE} with {@code requireEqualEnds} compares whole logs
     * @return the number of violations added
     */
    static long check(
            Ledger ledger, int round, int partition, List<ReplicaLog> replicas, long bound, boolean requireEqualEnds) {
        long before = ledger.violations(round);
        if (replicas.isEmpty()) {
            return 0;
        }
        long start = 0;
        long minEnd = Long.MAX_VALUE;
        long maxEnd = 0;
        for (ReplicaLog r : replicas) {
            start = Math.max(start, r.logStartOffset());
            minEnd = Math.min(minEnd, r.logEndOffset());
            maxEnd = Math.max(maxEnd, r.logEndOffset());
            checkContiguous(ledger, round, partition, r);
        }
        if (requireEqualEnds && minEnd != maxEnd) {
            StringBuilder ends = new StringBuilder();
            for (ReplicaLog r : replicas) {
                ends.append(" broker ")
                        .append(FaultCluster.brokerId(r.brokerIndex()))
                        .append(": [")
                        .append(r.logStartOffset())
                        .append(", ")
                        .append(r.logEndOffset())
                        .append(')');
            }
            ledger.violation(round, "REPLICA_LEO_DIFFERS", partition, "replica logs after settling:" + ends);
        }
        if (!requireEqualEnds && bound == Long.MAX_VALUE) {
            throw new IllegalArgumentException("a finite bound or requireEqualEnds");
        }
        long end = requireEqualEnds ? maxEnd : bound;
        List<Map<Long, String>> values =
                replicas.stream().map(ReplicaCheck::valuesOf).toList();
        for (long o = start; o < end; o++) {
            String first = null;
            int firstIndex = -1;
            for (int i = 0; i < replicas.size(); i++) {
                String v = values.get(i).get(o);
                if (v == null) {
                    ledger.violation(
                            round,
                            "REPLICA_MISSING",
                            partition,
                            "broker " + FaultCluster.brokerId(replicas.get(i).brokerIndex()) + " lacks offset " + o
                                    + " (its log: [" + replicas.get(i).logStartOffset() + ", "
                                    + replicas.get(i).logEndOffset() + "), committed bound " + end + ")");
                    continue;
                }
                if (first == null) {
                    first = v;
                    firstIndex = i;
                } else if (!first.equals(v)) {
                    ledger.violation(
                            round,
                            "REPLICA_DIVERGED",
                            partition,
                            "offset " + o + ": broker "
                                    + FaultCluster.brokerId(
                                            replicas.get(firstIndex).brokerIndex())
                                    + " has " + first + ", broker "
                                    + FaultCluster.brokerId(replicas.get(i).brokerIndex())
                                    + " has " + v);
                }
            }
        }
        checkBytes(ledger, round, partition, replicas, start, end);
        for (Ledger.Acked a : ledger.ackedOf(partition).values()) {
            if (a.offset() < start || a.offset() >= end) {
                continue;
            }
            for (int i = 0; i < replicas.size(); i++) {
                String v = values.get(i).get(a.offset());
                if (!a.value().equals(v)) {
                    ledger.violation(
                            round,
                            "ACKED_MISSING_ON_REPLICA",
                            partition,
                            "acknowledged " + a.value() + " at offset " + a.offset() + " (round " + a.round()
                                    + "): broker "
                                    + FaultCluster.brokerId(replicas.get(i).brokerIndex()) + " has " + v);
                }
            }
        }
        return ledger.violations(round) - before;
    }

    private static void checkContiguous(Ledger ledger, int round, int partition, ReplicaLog r) {
        long expect = -1;
        for (ReplicaLog.Batch b : r.batches()) {
            if (expect >= 0 && b.baseOffset() != expect) {
                ledger.violation(
                        round,
                        "REPLICA_GAP",
                        partition,
                        "broker " + FaultCluster.brokerId(r.brokerIndex()) + ": batch at " + b.baseOffset()
                                + " follows one ending before " + expect);
            }
            expect = b.lastOffset() + 1;
        }
    }

    private static void checkBytes(
            Ledger ledger, int round, int partition, List<ReplicaLog> replicas, long start, long end) {
        List<Map<Long, ReplicaLog.Batch>> byBase = replicas.stream()
                .map(r -> {
                    Map<Long, ReplicaLog.Batch> m = new HashMap<>();
                    r.batches().forEach(b -> m.put(b.baseOffset(), b));
                    return m;
                })
                .toList();
        for (int i = 0; i < replicas.size(); i++) {
            for (ReplicaLog.Batch b : replicas.get(i).batches()) {
                if (b.baseOffset() < start || b.lastOffset() >= end) {
                    continue;
                }
                for (int j = i + 1; j < replicas.size(); j++) {
                    ReplicaLog.Batch other = byBase.get(j).get(b.baseOffset());
                    if (other != null && !other.sameBytes(b)) {
                        ledger.violation(
                                round,
                                "REPLICA_BYTES_DIFFER",
                                partition,
                                "batch [" + b.baseOffset() + ", " + b.lastOffset() + "] (epoch " + b.leaderEpoch()
                                        + ") on broker "
                                        + FaultCluster.brokerId(replicas.get(i).brokerIndex())
                                        + " vs [" + other.baseOffset() + ", " + other.lastOffset() + "] (epoch "
                                        + other.leaderEpoch() + ") on broker "
                                        + FaultCluster.brokerId(replicas.get(j).brokerIndex()));
                    }
                }
            }
        }
    }

    private static Map<Long, String> valuesOf(ReplicaLog r) {
        Map<Long, String> m = new HashMap<>();
        for (ReplicaLog.Rec rec : r.records()) {
            m.put(rec.offset(), rec.value());
        }
        return m;
    }
}
