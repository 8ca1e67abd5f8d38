package io.stellflow.broker.replication;

import io.stellflow.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;

/**
 * The fault checker ({@link ReplicationFaultCheckerTest}: 3 broker processes, one controller,
 * SIGKILL of leaders and followers, SIGSTOP, network cuts, restarts of all brokers) with the
 * consumer-group load of issue #19 ({@link GroupWorkload}) beside its producers and readers.
 *
 * <p>Members of one group, each a {@code StellflowConsumer} with {@code group.id} and {@code
 * subscribe}, read the checked topic and {@code commitSync} every 500 ms and before each revocation.
 * Each round, beside the broker fault, one member joins, leaves ({@code close}), crashes (stops
 * polling and never leaves: its session of 2 s expires) or pauses (stops polling until DescribeGroups
 * no longer lists it, then commits the positions it had once the new owners committed past them).
 * Checked:
 *
 * <ol>
 *   <li>in the steady state after each round (faults healed, members stable), DescribeGroups shows a
 *       Stable group of exactly the live members, each partition owned by exactly one, and each
 *       member's rebalance listener agrees with the coordinator;
 *   <li>no committed offset ever goes backwards (AdminGroups.committedOffsets read every 200 ms and
 *       around each stale commit; nobody resets offsets in this workload);
 *   <li>every acknowledged record below the group's committed offset was handed to some member by
 *       {@code poll} (at least once), with its acknowledged value;
 *   <li>an evicted member's commit is refused (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH or
 *       STALE_MEMBER_EPOCH) and moves no committed offset back;
 * </ol>
 *
 * plus every check of the replication checker. Default {@value #DEFAULT_ROUNDS} rounds (6 rounds took
 * 156-215 s on a 2-core machine at load 25-45); {@code -Dstellflow.checker.rounds=N} for a soak, {@code -Dstellflow.checker.seed=S}
 * to repeat a run's faults and member actions. The same load runs inside the replication checker
 * with {@code -Dstellflow.checker.groups=true}.
 */
@IntegrationTest
class GroupFaultCheckerTest {
    static final int DEFAULT_ROUNDS = 4;

    @Test
    void membersJoinLeaveCrashAndPauseUnderBrokerFaultsWithoutLosingRecordsOrCommits() throws Exception {
        new ReplicationFaultCheckerTest()
                .check(Integer.getInteger("stellflow.checker.rounds", DEFAULT_ROUNDS), true, false);
    }
}
