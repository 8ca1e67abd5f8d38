package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link UnifiedLog#updateConfig}: a topic config change takes effect on an open log. */
class LogConfigUpdateTest {
    @TempDir
    Path dir;

    private static final long HOUR_MS = 3_600_000L;

    private static void append(UnifiedLog log, long timestampMs, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            ByteBuf b = TestBatches.batch(timestampMs);
            log.appendAsLeader(b, 0);
            b.release();
        }
    }

    @Test
    void aSmallerSegmentSizeRollsTheNextAppendsAndALongerRetentionIsUsedByTheNextRun() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        LogConfig opened = LogConfig.builder().indexIntervalBytes(0).build(); // 1 GiB segments, 7 days
        try (UnifiedLog log = UnifiedLog.open(dir, opened, env.environment())) {
            append(log, env.nowMs(), 20);
            assertThat(log.segmentCount()).isEqualTo(1);
            int firstSegmentBytes = log.segmentsForTesting()[0].sizeBytes();
            assertThat(firstSegmentBytes).isGreaterThan(1024);

            LogConfig small = opened.toBuilder()
                    .segmentBytes(1024)
                    .indexMaxBytes(1024)
                    .retentionMs(HOUR_MS)
                    .fileDeleteDelayMs(0)
                    .build();
            log.updateConfig(small);
            assertThat(log.config()).isEqualTo(small);
            append(log, env.nowMs(), 40);
            LogSegment[] segs = log.segmentsForTesting();
            assertThat(segs.length).as("rolled at 1 KiB").isGreaterThan(3);
            assertThat(segs[0].sizeBytes()).as("written before: not rewritten").isEqualTo(firstSegmentBytes);
            for (int i = 1; i < segs.length; i++) {
                assertThat(segs[i].sizeBytes()).isLessThanOrEqualTo(1024);
            }

            env.advance(2 * HOUR_MS);
            log.updateConfig(small.toBuilder().retentionMs(3 * HOUR_MS).build());
            assertThat(log.deleteOldSegments(log.logEndOffset()))
                    .as("2 h old, 3 h retention")
                    .isZero();
            log.updateConfig(small);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isEqualTo(segs.length - 1);
            assertThat(log.logEndOffset()).isEqualTo(60);
        }
    }

    @Test
    void switchingToCompactRejectsNullKeysFromTheNextAppend() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, 1000, 1);
            ByteBuf nullKey = TestBatches.batch(2000);
            try {
                assertThat(log.acceptsKeys(nullKey)).isTrue();
                log.updateConfig(LogConfig.builder().cleanupPolicy("compact").build());
                assertThat(log.acceptsKeys(nullKey)).isFalse();
                assertThatThrownBy(() -> log.appendAsLeader(nullKey, 0)).isInstanceOf(InvalidRecordException.class);
                assertThat(log.logEndOffset()).isEqualTo(1);
            } finally {
                nullKey.release();
            }
        }
    }
}
