package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time lookups on batches built as the public SDKs build them: header maxTimestamp = baseTimestamp,
 * record timestampDeltas up to +5000 ms (spec decision 9.s). Every answer is checked against a brute
 * force over the records appended, on the leader, a follower, after a clean restart, after a crash,
 * after a rebuild of the time indexes and after a truncation; retention must keep a segment whose
 * newest record is recent even though its headers say it is old.
 */
class SdkTimestampLookupTest {
    @TempDir
    Path dir;

    private static final long HOUR_MS = 3_600_000L;
    private static final int BATCHES = 40;

    /** ~1 KiB segments (about three 6-record batches each), a time entry every 300 bytes. */
    private static LogConfig config() {
        return LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(300)
                .indexMaxBytes(1024)
                .build();
    }

    /** One appended record: its offset and timestamp. */
    private record Rec(long offset, long timestampMs) {}

    /** SDK-style batches: bases 10 s apart (every 7th goes back 3 s), deltas 0 then 5 in [0, 5000], one of them 5000. */
    private static List<long[]> sdkBatches(long seed) {
        Random random = new Random(seed);
        List<long[]> batches = new ArrayList<>();
        long base = 1_700_000_000_000L;
        for (int i = 0; i < BATCHES; i++) {
            base += i % 7 == 6 ? -3_000 : 10_000;
            long[] batch = new long[7]; // [0] = base, then 6 deltas; the first record is at the base
            batch[0] = base;
            for (int r = 2; r < batch.length; r++) {
                batch[r] = random.nextInt(5_001);
            }
            batch[2 + random.nextInt(5)] = 5_000; // some record of each batch reaches base + 5000
            batches.add(batch);
        }
        return batches;
    }

    private static List<Rec> appendAll(UnifiedLog log, List<long[]> batches) throws IOException {
        List<Rec> recs = new ArrayList<>();
        for (long[] b : batches) {
            long[] deltas = Arrays.copyOfRange(b, 1, b.length);
            ByteBuf batch = TestBatches.sdkBatch(b[0], deltas);
            try {
                assertThat(RecordBatchValidator.validate(batch, Integer.MAX_VALUE))
                        .isEqualTo(Errors.NONE);
                long first = log.appendAsLeader(batch, 0);
                for (int i = 0; i < deltas.length; i++) {
                    recs.add(new Rec(first + i, b[0] + deltas[i]));
                }
            } finally {
                batch.release();
            }
        }
        return recs;
    }

    /** Brute force: the first record in offset order below {@code upper} with timestamp >= target. */
    private static TimestampOffset expected(List<Rec> recs, long targetMs, long upper) {
        for (Rec r : recs) {
            if (r.offset() < upper && r.timestampMs() >= targetMs) {
                return new TimestampOffset(r.timestampMs(), r.offset());
            }
        }
        return null;
    }

    /** Targets around every record's timestamp and every batch's base, where header and records disagree. */
    private static List<Long> targets(List<Rec> recs) {
        List<Long> targets = new ArrayList<>();
        for (Rec r : recs) {
            targets.add(r.timestampMs() - 1);
            targets.add(r.timestampMs());
            targets.add(r.timestampMs() + 1);
        }
        targets.add(0L);
        return targets;
    }

    private static void checkLookups(UnifiedLog log, List<Rec> recs) throws IOException {
        long upper = log.logEndOffset();
        int misses = 0;
        for (long target : targets(recs)) {
            TimestampOffset want = expected(recs, target, upper);
            assertThat(log.offsetForTimestamp(target, Long.MAX_VALUE))
                    .as("target %d", target)
                    .isEqualTo(want);
            misses += want == null ? 1 : 0;
        }
        assertThat(misses).as("targets past every record").isPositive();
        Rec max = recs.stream()
                .filter(r -> r.offset() < upper)
                .reduce((a, b) -> b.timestampMs() > a.timestampMs() ? b : a)
                .orElseThrow();
        assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE))
                .isEqualTo(new TimestampOffset(max.timestampMs(), max.offset()));
    }

    @Test
    void leaderFindsRecordsInsideBatchesWhoseHeaderUnderstatesTheirMaximum() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, config())) {
            List<Rec> recs = appendAll(log, sdkBatches(1));
            assertThat(log.segmentCount()).isGreaterThan(5);
            // The reported case: a target only a record inside the last batch reaches.
            long lastBase = sdkBatches(1).get(BATCHES - 1)[0];
            assertThat(log.offsetForTimestamp(lastBase + 4_999, Long.MAX_VALUE))
                    .isEqualTo(expected(recs, lastBase + 4_999, Long.MAX_VALUE))
                    .isNotNull();
            checkLookups(log, recs);
        }
    }

    @Test
    void cleanRestartCrashAndTimeIndexRebuildKeepLookupsRight() throws IOException {
        List<Rec> recs;
        try (UnifiedLog log = UnifiedLog.open(dir, config())) {
            recs = appendAll(log, sdkBatches(2));
        }
        try (UnifiedLog log = UnifiedLog.open(dir, config())) { // trusted: indexes checked, kept
            checkLookups(log, recs);
            log.crashForTesting();
        }
        try (UnifiedLog log = UnifiedLog.open(dir, config())) { // recovery: indexes rebuilt by the scan
            checkLookups(log, recs);
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".timeindex")).toList()) {
                Files.delete(f);
            }
        }
        try (UnifiedLog log = UnifiedLog.open(dir, config())) { // trusted log, time indexes rebuilt
            checkLookups(log, recs);
        }
    }

    @Test
    void followerIndexesTheRecordsRealMaximumAndTruncationRecomputesIt() throws IOException {
        Path leaderDir = Files.createDirectory(dir.resolve("leader-0"));
        Path followerDir = Files.createDirectory(dir.resolve("follower-0"));
        try (UnifiedLog leader = UnifiedLog.open(leaderDir, config());
                UnifiedLog follower = UnifiedLog.open(followerDir, config())) {
            List<Rec> recs = appendAll(leader, sdkBatches(3));
            ByteBuf fetched = Unpooled.buffer();
            try {
                leader.readInto(0, Integer.MAX_VALUE, leader.logEndOffset(), true, fetched);
                assertThat(follower.appendAsFollower(fetched, 0)).isEqualTo(leader.logEndOffset());
            } finally {
                fetched.release();
            }
            assertThat(follower.segmentCount()).isGreaterThan(5);
            checkLookups(follower, recs);
            long cut = recs.get(recs.size() / 2 + 2).offset(); // inside a batch: the whole batch goes
            long end = follower.truncateTo(cut);
            assertThat(end).isLessThanOrEqualTo(cut);
            checkLookups(follower, recs.stream().filter(r -> r.offset() < end).toList());
        }
    }

    @Test
    void retentionKeepsASegmentWhoseNewestRecordIsRecentWhateverItsHeadersSay() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_800_000_000_000L);
        LogConfig config = LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(0)
                .indexMaxBytes(1024)
                .retentionMs(HOUR_MS)
                .fileDeleteDelayMs(0)
                .build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            // Headers and first records two hours old; the last record of each batch is stamped now.
            for (int i = 0; i < 12; i++) {
                ByteBuf b = TestBatches.sdkBatch(env.nowMs() - 2 * HOUR_MS, 0, 1_000, 2 * HOUR_MS);
                log.appendAsLeader(b, 0);
                b.release();
            }
            int segments = log.segmentCount();
            assertThat(segments).isGreaterThan(2);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isZero();
            assertThat(log.segmentCount()).isEqualTo(segments);
            env.advance(HOUR_MS + 1); // now the newest records are past retention.ms too
            assertThat(log.deleteOldSegments(log.logEndOffset())).isEqualTo(segments - 1);
        }
    }
}
