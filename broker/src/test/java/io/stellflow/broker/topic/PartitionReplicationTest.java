package io.stellflow.broker.topic;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader-side replica rules of {@link Partition} on a real log: HW = min LEO over the ISR (the
 * leader's included), monotonic; a new leader starts from its known HW; followers leave the ISR after
 * the lag time and return at the HW; a pending change counts the union of both ISRs; the follower
 * seam (HW from the leader, truncation).
 */
class PartitionReplicationTest {
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000042");
    private static final long LAG_MS = 10_000;

    @TempDir
    Path dir;

    private final List<UnifiedLog> logs = new ArrayList<>();

    @AfterEach
    void closeLogs() throws IOException {
        for (UnifiedLog log : logs) {
            log.close();
        }
    }

    private UnifiedLog newLog(String name) throws IOException {
        UnifiedLog log = UnifiedLog.open(
                dir.resolve(name), new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        logs.add(log);
        return log;
    }

    private static void append(Partition p, int records) throws IOException {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1_000L);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        builder.close();
        p.appendAsLeader(out);
    }

    /** Writes {@code records} records straight to the log at {@code epoch}, as a fetcher's append does. */
    private static void appendToLog(UnifiedLog log, int epoch, int records) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1_000L);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, null, ("f" + i).getBytes(StandardCharsets.UTF_8));
        }
        builder.close();
        try {
            log.appendAsFollower(out, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Broker 1 leads t-0 with replicas [1, 2, 3] and the given ISR at partition epoch 5. */
    private Partition leader(List<Integer> isr, long nowMs) throws IOException {
        Partition p = new Partition("t", 0, 0, newLog("t-0"), 1, 0L);
        p.updateAssignment(TOPIC_ID, List.of(1, 2, 3), isr, 5);
        p.becomeLeader(3, nowMs);
        return p;
    }

    /**
     * Broker 1 leads with ISR [1, 2] (3 outside), 10 records, follower 2 fetched at 10 at time 5: HW
     * 10. ISR checks the partition asks for are counted in {@code triggers}.
     */
    private Partition leaderAtTenWithIsrOneTwo(AtomicInteger triggers) throws IOException {
        Partition p = leader(List.of(1, 2), 0);
        p.isrChangeTrigger(x -> triggers.incrementAndGet());
        append(p, 10);
        p.recordFollowerFetch(2, 10, 5);
        assertThat(p.highWatermark()).isEqualTo(10);
        return p;
    }

    @Test
    void singleNodeHighWatermarkFollowsTheLogEndOffset() throws IOException {
        Partition p = new Partition("t", 0, 0, newLog("single-0"));
        append(p, 3);
        assertThat(p.highWatermark()).isEqualTo(3);
        assertThat(p.inSyncReplicaCount()).isEqualTo(1);
        assertThat(p.recordFollowerFetch(2, 3, 1L))
                .as("no follower on a single node")
                .isFalse();
    }

    @Test
    void leaderHighWatermarkIsTheMinimumLogEndOffsetOverTheIsr() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        append(p, 10);
        assertThat(p.logEndOffset()).isEqualTo(10);
        assertThat(p.highWatermark()).as("followers have not fetched").isZero();

        assertThat(p.recordFollowerFetch(2, 5, 1)).isTrue();
        assertThat(p.highWatermark()).as("follower 3 still unknown").isZero();
        p.recordFollowerFetch(3, 7, 2);
        assertThat(p.highWatermark()).isEqualTo(5);
        assertThat(p.maxLagRecords()).as("follower 2 at 5 of 10").isEqualTo(5);
        p.recordFollowerFetch(2, 10, 3);
        assertThat(p.highWatermark()).isEqualTo(7);
        p.recordFollowerFetch(3, 10, 4);
        assertThat(p.highWatermark()).isEqualTo(10);
        assertThat(p.followerLogEndOffset(2)).isEqualTo(10);

        append(p, 2);
        assertThat(p.highWatermark())
                .as("the leader's own append waits for the followers")
                .isEqualTo(10);
    }

    @Test
    void highWatermarkNeverGoesBackwardsOnTheLeader() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        append(p, 10);
        p.recordFollowerFetch(2, 8, 1);
        p.recordFollowerFetch(3, 8, 1);
        assertThat(p.highWatermark()).isEqualTo(8);
        p.recordFollowerFetch(2, 4, 2); // a follower that truncated fetches from lower
        assertThat(p.followerLogEndOffset(2)).isEqualTo(4);
        assertThat(p.highWatermark()).isEqualTo(8);
        p.updateAssignment(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2, 3), 6);
        assertThat(p.highWatermark()).isEqualTo(8);
    }

    @Test
    void onlyFollowerReplicasAreAccounted() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        assertThat(p.isFollowerReplica(2)).isTrue();
        assertThat(p.isFollowerReplica(1)).as("the leader itself").isFalse();
        assertThat(p.isFollowerReplica(9)).isFalse();
        assertThat(p.recordFollowerFetch(9, 0, 1)).isFalse();
        assertThat(p.recordFollowerFetch(1, 0, 1)).isFalse();
    }

    @Test
    void aNewLeaderStartsFromItsKnownHighWatermarkNotItsLogEnd() throws IOException {
        UnifiedLog log = newLog("t-0");
        Partition first = new Partition("t", 0, 0, log, 1, 0L);
        first.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1), 0);
        first.becomeLeader(0, 0);
        append(first, 10);
        assertThat(first.highWatermark()).as("ISR of the leader alone").isEqualTo(10);

        // Restart with a checkpointed HW of 4 and a larger ISR: the HW stays at 4 until 2 fetches.
        Partition restarted = new Partition("t", 0, 0, log, 1, 4L);
        assertThat(restarted.highWatermark()).isEqualTo(4);
        restarted.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 3);
        restarted.becomeLeader(1, 0);
        assertThat(restarted.highWatermark()).isEqualTo(4);
        assertThat(restarted.leaderEpochStartOffset()).isEqualTo(10);
        assertThat(restarted.highWatermarkBelowEpochStart())
                .as("consumers are turned away while the HW may be below the predecessor's")
                .isTrue();
        restarted.recordFollowerFetch(2, 8, 1);
        assertThat(restarted.highWatermark()).isEqualTo(8);
        assertThat(restarted.highWatermarkBelowEpochStart()).isTrue();
        restarted.recordFollowerFetch(2, 10, 1);
        assertThat(restarted.highWatermark()).isEqualTo(10);
        assertThat(restarted.highWatermarkBelowEpochStart()).isFalse();
        restarted.becomeFollower(2, 2);
        assertThat(restarted.highWatermarkBelowEpochStart())
                .as("never on a follower")
                .isFalse();

        Partition clamped = new Partition("t", 0, 0, log, 1, 99L);
        assertThat(clamped.highWatermark()).as("never above the log end offset").isEqualTo(10);
    }

    @Test
    void aFollowerLeavesTheIsrAfterTheLagTimeAndTheHighWatermarkWaitsForTheMaximalIsr() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 1_000);
        append(p, 10);
        p.recordFollowerFetch(2, 10, 1_100); // caught up
        p.recordFollowerFetch(3, 6, 1_100); // behind
        assertThat(p.highWatermark()).isEqualTo(6);

        assertThat(p.prepareIsrChange(1_000 + LAG_MS, LAG_MS))
                .as("within the lag time")
                .isNull();
        PendingIsrChange shrink = p.prepareIsrChange(1_100 + LAG_MS + 1, LAG_MS);
        assertThat(shrink).isNotNull();
        assertThat(shrink.newIsr()).containsExactly(1, 2);
        assertThat(shrink.basePartitionEpoch()).isEqualTo(5);
        assertThat(shrink.leaderEpoch()).isEqualTo(3);
        assertThat(p.inSyncReplicas()).as("not in memory first").containsExactly(1, 2, 3);
        assertThat(p.maximalIsr()).containsExactlyInAnyOrder(1, 2, 3);
        assertThat(p.prepareIsrChange(1_100 + LAG_MS + 2, LAG_MS))
                .as("one change at a time")
                .isNull();

        p.recordFollowerFetch(2, 10, 1_200);
        assertThat(p.highWatermark())
                .as("3 still counts while the shrink is pending")
                .isEqualTo(6);

        p.isrChangeAnswered(shrink, true);
        assertThat(p.pendingIsrChange().awaitingMetadata()).isTrue();
        assertThat(p.updateAssignment(TOPIC_ID, List.of(1, 2, 3), List.of(1, 2), 6))
                .containsExactly(1, 2, 3);
        assertThat(p.pendingIsrChange()).as("the committed change ends it").isNull();
        assertThat(p.inSyncReplicaCount()).isEqualTo(2);
        assertThat(p.highWatermark()).isEqualTo(10);
    }

    @Test
    void aFollowerAtTheLeadersLogEndStaysInSyncHoweverLongAgoItFetched() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        append(p, 4);
        p.recordFollowerFetch(2, 4, 10);
        p.recordFollowerFetch(3, 4, 10);
        assertThat(p.prepareIsrChange(10 * LAG_MS, LAG_MS)).isNull();
    }

    @Test
    void aFollowerReturnsWhenItReachesTheHighWatermarkAndCountsWhileTheExpansionIsPending() throws IOException {
        AtomicInteger triggers = new AtomicInteger();
        Partition p = leaderAtTenWithIsrOneTwo(triggers);

        p.recordFollowerFetch(3, 7, 6);
        assertThat(triggers.get()).as("below the HW").isZero();
        assertThat(p.prepareIsrChange(7, LAG_MS)).isNull();

        p.recordFollowerFetch(3, 10, 8);
        assertThat(triggers.get()).isEqualTo(1);
        PendingIsrChange expand = p.prepareIsrChange(9, LAG_MS);
        assertThat(expand.newIsr()).containsExactly(1, 2, 3);

        append(p, 5);
        p.recordFollowerFetch(2, 15, 10);
        assertThat(p.highWatermark()).as("3 is in the maximal ISR").isEqualTo(10);
        p.recordFollowerFetch(3, 12, 11);
        assertThat(p.highWatermark()).isEqualTo(12);

        // Refused for good: the proposal is dropped and 3 no longer holds the HW back.
        p.isrChangeAnswered(expand, false);
        assertThat(p.pendingIsrChange()).isNull();
        assertThat(p.highWatermark()).isEqualTo(15);
    }

    @Test
    void aFetchOffsetThisLeaderDoesNotHaveCountsNeitherForTheHighWatermarkNorForTheIsr() throws IOException {
        AtomicInteger triggers = new AtomicInteger();
        Partition p = leaderAtTenWithIsrOneTwo(triggers);

        // Replica 3 asks for offsets past this leader's log end (it kept a tail the leader never had).
        assertThat(p.recordFollowerFetch(3, 25, 6)).isTrue();
        assertThat(p.followerLogEndOffset(3)).isEqualTo(Partition.UNKNOWN_OFFSET);
        assertThat(triggers.get()).as("not a candidate for the ISR").isZero();
        assertThat(p.prepareIsrChange(7, LAG_MS)).as("not added to the ISR").isNull();

        // An ISR member asking past the log end is not counted as caught up either.
        append(p, 5);
        p.recordFollowerFetch(2, 40, 8);
        assertThat(p.followerLogEndOffset(2)).isEqualTo(10);
        assertThat(p.highWatermark()).isEqualTo(10);
        PendingIsrChange shrink = p.prepareIsrChange(8 + 2 * LAG_MS, LAG_MS);
        assertThat(shrink.newIsr()).as("2 lagged since offset 10").containsExactly(1);

        // Once it asks for an offset the leader has, it counts again.
        p.isrChangeAnswered(shrink, false);
        p.recordFollowerFetch(3, 15, 9);
        assertThat(p.followerLogEndOffset(3)).isEqualTo(15);
    }

    @Test
    void aFollowerNeverCaughtUpInThisLeadershipLagsSinceItsStartNotSince1970() throws IOException {
        Partition p = leader(List.of(1, 2), 100_000);
        append(p, 5);
        p.recordFollowerFetch(2, 5, 100_100);
        // 3 is outside the ISR and has not fetched: its lag runs from the leadership's start.
        assertThat(p.maxLagTimeMs(100_500)).isEqualTo(500);
        p.recordFollowerFetch(3, 5, 100_600);
        assertThat(p.maxLagTimeMs(100_700)).isZero();
    }

    @Test
    void aNewLeaderEpochClearsThePendingChangeAndResetsFollowerState() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        append(p, 3);
        p.recordFollowerFetch(2, 3, 1);
        assertThat(p.prepareIsrChange(LAG_MS + 1, LAG_MS)).isNotNull();
        p.becomeFollower(2, 4);
        assertThat(p.pendingIsrChange()).isNull();
        assertThat(p.prepareIsrChange(LAG_MS + 2, LAG_MS)).as("not the leader").isNull();
        p.becomeLeader(5, 100);
        assertThat(p.followerLogEndOffset(2)).isEqualTo(Partition.UNKNOWN_OFFSET);
        assertThat(p.followerLastCaughtUpTimeMs(3))
                .as("ISR members get the lag time from now")
                .isEqualTo(100);
    }

    @Test
    void followerHighWatermarkComesFromTheLeaderCappedAtTheLogEnd() throws IOException {
        UnifiedLog log = newLog("t-0");
        Partition p = new Partition("t", 0, 0, log, 2, 0L);
        p.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 0);
        p.becomeLeader(0, 0);
        for (int i = 0; i < 3; i++) {
            append(p, 2); // records as if fetched; the role does not matter to the log
        }
        p.becomeFollower(1, 1);
        p.updateFollowerHighWatermark(4);
        assertThat(p.highWatermark()).isEqualTo(4);
        p.updateFollowerHighWatermark(100);
        assertThat(p.highWatermark()).as("capped at the follower's LEO").isEqualTo(6);
        assertThat(p.maxLagRecords()).as("the leader's HW minus this LEO").isEqualTo(94);
        log.truncateTo(4); // a batch boundary
        p.onFollowerTruncated();
        assertThat(p.highWatermark()).isEqualTo(4);
    }

    @Test
    void followerWorkRunsOnlyAtItsEpochAndNeverOverlapsBecomingLeader() throws Exception {
        UnifiedLog log = newLog("t-0");
        Partition p = new Partition("t", 0, 0, log, 2, 0L);
        p.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 0);
        p.becomeFollower(1, 3);
        AtomicInteger ran = new AtomicInteger();
        assertThat(p.runIfFollowing(2, ran::incrementAndGet))
                .as("an older epoch")
                .isFalse();
        assertThat(p.runIfFollowing(3, ran::incrementAndGet)).isTrue();
        assertThat(ran).hasValue(1);

        // A fetcher's append in progress: becoming leader waits for it, so the new epoch starts
        // after the appended records, and no follower work runs once this broker leads.
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread fetcher = new Thread(() -> p.runIfFollowing(3, () -> {
            inside.countDown();
            try {
                release.await();
                appendToLog(log, 3, 5);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }));
        fetcher.start();
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        Thread leaderElect = new Thread(() -> p.becomeLeader(4, 0));
        leaderElect.start();
        Thread.sleep(100);
        assertThat(p.isLeader()).as("waits for the follower append").isFalse();
        release.countDown();
        fetcher.join(10_000);
        leaderElect.join(10_000);
        assertThat(p.isLeader()).isTrue();
        assertThat(p.leaderEpochStartOffset())
                .as("after the follower's records")
                .isEqualTo(5);
        assertThat(p.runIfFollowing(3, ran::incrementAndGet)).isFalse();
        assertThat(p.runIfFollowing(4, ran::incrementAndGet)).as("as leader").isFalse();
        assertThat(ran).hasValue(1);
    }

    @Test
    void listenersHearAppendsAndHighWatermarkAdvancesSeparately() throws IOException {
        Partition p = leader(List.of(1, 2), 0);
        AtomicInteger appends = new AtomicInteger();
        AtomicInteger advances = new AtomicInteger();
        p.addListener(appends::incrementAndGet);
        p.addHighWatermarkListener(advances::incrementAndGet);
        append(p, 2);
        assertThat(appends.get()).isEqualTo(1);
        assertThat(advances.get()).as("HW did not move").isZero();
        p.recordFollowerFetch(2, 2, 1);
        assertThat(advances.get()).isEqualTo(1);
        assertThat(appends.get()).isEqualTo(1);
    }

    @Test
    void aFollowerRefusesLeaderAppendsAndWritesNothing() throws IOException {
        Partition p = leader(List.of(1, 2, 3), 0);
        append(p, 3);
        p.becomeFollower(2, 4);
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1_000L);
        builder.append(1_000L, null, "late".getBytes(StandardCharsets.UTF_8));
        builder.close();
        assertThat(p.appendAsLeader(out)).isEqualTo(Partition.NOT_LEADER);
        assertThat(p.logEndOffset()).isEqualTo(3);
        assertThat(p.log().latestLeaderEpoch())
                .as("the new leader's epoch is not in this log")
                .isEqualTo(3);
        p.becomeLeader(5, 0);
        append(p, 1);
        assertThat(p.logEndOffset()).isEqualTo(4);
    }
}
