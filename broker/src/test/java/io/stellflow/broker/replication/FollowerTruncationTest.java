package io.stellflow.broker.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.handler.OffsetForLeaderEpochHandler;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest.PartitionEpoch;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse.EpochEndOffset;
import io.stellflow.storage.UnifiedLog;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Divergent tails reconciled by leader epoch on real logs: the follower asks with its latest epoch,
 * the leader answers as {@code OffsetForLeaderEpochHandler} does, the follower truncates
 * ({@link FollowerTruncation}) until complete, then copies the leader's tail ({@link
 * FollowerAppend}); afterwards both logs hold the same bytes.
 */
class FollowerTruncationTest {
    @TempDir
    Path dir;

    /** Runs the truncation rounds against the leader; returns the number of OffsetForLeaderEpoch rounds. */
    private static int reconcile(Partition follower, Partition leader) throws Exception {
        for (int round = 1; round <= 10; round++) {
            EpochEndOffset answer = OffsetForLeaderEpochHandler.answer(
                    leader,
                    new PartitionEpoch(0, leader.leaderEpoch(), follower.log().latestLeaderEpoch()));
            FollowerTruncation.Decision d = FollowerTruncation.decide(
                    follower.log(), follower.highWatermark(), answer.leaderEpoch(), answer.endOffset());
            if (FollowerTruncation.apply(follower, d)) {
                return round;
            }
        }
        throw new AssertionError("truncation did not complete in 10 rounds");
    }

    /** Copies the leader's records from the follower's LEO, as one fetch would. */
    private static void catchUp(Partition follower, Partition leader) throws Exception {
        long from = follower.logEndOffset();
        ByteBuf records = ReplicaLogs.read(leader.log(), from);
        try {
            assertThat(FollowerAppend.apply(follower, records, from, leader.highWatermark()))
                    .isEqualTo(FollowerAppend.APPLIED);
        } finally {
            records.release();
        }
    }

    @Test
    void aFollowerThatNeverWroteInTheLeadersEpochTruncatesInTwoRounds() throws Exception {
        // leader: epoch 1 [0-3], epoch 2 [4-5], epoch 4 [6-8]; follower: epoch 1 [0-3], epoch 3 [4-7]
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 4, "a");
            ReplicaLogs.append(l, 2, 2, "b");
            ReplicaLogs.append(l, 4, 3, "d");
            ReplicaLogs.append(f, 1, 4, "a");
            ReplicaLogs.append(f, 3, 4, "x");
            Partition leader = ReplicaLogs.leader(l, 4);
            Partition follower = ReplicaLogs.follower(f, 4);
            follower.updateFollowerHighWatermark(4);

            // Round 1: epoch 3 -> leader (2, 6); the follower has no epoch 2 (floor 1 ends at 4): 4, again.
            // Round 2: epoch 1 -> leader (1, 4), own (1, 4): 4, done.
            assertThat(reconcile(follower, leader)).isEqualTo(2);
            assertThat(f.logEndOffset()).isEqualTo(4);
            assertThat(f.latestLeaderEpoch()).isEqualTo(1);
            assertThat(follower.highWatermark()).isEqualTo(4);

            catchUp(follower, leader);
            ReplicaLogs.assertSameBytes(f, l);
            assertThat(f.endOffsetForEpoch(2).endOffset()).isEqualTo(6);
            assertThat(follower.highWatermark()).isEqualTo(9);
        }
    }

    @Test
    void anOldLeadersUncommittedTailInItsOwnEpochIsCutAtTheNewLeadersEpochStart() throws Exception {
        // old leader (now follower) wrote [0-6] in epoch 1, only [0-3] reached the new leader, which
        // took [4-5] in epoch 2.
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 4, "a");
            ReplicaLogs.append(l, 2, 2, "b");
            ReplicaLogs.append(f, 1, 4, "a");
            ReplicaLogs.append(f, 1, 3, "lost");
            Partition leader = ReplicaLogs.leader(l, 2);
            Partition follower = ReplicaLogs.follower(f, 2);
            follower.updateFollowerHighWatermark(7); // even a HW above the cut comes down with it

            assertThat(reconcile(follower, leader)).isEqualTo(1);
            assertThat(f.logEndOffset()).isEqualTo(4);
            assertThat(follower.highWatermark()).isEqualTo(4);
            catchUp(follower, leader);
            ReplicaLogs.assertSameBytes(f, l);
        }
    }

    @Test
    void aFollowerBehindInTheSameEpochKeepsEverything() throws Exception {
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 4, "a");
            ReplicaLogs.append(l, 1, 5, "b");
            ReplicaLogs.append(f, 1, 4, "a");
            Partition leader = ReplicaLogs.leader(l, 1);
            Partition follower = ReplicaLogs.follower(f, 1);
            assertThat(reconcile(follower, leader)).isEqualTo(1);
            assertThat(f.logEndOffset()).isEqualTo(4);
            catchUp(follower, leader);
            ReplicaLogs.assertSameBytes(f, l);
        }
    }

    @Test
    void aNewLeaderThatHasNotWrittenInItsEpochAnswersItsLogEnd() throws Exception {
        // The follower led epoch 2 and wrote [4-6] that never replicated; the new leader (epoch 3)
        // has [0-3] of epoch 1 and nothing of epochs 2 or 3 yet.
        try (UnifiedLog l = ReplicaLogs.open(dir.resolve("leader"));
                UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(l, 1, 4, "a");
            ReplicaLogs.append(f, 1, 4, "a");
            ReplicaLogs.append(f, 2, 3, "lost");
            Partition leader = ReplicaLogs.leader(l, 3);
            Partition follower = ReplicaLogs.follower(f, 3);
            follower.updateFollowerHighWatermark(4);

            // epoch 2 -> the leader's (1, 4): the follower's floor for 1 is 1, ending at 4.
            assertThat(OffsetForLeaderEpochHandler.answer(leader, new PartitionEpoch(0, 3, 2)))
                    .isEqualTo(new EpochEndOffset(0, (short) 0, 1, 4));
            reconcile(follower, leader);
            assertThat(f.logEndOffset()).isEqualTo(4);
            ReplicaLogs.append(l, 3, 2, "c");
            catchUp(follower, leader);
            ReplicaLogs.assertSameBytes(f, l);
        }
    }

    @Test
    void anUndefinedAnswerTruncatesToTheHighWatermark() throws Exception {
        try (UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(f, 5, 6, "a");
            Partition follower = ReplicaLogs.follower(f, 5);
            follower.updateFollowerHighWatermark(2);
            FollowerTruncation.Decision d = FollowerTruncation.decide(f, follower.highWatermark(), -1, -1);
            assertThat(d).isEqualTo(new FollowerTruncation.Decision(2, true));
            assertThat(FollowerTruncation.apply(follower, d)).isTrue();
            // one batch of 6 records holds offset 2: the whole batch goes (truncation keeps whole batches)
            assertThat(f.logEndOffset()).isZero();
            assertThat(follower.highWatermark()).isZero();
        }
    }

    @Test
    void anUndefinedEpochWithAnOffsetTruncatesToThatOffset() throws Exception {
        try (UnifiedLog f = ReplicaLogs.open(dir.resolve("follower"))) {
            ReplicaLogs.append(f, 5, 2, "a");
            ReplicaLogs.append(f, 5, 2, "b");
            FollowerTruncation.Decision d = FollowerTruncation.decide(f, 0, -1, 2);
            assertThat(d).isEqualTo(new FollowerTruncation.Decision(2, true));
            assertThat(FollowerTruncation.decide(f, 0, -1, 9)).isEqualTo(new FollowerTruncation.Decision(4, true));
        }
    }
}
