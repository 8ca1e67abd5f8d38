package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link ConsumerMembership} against a scripted coordinator ({@link ScriptedCoordinator}): no
 * sockets, no threads, the time passed in by the test.
 */
class ConsumerMembershipTest {
    private static final HostPort A = new HostPort("127.0.0.1", 9001);
    private static final HostPort B = new HostPort("127.0.0.1", 9002);
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);
    private static final TopicPartition T2 = new TopicPartition("t", 2);

    private final List<String> events = new ArrayList<>();
    private final ScriptedCoordinator coordinator = new ScriptedCoordinator(events);
    private final RecordingOwner owner = new RecordingOwner();
    private final RecordingListener listener = new RecordingListener();
    private long nowMs = 1_000;

    /** The consumer side: positions the test sets, and what the member asked of it. */
    private final class RecordingOwner implements PartitionOwner {
        final Map<TopicPartition, Long> positions = new LinkedHashMap<>();

        @Override
        public Map<TopicPartition, Long> positions() {
            return Map.copyOf(positions);
        }

        @Override
        public void partitionsRevoked(Collection<TopicPartition> partitions) {
            events.add("owner stops " + ScriptedCoordinator.names(partitions));
            partitions.forEach(positions::remove);
        }

        @Override
        public void partitionsAssigned(Map<TopicPartition, Long> committed) {
            events.add("owner starts " + ScriptedCoordinator.sorted(committed));
            committed.forEach((tp, offset) -> positions.put(tp, offset));
        }
    }

    private final class RecordingListener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            events.add("listener revoked " + ScriptedCoordinator.names(partitions));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            events.add("listener assigned " + ScriptedCoordinator.names(partitions));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            events.add("listener lost " + ScriptedCoordinator.names(partitions));
        }
    }

    private ConsumerMembership member(String... extra) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:1");
        p.setProperty("group.id", "g");
        for (int i = 0; i < extra.length; i += 2) {
            p.setProperty(extra[i], extra[i + 1]);
        }
        return new ConsumerMembership(ConsumerConfig.from(p), coordinator, owner, () -> {});
    }

    private static GroupTransport.HeartbeatReply ok(String memberId, int epoch, Set<TopicPartition> assignment) {
        return new GroupTransport.HeartbeatReply(Errors.NONE, null, memberId, epoch, 3_000, assignment);
    }

    private static GroupTransport.HeartbeatReply error(short code) {
        return new GroupTransport.HeartbeatReply(code, "scripted", null, -1, 0, null);
    }

    /** Subscribes, finds coordinator A, joins as m1 epoch 1 owning {@code assignment} (no commits). */
    private ConsumerMembership joined(Set<TopicPartition> assignment, String... extra) {
        ConsumerMembership m = member(extra);
        m.subscribe(List.of("t"), listener, nowMs);
        m.poll(nowMs);
        coordinator.finds.poll().answer().complete(A);
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 1, assignment));
        m.poll(nowMs);
        if (!assignment.isEmpty()) {
            Map<TopicPartition, Long> none = new LinkedHashMap<>();
            assignment.forEach(tp -> none.put(tp, -1L));
            coordinator.fetches.poll().answer().complete(none);
            m.poll(nowMs);
        }
        ScriptedCoordinator.Heartbeat ack = coordinator.heartbeats.poll();
        if (ack != null) {
            ack.answer().complete(ok("m1", 1, null));
            m.poll(nowMs);
        }
        events.clear();
        return m;
    }

    @Test
    void joinsWithEpochZeroThenTakesTheAssignmentFromCommittedOffsetsAndAcknowledgesIt() {
        ConsumerMembership m = member("group.remote.assignor", "range");
        m.subscribe(List.of("t"), listener, nowMs);
        m.poll(nowMs);
        assertThat(coordinator.finds).hasSize(1);
        assertThat(coordinator.heartbeats).isEmpty();

        coordinator.finds.poll().answer().complete(A);
        m.poll(nowMs);
        ScriptedCoordinator.Heartbeat join = coordinator.heartbeats.poll();
        assertThat(join.to()).isEqualTo(A);
        assertThat(join.call().memberId()).isNull();
        assertThat(join.call().memberEpoch()).isZero();
        assertThat(join.call().subscribedTopics()).containsExactly("t");
        assertThat(join.call().serverAssignor()).isEqualTo("range");
        assertThat(join.call().rebalanceTimeoutMs()).isEqualTo(300_000);
        assertThat(join.call().owned()).isEmpty();

        join.answer().complete(ok("m1", 5, Set.of(T0, T1)));
        m.poll(nowMs);
        assertThat(m.memberId()).isEqualTo("m1");
        assertThat(m.memberEpoch()).isEqualTo(5);
        ScriptedCoordinator.Fetch fetch = coordinator.fetches.poll();
        assertThat(fetch.partitions()).containsExactlyInAnyOrder(T0, T1);
        assertThat(owner.positions).isEmpty(); // nothing fetched before the committed offsets are known
        assertThat(coordinator.heartbeats).isEmpty();

        fetch.answer().complete(Map.of(T0, 42L, T1, -1L));
        m.poll(nowMs);
        assertThat(events)
                .containsSubsequence(
                        "owner starts t-0=42, t-1=-1",
                        "listener assigned [t-0, t-1]",
                        "heartbeat epoch=5 owned=[t-0, t-1]");
        ScriptedCoordinator.Heartbeat ack = coordinator.heartbeats.poll();
        assertThat(ack.call().subscribedTopics()).isNull(); // acknowledged already
        assertThat(ack.call().rebalanceTimeoutMs()).isEqualTo(-1);
        assertThat(m.owned()).containsExactlyInAnyOrder(T0, T1);

        // Then the broker's interval: nothing before it, a heartbeat with nothing changed at it.
        ack.answer().complete(ok("m1", 5, null));
        m.poll(nowMs);
        assertThat(m.timeToNextEventMs(nowMs)).isEqualTo(3_000);
        nowMs += 2_999;
        m.poll(nowMs);
        assertThat(coordinator.heartbeats).isEmpty();
        nowMs += 1;
        m.poll(nowMs);
        ScriptedCoordinator.Heartbeat beat = coordinator.heartbeats.poll();
        assertThat(beat.call().memberEpoch()).isEqualTo(5);
        assertThat(beat.call().owned()).isNull();
        assertThat(beat.call().subscribedTopics()).isNull();
    }

    @Test
    void revokedPartitionsAreCommittedAndRevokedBeforeNewOnesAreAssignedAndOnlyThenAcknowledged() {
        ConsumerMembership m = joined(Set.of(T0, T1));
        owner.positions.put(T0, 17L);
        owner.positions.put(T1, 23L);
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 2, Set.of(T1, T2)));
        m.poll(nowMs);

        // The commit of the revoked partition's position goes first; nothing else until it is done.
        ScriptedCoordinator.Commit commit = coordinator.commits.poll();
        assertThat(commit.offsets()).isEqualTo(Map.of(T0, 17L));
        assertThat(commit.memberId()).isEqualTo("m1");
        assertThat(commit.memberEpoch()).isEqualTo(2);
        assertThat(events).doesNotContain("listener revoked [t-0]");
        m.poll(nowMs);
        assertThat(coordinator.fetches).isEmpty();

        commit.answer().complete(Map.of(T0, Errors.NONE));
        m.poll(nowMs);
        ScriptedCoordinator.Fetch fetch = coordinator.fetches.poll();
        assertThat(fetch.partitions()).containsExactly(T2);
        assertThat(coordinator.heartbeats).isEmpty(); // the revocation is not acknowledged yet
        fetch.answer().complete(Map.of(T2, 9L));
        m.poll(nowMs);

        assertThat(events)
                .containsExactly(
                        "heartbeat epoch=1 owned=null",
                        "commit t-0=17",
                        "listener revoked [t-0]",
                        "owner stops [t-0]",
                        "offsetFetch 1",
                        "owner starts t-2=9",
                        "listener assigned [t-2]",
                        "heartbeat epoch=2 owned=[t-1, t-2]");
        assertThat(m.owned()).containsExactly(T1, T2);
        assertThat(owner.positions).containsEntry(T1, 23L).containsEntry(T2, 9L).doesNotContainKey(T0);
    }

    @Test
    void withoutAutoCommitTheRevocationCommitsNothingAndANewerTargetWaitsForTheCurrentOne() {
        ConsumerMembership m = joined(Set.of(T0, T1, T2), "enable.auto.commit", "false");
        owner.positions.put(T0, 1L);
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 2, Set.of(T0)));
        m.poll(nowMs);
        assertThat(coordinator.commits).isEmpty();
        assertThat(m.owned()).containsExactly(T0);
        ScriptedCoordinator.Heartbeat ack = coordinator.heartbeats.poll();
        assertThat(ack.call().owned()).containsExactly(T0);

        // A target that adds two partitions while their offsets are read, then one that removes one.
        ack.answer().complete(ok("m1", 3, Set.of(T0, T1, T2)));
        m.poll(nowMs);
        ScriptedCoordinator.Fetch fetch = coordinator.fetches.poll();
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 4, Set.of(T0, T1)));
        m.poll(nowMs);
        assertThat(events).doesNotContain("listener revoked [t-2]");
        fetch.answer().complete(Map.of(T1, 5L, T2, 6L));
        m.poll(nowMs);
        assertThat(events)
                .containsSubsequence(
                        "listener assigned [t-1, t-2]", "listener revoked [t-2]", "heartbeat epoch=4 owned=[t-0, t-1]");
        assertThat(m.owned()).containsExactly(T0, T1);
    }

    @Test
    void aFencedMemberLosesItsPartitionsWithoutCommittingAndRejoinsWithEpochZero() {
        for (short code : new short[] {Errors.FENCED_MEMBER_EPOCH, Errors.UNKNOWN_MEMBER_ID}) {
            events.clear();
            coordinator.heartbeats.clear();
            coordinator.finds.clear();
            ConsumerMembership m = joined(Set.of(T0, T1));
            owner.positions.put(T0, 3L);
            nowMs += 3_000;
            m.poll(nowMs);
            coordinator.heartbeats.poll().answer().complete(error(code));
            m.poll(nowMs);

            assertThat(coordinator.commits).isEmpty();
            assertThat(events)
                    .containsSubsequence(
                            "listener lost [t-0, t-1]", "owner stops [t-0, t-1]", "heartbeat epoch=0 owned=[]");
            assertThat(events).noneMatch(e -> e.startsWith("listener revoked"));
            ScriptedCoordinator.Heartbeat rejoin = coordinator.heartbeats.poll();
            assertThat(rejoin.to()).isEqualTo(A);
            assertThat(rejoin.call().memberId()).isNull();
            assertThat(rejoin.call().subscribedTopics()).containsExactly("t");
            assertThat(m.owned()).isEmpty();
            assertThat(m.state()).isEqualTo(ConsumerMembership.State.JOINING);

            rejoin.answer().complete(ok("m2", 7, Set.of(T1)));
            m.poll(nowMs);
            coordinator.fetches.poll().answer().complete(Map.of(T1, 11L));
            m.poll(nowMs);
            assertThat(m.memberId()).isEqualTo("m2");
            assertThat(m.memberEpoch()).isEqualTo(7);
            assertThat(m.owned()).containsExactly(T1);
        }
    }

    @Test
    void aCoordinatorMoveIsFollowedWithFindCoordinatorUnderABoundedExponentialBackOff() {
        ConsumerMembership m = joined(Set.of(T0), "retry.backoff.ms", "100", "retry.backoff.max.ms", "400");
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(error(Errors.NOT_COORDINATOR));
        m.poll(nowMs);
        assertThat(coordinator.finds).isEmpty(); // the first lookup waits retry.backoff.ms
        assertThat(m.timeToNextEventMs(nowMs)).isEqualTo(100);

        long[] expectedWaitsMs = {100, 200, 400, 400};
        for (long waitMs : expectedWaitsMs) {
            nowMs += waitMs - 1;
            m.poll(nowMs);
            assertThat(coordinator.finds).as("no lookup before %d ms", waitMs).isEmpty();
            nowMs += 1;
            m.poll(nowMs);
            assertThat(coordinator.finds).hasSize(1);
            coordinator
                    .finds
                    .poll()
                    .answer()
                    .completeExceptionally(new StellflowException(Errors.COORDINATOR_NOT_AVAILABLE, "loading"));
            m.poll(nowMs);
        }
        assertThat(m.locator().failures()).isEqualTo(5);
        assertThat(m.owned()).containsExactly(T0); // keeps its partitions and epoch meanwhile

        nowMs += 400;
        m.poll(nowMs);
        coordinator.finds.poll().answer().complete(B);
        m.poll(nowMs);
        ScriptedCoordinator.Heartbeat there = coordinator.heartbeats.poll();
        assertThat(there.to()).isEqualTo(B);
        assertThat(there.call().memberEpoch()).isEqualTo(1);
        assertThat(there.call().owned()).containsExactly(T0); // full state after a failed heartbeat
        there.answer().complete(ok("m1", 1, null));
        m.poll(nowMs);
        assertThat(m.locator().failures()).isZero();

        // A lost connection counts as a coordinator error too, and the back-off starts over.
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator
                .heartbeats
                .poll()
                .answer()
                .completeExceptionally(new StellflowException(StellflowException.NETWORK_ERROR, "connection closed"));
        m.poll(nowMs);
        assertThat(m.timeToNextEventMs(nowMs)).isEqualTo(100);
    }

    @Test
    void autoCommitSendsChangedPositionsEachIntervalWithTheMemberEpoch() {
        ConsumerMembership m = joined(Set.of(T0, T1), "auto.commit.interval.ms", "5000");
        long joinedMs = nowMs;
        owner.positions.put(T0, 10L);
        owner.positions.put(T1, 20L);
        nowMs = joinedMs + 4_999;
        m.poll(nowMs);
        assertThat(coordinator.commits).isEmpty();
        nowMs = joinedMs + 5_000;
        m.poll(nowMs);
        ScriptedCoordinator.Commit first = coordinator.commits.poll();
        assertThat(first.offsets()).isEqualTo(Map.of(T0, 10L, T1, 20L));
        assertThat(first.memberId()).isEqualTo("m1");
        assertThat(first.memberEpoch()).isEqualTo(1);
        first.answer().complete(Map.of(T0, Errors.NONE, T1, Errors.NONE));
        m.poll(nowMs);

        // Nothing moved: no commit. One partition moved: only it.
        nowMs = joinedMs + 10_000;
        m.poll(nowMs);
        assertThat(coordinator.commits).isEmpty();
        owner.positions.put(T1, 25L);
        nowMs = joinedMs + 14_999;
        m.poll(nowMs);
        assertThat(coordinator.commits).isEmpty();
        nowMs = joinedMs + 15_000;
        m.poll(nowMs);
        assertThat(coordinator.commits.poll().offsets()).isEqualTo(Map.of(T1, 25L));
    }

    @Test
    void aSyncCommitIsRetriedAtTheNewCoordinatorButAFencedOneFailsWithItsCode() {
        ConsumerMembership m = joined(Set.of(T0));
        CompletableFuture<Void> sync = m.commit(Map.of(T0, 5L), true, nowMs + 10_000, null);
        m.poll(nowMs);
        coordinator.commits.poll().answer().complete(Map.of(T0, Errors.NOT_COORDINATOR));
        m.poll(nowMs);
        assertThat(sync).isNotDone();
        nowMs += 100;
        m.poll(nowMs);
        coordinator.finds.poll().answer().complete(B);
        m.poll(nowMs);
        ScriptedCoordinator.Commit again = coordinator.commits.poll();
        assertThat(again.to()).isEqualTo(B);
        again.answer().complete(Map.of(T0, Errors.NONE));
        m.poll(nowMs);
        assertThat(sync).isCompleted();

        List<Exception> seen = new ArrayList<>();
        CompletableFuture<Void> async = m.commit(Map.of(T0, 6L), false, nowMs + 10_000, (o, e) -> seen.add(e));
        m.poll(nowMs);
        coordinator.commits.poll().answer().complete(Map.of(T0, Errors.FENCED_MEMBER_EPOCH));
        m.poll(nowMs);
        assertThat(async).isCompletedExceptionally();
        assertThat(seen)
                .singleElement()
                .satisfies(e -> assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.FENCED_MEMBER_EPOCH));
        assertThat(coordinator.commits).isEmpty(); // not retried
    }

    @Test
    void aSyncCommitWithAnEpochLeftBehindIsSentAgainWithTheNewEpoch() {
        ConsumerMembership m = joined(Set.of(T0), "retry.backoff.ms", "100");
        CompletableFuture<Void> sync = m.commit(Map.of(T0, 5L), true, nowMs + 10_000, null);
        m.poll(nowMs);
        ScriptedCoordinator.Commit first = coordinator.commits.poll();
        assertThat(first.memberEpoch()).isEqualTo(1);
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 2, null));
        m.poll(nowMs);
        first.answer().complete(Map.of(T0, Errors.STALE_MEMBER_EPOCH));
        m.poll(nowMs);
        assertThat(coordinator.commits).isEmpty(); // after retry.backoff.ms
        nowMs += 100;
        m.poll(nowMs);
        ScriptedCoordinator.Commit again = coordinator.commits.poll();
        assertThat(again.memberEpoch()).isEqualTo(2);
        again.answer().complete(Map.of(T0, Errors.NONE));
        m.poll(nowMs);
        assertThat(sync).isCompleted();
    }

    @Test
    void leavingRevokesWithACommitThenSendsEpochMinusOneOrMinusTwoForAStaticMember() {
        for (String instance : new String[] {null, "host-1"}) {
            events.clear();
            coordinator.heartbeats.clear();
            ConsumerMembership m =
                    instance == null ? joined(Set.of(T0)) : joined(Set.of(T0), "group.instance.id", instance);
            owner.positions.put(T0, 8L);
            CompletableFuture<Void> left = m.leave(nowMs);
            coordinator.commits.poll().answer().complete(Map.of(T0, Errors.NONE));
            m.poll(nowMs);
            ScriptedCoordinator.Heartbeat leave = coordinator.heartbeats.poll();
            assertThat(leave.call().memberEpoch()).isEqualTo(instance == null ? -1 : -2);
            assertThat(leave.call().memberId()).isEqualTo("m1");
            assertThat(leave.call().instanceId()).isEqualTo(instance);
            assertThat(events).containsSubsequence("commit t-0=8", "listener revoked [t-0]", "owner stops [t-0]");
            assertThat(left).isNotDone();
            leave.answer().complete(ok("m1", -1, null));
            m.poll(nowMs);
            assertThat(left).isCompleted();
            assertThat(m.state()).isEqualTo(ConsumerMembership.State.UNSUBSCRIBED);
        }
    }

    @Test
    void anErrorThatRetryingCannotFixLosesThePartitionsAndFailsEveryPoll() {
        ConsumerMembership m = joined(Set.of(T0));
        nowMs += 3_000;
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(error(Errors.GROUP_MAX_SIZE_REACHED));
        assertThatThrownBy(() -> m.poll(nowMs))
                .isInstanceOfSatisfying(
                        StellflowException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED))
                .hasMessageContaining("group g refused the member");
        assertThat(events).contains("listener lost [t-0]");
        assertThatThrownBy(() -> m.poll(nowMs + 10_000)).isInstanceOf(StellflowException.class);
        assertThat(coordinator.heartbeats).isEmpty();
    }

    @Test
    void aListenerThatThrowsDoesNotStopTheReconciliationAndItsErrorComesOutOfPollOnce() {
        ConsumerMembership m = member("enable.auto.commit", "false");
        m.subscribe(
                List.of("t"),
                new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        throw new IllegalStateException("application bug");
                    }
                },
                nowMs);
        m.poll(nowMs);
        coordinator.finds.poll().answer().complete(A);
        m.poll(nowMs);
        coordinator.heartbeats.poll().answer().complete(ok("m1", 1, Set.of(T0)));
        m.poll(nowMs);
        coordinator.fetches.poll().answer().complete(Map.of(T0, 4L));
        assertThatThrownBy(() -> m.poll(nowMs)).hasMessage("application bug");
        assertThat(m.owned()).containsExactly(T0);
        assertThat(coordinator.heartbeats.poll().call().owned()).containsExactly(T0);
        m.poll(nowMs); // once only
    }

    @Test
    void outsideTheGroupNothingIsAskedUntilACallNeedsTheCoordinatorAndCommitsCarryNoMember() {
        ConsumerMembership m = member("enable.auto.commit", "false");
        m.poll(nowMs);
        assertThat(coordinator.finds).isEmpty(); // an assign-only consumer at rest: no lookup, no wake-ups
        assertThat(m.timeToNextEventMs(nowMs)).isGreaterThan(3_600_000L);

        CompletableFuture<Void> commit = m.commit(Map.of(T0, 12L), true, nowMs + 5_000, null);
        m.poll(nowMs);
        coordinator.finds.poll().answer().complete(A);
        m.poll(nowMs);
        ScriptedCoordinator.Commit sent = coordinator.commits.poll();
        assertThat(sent.memberId()).isNull();
        assertThat(sent.memberEpoch()).isEqualTo(-1);
        sent.answer().complete(Map.of(T0, Errors.NONE));
        m.poll(nowMs);
        assertThat(commit).isCompleted();

        // A call that finds no coordinator before its deadline fails with the last code it saw.
        CompletableFuture<Map<TopicPartition, Long>> fetch = m.fetchCommitted(Set.of(T0), nowMs + 1_000);
        m.poll(nowMs);
        coordinator
                .fetches
                .poll()
                .answer()
                .completeExceptionally(new StellflowException(Errors.COORDINATOR_NOT_AVAILABLE, "loading"));
        m.poll(nowMs);
        nowMs += 100;
        m.poll(nowMs);
        coordinator
                .finds
                .poll()
                .answer()
                .completeExceptionally(new StellflowException(Errors.COORDINATOR_NOT_AVAILABLE, "loading"));
        nowMs += 1_000;
        m.poll(nowMs);
        assertThat(fetch).isCompletedExceptionally();
        assertThatThrownBy(fetch::join)
                .hasCauseInstanceOf(StellflowException.class)
                .hasMessageContaining("no coordinator before the deadline");
    }
}
