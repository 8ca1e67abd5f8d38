package io.stellflow.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailure;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CoordinatorRuntime} over a real log and {@link Partition} with a follower (broker 2) the
 * test plays by reporting its fetch offsets, and a {@link CounterShard}: the load replays exactly the
 * log's records, in several steps; a write completes only once the high watermark passed its batch
 * (and a read-only answer behind it waits too); losing leadership fails waiting writes and later
 * commands with NOT_COORDINATOR; a new leader answers COORDINATOR_NOT_AVAILABLE until loaded, and a
 * load that ends at another leader epoch takes no effect; timers fire from the injected clock; a
 * failed append reloads the shard from the log; a write not committed in time fails with
 * COORDINATOR_NOT_AVAILABLE.
 */
class CoordinatorRuntimeTest {
    private static final String TOPIC = "__test_coordinator";
    private static final UUID TOPIC_ID = UUID.fromString("00000000-0000-0000-0000-000000000019");
    private static final long COMMIT_TIMEOUT_MS = 5_000;

    @TempDir
    Path dir;

    private UnifiedLog log;
    private Partition partition;
    private final AtomicLong nowMs = new AtomicLong(1_000_000);
    private final InstantSource clock = () -> Instant.ofEpochMilli(nowMs.get());
    private final List<CounterShard> shards = new ArrayList<>();
    private final List<long[]> loads = new ArrayList<>();
    private volatile CountDownLatch replayGate;
    private CoordinatorRuntime<CounterShard> runtime;

    @BeforeEach
    void setUp() throws IOException {
        log = UnifiedLog.open(
                dir.resolve(TOPIC + "-0"), new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        partition = new Partition(TOPIC, 0, 0, log, 1, 0L);
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1, 2), 3);
        partition.becomeLeader(2, System.currentTimeMillis());
        partition.minInsyncReplicas(1);
        runtime = new CoordinatorRuntime<>(
                TOPIC,
                p -> {
                    CounterShard s = new CounterShard(p);
                    s.replayGate = replayGate;
                    synchronized (shards) {
                        shards.add(s);
                    }
                    return s;
                },
                new CoordinatorRuntimeConfig(1, COMMIT_TIMEOUT_MS, 128),
                clock,
                (p, records, ms) -> {
                    synchronized (loads) {
                        loads.add(new long[] {p, records, ms});
                    }
                });
        runtime.start();
    }

    @AfterEach
    void tearDown() throws IOException {
        runtime.close();
        log.close();
    }

    private static PartitionImage image(int leader, int epoch) {
        return new PartitionImage(0, List.of(1, 2), leader, epoch, List.of(1, 2), 3);
    }

    private void lead() {
        runtime.onBecomeLeader(partition, image(1, partition.leaderEpoch()));
        awaitStatus(Errors.NONE);
    }

    private void awaitStatus(short status) {
        Wait.until(Duration.ofSeconds(10), () -> runtime.status(0) == status, "status " + Errors.name(status));
    }

    /** Lets follower 2 catch up to the log end: the HW moves there. */
    private void followerCatchesUp() {
        partition.recordFollowerFetch(2, partition.logEndOffset(), System.currentTimeMillis());
    }

    private static short errorOf(CompletableFuture<?> f) {
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        return CoordinatorException.errorCodeOf(f.handle((v, e) -> e).join());
    }

    private List<DecodedRecord> logRecords() throws IOException {
        ByteBuf buf = io.netty.buffer.Unpooled.buffer();
        try {
            log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, buf);
            return RecordBatchReader.decode(buf, 0);
        } finally {
            buf.release();
        }
    }

    @Test
    void theLoadReplaysExactlyTheRecordsOfTheLogInSteps() throws Exception {
        // Written by an earlier leader: 3 batches, one with a record the shard refuses (empty key)
        // and a tombstone; 128-byte load steps take several reads.
        List<CoordinatorRecord> first = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            first.add(new CoordinatorRecord(CounterShard.key("c" + i), CounterShard.value(i * 10L)));
        }
        appendDirect(first);
        appendDirect(List.of(
                new CoordinatorRecord(new byte[0], CounterShard.value(1)),
                new CoordinatorRecord(CounterShard.key("c1"), null)));
        appendDirect(List.of(new CoordinatorRecord(CounterShard.key("c2"), CounterShard.value(99))));
        followerCatchesUp();

        lead();

        CounterShard shard = runtime.read(0, s -> s).get(10, TimeUnit.SECONDS);
        assertThat(shard.loaded).isTrue();
        assertThat(shard.loadedAtMs).isEqualTo(nowMs.get());
        assertThat(shard.replayedOffsets)
                .as("every record but the refused one")
                .containsExactly(0L, 1L, 2L, 3L, 4L, 6L, 7L);
        assertThat(runtime.read(0, s -> new java.util.TreeMap<>(s.counters)).get())
                .containsExactlyEntriesOf(
                        new java.util.TreeMap<>(java.util.Map.of("c0", 0L, "c2", 99L, "c3", 30L, "c4", 40L)));
        synchronized (loads) {
            assertThat(loads).hasSize(1);
            assertThat(loads.get(0)[1]).as("records replayed").isEqualTo(7);
        }
    }

    private void appendDirect(List<CoordinatorRecord> records) throws IOException {
        ByteBuf b = CoordinatorThread.batchOf(records, 5L);
        try {
            partition.appendAsLeader(b);
        } finally {
            b.release();
        }
    }

    /** Each batch of the log as "offset:producerId/epoch/baseSequence" plus " control" for a marker. */
    private List<String> batchHeaders() throws IOException {
        ByteBuf buf = io.netty.buffer.Unpooled.buffer();
        try {
            log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, buf);
            List<String> out = new ArrayList<>();
            for (int p = 0; p < buf.writerIndex(); p += RecordBatchLayout.batchSize(buf, p)) {
                out.add(RecordBatchLayout.baseOffsetDelta(buf, p) + ":" + RecordBatchLayout.producerId(buf, p) + "/"
                        + RecordBatchLayout.producerEpoch(buf, p) + "/" + RecordBatchLayout.baseSequence(buf, p)
                        + (ControlRecordLayout.isControl(buf, p) ? " control" : ""));
            }
            return out;
        } finally {
            buf.release();
        }
    }

    @Test
    void aTransactionalWriteIsTheProducersBatchAndARefusalReloadsTheShard() throws Exception {
        lead();
        CompletableFuture<Long> w1 = runtime.submit(0, s -> s.addInTransaction("x", 5, 1000, (short) 1, 3));
        CompletableFuture<Long> w2 = runtime.submit(0, s -> s.addInTransaction("x", 2, 1000, (short) 1, 3));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 3, "BEGIN and two batches");
        followerCatchesUp();
        assertThat(w1.get(10, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(w2.get(10, TimeUnit.SECONDS)).isEqualTo(7);
        // A BEGIN marker first, then the producer's batches with the sequences the log stamped.
        assertThat(batchHeaders()).containsExactly("0:1000/1/-1 control", "1:1000/1/0", "2:1000/1/1");
        assertThat(log.firstUnstableOffset()).isZero();

        // The transaction coordinator aborted it under a bumped epoch (as after a timeout).
        partition.appendTransactionMarker(1000, (short) 2, false, 0, 3);
        followerCatchesUp();
        // A write at the old epoch is refused by the log: nothing written, the error answered, and
        // the shard (which had applied it in memory) loaded again from the log.
        CompletableFuture<Long> stale = runtime.submit(0, s -> s.addInTransaction("x", 100, 1000, (short) 1, 3));
        assertThat(errorOf(stale)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(partition.logEndOffset()).isEqualTo(4);
        Wait.until(
                Duration.ofSeconds(10),
                () -> {
                    synchronized (shards) {
                        return shards.size() == 2 && shards.get(1).loaded;
                    }
                },
                "the shard reloaded");
        CounterShard reloaded;
        synchronized (shards) {
            reloaded = shards.get(1);
        }
        assertThat(reloaded.replayedTransactional)
                .containsExactly(
                        "marker " + ControlRecordLayout.BEGIN + " 1000/1 seq 3@0",
                        "txn 1000/1 x@1",
                        "txn 1000/1 x@2",
                        "marker " + ControlRecordLayout.ABORT + " 1000/2 seq 3@3");
        assertThat(reloaded.replayedOffsets).as("no plain record").isEmpty();
    }

    @Test
    void aWriteCompletesOnlyOnceTheHighWatermarkPassedItsBatch() throws Exception {
        lead();
        CompletableFuture<Long> w1 = runtime.submit(0, s -> s.add("x", 5));
        CompletableFuture<Long> w2 = runtime.submit(0, s -> s.add("x", 2));
        CompletableFuture<Long> readBehind = runtime.submit(0, s -> CoordinatorResult.of(s.get("x")));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 2, "both batches appended");
        assertThat(w1).as("follower 2 has nothing yet").isNotDone();

        partition.recordFollowerFetch(2, 1, System.currentTimeMillis());
        assertThat(w1.get(10, TimeUnit.SECONDS)).isEqualTo(5L);
        assertThat(w2).as("HW 1 of 2").isNotDone();
        assertThat(readBehind).as("an answer behind an uncommitted write waits").isNotDone();

        followerCatchesUp();
        assertThat(w2.get(10, TimeUnit.SECONDS)).isEqualTo(7L);
        assertThat(readBehind.get(10, TimeUnit.SECONDS)).isEqualTo(7L);
        List<DecodedRecord> records = logRecords();
        assertThat(records).hasSize(2);
        assertThat(records.get(1).key()).isEqualTo(CounterShard.key("x"));
        assertThat(records.get(1).value()).isEqualTo(CounterShard.value(7));
        assertThat(partition.log().latestLeaderEpoch())
                .as("appended at the leader's epoch")
                .isEqualTo(2);
    }

    @Test
    void theEntryCountOfLoadedShardsIsPublishedAtLoadAfterCommandsAndDroppedWithTheShard() throws Exception {
        appendDirect(List.of(
                new CoordinatorRecord(CounterShard.key("a"), CounterShard.value(1)),
                new CoordinatorRecord(CounterShard.key("b"), CounterShard.value(2))));
        followerCatchesUp();
        assertThat(runtime.loadedEntryCount()).as("nothing loaded").isZero();

        lead();
        assertThat(runtime.loadedEntryCount()).as("published by the load").isEqualTo(2);

        CompletableFuture<Long> c = runtime.submit(0, s -> s.add("c", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 3, "appended");
        followerCatchesUp();
        assertThat(c.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
        // Published by the runtime thread about once a second (the test clock stands still).
        Wait.until(Duration.ofSeconds(10), () -> runtime.loadedEntryCount() == 3, "3 entries published");

        partition.becomeFollower(2, 3);
        runtime.onBecomeFollower(partition, image(2, 3));
        awaitStatus(Errors.NOT_COORDINATOR);
        assertThat(runtime.loadedEntryCount())
                .as("the dropped shard counts no more")
                .isZero();
    }

    @Test
    void losingLeadershipFailsWaitingWritesAndLaterCommandsWithNotCoordinator() throws Exception {
        lead();
        CompletableFuture<Long> waiting = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        partition.becomeFollower(2, 3);
        runtime.onBecomeFollower(partition, image(2, 3));

        assertThat(errorOf(waiting)).isEqualTo(Errors.NOT_COORDINATOR);
        awaitStatus(Errors.NOT_COORDINATOR);
        assertThat(errorOf(runtime.submit(0, s -> s.add("x", 1)))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(errorOf(runtime.read(0, s -> s.get("x")))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(partition.listenerCount()).as("HW listener removed").isZero();
    }

    @Test
    void aNewLeaderAnswersCoordinatorNotAvailableUntilLoaded() throws Exception {
        appendDirect(List.of(new CoordinatorRecord(CounterShard.key("x"), CounterShard.value(41))));
        followerCatchesUp();
        replayGate = new CountDownLatch(1);
        runtime.onBecomeLeader(partition, image(1, 2));
        awaitStatus(Errors.COORDINATOR_NOT_AVAILABLE);
        // Queued behind the load's first step; the last step (which finds the end) is queued after it.
        CompletableFuture<Long> early = runtime.submit(0, s -> s.add("x", 1));
        CompletableFuture<Long> earlyRead = runtime.read(0, s -> s.get("x"));
        replayGate.countDown();
        assertThat(errorOf(early)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(errorOf(earlyRead)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        awaitStatus(Errors.NONE);
        assertThat(partition.logEndOffset())
                .as("the refused command wrote nothing")
                .isEqualTo(1);
        CompletableFuture<Long> later = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 2, "appended");
        followerCatchesUp();
        assertThat(later.get(10, TimeUnit.SECONDS)).isEqualTo(42L);
    }

    @Test
    void aLoadThatEndsAtAnotherLeaderEpochTakesNoEffect() throws Exception {
        appendDirect(List.of(new CoordinatorRecord(CounterShard.key("x"), CounterShard.value(1))));
        replayGate = new CountDownLatch(1);
        runtime.onBecomeLeader(partition, image(1, 2));
        awaitStatus(Errors.COORDINATOR_NOT_AVAILABLE);
        partition.becomeLeader(4, System.currentTimeMillis()); // re-elected; its event comes later
        replayGate.countDown();
        awaitStatus(Errors.NOT_COORDINATOR);
        synchronized (loads) {
            assertThat(loads).as("no load reported").isEmpty();
        }
        replayGate = null;
        runtime.onBecomeLeader(partition, image(1, 4));
        awaitStatus(Errors.NONE);
        assertThat(runtime.read(0, s -> s.get("x")).get()).isEqualTo(1L);
    }

    @Test
    void timersFireFromTheInjectedClockAndTheirRecordsAreAppended() throws Exception {
        lead();
        followerCatchesUp();
        CompletableFuture<Long> w = runtime.submit(0, s -> s.add("gone", 3));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        followerCatchesUp();
        w.get(10, TimeUnit.SECONDS);
        long at = nowMs.get() + 60_000;
        long[] commandNowMs = new long[1];
        runtime.submit(0, (CounterShard s, long now) -> {
                    commandNowMs[0] = now;
                    return s.expireAt("gone", at);
                })
                .get(10, TimeUnit.SECONDS);
        assertThat(commandNowMs[0]).as("commands get the runtime clock").isEqualTo(nowMs.get());
        assertThat(runtime.loadedPartitions()).containsExactly(0);
        runtime.wakeup();
        Thread.sleep(50);
        assertThat(partition.logEndOffset()).as("not due yet").isEqualTo(1);

        nowMs.set(at);
        runtime.wakeup();
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 2, "the expiry's tombstone appended");
        assertThat(logRecords().get(1).value()).as("a tombstone").isNull();
        assertThat(runtime.read(0, s -> s.counters.containsKey("gone")).get()).isFalse();
    }

    @Test
    void aFailedAppendFailsTheCommandAndReloadsTheShardFromTheLog() throws Exception {
        lead();
        followerCatchesUp();
        CompletableFuture<Long> ok = runtime.submit(0, s -> s.add("x", 10));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        followerCatchesUp();
        assertThat(ok.get(10, TimeUnit.SECONDS)).isEqualTo(10L);
        int shardsBefore;
        synchronized (shards) {
            shardsBefore = shards.size();
        }

        // The partition fails while the command runs (after the runtime's check): its append throws.
        PartitionFailure failure =
                new PartitionFailure("append", "00000000000000000000.log", "test", "java.io.IOException", 0L, false);
        CompletableFuture<Long> failing = runtime.submit(0, s -> {
            CoordinatorResult<Long> r = s.add("x", 5);
            partition.markFailed(failure);
            return r;
        });
        assertThat(errorOf(failing)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        awaitStatus(Errors.NONE);
        synchronized (shards) {
            assertThat(shards.size()).as("a new shard was loaded").isEqualTo(shardsBefore + 1);
        }
        assertThat(runtime.read(0, s -> s.get("x")).get())
                .as("the applied but unwritten +5 is gone")
                .isEqualTo(10L);

        assertThat(errorOf(runtime.submit(0, s -> s.add("x", 5))))
                .as("refused while failed, before the shard changes")
                .isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        synchronized (shards) {
            assertThat(shards.size()).as("no second reload").isEqualTo(shardsBefore + 1);
        }
        assertThat(runtime.read(0, s -> s.get("x")).get()).isEqualTo(10L);

        partition.recoverInPlace(failure);
        CompletableFuture<Long> after = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 2, "appended");
        followerCatchesUp();
        assertThat(after.get(10, TimeUnit.SECONDS)).isEqualTo(11L);
    }

    @Test
    void aCommandThatThrowsFailsWithItsExceptionAndTheShardIsReloaded() throws Exception {
        lead();
        followerCatchesUp();
        CompletableFuture<Long> ok = runtime.submit(0, s -> s.add("x", 3));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        followerCatchesUp();
        ok.get(10, TimeUnit.SECONDS);
        CompletableFuture<Long> bug = runtime.submit(0, s -> {
            s.add("x", 100); // changed memory, then failed
            throw new IllegalStateException("a bug in the shard");
        });
        assertThatThrownBy(() -> bug.get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("a bug in the shard");
        awaitStatus(Errors.NONE);
        assertThat(runtime.read(0, s -> s.get("x")).get())
                .as("reloaded from the log")
                .isEqualTo(3L);
        assertThat(partition.logEndOffset()).isEqualTo(1);
    }

    @Test
    void aWriteNotCommittedInTimeFailsWithCoordinatorNotAvailableAndStaysInTheLog() throws Exception {
        lead();
        CompletableFuture<Long> w = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        nowMs.addAndGet(COMMIT_TIMEOUT_MS);
        runtime.wakeup();
        assertThat(errorOf(w)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(partition.logEndOffset()).isEqualTo(1);
        assertThat(runtime.status(0)).as("still the coordinator").isEqualTo(Errors.NONE);
    }

    @Test
    void anIsrBelowMinInsyncReplicasFailsWaitingWrites() throws Exception {
        lead();
        partition.minInsyncReplicas(2);
        CompletableFuture<Long> w = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        partition.updateAssignment(TOPIC_ID, List.of(1, 2), List.of(1), 4); // follower 2 left the ISR
        assertThat(errorOf(w)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void commandsAfterCloseFailWithCoordinatorNotAvailable() throws Exception {
        lead();
        CompletableFuture<Long> waiting = runtime.submit(0, s -> s.add("x", 1));
        Wait.until(Duration.ofSeconds(10), () -> partition.logEndOffset() == 1, "appended");
        runtime.close();
        assertThat(errorOf(waiting)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(errorOf(runtime.submit(0, s -> s.add("x", 1)))).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void otherTopicsAreIgnored() throws Exception {
        UnifiedLog other = UnifiedLog.open(
                dir.resolve("other-0"), new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        try {
            runtime.onBecomeLeader(new Partition("other", 0, 1, other), image(1, 1));
            runtime.wakeup();
            Thread.sleep(50);
            assertThat(runtime.status(0)).isEqualTo(Errors.NOT_COORDINATOR);
        } finally {
            other.close();
        }
    }

    @Test
    void aRuntimeThreadStuckInACommandIsReportedByTheWatchdog() throws Exception {
        AtomicLong nanos = new AtomicLong();
        ThreadWatchdog watchdog = new ThreadWatchdog(1_000, nanos::get);
        runtime.watch(watchdog);
        lead();
        watchdog.checkNow(); // its probe beats on the runtime thread
        Wait.until(
                Duration.ofSeconds(10),
                () -> {
                    watchdog.checkNow();
                    return !watchdog.fenceWanted();
                },
                "the runtime thread beats");
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Long> blocking = runtime.submit(0, s -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return CoordinatorResult.of(0L);
        });
        nanos.addAndGet(TimeUnit.SECONDS.toNanos(3)); // past the stall timeout plus one check interval
        watchdog.checkNow();
        assertThat(watchdog.stucks()).isEqualTo(1);
        assertThat(watchdog.fenceWanted()).as("the broker asks to be fenced").isTrue();

        release.countDown();
        assertThat(blocking.get(10, TimeUnit.SECONDS)).isZero();
        Wait.until(
                Duration.ofSeconds(10),
                () -> {
                    watchdog.checkNow();
                    return !watchdog.fenceWanted();
                },
                "the thread moves again");
        runtime.close();
        watchdog.checkNow();
        assertThat(watchdog.fenceWanted()).as("a closed runtime is not watched").isFalse();
    }
}
