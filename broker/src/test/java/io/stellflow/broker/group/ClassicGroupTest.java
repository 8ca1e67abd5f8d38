package io.stellflow.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import org.junit.jupiter.api.Test;

/** Spec §6.9-6.11 and decision 9.m, driven by an explicit clock. */
class ClassicGroupTest {
    private static final RequestOrigin ORIGIN = RequestOrigin.anonymous("c1", "/10.0.0.1");

    @Test
    void firstJoinIsGenerationOneAndEveryJoinAddsOne() {
        ClassicGroup g = new ClassicGroup("g");
        ClassicGroup.JoinResult a = g.join("a", ORIGIN, 30_000, 0);
        assertThat(a.generation()).isEqualTo(1);
        assertThat(a.leaderId()).isEqualTo("a");
        ClassicGroup.JoinResult b = g.join("b", ORIGIN, 30_000, 10);
        assertThat(b.generation()).isEqualTo(2);
        assertThat(b.leaderId()).isEqualTo("a");
        // A known member joining again is also a new generation; the leader stays.
        assertThat(g.join("a", ORIGIN, 30_000, 20).generation()).isEqualTo(3);
        assertThat(g.memberIds()).containsExactly("a", "b");
    }

    @Test
    void heartbeatOnStaleGenerationAnswersOneButKeepsTheMemberAlive() {
        ClassicGroup g = new ClassicGroup("g");
        g.join("a", ORIGIN, 10_000, 0); // generation 1
        g.join("b", ORIGIN, 10_000, 0); // generation 2
        // a is on generation 1: the answer is an error, but the session is extended.
        assertThat(g.heartbeat(1, "a", 9_000)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(g.expire(10_000)).containsExactly("b");
        assertThat(g.hasMember("a")).isTrue();
        assertThat(g.heartbeat(g.generation(), "a", 10_000)).isEqualTo(Errors.NONE);
        assertThat(g.heartbeat(g.generation(), "nobody", 10_000)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void syncSucceedsOnlyForAKnownMemberAtTheCurrentGeneration() {
        ClassicGroup g = new ClassicGroup("g");
        g.join("a", ORIGIN, 10_000, 0);
        assertThat(g.sync(1, "a")).isEqualTo(Errors.NONE);
        g.join("b", ORIGIN, 10_000, 0);
        assertThat(g.sync(1, "a")).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(g.sync(2, "a")).isEqualTo(Errors.NONE);
        assertThat(g.sync(2, "x")).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void everyEvictionAddsAGenerationAndTheLeaderMovesToTheOldestMember() {
        ClassicGroup g = new ClassicGroup("g");
        g.join("a", ORIGIN, 5_000, 0);
        g.join("b", ORIGIN, 20_000, 0);
        g.join("c", ORIGIN, 20_000, 0);
        assertThat(g.generation()).isEqualTo(3);
        assertThat(g.nextDeadlineMs()).isEqualTo(5_000);
        assertThat(g.expire(4_999)).isEmpty();
        assertThat(g.expire(5_000)).containsExactly("a");
        assertThat(g.generation()).isEqualTo(4);
        assertThat(g.leaderId()).isEqualTo("b");
        assertThat(g.expire(20_000)).containsExactly("b", "c");
        assertThat(g.generation()).isEqualTo(6);
        assertThat(g.leaderId()).isNull();
        assertThat(g.isEmpty()).isTrue();
        assertThat(g.emptySinceMs()).isEqualTo(20_000);
        // The next join continues the generation count and becomes leader.
        ClassicGroup.JoinResult d = g.join("d", ORIGIN, 5_000, 30_000);
        assertThat(d.generation()).isEqualTo(7);
        assertThat(d.leaderId()).isEqualTo("d");
        assertThat(g.emptySinceMs()).isEqualTo(-1);
    }

    @Test
    void storedValueRoundTripsAndSessionsRestartOnLoad() {
        ClassicGroup g = new ClassicGroup("g");
        g.join("a", ORIGIN, 5_000, 0);
        g.join("b", RequestOrigin.anonymous("c2", "/h2"), 7_000, 0);
        ClassicGroup copy = new ClassicGroup("g");
        copy.load(g.toValue(), 100_000);
        assertThat(copy.toValue()).isEqualTo(g.toValue());
        assertThat(copy.clientOf("b")).containsExactly("c2", "/h2");
        assertThat(copy.nextDeadlineMs()).isEqualTo(105_000);
        copy.restartSessions(200_000);
        assertThat(copy.expire(204_999)).isEmpty();
        assertThat(copy.expire(205_000)).containsExactly("a");
    }
}
