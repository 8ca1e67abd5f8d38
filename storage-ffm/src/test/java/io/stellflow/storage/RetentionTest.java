package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retention by time, size and log start offset, bounded by the HW and the active segment. */
class RetentionTest {
    @TempDir
    Path dir;

    private static final long HOUR_MS = 3_600_000L;

    /** ~1 KiB segments (about 13 single-record batches each), one hour of retention. */
    private static LogConfig config(long retentionBytes) {
        return LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(0)
                .indexMaxBytes(1024)
                .retentionMs(HOUR_MS)
                .retentionBytes(retentionBytes)
                .fileDeleteDelayMs(1000)
                .build();
    }

    private static void append(UnifiedLog log, long timestampMs, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            ByteBuf b = TestBatches.batch(timestampMs);
            log.appendAsLeader(b, 0);
            b.release();
        }
    }

    private long count(String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(suffix)).count();
        }
    }

    @Test
    void expiredSegmentsAreRenamedThenDeletedAfterTheDelayAndTheStartOffsetMoves() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            append(log, env.nowMs(), 40);
            int segments = log.segmentCount();
            assertThat(segments).isGreaterThan(2);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isZero(); // not old yet
            env.advance(HOUR_MS + 1);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isEqualTo(segments - 1);
            assertThat(log.segmentCount()).isEqualTo(1); // the active segment stays
            assertThat(log.logStartOffset()).isEqualTo(log.segmentsForTesting()[0].baseOffset);
            assertThat(count(".log.deleted")).isEqualTo(segments - 1);
            assertThat(count(".timeindex.deleted")).isEqualTo(segments - 1);
            env.advance(999);
            assertThat(count(".deleted")).isEqualTo(3L * (segments - 1));
            env.advance(1);
            assertThat(count(".deleted")).isZero();
            assertThat(count(".log")).isEqualTo(1);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1))) {
            assertThat(log.logStartOffset()).isEqualTo(log.segmentsForTesting()[0].baseOffset);
            assertThat(log.logEndOffset()).isEqualTo(40);
        }
    }

    @Test
    void aHighWatermarkHeldBackKeepsEverySegmentHoldingAnOffsetAtOrAboveIt() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            append(log, env.nowMs(), 40);
            env.advance(10 * HOUR_MS);
            LogSegment[] segs = log.segmentsForTesting();
            assertThat(log.deleteOldSegments(0)).isZero();
            assertThat(log.deleteOldSegments(segs[1].baseOffset - 1)).isZero(); // HW inside segment 0
            assertThat(log.deleteOldSegments(segs[2].baseOffset - 1)).isEqualTo(1); // inside segment 1
            assertThat(log.segmentsForTesting()[0]).isSameAs(segs[1]);
            assertThat(log.maybeIncrementLogStartOffset(segs[2].baseOffset, segs[2].baseOffset - 1))
                    .isEqualTo(LogStartOffsetResult.BEYOND_HIGH_WATERMARK);
            assertThat(log.logStartOffset()).isLessThan(segs[2].baseOffset);
        }
    }

    @Test
    void aFutureTimestampNeitherKeepsASegmentForeverNorDeletesItEarly() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            append(log, env.nowMs() + 365L * 24 * HOUR_MS, 20); // a year ahead
            append(log, env.nowMs(), 20);
            assertThat(log.segmentCount()).isGreaterThan(2);
            env.advance(HOUR_MS - 1);
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isZero();
            env.advance(2);
            // capped by the last append time: deleted one retention period after it
            int sealed = log.segmentCount() - 1;
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isEqualTo(sealed);
        }
    }

    @Test
    void anOldTimestampIsDeletedByItsRecordTime() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            append(log, env.nowMs() - 2 * HOUR_MS, 20); // replayed old data
            append(log, env.nowMs(), 20);
            LogSegment[] segs = log.segmentsForTesting();
            int allOld = 0;
            while (segs[allOld].maxTimestampMs() < env.nowMs() - HOUR_MS) {
                allOld++;
            }
            assertThat(allOld).isPositive();
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isEqualTo(allOld);
            assertThat(log.segmentsForTesting()[0].maxTimestampMs()).isEqualTo(env.nowMs());
        }
    }

    @Test
    void retentionBytesDeletesTheOldestSegmentsWhileTheRestStaysAboveTheLimit() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(2048), env.environment())) {
            append(log, env.nowMs(), 60);
            long total = log.sizeInBytes();
            LogSegment[] segs = log.segmentsForTesting();
            int expected = 0;
            long excess = total - 2048;
            while (expected < segs.length - 1 && excess - segs[expected].sizeBytes() >= 0) {
                excess -= segs[expected].sizeBytes();
                expected++;
            }
            assertThat(expected).isPositive();
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isEqualTo(expected);
            assertThat(log.sizeInBytes()).isGreaterThanOrEqualTo(2048);
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isZero();
        }
    }

    @Test
    void segmentsBelowARaisedLogStartOffsetAreDeleted() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            append(log, env.nowMs(), 40);
            LogSegment[] segs = log.segmentsForTesting();
            long newStart = segs[2].baseOffset + 1;
            assertThat(log.maybeIncrementLogStartOffset(newStart, log.logEndOffset()))
                    .isEqualTo(LogStartOffsetResult.INCREMENTED);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isEqualTo(2);
            assertThat(log.logStartOffset()).isEqualTo(newStart);
            assertThat(log.offsetForTimestamp(0, Long.MAX_VALUE).offset()).isEqualTo(newStart);
        }
    }

    @Test
    void aRolledTimeIndexLeftPreallocatedWithAZeroTailDoesNotCauseEarlyDeletion() throws IOException {
        long start = System.currentTimeMillis();
        ManualEnvironment env = new ManualEnvironment(start);
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), env.environment())) {
            for (int i = 0; i < 40; i++) {
                append(log, start + i, 1);
            }
            assertThat(log.segmentCount()).isGreaterThan(2);
        }
        Path timeIndex = dir.resolve("00000000000000000000.timeindex");
        byte[] trimmed = Files.readAllBytes(timeIndex);
        Files.write(timeIndex, Arrays.copyOf(trimmed, (int) TimeIndexLayout.maxBytesFor(1024)));

        ManualEnvironment later = new ManualEnvironment(start + HOUR_MS / 2);
        try (UnifiedLog log = UnifiedLog.open(dir, config(-1), later.environment())) {
            LogSegment first = log.segmentsForTesting()[0];
            assertThat(first.maxTimestampMs()).isEqualTo(start + log.segmentsForTesting()[1].baseOffset - 1);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isZero();
            for (int i = 0; i < 40; i++) {
                assertThat(log.offsetForTimestamp(start + i, Long.MAX_VALUE).offset())
                        .isEqualTo(i);
            }
            later.advance(HOUR_MS);
            int sealed = log.segmentCount() - 1;
            assertThat(log.deleteOldSegments(log.logEndOffset())).isEqualTo(sealed);
        }
        assertThat(Files.readAllBytes(timeIndex.resolveSibling(timeIndex.getFileName() + ".deleted")))
                .isEqualTo(trimmed);
    }
}
