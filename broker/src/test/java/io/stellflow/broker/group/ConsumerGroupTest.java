package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import io.stellflow.broker.group.ConsumerGroup.Heartbeat;
import io.stellflow.broker.group.ConsumerGroup.HeartbeatResult;
import io.stellflow.protocol.Errors;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Our group protocol (KIP-848 model) driven by an explicit clock, with invariants after each step. */
class ConsumerGroupTest {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final RequestOrigin ORIGIN = RequestOrigin.anonymous("app", "/10.0.0.9");
    private static final GroupConfig CONFIG = GroupConfig.defaults();
    private static final int SESSION_MS = CONFIG.consumerSessionTimeoutMs();

    private final Map<String, Integer> topics = new HashMap<>(Map.of("t", 6));
    private final ConsumerGroup group = new ConsumerGroup("g", CONFIG, t -> topics.getOrDefault(t, -1));
    private final AtomicInteger ids = new AtomicInteger();
    private final List<CoordinatorRecord> records = new ArrayList<>();
    private long now = 1_000;
    private boolean checkEachStep = true;

    private HeartbeatResult hb(String memberId, int epoch, List<String> subs, Assignment owned) {
        return hb(memberId, epoch, null, subs, owned, -1);
    }

    private HeartbeatResult hb(
            String memberId, int epoch, String instanceId, List<String> subs, Assignment owned, int rebalanceMs) {
        HeartbeatResult r = group.heartbeat(
                new Heartbeat(memberId, epoch, instanceId, null, rebalanceMs, subs, null, owned),
                ORIGIN,
                now,
                () -> "m" + ids.incrementAndGet(),
                records);
        if (checkEachStep) {
            checkNoPartitionOwnedTwice();
        }
        return r;
    }

    private HeartbeatResult join(List<String> subs) {
        HeartbeatResult r = hb(null, 0, subs, null);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return r;
    }

    private void checkNoPartitionOwnedTwice() {
        Set<TopicPartition> seen = new HashSet<>();
        for (ConsumerMember m : group.members()) {
            for (TopicPartition tp : m.assigned.union(m.pendingRevocation).partitions()) {
                assertThat(seen.add(tp)).as("%s held by two members", tp).isTrue();
            }
        }
    }

    private static Assignment t(Integer... partitions) {
        return Assignment.of(Map.of("t", List.of(partitions)));
    }

    @Test
    void aFirstMemberGetsEveryPartitionInItsFirstAnswer() {
        HeartbeatResult r = join(List.of("t"));
        assertThat(r.memberId()).isEqualTo("m1");
        assertThat(r.memberEpoch()).isEqualTo(1);
        assertThat(r.heartbeatIntervalMs()).isEqualTo(CONFIG.consumerHeartbeatIntervalMs());
        assertThat(r.sessionTimeoutMs()).isEqualTo(SESSION_MS);
        assertThat(r.assignment()).isEqualTo(t(0, 1, 2, 3, 4, 5));
        assertThat(group.state()).isEqualTo("Stable");
        // Nothing changed: the next answer leaves the assignment out.
        HeartbeatResult again = hb("m1", 1, null, t(0, 1, 2, 3, 4, 5));
        assertThat(again.assignment()).isNull();
        assertThat(again.memberEpoch()).isEqualTo(1);
    }

    @Test
    void partitionsAreRevokedBeforeTheyAreReassigned() {
        join(List.of("t"));
        HeartbeatResult b = join(List.of("t"));
        assertThat(group.groupEpoch()).isEqualTo(2);
        assertThat(group.targetEpoch()).isEqualTo(2);
        // b's target has three partitions, but a still owns them: b gets none yet.
        assertThat(b.memberEpoch()).isEqualTo(2);
        assertThat(b.assignment()).isEqualTo(Assignment.EMPTY);
        assertThat(group.state()).isEqualTo("Reconciling");

        // a must revoke first: its epoch stays 1 and its answer drops the revoked partitions.
        HeartbeatResult a = hb("m1", 1, null, null);
        assertThat(a.memberEpoch()).isEqualTo(1);
        Assignment aKeeps = group.targetOf("m1");
        assertThat(a.assignment()).isEqualTo(aKeeps);
        assertThat(group.member("m1").pendingRevocation).isEqualTo(group.targetOf("m2"));

        // b heartbeats while a has not acknowledged: still nothing.
        assertThat(hb("m2", 2, null, Assignment.EMPTY).assignment()).isNull();
        assertThat(group.member("m2").assigned.isEmpty()).isTrue();

        // a acknowledges (owned no longer holds them) and moves to epoch 2.
        HeartbeatResult ack = hb("m1", 1, null, aKeeps);
        assertThat(ack.memberEpoch()).isEqualTo(2);
        // Now b gets its partitions.
        HeartbeatResult b2 = hb("m2", 2, null, Assignment.EMPTY);
        assertThat(b2.assignment()).isEqualTo(group.targetOf("m2"));
        assertThat(b2.assignment().size()).isEqualTo(3);
        assertThat(group.state()).isEqualTo("Stable");
    }

    @Test
    void membersInTransitionAreAskedBackSoonerThanStableOnes() {
        int stable = CONFIG.consumerHeartbeatIntervalMs();
        int soon = Math.min(stable, ConsumerGroup.RECONCILING_HEARTBEAT_INTERVAL_MS);
        assertThat(soon).isLessThan(stable);
        assertThat(join(List.of("t")).heartbeatIntervalMs()).isEqualTo(stable);
        // b joins: its target is held by a, so b waits and is asked back soon.
        HeartbeatResult b = join(List.of("t"));
        assertThat(b.assignment()).isEqualTo(Assignment.EMPTY);
        assertThat(b.heartbeatIntervalMs()).isEqualTo(soon);
        // a learns it must revoke: asked back soon too.
        HeartbeatResult a = hb("m1", 1, null, null);
        assertThat(group.member("m1").pendingRevocation.isEmpty()).isFalse();
        assertThat(a.heartbeatIntervalMs()).isEqualTo(soon);
        // a acknowledges and is at its target: back to the configured interval.
        HeartbeatResult ack = hb("m1", 1, null, group.targetOf("m1"));
        assertThat(ack.heartbeatIntervalMs()).isEqualTo(stable);
        // b still misses nothing once it got its partitions.
        HeartbeatResult b2 = hb("m2", 2, null, Assignment.EMPTY);
        assertThat(b2.assignment()).isEqualTo(group.targetOf("m2"));
        assertThat(b2.heartbeatIntervalMs()).isEqualTo(stable);
    }

    @Test
    void aMemberThatDoesNotRevokeWithinItsRebalanceTimeoutIsFenced() {
        hb(null, 0, null, List.of("t"), null, 10_000);
        join(List.of("t"));
        hb("m1", 1, null, null); // revocation requested at now
        assertThat(group.member("m1").pendingRevocation.isEmpty()).isFalse();
        assertThat(group.nextDeadlineMs()).isEqualTo(now + 10_000);
        now += 9_999;
        hb("m2", 2, null, Assignment.EMPTY);
        assertThat(group.expire(now, records)).isEmpty();
        now += 1;
        assertThat(group.expire(now, records)).containsExactly("m1");
        group.computeTarget(now, records);
        HeartbeatResult b = hb("m2", group.member("m2").memberEpoch, null, Assignment.EMPTY);
        assertThat(b.assignment()).isEqualTo(t(0, 1, 2, 3, 4, 5));
        assertThat(b.memberEpoch()).isEqualTo(group.groupEpoch());
        // The fenced member is gone: its heartbeats and commits are refused.
        assertThat(hb("m1", 1, null, null).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(group.checkCommitter("m1", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aSilentMemberIsEvictedAfterTheSessionTimeout() {
        join(List.of("t"));
        join(List.of("t"));
        now += SESSION_MS - 1;
        hb("m2", 2, null, null);
        assertThat(group.expire(now, records)).isEmpty();
        now += 1;
        assertThat(group.expire(now, records)).containsExactly("m1");
        assertThat(group.memberCount()).isEqualTo(1);
        assertThat(group.state()).isEqualTo("Assigning");
    }

    @Test
    void epochsAreCheckedAndALostAnswerIsForgiven() {
        join(List.of("t"));
        assertThat(hb("m1", 7, null, null).errorCode()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        assertThat(hb("nobody", 1, null, null).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(hb(null, 1, null, null).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        join(List.of("t"));
        hb("m1", 1, null, null);
        hb("m1", 1, null, group.member("m1").assigned); // m1 now at epoch 2, previous 1
        assertThat(group.member("m1").memberEpoch).isEqualTo(2);
        // The answer carrying epoch 2 was lost: epoch 1 with owned partitions it has is accepted, and
        // the answer repeats the assignment.
        HeartbeatResult lost = hb("m1", 1, null, group.member("m1").assigned);
        assertThat(lost.errorCode()).isEqualTo(Errors.NONE);
        assertThat(lost.memberEpoch()).isEqualTo(2);
        assertThat(lost.assignment()).isEqualTo(group.member("m1").assigned);
        // ... but not if it claims partitions it does not have.
        assertThat(hb("m1", 1, null, t(0, 1, 2, 3, 4, 5)).errorCode()).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        // A fenced member rejoins with epoch 0 under the same id: it starts from nothing.
        HeartbeatResult rejoin = hb("m1", 0, List.of("t"), null);
        assertThat(rejoin.errorCode()).isEqualTo(Errors.NONE);
        assertThat(rejoin.memberId()).isEqualTo("m1");
        assertThat(rejoin.assignment()).isNotNull();
    }

    @Test
    void commitsAreFencedByMemberEpochAndOwnership() {
        join(List.of("t"));
        assertThat(group.checkCommitter("m1", 1)).isEqualTo(Errors.NONE);
        assertThat(group.checkCommitPartition("m1", "t", 0)).isEqualTo(Errors.NONE);
        join(List.of("t"));
        hb("m1", 1, null, null); // m1 must revoke three partitions, still at epoch 1
        TopicPartition revoked =
                group.member("m1").pendingRevocation.partitions().get(0);
        // Pending revocation: m1 may still commit it (it has not given it up yet).
        assertThat(group.checkCommitPartition("m1", revoked.topic(), revoked.partition()))
                .isEqualTo(Errors.NONE);
        hb("m1", 1, null, group.member("m1").assigned); // acknowledged: epoch 2
        assertThat(group.checkCommitter("m1", 1)).isEqualTo(Errors.STALE_MEMBER_EPOCH);
        assertThat(group.checkCommitter("m1", 3)).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        assertThat(group.checkCommitter("m1", 2)).isEqualTo(Errors.NONE);
        assertThat(group.checkCommitPartition("m1", revoked.topic(), revoked.partition()))
                .isEqualTo(Errors.STALE_MEMBER_EPOCH);
        hb("m2", 2, null, Assignment.EMPTY);
        assertThat(group.checkCommitPartition("m2", revoked.topic(), revoked.partition()))
                .isEqualTo(Errors.NONE);
        assertThat(group.checkCommitter(null, -1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aStaticMemberKeepsItsPartitionsAcrossARestartWithinTheSession() {
        HeartbeatResult a = hb(null, 0, "inst-a", List.of("t"), null, -1);
        join(List.of("t"));
        hb("m1", 1, "inst-a", null, null, -1);
        hb("m1", 1, "inst-a", null, group.member("m1").assigned, -1);
        hb("m2", 2, null, Assignment.EMPTY);
        Assignment aOwns = group.member("m1").assigned;
        int aEpoch = group.member("m1").memberEpoch;
        int groupEpoch = group.groupEpoch();
        assertThat(a.memberId()).isEqualTo("m1");

        // Static leave: the member stays with its partitions, nobody else gets them.
        HeartbeatResult left = hb("m1", -2, "inst-a", null, null, -1);
        assertThat(left.memberEpoch()).isEqualTo(-2);
        assertThat(group.groupEpoch()).isEqualTo(groupEpoch);
        assertThat(hb("m2", 2, null, group.member("m2").assigned).assignment()).isNull();

        // A second live member cannot take the instance id while m2 ... and the restart takes over.
        now += SESSION_MS - 1;
        HeartbeatResult back = hb(null, 0, "inst-a", List.of("t"), null, -1);
        assertThat(back.errorCode()).isEqualTo(Errors.NONE);
        assertThat(back.memberId()).isEqualTo("m3");
        assertThat(back.memberEpoch()).isEqualTo(aEpoch);
        assertThat(back.assignment()).isEqualTo(aOwns);
        assertThat(group.member("m1")).isNull();
        assertThat(group.groupEpoch()).isEqualTo(groupEpoch);

        HeartbeatResult dup = hb(null, 0, "inst-a", List.of("t"), null, -1);
        assertThat(dup.errorCode()).isEqualTo(Errors.UNRELEASED_INSTANCE_ID);
        assertThat(group.memberCount()).isEqualTo(2);
    }

    @Test
    void aStaticMemberThatDoesNotComeBackIsRemovedAfterTheSessionTimeout() {
        hb(null, 0, "inst-a", List.of("t"), null, -1);
        hb("m1", -2, "inst-a", null, null, -1);
        assertThat(hb("m1", 1, "inst-a", null, null, -1).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(hb("m1", -2, null, null, null, -1).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        now += SESSION_MS;
        assertThat(group.expire(now, records)).containsExactly("m1");
        assertThat(group.isEmpty()).isTrue();
        assertThat(group.emptySinceMs()).isEqualTo(now);
        assertThat(group.state()).isEqualTo("Empty");
    }

    @Test
    void leaveReleasesThePartitionsAndBumpsTheEpoch() {
        join(List.of("t"));
        join(List.of("t"));
        hb("m1", 1, null, null);
        hb("m1", 1, null, group.member("m1").assigned);
        HeartbeatResult bye = hb("m1", -1, null, null);
        assertThat(bye.memberEpoch()).isEqualTo(-1);
        assertThat(group.groupEpoch()).isEqualTo(3);
        HeartbeatResult b = hb("m2", 2, null, Assignment.EMPTY);
        assertThat(b.memberEpoch()).isEqualTo(3);
        assertThat(b.assignment()).isEqualTo(t(0, 1, 2, 3, 4, 5));
        assertThat(hb("m1", -1, null, null).errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void moreTopicPartitionsMakeANewTargetWithANewEpoch() {
        join(List.of("t", "u"));
        assertThat(group.targetOf("m1").size()).isEqualTo(6);
        group.onMetadataChange(now);
        assertThat(group.targetStale()).isFalse(); // nothing changed
        topics.put("u", 2);
        group.onMetadataChange(now);
        assertThat(group.targetStale()).isTrue();
        assertThat(group.nextDeadlineMs()).isEqualTo(now);
        group.computeTarget(now, records);
        assertThat(group.groupEpoch()).isEqualTo(2);
        assertThat(group.targetEpoch()).isEqualTo(2);
        HeartbeatResult r = hb("m1", 1, null, null);
        assertThat(r.memberEpoch()).isEqualTo(2);
        assertThat(r.assignment().size()).isEqualTo(8);
    }

    @Test
    void badRequestsAreRefusedWithAReason() {
        HeartbeatResult r = group.heartbeat(
                new Heartbeat(null, 0, null, null, -1, List.of("t"), "round-robin", null),
                ORIGIN,
                now,
                () -> "x",
                records);
        assertThat(r.errorCode()).isEqualTo(Errors.UNSUPPORTED_ASSIGNOR);
        assertThat(r.errorMessage()).contains("round-robin");
        assertThat(hb(null, 0, null, null).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(hb(null, -3, List.of("t"), null).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(hb(null, 0, null, List.of("t"), null, 0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(records).isEmpty();
    }

    @Test
    void theMajorityAssignorIsUsed() {
        group.heartbeat(
                new Heartbeat(null, 0, null, null, -1, List.of("t"), "range", null), ORIGIN, now, () -> "a", records);
        assertThat(group.assignor()).isEqualTo("range");
        group.heartbeat(
                new Heartbeat(null, 0, null, null, -1, List.of("t"), "uniform", null), ORIGIN, now, () -> "b", records);
        group.heartbeat(
                new Heartbeat(null, 0, null, null, -1, List.of("t"), "uniform", null), ORIGIN, now, () -> "c", records);
        assertThat(group.assignor()).isEqualTo("uniform");
    }

    @Test
    void groupMaxSizeIsEnforced() {
        GroupConfig small =
                new GroupConfig(6_000, 1_800_000, 45_000, 5_000, 300_000, "uniform", 1000, 1000, 2, 4096, 16, false);
        ConsumerGroup g = new ConsumerGroup("g", small, x -> 6);
        for (int i = 0; i < 3; i++) {
            HeartbeatResult r = g.heartbeat(
                    new Heartbeat("x" + i, 0, null, null, -1, List.of("t"), null, null),
                    ORIGIN,
                    now,
                    () -> "unused",
                    records);
            assertThat(r.errorCode()).isEqualTo(i < 2 ? Errors.NONE : Errors.GROUP_MAX_SIZE_REACHED);
        }
    }

    @Test
    void aBigGroupIsAssignedByPollNotByTheHeartbeat() {
        topics.put("big", 1_000);
        checkEachStep = false; // checked after each round instead: the timing is the group's
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            ids.add(join(List.of("big")).memberId());
        }
        assertThat(group.targetStale()).isTrue();
        assertThat(group.state()).isEqualTo("Assigning");
        assertThat(group.nextDeadlineMs()).isEqualTo(now);
        // CPU time of this thread, not wall time: the build machine is shared.
        long startNs = THREADS.getCurrentThreadCpuTime();
        group.computeTarget(now, records);
        long assignMs = (THREADS.getCurrentThreadCpuTime() - startNs) / 1_000_000;
        assertThat(assignMs).isLessThan(1_000);
        assertThat(group.targetEpoch()).isEqualTo(group.groupEpoch());
        // The first members (assigned inline while the group was small) revoke at their first
        // heartbeat and acknowledge at the second; the others take what was released.
        for (int round = 0; round < 3; round++) {
            for (String id : ids) {
                ConsumerMember m = group.member(id);
                assertThat(hb(id, m.memberEpoch, null, m.assigned).errorCode()).isEqualTo(Errors.NONE);
            }
            checkNoPartitionOwnedTwice();
        }
        for (String id : ids) {
            assertThat(group.member(id).memberEpoch).isEqualTo(group.targetEpoch());
        }
        assertThat(group.state()).isEqualTo("Stable");
        int total = 0;
        for (ConsumerMember m : group.members()) {
            assertThat(m.assigned.size()).isEqualTo(10);
            total += m.assigned.size();
        }
        assertThat(total).isEqualTo(1_000);
    }
}
