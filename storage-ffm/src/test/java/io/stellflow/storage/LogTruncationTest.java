package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LogTruncation} through its log: what counts as a truncation (compaction relies on the
 * count), and the start-offset outcomes. Cut positions are covered by FollowerAndTruncationTest,
 * retention rules by RetentionTest.
 */
class LogTruncationTest {
    @TempDir
    Path dir;

    private static final LogConfig SMALL_SEGMENTS =
            LogConfig.builder().segmentBytes(1024).build(); // two batches each

    private static void append(UnifiedLog log, int batches) throws IOException {
        for (int i = 0; i < batches; i++) {
            ByteBuf b = TestBatches.sized(1, 300); // one record, about 370 bytes
            try {
                log.appendAsLeader(b, 0);
            } finally {
                b.release();
            }
        }
    }

    @Test
    void onlyTruncationsFromTheEndThatRemoveSomethingAreCounted() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1000);
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL_SEGMENTS, env.environment())) {
            append(log, 10);
            assertThat(log.segmentCount()).isGreaterThan(2);
            log.truncateTo(log.logEndOffset()); // nothing above: not counted
            assertThat(log.truncationCount()).isZero();

            assertThat(log.truncateTo(7)).isEqualTo(7);
            assertThat(log.truncationCount()).isEqualTo(1);
            assertThat(log.logEndOffset()).isEqualTo(7);
            assertThat(log.segmentsForTesting()[log.segmentCount() - 1].baseOffset)
                    .isLessThanOrEqualTo(7);

            assertThat(log.maybeIncrementLogStartOffset(3, 7)).isEqualTo(LogStartOffsetResult.INCREMENTED);
            assertThat(log.deleteOldSegments(7)).isPositive(); // retention: not a truncation
            assertThat(log.truncationCount()).isEqualTo(1);

            log.truncateFullyAndStartAt(50);
            assertThat(log.truncationCount()).isEqualTo(2);
            assertThat(log.logStartOffset()).isEqualTo(50);
            assertThat(log.logEndOffset()).isEqualTo(50);
            assertThat(log.latestLeaderEpoch()).isEqualTo(-1);
            assertThat(log.segmentCount()).isEqualTo(1);
        }
    }

    @Test
    void theStartOffsetRisesOnlyUpToTheHighWatermarkAndNeverFalls() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, 5);
            assertThat(log.maybeIncrementLogStartOffset(4, 3)).isEqualTo(LogStartOffsetResult.BEYOND_HIGH_WATERMARK);
            assertThat(log.maybeIncrementLogStartOffset(6, 10)).isEqualTo(LogStartOffsetResult.BEYOND_HIGH_WATERMARK);
            assertThat(log.maybeIncrementLogStartOffset(3, 5)).isEqualTo(LogStartOffsetResult.INCREMENTED);
            assertThat(log.logStartOffset()).isEqualTo(3);
            assertThat(log.maybeIncrementLogStartOffset(2, 5)).isEqualTo(LogStartOffsetResult.UNCHANGED);
            assertThat(log.logStartOffset()).isEqualTo(3);
            assertThat(log.truncateTo(2)).isEqualTo(2); // at or below the start: the log restarts empty there
            assertThat(log.logStartOffset()).isEqualTo(2);
            assertThat(log.truncationCount()).isEqualTo(1);
        }
    }
}
