package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** UnifiedLog.appendIdempotentAsLeader and how producer state follows the log (§6.12). */
class IdempotentLogTest {
    @TempDir
    Path dir;

    private final ManualEnvironment clock = new ManualEnvironment(1_000_000);

    /** Small segments: a few batches roll. */
    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    /** Small segments, records older than a minute deleted. */
    private static final LogConfig TIMED = LogConfig.builder()
            .segmentBytes(1024)
            .indexIntervalBytes(64)
            .indexMaxBytes(4096)
            .retentionMs(60_000)
            .build();

    /** Small segments, compacted whenever anything is dirty. */
    private static final LogConfig COMPACTED = LogConfig.builder()
            .segmentBytes(1024)
            .indexIntervalBytes(64)
            .indexMaxBytes(4096)
            .cleanupPolicy("compact")
            .minCleanableDirtyRatio(0)
            .build();

    private UnifiedLog open() throws IOException {
        return UnifiedLog.open(dir, SMALL, clock.environment());
    }

    /** One idempotent batch: a record per value, keys "k"+value, one header. */
    static ByteBuf batch(long pid, int epoch, int baseSeq, long timestampMs, String... values) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampMs);
        for (int i = 0; i < values.length; i++) {
            b.append(
                    timestampMs + i,
                    ("k" + values[i]).getBytes(StandardCharsets.UTF_8),
                    values[i].getBytes(StandardCharsets.UTF_8),
                    List.of(new Header("h", new byte[] {1})));
        }
        b.close();
        out.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, pid);
        out.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, epoch);
        out.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, baseSeq);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        return out;
    }

    private static long append(UnifiedLog log, ByteBuf b) throws IOException {
        try {
            return log.appendIdempotentAsLeader(b, 0, null);
        } finally {
            b.release();
        }
    }

    private static long plain(UnifiedLog log, long ts) throws IOException {
        ByteBuf b = TestBatches.batch(ts, ts);
        try {
            return log.appendAsLeader(b, 0);
        } finally {
            b.release();
        }
    }

    @Test
    void aRetryWithNewTimestampsGetsTheOriginalOffsetAndIsStoredOnce() throws IOException {
        try (UnifiedLog log = open()) {
            plain(log, 1);
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "b"))).isEqualTo(2);
            assertThat(append(log, batch(7, 0, 2, 1000, "c"))).isEqualTo(4);
            long end = log.logEndOffset();
            // The Go SDK re-encodes a retry with a new timestamp: same records otherwise.
            assertThat(append(log, batch(7, 0, 0, 99_000, "a", "b"))).isEqualTo(2);
            assertThat(append(log, batch(7, 0, 2, 5, "c"))).isEqualTo(4);
            assertThat(log.logEndOffset()).isEqualTo(end);
        }
    }

    @Test
    void aReusedSequenceWithOtherContentIsOutOfOrderNeverADuplicate() throws IOException {
        try (UnifiedLog log = open()) {
            append(log, batch(7, 0, 0, 1000, "a", "b"));
            long end = log.logEndOffset();
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "X"))).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(7, 0, 0, 1000, "b", "a"))).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            ByteBuf otherHeader = batch(7, 0, 0, 1000, "a", "b");
            // Flip the last header value byte (and fix the CRC): only a header differs.
            otherHeader.setByte(otherHeader.writerIndex() - 1, 2);
            otherHeader.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(otherHeader, 0));
            assertThat(append(log, otherHeader)).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(log.logEndOffset()).isEqualTo(end);
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "b"))).isZero();
        }
    }

    @Test
    void gapsEpochsAndTheProducerBoundAreRefusedAndWriteNothing() throws IOException {
        clock.environment();
        LogEnvironment env = clock.environment().withProducerState(new ProducerStateConfig(60_000, 1));
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(append(log, batch(1, 2, 1, 1000, "a"))).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(1, 2, 0, 1000, "a"))).isZero();
            assertThat(append(log, batch(1, 1, 1, 1000, "b"))).isEqualTo(UnifiedLog.INVALID_PRODUCER_EPOCH);
            assertThat(append(log, batch(1, 2, 2, 1000, "b"))).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(2, 0, 0, 1000, "z"))).isEqualTo(UnifiedLog.TOO_MANY_PRODUCER_IDS);
            assertThat(log.logEndOffset()).isEqualTo(1);
            clock.advance(60_000);
            assertThat(append(log, batch(2, 0, 0, 1000, "z")))
                    .as("producer 1 expired")
                    .isEqualTo(1);
        }
    }

    @Test
    void notOneBatchWithAProducerIdIsABug() throws IOException {
        try (UnifiedLog log = open()) {
            ByteBuf two = batch(1, 0, 0, 1000, "a");
            ByteBuf second = batch(1, 0, 1, 1000, "b");
            two.writeBytes(second);
            second.release();
            assertThatThrownBy(() -> append(log, two)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> append(log, TestBatches.batch(5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not one batch with a producer id");
        }
    }

    @Test
    void stateSurvivesACleanRestartThroughTheSnapshotAndACrashByReplay() throws IOException {
        try (UnifiedLog log = open()) {
            for (int i = 0; i < 20; i++) {
                append(log, batch(3, 0, i, 1000, "v" + i));
            }
            assertThat(ProducerSnapshotLayout.list(dir))
                    .as("rolls wrote snapshots")
                    .isNotEmpty();
        }
        assertThat(ProducerSnapshotLayout.list(dir)).containsKey(20L);
        try (UnifiedLog log = open()) {
            assertThat(log.producerStateReplayedFrom())
                    .as("clean close: nothing to replay")
                    .isEqualTo(20);
            assertThat(log.producerState().nextSequence(3)).isEqualTo(20);
            assertThat(append(log, batch(3, 0, 17, 1000, "v17"))).isEqualTo(17);
            assertThat(append(log, batch(3, 0, 14, 1000, "v14")))
                    .as("sixth back")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(3, 0, 20, 1000, "v20"))).isEqualTo(20);
            log.crashForTesting();
        }
        try (UnifiedLog log = open()) {
            // The crash left the roll's snapshot: only the log after it was replayed.
            assertThat(log.producerStateReplayedFrom()).isPositive();
            assertThat(log.producerState().nextSequence(3)).isEqualTo(21);
            assertThat(append(log, batch(3, 0, 20, 7, "v20"))).isEqualTo(20);
        }
    }

    @Test
    void aCorruptSnapshotFallsBackToAnOlderOneOrAFullReplay() throws IOException {
        try (UnifiedLog log = open()) {
            for (int i = 0; i < 12; i++) {
                append(log, batch(4, 0, i, 1000, "v" + i));
            }
        }
        TreeMap<Long, Path> snaps = ProducerSnapshotLayout.list(dir);
        for (Path p : snaps.values()) {
            byte[] bytes = Files.readAllBytes(p);
            bytes[bytes.length - 1] ^= 0x5a;
            Files.write(p, bytes);
        }
        try (UnifiedLog log = open()) {
            assertThat(log.producerStateReplayedFrom())
                    .as("every snapshot corrupt: full replay")
                    .isZero();
            assertThat(log.producerState().nextSequence(4)).isEqualTo(12);
            assertThat(append(log, batch(4, 0, 11, 1000, "v11"))).isEqualTo(11);
        }
        for (Path p : snaps.values()) {
            if (Files.exists(p)) {
                assertThat(ProducerSnapshotLayout.read(p, snaps.floorKey(Long.MAX_VALUE)))
                        .as("only a fresh snapshot remains at " + p)
                        .isNotNull();
            }
        }
    }

    @Test
    void aFollowerBuildsTheSameStateAndTruncationRebuildsIt() throws IOException {
        Path leaderDir = dir.resolve("leader");
        Path followerDir = dir.resolve("follower");
        try (UnifiedLog leader = UnifiedLog.open(leaderDir, SMALL, clock.environment());
                UnifiedLog follower = UnifiedLog.open(followerDir, SMALL, clock.environment())) {
            for (int i = 0; i < 6; i++) {
                append(leader, batch(9, 0, i, 1000, "v" + i));
            }
            ByteBuf fetched = Unpooled.buffer();
            leader.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, fetched);
            follower.appendAsFollower(fetched, 0);
            fetched.release();
            assertThat(follower.producerState().entries()).hasSize(1);
            assertThat(follower.producerState().nextSequence(9)).isEqualTo(6);
            assertThat(follower.producerState().check(9, (short) 0, 3, 3, 0)).isEqualTo(ProducerStateManager.DUPLICATE);
            assertThat(follower.producerState().duplicateBaseOffset()).isEqualTo(3);

            follower.truncateTo(4);
            assertThat(follower.producerState().nextSequence(9)).isEqualTo(4);
            assertThat(append(follower, batch(9, 0, 4, 1000, "new4"))).isEqualTo(4);
            follower.truncateFullyAndStartAt(100);
            assertThat(follower.producerState().size()).isZero();
            assertThat(ProducerSnapshotLayout.list(followerDir)).isEmpty();
        }
    }

    /**
     * producer.id.expiration.ms runs on the broker's clock, never on the producer's timestamps
     * (docs/exactly-once.md, "Limits and expiry"): a producer whose records carry old CreateTime
     * timestamps (backfilled data, a skewed clock) keeps its state across a crash and the replay that
     * follows, so a retry of its acknowledged batch is still answered with the original offset.
     */
    @Test
    void aReplayAfterACrashExpiresByTheBrokersClockNotByTheRecordsTimestamps() throws IOException {
        LogEnvironment env = clock.environment().withProducerState(new ProducerStateConfig(60_000, 10));
        long backdatedMs = clock.environment().nowMs() - 120_000;
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(append(log, batch(9, 0, 0, backdatedMs, "a"))).isZero();
            log.deleteOldSegments(log.logEndOffset());
            assertThat(log.producerState().nextSequence(9))
                    .as("live: appended now by the broker's clock, not expired")
                    .isEqualTo(1);
            log.crashForTesting();
        }
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env)) {
            log.deleteOldSegments(log.logEndOffset()); // the retention check, no time passed
            assertThat(append(log, batch(9, 0, 0, backdatedMs, "a")))
                    .as("a retry of the acknowledged batch after the crash")
                    .isZero();
            assertThat(log.logEndOffset()).isEqualTo(1);
        }
    }

    @Test
    void stateOutlivesRetentionOfTheSegmentsThatHeldItAndStillComparesContent() throws IOException {
        try (UnifiedLog log = open()) {
            append(log, batch(6, 0, 0, 1000, "a"));
            for (int i = 0; i < 30; i++) {
                plain(log, 1000);
            }
            long end = log.logEndOffset();
            log.maybeIncrementLogStartOffset(end - 2, end);
            log.deleteOldSegments(end);
            assertThat(log.logStartOffset()).isGreaterThan(0);
            assertThat(log.segments()[0].baseOffset)
                    .as("the batch's segment is gone")
                    .isPositive();
            assertThat(append(log, batch(6, 0, 0, 1000, "X")))
                    .as("another payload under the retried sequence, its batch gone")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(6, 0, 0, 77_000, "a")))
                    .as("the same payload, new timestamp")
                    .isZero();
            assertThat(log.logEndOffset()).isEqualTo(end);
        }
        try (UnifiedLog log = open()) {
            assertThat(log.producerState().nextSequence(6)).isEqualTo(1);
            assertThat(append(log, batch(6, 0, 0, 1000, "X")))
                    .as("after a restart: the digest came back from the snapshot")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(6, 0, 0, 1000, "a"))).isZero();
            assertThat(append(log, batch(6, 0, 1, 1000, "b"))).isEqualTo(log.logEndOffset() - 1);
        }
    }

    @Test
    void aRetryOfABatchWhoseSegmentRetentionDeletedIsComparedByContentAfterACrash() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, TIMED, clock.environment())) {
            append(log, batch(6, 0, 0, clock.nowMs(), "a"));
            append(log, batch(6, 0, 1, clock.nowMs(), "b"));
            for (int i = 0; i < 30; i++) {
                plain(log, clock.nowMs());
            }
            clock.advance(61_000);
            plain(log, clock.nowMs());
            assertThat(log.deleteOldSegments(log.logEndOffset()))
                    .as("segments past retention.ms")
                    .isPositive();
            assertThat(log.logStartOffset()).isGreaterThan(1);
            log.crashForTesting(); // no close snapshot: the digests come from a roll's
        }
        try (UnifiedLog log = UnifiedLog.open(dir, TIMED, clock.environment())) {
            assertThat(append(log, batch(6, 0, 0, 5, "a")))
                    .as("an older remembered batch, same content")
                    .isZero();
            assertThat(append(log, batch(6, 0, 1, 5, "b"))).isEqualTo(1);
            assertThat(append(log, batch(6, 0, 1, 5, "c")))
                    .as("other content: never a false duplicate")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
        }
    }

    @Test
    void aSnapshotWithoutDigestsGetsThemBeforeRetentionAndWithNeitherARetryIsOutOfOrder() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, TIMED, clock.environment())) {
            append(log, batch(6, 0, 0, clock.nowMs(), "a"));
            for (int i = 0; i < 30; i++) {
                plain(log, clock.nowMs());
            }
        }
        stripDigests(); // as a build before digests wrote them (snapshot version 2)
        try (UnifiedLog log = UnifiedLog.open(dir, TIMED, clock.environment())) {
            // The retention check takes the missing digest from the stored batch before deleting it.
            clock.advance(61_000);
            plain(log, clock.nowMs());
            assertThat(log.deleteOldSegments(log.logEndOffset())).isPositive();
            assertThat(log.segments()[0].baseOffset)
                    .as("the batch's segment is gone")
                    .isPositive();
            assertThat(append(log, batch(6, 0, 0, 5, "X"))).isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(6, 0, 0, 5, "a"))).isZero();
            log.crashForTesting();
        }
        stripDigests(); // now neither the digest nor the stored batch exists
        try (UnifiedLog log = UnifiedLog.open(dir, TIMED, clock.environment())) {
            assertThat(log.producerState().nextSequence(6)).isEqualTo(1);
            assertThat(append(log, batch(6, 0, 0, 5, "a")))
                    .as("content cannot be compared: refused, never taken for the duplicate")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(append(log, batch(6, 0, 1, 5, "b"))).isEqualTo(log.logEndOffset() - 1);
        }
    }

    /** Producer 8 writes keys "ka" and "kb" 20 times (sealed segments to clean). */
    private static void supersedeAAndB(UnifiedLog log) throws IOException {
        for (int seq = 0; seq < 40; seq += 2) {
            append(log, batch(8, 0, seq, 1000, "a", "b"));
        }
    }

    /** Rewrites every producer snapshot of {@link #dir} with its content digests cleared. */
    private void stripDigests() throws IOException {
        for (var s : ProducerSnapshotLayout.list(dir).entrySet()) {
            List<ProducerStateManager.Entry> entries = ProducerSnapshotLayout.read(s.getValue(), s.getKey());
            for (ProducerStateManager.Entry e : entries) {
                java.util.Arrays.fill(e.digest, ProducerStateManager.NO_DIGEST);
            }
            ProducerSnapshotLayout.write(dir, s.getKey(), entries);
        }
    }

    @Test
    void compactionOfAnOlderRememberedBatchKeepsItsRetryAnsweredByContent() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, COMPACTED, clock.environment())) {
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "b"))).isZero();
            assertThat(append(log, batch(7, 0, 2, 1000, "c"))).isEqualTo(2);
            supersedeAAndB(log); // the keys of 7's older batch
            log.compact(log.logEndOffset());
            assertThat(CompactionTest.readAll(log, 0))
                    .as("producer 7's older batch compacted away")
                    .noneMatch(rec -> rec.offset() == 0 || rec.offset() == 1);
            long end = log.logEndOffset();
            assertThat(append(log, batch(7, 0, 0, 99_000, "a", "b")))
                    .as("its retry: the original offset, no spurious OUT_OF_ORDER_SEQUENCE_NUMBER")
                    .isZero();
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "Z")))
                    .as("another payload under its sequences")
                    .isEqualTo(UnifiedLog.OUT_OF_ORDER_SEQUENCE);
            assertThat(log.logEndOffset()).isEqualTo(end);
        }
    }

    @Test
    void theContentDigestIgnoresTimestampsOnlyAndRefusesRecordsThatDoNotParse() throws Exception {
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        ByteBuf a = batch(1, 0, 0, 1000, "a", "b");
        ByteBuf later = batch(1, 0, 0, 88_000, "a", "b");
        ByteBuf other = batch(1, 0, 0, 1000, "a", "c");
        ByteBuf fewer = batch(1, 0, 0, 1000, "a");
        try {
            long d = LogProducerState.contentDigest(a, 0, sha);
            assertThat(d).isNotEqualTo(ProducerStateManager.NO_DIGEST);
            assertThat(LogProducerState.contentDigest(later, 0, sha)).isEqualTo(d);
            assertThat(LogProducerState.contentDigest(other, 0, sha)).isNotEqualTo(d);
            assertThat(LogProducerState.contentDigest(fewer, 0, sha)).isNotEqualTo(d);
            a.setInt(RecordBatchLayout.RECORDS_OFFSET, 1 << 20); // the first record's length
            assertThat(LogProducerState.contentDigest(a, 0, sha)).isEqualTo(ProducerStateManager.NO_DIGEST);
        } finally {
            a.release();
            later.release();
            other.release();
            fewer.release();
        }
    }

    @Test
    void compactionKeepsALiveProducersLastBatchSoItsRetryGetsTheOriginalOffset() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, COMPACTED, clock.environment())) {
            assertThat(append(log, batch(7, 0, 0, 1000, "a", "b"))).isZero();
            // Producer 8 supersedes both keys of producer 7's only batch, many times over.
            supersedeAAndB(log);
            assertThat(log.segments().length).as("sealed segments to clean").isGreaterThan(2);
            CompactionResult r = log.compact(log.logEndOffset());
            assertThat(r.recordsRemoved()).as("producer 8's superseded batches").isPositive();
            List<CompactionTest.Rec> kept = CompactionTest.readAll(log, 0);
            assertThat(kept)
                    .as("producer 7's last batch kept with its records")
                    .startsWith(new CompactionTest.Rec(0, "ka", "a"), new CompactionTest.Rec(1, "kb", "b"));
            assertThat(kept)
                    .as("producer 8's older batches compacted away")
                    .noneMatch(rec -> rec.offset() == 2 || rec.offset() == 3);
            long end = log.logEndOffset();
            assertThat(append(log, batch(7, 0, 0, 99_000, "a", "b")))
                    .as("a retry after compaction: the original offset, not OUT_OF_ORDER_SEQUENCE_NUMBER")
                    .isZero();
            assertThat(log.logEndOffset()).isEqualTo(end);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, COMPACTED, clock.environment())) {
            assertThat(append(log, batch(7, 0, 0, 5, "a", "b")))
                    .as("and after a restart over the compacted segments")
                    .isZero();
            assertThat(append(log, batch(7, 0, 2, 5, "c"))).isEqualTo(log.logEndOffset() - 1);
        }
    }
}
