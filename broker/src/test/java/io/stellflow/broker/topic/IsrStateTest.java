package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The ISR state machine without a log: the partition's offsets and HW are passed in, so each rule is
 * checked on its own (assignment swaps, follower fetch accounting, the HW candidate over the maximal
 * ISR, shrink/expand proposals and their answers, the stale-pending expiry, and the withdrawal when
 * the HW moved past an added follower meanwhile).
 */
class IsrStateTest {
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000042");
    private static final long LAG_MS = 10_000;

    /** Broker 1's view of replicas [1, 2, 3] with the given ISR at partition epoch 5, leading since 0. */
    private static IsrState state(List<Integer> isr) {
        IsrState s = new IsrState(1);
        assertThat(s.update(TOPIC_ID, List.of(1, 2, 3), isr, 5)).isTrue();
        s.resetForLeadership(0);
        return s;
    }

    private static PendingIsrChange propose(IsrState s, long nowMs, long hw, long logEnd) {
        return s.propose(nowMs, LAG_MS, 7, hw, logEnd, 0, () -> hw);
    }

    @Test
    void beforeTheFirstAssignmentThisBrokerIsAloneAndNothingIsProposed() {
        IsrState s = new IsrState(1);
        assertThat(s.replicas()).containsExactly(1);
        assertThat(s.isr()).containsExactly(1);
        assertThat(s.partitionEpoch()).isEqualTo(-1);
        assertThat(s.topicId()).isNull();
        assertThat(s.highWatermarkCandidate(9)).isEqualTo(9);
        assertThat(propose(s, 1, 0, 9)).as("no assignment").isNull();
        assertThat(new IsrState(-1).isr()).as("single node").isEmpty();
    }

    @Test
    void anUnchangedAssignmentIsNoChangeAndFollowerStatesSurviveAChangedOne() {
        IsrState s = state(List.of(1, 2, 3));
        assertThat(s.update(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2, 3), 5)).isFalse();
        assertThat(s.recordFetch(2, 4, 0, 10, 100)).isEqualTo(IsrState.RECORDED);

        assertThat(s.update(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2), 6)).isTrue();
        assertThat(s.isr()).containsExactly(1, 2);
        assertThat(s.followerLogEndOffset(2)).as("kept across snapshots").isEqualTo(4);
        assertThat(s.followerLogEndOffset(3)).isEqualTo(Partition.UNKNOWN_OFFSET);

        assertThat(s.update(TOPIC_ID, List.of(1, 2), List.of(1, 2), 7)).isTrue();
        assertThat(s.isFollower(3)).as("unassigned").isFalse();
        assertThat(s.followerLastCaughtUpTimeMs(3)).isEqualTo(-1);
    }

    @Test
    void aFetchIsRecordedOnlyForAFollowerAndInsideTheLeadersLog() {
        IsrState s = state(List.of(1, 2, 3));
        assertThat(s.recordFetch(9, 5, 0, 10, 1)).isEqualTo(IsrState.NOT_A_FOLLOWER);
        assertThat(s.recordFetch(1, 5, 0, 10, 1)).as("the leader itself").isEqualTo(IsrState.NOT_A_FOLLOWER);
        assertThat(s.recordFetch(2, 11, 0, 10, 1)).isEqualTo(IsrState.OUT_OF_RANGE);
        assertThat(s.recordFetch(2, 2, 3, 10, 1)).isEqualTo(IsrState.OUT_OF_RANGE);
        assertThat(s.followerLogEndOffset(2)).isEqualTo(Partition.UNKNOWN_OFFSET);

        assertThat(s.recordFetch(2, 10, 0, 10, 50)).isEqualTo(IsrState.RECORDED);
        assertThat(s.followerLogEndOffset(2)).isEqualTo(10);
        assertThat(s.followerLastCaughtUpTimeMs(2))
                .as("asked for the leader's LEO")
                .isEqualTo(50);

        // Behind at 60, but it reached what the leader had at its previous fetch: caught up at 50 still.
        assertThat(s.recordFetch(2, 10, 0, 14, 60)).isEqualTo(IsrState.RECORDED);
        assertThat(s.followerLastCaughtUpTimeMs(2)).isEqualTo(50);
        // At 70 it reached the 14 the leader had at 60: caught up as of 60.
        s.recordFetch(2, 14, 0, 20, 70);
        assertThat(s.followerLastCaughtUpTimeMs(2)).isEqualTo(60);
    }

    @Test
    void theHighWatermarkCandidateIsTheMinimumOverTheMaximalIsr() {
        IsrState s = state(List.of(1, 2));
        assertThat(s.highWatermarkCandidate(10)).as("2 has not fetched").isEqualTo(Partition.UNKNOWN_OFFSET);
        s.recordFetch(2, 8, 0, 10, 1);
        s.recordFetch(3, 2, 0, 10, 1);
        assertThat(s.highWatermarkCandidate(10)).as("3 is outside the ISR").isEqualTo(8);
        assertThat(s.maxLagRecords(10)).isEqualTo(8);
        assertThat(s.maxLagTimeMs(100, 10, 40))
                .as("counted from the leadership's start")
                .isEqualTo(60);

        s.recordFetch(3, 8, 0, 10, 2);
        PendingIsrChange expand = propose(s, 3, 8, 10);
        assertThat(expand.newIsr()).containsExactly(1, 2, 3);
        assertThat(s.maximalIsr()).containsExactly(1, 2, 3);
        s.recordFetch(2, 10, 0, 10, 4);
        assertThat(s.highWatermarkCandidate(10)).as("3 counts while pending").isEqualTo(8);
    }

    @Test
    void aLaggingFollowerIsProposedOutAndTheAnswerKeepsOrDropsTheProposal() {
        IsrState s = state(List.of(1, 2, 3));
        s.recordFetch(2, 10, 0, 10, 100);
        s.recordFetch(3, 6, 0, 10, 100);
        assertThat(propose(s, LAG_MS, 6, 10)).as("within the lag time").isNull();

        PendingIsrChange shrink = propose(s, LAG_MS + 1, 6, 10);
        assertThat(shrink.newIsr()).containsExactly(1, 2);
        assertThat(shrink.oldIsr()).containsExactly(1, 2, 3);
        assertThat(shrink.basePartitionEpoch()).isEqualTo(5);
        assertThat(shrink.leaderEpoch()).isEqualTo(7);
        assertThat(shrink.sinceMs()).isEqualTo(LAG_MS + 1);
        assertThat(propose(s, LAG_MS + 2, 6, 10)).as("one at a time").isNull();

        assertThat(s.answered(new PendingIsrChange(TOPIC_ID, 7, 5, List.of(), List.of(), 0, false), true))
                .as("not the pending one")
                .isFalse();
        assertThat(s.answered(shrink, true)).isTrue();
        assertThat(s.pending().awaitingMetadata()).isTrue();
        assertThat(s.pending().newIsr()).containsExactly(1, 2);

        assertThat(s.update(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2), 6)).isTrue();
        assertThat(s.pending()).as("the partition epoch moved past its base").isNull();

        assertThat(s.answered(shrink, false)).as("already gone").isFalse();
    }

    @Test
    void aPendingChangeAnsweredLongAgoExpires() {
        IsrState s = state(List.of(1, 2, 3));
        PendingIsrChange shrink = propose(s, LAG_MS + 1, 0, 10);
        assertThat(s.expireStale(LAG_MS + 1 + 2 * IsrState.PENDING_AWAITING_METADATA_MAX_MS))
                .as("not answered yet: the ISR manager resends it")
                .isNull();
        s.answered(shrink, true);
        assertThat(s.expireStale(LAG_MS + 1 + IsrState.PENDING_AWAITING_METADATA_MAX_MS))
                .isNull();
        PendingIsrChange dropped = s.expireStale(LAG_MS + 2 + IsrState.PENDING_AWAITING_METADATA_MAX_MS);
        assertThat(dropped.newIsr()).isEqualTo(shrink.newIsr());
        assertThat(s.pending()).isNull();
    }

    @Test
    void anExpansionIsWithdrawnWhenTheHighWatermarkPassedTheAddedFollowerMeanwhile() {
        IsrState s = state(List.of(1, 2));
        s.recordFetch(2, 10, 0, 12, 1);
        s.recordFetch(3, 10, 0, 12, 1);
        assertThat(s.mayRejoin(3, 10, 10, 0)).isTrue();
        // Another thread advanced the HW to 11 before the swap made 3 count.
        PendingIsrChange withdrawn = s.propose(2, LAG_MS, 7, 10, 12, 0, () -> 11L);
        assertThat(withdrawn).isNull();
        assertThat(s.pending()).isNull();
        assertThat(s.maximalIsr()).containsExactly(1, 2);

        PendingIsrChange expand = s.propose(3, LAG_MS, 7, 10, 12, 0, () -> 10L);
        assertThat(expand.newIsr()).containsExactly(1, 2, 3);
        assertThat(s.mayRejoin(3, 10, 10, 0)).as("a change is pending").isFalse();
    }

    @Test
    void anExpansionCarriesTheJoiningFollowersBrokerEpochAndARefusalForgetsWhatItReached() {
        IsrState s = state(List.of(1, 2));
        assertThat(s.recordFetch(3, 40, 10, 0, 10, 100)).isEqualTo(IsrState.RECORDED);
        PendingIsrChange change = propose(s, 200, 10, 10);
        assertThat(change.newIsr()).containsExactly(1, 2, 3);
        assertThat(change.newIsrBrokerEpochs())
                .as("members that stay: not checked")
                .containsExactly(-1L, -1L, 40L);

        // The controller refuses it (broker 3 registered again since: its log may have lost offsets).
        assertThat(s.refusedIneligible(change)).isTrue();
        assertThat(s.followerLogEndOffset(3)).isEqualTo(Partition.UNKNOWN_OFFSET);
        assertThat(s.followerLastCaughtUpTimeMs(3)).isZero();
        assertThat(s.maximalIsr()).containsExactly(1, 2);
        assertThat(propose(s, 300, 10, 10))
                .as("not proposed again on the earlier process's fetches")
                .isNull();

        // The new process fetches from where its log ends and joins only once it reached the HW.
        s.recordFetch(3, 41, 0, 0, 10, 400);
        assertThat(propose(s, 500, 10, 10)).isNull();
        s.recordFetch(3, 41, 10, 0, 10, 600);
        assertThat(propose(s, 700, 10, 10).newIsrBrokerEpochs()).containsExactly(-1L, -1L, 41L);
    }

    @Test
    void aFetchOfAnotherBrokerEpochForgetsWhenTheEarlierProcessWasCaughtUp() {
        long t = 1_000_000; // ms since the epoch, far above the lag limit: 0 means never
        IsrState s = state(List.of(1, 2));
        s.recordFetch(3, 40, 10, 0, 10, t);
        assertThat(s.followerLastCaughtUpTimeMs(3)).isEqualTo(t);
        // Same epoch, behind but at what the leader had at its previous fetch: caught up as of t.
        s.recordFetch(3, 40, 10, 0, 12, t + 50);
        assertThat(s.followerLastCaughtUpTimeMs(3)).isEqualTo(t);
        // A new process at 12 (what the leader had at the earlier process's fetch): not caught up.
        s.recordFetch(3, 41, 12, 0, 14, t + 100);
        assertThat(s.followerLogEndOffset(3)).isEqualTo(12);
        assertThat(s.followerLastCaughtUpTimeMs(3)).isZero();
        s.recordFetch(2, 14, 0, 14, t + 105); // the ISR's follower stays in
        assertThat(propose(s, t + 110, 12, 14))
                .as("never caught up, as far as the leader knows")
                .isNull();
    }

    @Test
    void aFollowerThatRegisteredAgainIsForgottenEvenWithoutEpochsInItsFetches() {
        IsrState s = state(List.of(1, 2));
        java.util.Map<Integer, Long> registered = new java.util.HashMap<>(java.util.Map.of(2, 20L, 3, 30L));
        assertThat(s.onRegistrations(id -> registered.getOrDefault(id, -1L))).isEmpty();
        s.recordFetch(3, 10, 0, 10, 100); // Fetch v1: no epoch
        assertThat(s.onRegistrations(id -> registered.getOrDefault(id, -1L)))
                .as("same registrations")
                .isEmpty();
        assertThat(s.followerLogEndOffset(3)).isEqualTo(10);

        registered.put(3, 31L); // broker 3 restarted and registered again
        assertThat(s.onRegistrations(id -> registered.getOrDefault(id, -1L))).containsExactly(3);
        assertThat(s.followerLogEndOffset(3)).isEqualTo(Partition.UNKNOWN_OFFSET);
        assertThat(s.followerLastCaughtUpTimeMs(3)).isZero();
        assertThat(propose(s, 200, 10, 10))
                .as("nothing to add on the earlier process's fetch")
                .isNull();
    }

    @Test
    void becomingLeaderResetsFollowersAndDropsThePendingChange() {
        IsrState s = state(List.of(1, 2));
        s.recordFetch(2, 3, 0, 3, 1);
        s.recordFetch(3, 3, 0, 3, 1);
        assertThat(propose(s, 2, 3, 3)).isNotNull();
        s.resetForLeadership(500);
        assertThat(s.pending()).isNull();
        assertThat(s.followerLogEndOffset(2)).isEqualTo(Partition.UNKNOWN_OFFSET);
        assertThat(s.followerLastCaughtUpTimeMs(2)).as("ISR member").isEqualTo(500);
        assertThat(s.followerLastCaughtUpTimeMs(3)).as("outside the ISR").isZero();
    }
}
