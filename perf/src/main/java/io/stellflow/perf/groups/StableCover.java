package io.stellflow.perf.groups;

import java.util.List;
import java.util.Set;

/**
 * The "stable assignment" predicate of the rebalance cases, the same for both systems: every
 * partition {@code 0..partitions-1} of the topic is owned by exactly one live member, and every
 * member owns {@code floor(partitions / members)} or {@code ceil(partitions / members)} of them (what
 * a uniform assignor gives one topic). Ownership is what each member's rebalance listener has run
 * for, that is, what its consumer has taken on and will acknowledge in its next heartbeat.
 *
 * <p>Why balance is part of it: while members join, a full disjoint cover can exist before the
 * rebalance is done (the first member owns every partition, the others none yet). Both protocols
 * hand a partition to its new owner only after the old owner released it, so each member's set
 * grows towards its target; once each holds a floor-or-ceil share of a full cover, each holds its
 * target. Stateless.
 */
final class StableCover {
    private StableCover() {}

    /**
     * @param owned each live member's partitions (immutable sets, read once)
     * @param partitions the topic's partition count, > 0
     * @return null when stable, else a short reason (for the case's diagnostics)
     */
    static String check(List<Set<Integer>> owned, int partitions) {
        int members = owned.size();
        if (members == 0) {
            return "no live member";
        }
        int floor = partitions / members;
        int ceil = floor + (partitions % members == 0 ? 0 : 1);
        boolean[] seen = new boolean[partitions];
        int covered = 0;
        int unbalanced = 0;
        for (Set<Integer> set : owned) {
            if (set.size() < floor || set.size() > ceil) {
                unbalanced++;
            }
            for (int p : set) {
                if (p < 0 || p >= partitions) {
                    return "partition " + p + " outside 0.." + (partitions - 1);
                }
                if (seen[p]) {
                    return "partition " + p + " owned by two members";
                }
                seen[p] = true;
                covered++;
            }
        }
        if (covered < partitions || unbalanced > 0) {
            return "owned " + covered + " of " + partitions + " partitions, " + unbalanced + " of " + members
                    + " members outside " + floor + ".." + ceil;
        }
        return null;
    }
}
