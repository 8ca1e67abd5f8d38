package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.controller.image.BrokerRegistration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ReplicaPlacerTest {

    private static BrokerRegistration broker(int id, String rack) {
        return new BrokerRegistration(id, UUID.randomUUID(), id, List.of(), rack, false);
    }

    @Test
    void unbalancedRacksStillSpanTwoRacks() {
        // The layout of issue #5's review: A={1,2,3}, B={4}; every rf=2 partition must use both racks.
        List<BrokerRegistration> brokers = List.of(broker(1, "A"), broker(2, "A"), broker(3, "A"), broker(4, "B"));
        List<List<Integer>> placed = ReplicaPlacer.place(brokers, 0, 8, 2, 0);
        for (List<Integer> replicas : placed) {
            assertThat(replicas).hasSize(2).contains(4);
        }
        assertThat(placed.stream().map(r -> r.get(0)).toList()).containsExactly(1, 4, 2, 3, 1, 4, 2, 3);
    }

    @Test
    void noRacksIsPlainRoundRobin() {
        List<BrokerRegistration> brokers = new ArrayList<>();
        for (int id : new int[] {7, 3, 5, 1, 9}) {
            brokers.add(broker(id, ""));
        }
        List<Integer> byId = List.of(1, 3, 5, 7, 9);
        int first = 2;
        int start = 3;
        List<List<Integer>> placed = ReplicaPlacer.place(brokers, first, 11, 3, start);
        for (int i = 0; i < placed.size(); i++) {
            int p = first + i;
            List<Integer> expected =
                    List.of(byId.get((start + p) % 5), byId.get((start + p + 1) % 5), byId.get((start + p + 2) % 5));
            assertThat(placed.get(i)).as("partition %d", p).isEqualTo(expected);
        }
    }

    @Test
    void placementPropertiesOverManyRackLayouts() {
        Random random = new Random(20261129L);
        int layouts = 0;
        for (int iteration = 0; iteration < 2000; iteration++) {
            int n = 1 + random.nextInt(12);
            boolean withRacks = random.nextInt(4) != 0;
            int rackCount = withRacks ? 1 + random.nextInt(Math.min(n, 5)) : 0;
            List<BrokerRegistration> brokers = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ids.add(1 + i * (1 + random.nextInt(3)) + random.nextInt(2) * 100);
            }
            ids = new ArrayList<>(new HashSet<>(ids));
            Collections.shuffle(ids, random);
            n = ids.size();
            rackCount = Math.min(rackCount, n);
            for (int i = 0; i < n; i++) {
                String rack;
                if (!withRacks) {
                    rack = "";
                } else if (i < rackCount) {
                    rack = "rack-" + i; // every rack gets at least one broker
                } else {
                    // skewed: low racks are much more likely, so rack sizes are unbalanced
                    rack = "rack-" + Math.min(random.nextInt(rackCount), random.nextInt(rackCount));
                }
                brokers.add(broker(ids.get(i), rack));
            }
            Map<Integer, String> rackOf = new HashMap<>();
            brokers.forEach(b -> rackOf.put(b.id(), b.rack()));
            int racks = new HashSet<>(rackOf.values()).size();
            int rf = 1 + random.nextInt(n);
            int count = 1 + random.nextInt(40);
            int first = random.nextInt(5);
            int start = random.nextInt(1000) - 500;

            List<List<Integer>> placed = ReplicaPlacer.place(brokers, first, count, rf, start);
            layouts++;

            assertThat(placed).hasSize(count);
            Map<Integer, Integer> leaderCounts = new HashMap<>();
            ids.forEach(id -> leaderCounts.put(id, 0));
            for (List<Integer> replicas : placed) {
                String where = "brokers " + rackOf + " rf " + rf + " replicas " + replicas;
                assertThat(replicas).as(where).hasSize(rf).doesNotHaveDuplicates();
                assertThat(rackOf.keySet()).as(where).containsAll(replicas);
                Set<String> spanned = new HashSet<>();
                replicas.forEach(id -> spanned.add(rackOf.get(id)));
                assertThat(spanned).as(where).hasSize(Math.min(rf, racks));
                leaderCounts.merge(replicas.get(0), 1, Integer::sum);
            }
            int min = Collections.min(leaderCounts.values());
            int max = Collections.max(leaderCounts.values());
            assertThat(max - min)
                    .as("leaders %s over %d partitions", leaderCounts, count)
                    .isLessThanOrEqualTo(1);
        }
        assertThat(layouts).isEqualTo(2000);
    }

    @Test
    void replicationFactorOutsideBrokerCountIsRejected() {
        List<BrokerRegistration> brokers = List.of(broker(1, "A"), broker(2, "B"));
        assertThatThrownBy(() -> ReplicaPlacer.place(brokers, 0, 1, 3, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replication factor 3");
        assertThatThrownBy(() -> ReplicaPlacer.place(brokers, 0, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
