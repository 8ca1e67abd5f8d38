package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.ApplyResult;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The election rules ({@link Elections}, and {@link Fencing} which uses them) as pure functions over
 * images built with {@link MetadataApplier}; every change is applied through the applier to check the
 * epochs it gives.
 */
class ElectionsTest {
    private static final UUID T = new UUID(7, 7);

    /** A partition spec: replicas (preferred first), leader, ISR. */
    record P(List<Integer> replicas, int leader, List<Integer> isr) {}

    /** An image with brokers 1..n ({@code live[i-1]}: unfenced) and topic "t" with {@code config}. */
    static MetadataImage image(boolean[] live, Map<String, String> config, P... parts) {
        List<MetadataRecord> records = new ArrayList<>();
        for (int id = 1; id <= live.length; id++) {
            records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(new UUID(1, id)))
                    .setBrokerEpoch(100 + id)
                    .setFenced(!live[id - 1])
                    .build()));
        }
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(T))
                .setName("t")
                .putAllConfig(config)
                .build()));
        for (int i = 0; i < parts.length; i++) {
            records.add(MetadataRecords.of(PartitionRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(T))
                    .setPartition(i)
                    .addAllReplicas(parts[i].replicas())
                    .setLeader(parts[i].leader())
                    .setLeaderEpoch(5)
                    .addAllIsr(parts[i].isr())
                    .setPartitionEpoch(9)
                    .build()));
        }
        ApplyResult r = MetadataApplier.apply(MetadataImage.EMPTY, 1, 1, records);
        assertThat(r.ok()).as(r.message()).isTrue();
        return r.image();
    }

    static boolean[] live(boolean... b) {
        return b;
    }

    /** Applies {@code records} as the next entry; it must apply. */
    static MetadataImage apply(MetadataImage img, List<MetadataRecord> records) {
        ApplyResult r = MetadataApplier.apply(img, img.term(), img.offset() + 1, records);
        assertThat(r.ok()).as(r.message()).isTrue();
        return r.image();
    }

    static PartitionImage part(MetadataImage img, int p) {
        return img.partition(T, p);
    }

    @Test
    void fencingTheLeaderElectsTheFirstLiveIsrReplicaInAssignmentOrderAndBumpsBothEpochs() {
        // Replicas [3, 1, 2]: 3 leads, 1 is in the ISR but fenced, so 2 is the first live ISR member.
        MetadataImage img = image(live(false, true, true), Map.of(), new P(List.of(3, 1, 2), 3, List.of(3, 1, 2)));
        Fencing.Plan plan = Fencing.fence(img, img.broker(3), false);
        assertThat(plan.changes()).singleElement().satisfies(c -> {
            assertThat(c.leader()).isEqualTo(2);
            assertThat(c.isr()).containsExactly(1, 2);
            assertThat(c.unclean()).isFalse();
        });
        PartitionImage after = part(apply(img, plan.records()), 0);
        assertThat(after.leader()).isEqualTo(2);
        assertThat(after.isr()).containsExactly(1, 2);
        assertThat(after.leaderEpoch()).isEqualTo(6);
        assertThat(after.partitionEpoch()).isEqualTo(10);
    }

    @Test
    void fencingAFollowerShrinksTheIsrKeepsTheLeaderAndItsEpoch() {
        MetadataImage img = image(live(true, true, true), Map.of(), new P(List.of(1, 2, 3), 1, List.of(1, 2, 3)));
        PartitionImage after =
                part(apply(img, Fencing.fence(img, img.broker(2), false).records()), 0);
        assertThat(after.leader()).isEqualTo(1);
        assertThat(after.isr()).containsExactly(1, 3);
        assertThat(after.leaderEpoch()).as("same leader, same leader epoch").isEqualTo(5);
        assertThat(after.partitionEpoch()).isEqualTo(10);
        assertThat(after.replicas()).containsExactly(1, 2, 3);
    }

    @Test
    void withUncleanOffTheLastIsrMemberStaysAndThePartitionGoesOfflineEvenWithLiveReplicasOutside() {
        MetadataImage img = image(live(true, true, true), Map.of(), new P(List.of(1, 2, 3), 1, List.of(1)));
        Fencing.Plan plan = Fencing.fence(img, img.broker(1), false);
        MetadataImage next = apply(img, plan.records());
        PartitionImage after = part(next, 0);
        assertThat(after.leader()).isEqualTo(PartitionImage.NO_LEADER);
        assertThat(after.isr()).as("Kafka keeps the last ISR member").containsExactly(1);
        assertThat(after.leaderEpoch())
                .as("going leaderless is a leader change")
                .isEqualTo(6);
        assertThat(after.partitionEpoch()).isEqualTo(10);
        // The periodic re-evaluation does not elect 2 or 3 either.
        assertThat(Elections.electLeaderless(next, Elections.live(next), false, Elections.Reason.OFFLINE))
                .isEmpty();
        // A topic override false wins over a controller default true.
        MetadataImage off = image(
                live(true, true, true), Map.of(Elections.UNCLEAN_KEY, "false"), new P(List.of(1, 2, 3), 1, List.of(1)));
        assertThat(part(apply(off, Fencing.fence(off, off.broker(1), true).records()), 0)
                        .leader())
                .isEqualTo(PartitionImage.NO_LEADER);
    }

    @Test
    void withUncleanOnTheFirstLiveReplicaOutsideTheIsrLeadsAndTheIsrBecomesIt() {
        for (Map<String, String> config : List.of(Map.of(Elections.UNCLEAN_KEY, "true"), Map.<String, String>of())) {
            boolean controllerDefault = config.isEmpty(); // topic override, or the controller default
            MetadataImage img = image(live(true, false, true), config, new P(List.of(1, 2, 3), 1, List.of(1)));
            Fencing.Plan plan = Fencing.fence(img, img.broker(1), controllerDefault);
            assertThat(plan.changes()).singleElement().satisfies(c -> {
                assertThat(c.unclean()).isTrue();
                assertThat(c.leader()).as("2 is fenced: 3").isEqualTo(3);
            });
            PartitionImage after = part(apply(img, plan.records()), 0);
            assertThat(after.leader()).isEqualTo(3);
            assertThat(after.isr()).containsExactly(3);
            assertThat(after.leaderEpoch()).isEqualTo(6);
            assertThat(after.partitionEpoch()).isEqualTo(10);
        }
    }

    @Test
    void uncleanOnStillPrefersALiveIsrMember() {
        MetadataImage img = image(
                live(true, true, true),
                Map.of(Elections.UNCLEAN_KEY, "TRUE"),
                new P(List.of(1, 2, 3), 1, List.of(1, 3)));
        Fencing.Plan plan = Fencing.fence(img, img.broker(1), false);
        assertThat(plan.changes()).singleElement().satisfies(c -> {
            assertThat(c.unclean()).isFalse();
            assertThat(c.leader()).as("3 is in the ISR, 2 is not").isEqualTo(3);
            assertThat(c.isr()).containsExactly(3);
        });
    }

    @Test
    void aReturningIsrMemberLeadsItsLeaderlessPartitionsAndAReturningNonIsrReplicaOnlyWhenUncleanIsOn() {
        // p0: offline, ISR {2}; p1: offline, ISR {1} (3 is live but not in it); p2: led by 3.
        MetadataImage img = image(
                live(false, false, true),
                Map.of(),
                new P(List.of(1, 2, 3), PartitionImage.NO_LEADER, List.of(2)),
                new P(List.of(1, 2, 3), PartitionImage.NO_LEADER, List.of(1)),
                new P(List.of(3, 2, 1), 3, List.of(3, 2)));
        Fencing.Plan plan = Fencing.unfence(img, img.broker(2), false);
        assertThat(plan.changes()).singleElement().satisfies(c -> {
            assertThat(c.before().partition()).isZero();
            assertThat(c.leader()).isEqualTo(2);
            assertThat(c.isr()).containsExactly(2);
        });
        MetadataImage next = apply(img, plan.records());
        assertThat(next.broker(2).fenced()).isFalse();
        assertThat(part(next, 0).leader()).isEqualTo(2);
        assertThat(part(next, 0).leaderEpoch()).isEqualTo(6);
        assertThat(part(next, 1).leader()).isEqualTo(PartitionImage.NO_LEADER);
        assertThat(part(next, 1)).isEqualTo(part(img, 1));
        assertThat(part(next, 2)).isEqualTo(part(img, 2));

        Fencing.Plan unclean = Fencing.unfence(img, img.broker(2), true);
        MetadataImage u = apply(img, unclean.records());
        assertThat(part(u, 1).leader()).isEqualTo(2);
        assertThat(part(u, 1).isr()).containsExactly(2);
        assertThat(unclean.changes().get(1).unclean()).isTrue();
        assertThat(part(u, 2)).isEqualTo(part(img, 2));
    }

    @Test
    void preferredElectionMovesLeadershipOnlyToALiveInSyncPreferredReplica() {
        MetadataImage img = image(
                live(true, true, false),
                Map.of(),
                new P(List.of(1, 2, 3), 2, List.of(1, 2)), // elect 1
                new P(List.of(1, 2, 3), 1, List.of(1, 2)), // already
                new P(List.of(3, 2, 1), 2, List.of(2, 1)), // 3 fenced
                new P(List.of(1, 2, 3), 2, List.of(2))); // 1 not in ISR
        TopicImage t = img.topic("t");
        var live = Elections.live(img);
        Elections.Outcome elect = Elections.preferred(t, t.partition(0), live, Elections.Reason.PREFERRED);
        assertThat(elect.error()).isEqualTo(ErrorCode.NONE);
        assertThat(elect.change().leader()).isEqualTo(1);
        assertThat(elect.change().isr()).containsExactly(1, 2);
        assertThat(Elections.preferred(t, t.partition(1), live, Elections.Reason.PREFERRED)
                        .error())
                .isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
        Elections.Outcome fenced = Elections.preferred(t, t.partition(2), live, Elections.Reason.PREFERRED);
        assertThat(fenced.error()).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
        assertThat(fenced.message()).contains("3 is fenced");
        Elections.Outcome notInIsr = Elections.preferred(t, t.partition(3), live, Elections.Reason.PREFERRED);
        assertThat(notInIsr.error()).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
        assertThat(notInIsr.message()).contains("not in the ISR [2]");

        PartitionImage after = part(apply(img, List.of(elect.change().record())), 0);
        assertThat(after.leader()).isEqualTo(1);
        assertThat(after.leaderEpoch()).isEqualTo(6);
        assertThat(after.partitionEpoch()).isEqualTo(10);
        assertThat(after.isr()).containsExactly(1, 2);
    }

    @Test
    void requestedUncleanElectionIsCleanWhenItCanBeAndFailsWithoutALiveReplica() {
        MetadataImage img = image(
                live(false, true, true),
                Map.of(),
                new P(List.of(1, 2, 3), PartitionImage.NO_LEADER, List.of(1)), // unclean: 2
                new P(List.of(1, 2, 3), 2, List.of(2)), // has a leader
                new P(List.of(1, 3, 2), PartitionImage.NO_LEADER, List.of(1, 2)), // clean: 2 (in ISR)
                new P(List.of(1), PartitionImage.NO_LEADER, List.of(1))); // nobody live
        TopicImage t = img.topic("t");
        var live = Elections.live(img);
        Elections.Outcome u = Elections.unclean(t, t.partition(0), live);
        assertThat(u.change().leader()).isEqualTo(2);
        assertThat(u.change().isr()).containsExactly(2);
        assertThat(u.change().unclean()).isTrue();
        assertThat(Elections.unclean(t, t.partition(1), live).error()).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
        Elections.Outcome clean = Elections.unclean(t, t.partition(2), live);
        assertThat(clean.change().unclean()).isFalse();
        assertThat(clean.change().leader())
                .as("3 is earlier but not in the ISR")
                .isEqualTo(2);
        assertThat(clean.change().isr()).containsExactly(1, 2);
        assertThat(Elections.unclean(t, t.partition(3), live).error())
                .isEqualTo(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
    }

    @Test
    void rebalanceMovesBackOnlyBrokersAboveTheImbalanceThreshold() {
        // Broker 1 is preferred for 10 partitions; broker 2 for 2.
        List<P> parts = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            parts.add(new P(List.of(1, 2), 1, List.of(1, 2)));
        }
        parts.add(new P(List.of(2, 1), 1, List.of(2, 1)));
        parts.add(new P(List.of(2, 1), 2, List.of(2, 1)));
        // 1 of 10 not led by 1 (10 %): not above 10 %. Broker 2: 1 of 2 (50 %): above.
        parts.set(0, new P(List.of(1, 2), 2, List.of(1, 2)));
        MetadataImage img = image(live(true, true), Map.of(), parts.toArray(P[]::new));
        List<Elections.Change> changes = Elections.rebalance(img, Elections.live(img), 10);
        assertThat(changes).singleElement().satisfies(c -> {
            assertThat(c.before().partition()).isEqualTo(10);
            assertThat(c.leader()).isEqualTo(2);
        });
        // 2 of 10 (20 %): both move back; with the threshold at 20 % neither does.
        parts.set(1, new P(List.of(1, 2), 2, List.of(1, 2)));
        img = image(live(true, true), Map.of(), parts.toArray(P[]::new));
        assertThat(Elections.rebalance(img, Elections.live(img), 10))
                .extracting(c -> c.before().partition())
                .containsExactly(0, 1, 10);
        assertThat(Elections.rebalance(img, Elections.live(img), 20))
                .extracting(c -> c.before().partition())
                .containsExactly(10);
        // A preferred replica outside the ISR, or fenced, is left alone.
        parts.set(0, new P(List.of(1, 2), 2, List.of(2)));
        img = image(live(true, true), Map.of(), parts.toArray(P[]::new));
        assertThat(Elections.rebalance(img, Elections.live(img), 10))
                .extracting(c -> c.before().partition())
                .containsExactly(1, 10);
        img = image(live(false, true), Map.of(), parts.toArray(P[]::new));
        assertThat(Elections.rebalance(img, Elections.live(img), 10))
                .extracting(c -> c.before().partition())
                .containsExactly(10);
        // Applied: every partition whose preferred replica is in the ISR is led by it again.
        img = image(live(true, true), Map.of(), parts.toArray(P[]::new));
        MetadataImage moved = apply(img, Elections.records(Elections.rebalance(img, Elections.live(img), 0)));
        for (PartitionImage p : moved.topic("t").partitions()) {
            int preferred = p.replicas().get(0);
            assertThat(p.leader()).isEqualTo(p.isr().contains(preferred) ? preferred : 2);
        }
    }

    @Test
    void imbalanceRatioIsComparedExactly() {
        assertThat(Elections.imbalanced(1, 10, 10)).isFalse();
        assertThat(Elections.imbalanced(2, 10, 10)).isTrue();
        assertThat(Elections.imbalanced(1, 1, 100)).isFalse();
        assertThat(Elections.imbalanced(1, 1, 99)).isTrue();
        assertThat(Elections.imbalanced(0, 0, 0)).isFalse();
    }

    /**
     * Random images and random fences, unfences, re-registrations, preferred and unclean elections,
     * each applied through the applier: after every entry the invariants hold, and every change bumps
     * the partition epoch, and the leader epoch exactly when the leader changed.
     */
    @Test
    void invariantsHoldOverRandomElectionSequences() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int checkedChanges = 0;
        int unclean = 0;
        for (int round = 0; round < 200; round++) {
            int brokers = 3 + rnd.nextInt(3);
            boolean[] liveNow = new boolean[brokers];
            for (int i = 0; i < brokers; i++) {
                liveNow[i] = rnd.nextInt(4) != 0;
            }
            List<P> parts = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                List<Integer> ids = new ArrayList<>();
                for (int i = 1; i <= brokers; i++) {
                    ids.add(i);
                }
                java.util.Collections.shuffle(ids, rnd);
                List<Integer> replicas = ids.subList(0, 1 + rnd.nextInt(3));
                List<Integer> isr = new ArrayList<>();
                for (int r : replicas) {
                    if (rnd.nextBoolean()) {
                        isr.add(r);
                    }
                }
                if (isr.isEmpty()) {
                    isr.add(replicas.get(0));
                }
                List<Integer> liveIsr = isr.stream().filter(r -> liveNow[r - 1]).toList();
                int leader = liveIsr.isEmpty() ? PartitionImage.NO_LEADER : liveIsr.get(rnd.nextInt(liveIsr.size()));
                parts.add(new P(List.copyOf(replicas), leader, isr));
            }
            boolean uncleanDefault = rnd.nextBoolean();
            MetadataImage img = image(
                    liveNow,
                    rnd.nextBoolean() ? Map.of() : Map.of(Elections.UNCLEAN_KEY, String.valueOf(rnd.nextBoolean())),
                    parts.toArray(P[]::new));
            for (int step = 0; step < 12; step++) {
                BrokerRegistration b = img.broker(1 + rnd.nextInt(brokers));
                List<Elections.Change> changes;
                List<MetadataRecord> records;
                switch (rnd.nextInt(5)) {
                    case 0 -> {
                        if (b.fenced()) {
                            continue;
                        }
                        Fencing.Plan plan = Fencing.fence(img, b, uncleanDefault);
                        changes = plan.changes();
                        records = plan.records();
                    }
                    case 1 -> {
                        if (!b.fenced()) {
                            continue;
                        }
                        Fencing.Plan plan = Fencing.unfence(img, b, uncleanDefault);
                        changes = plan.changes();
                        records = plan.records();
                    }
                    case 2 -> {
                        changes = new ArrayList<>();
                        for (PartitionImage p : img.topic("t").partitions()) {
                            Elections.Outcome o = Elections.preferred(
                                    img.topic("t"), p, Elections.live(img), Elections.Reason.PREFERRED);
                            if (o.change() != null) {
                                changes.add(o.change());
                            }
                        }
                        records = Elections.records(changes);
                    }
                    case 3 -> {
                        changes = new ArrayList<>();
                        for (PartitionImage p : img.topic("t").partitions()) {
                            Elections.Outcome o = Elections.unclean(img.topic("t"), p, Elections.live(img));
                            if (o.change() != null) {
                                changes.add(o.change());
                            }
                        }
                        records = Elections.records(changes);
                    }
                    default -> {
                        changes = Elections.rebalance(img, Elections.live(img), rnd.nextInt(50));
                        records = Elections.records(changes);
                    }
                }
                if (records.isEmpty()) {
                    continue;
                }
                MetadataImage next = apply(img, records);
                for (Elections.Change c : changes) {
                    PartitionImage before = c.before();
                    PartitionImage after = part(next, before.partition());
                    assertThat(after.partitionEpoch()).as("seed %d", seed).isEqualTo(before.partitionEpoch() + 1);
                    assertThat(after.leaderEpoch())
                            .as("seed %d: leader %d -> %d", seed, before.leader(), after.leader())
                            .isEqualTo(before.leaderEpoch() + (after.leader() != before.leader() ? 1 : 0));
                    if (!c.unclean() && after.leader() != PartitionImage.NO_LEADER) {
                        assertThat(before.isr())
                                .as("seed %d: clean election stays in the ISR", seed)
                                .contains(after.leader());
                    }
                    if (c.unclean()) {
                        unclean++;
                        assertThat(after.isr()).containsExactly(after.leader());
                    }
                    checkedChanges++;
                }
                for (PartitionImage p : next.topic("t").partitions()) {
                    assertThat(p.replicas()).as("seed %d", seed).containsAll(p.isr());
                    assertThat(new HashSet<>(p.isr())).hasSameSizeAs(p.isr());
                    assertThat(p.isr()).isNotEmpty();
                    if (p.leader() != PartitionImage.NO_LEADER) {
                        assertThat(p.isr()).as("seed %d", seed).contains(p.leader());
                        assertThat(next.broker(p.leader()).fenced())
                                .as("seed %d: leader %d is live", seed, p.leader())
                                .isFalse();
                    }
                }
                img = next;
            }
        }
        assertThat(checkedChanges).as("seed %d", seed).isGreaterThan(500);
        assertThat(unclean).as("seed %d", seed).isPositive();
    }
}
