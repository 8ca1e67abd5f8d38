package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rolling on {@code log.roll.ms}, before and after a restart. */
class LogSegmentRollTimeTest {
    @TempDir
    Path dir;

    private static final long HOUR_MS = 3_600_000L;
    private static final LogConfig HOURLY =
            LogConfig.builder().segmentMs(HOUR_MS).retentionMs(2 * HOUR_MS).build();

    private static void append(UnifiedLog log, long timestampMs) throws IOException {
        ByteBuf b = TestBatches.batch(timestampMs);
        try {
            log.appendAsLeader(b, 0);
        } finally {
            b.release();
        }
    }

    @Test
    void aSegmentOlderThanRollMsRollsAtTheNextAppendSoRetentionCanDeleteIt() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, HOURLY, env.environment())) {
            env.advance(2 * HOUR_MS); // an empty segment never rolls
            append(log, env.nowMs());
            env.advance(HOUR_MS - 1);
            append(log, env.nowMs());
            assertThat(log.segmentCount()).isEqualTo(1);
            env.advance(1);
            append(log, env.nowMs());
            assertThat(log.segmentCount()).isEqualTo(2);
            assertThat(log.segmentsForTesting()[1].baseOffset).isEqualTo(2);
            env.advance(2 * HOUR_MS + 1);
            assertThat(log.deleteOldSegments(Long.MAX_VALUE)).isEqualTo(1);
            assertThat(log.logStartOffset()).isEqualTo(2);
        }
    }

    @Test
    void afterARestartTheFirstBatchTimestampCappedByTheFileTimeDecides() throws IOException {
        long start = System.currentTimeMillis();
        Path current = dir.resolve("p-0");
        try (UnifiedLog log = UnifiedLog.open(current, HOURLY, new ManualEnvironment(start).environment())) {
            append(log, start);
        }
        try (UnifiedLog log =
                UnifiedLog.open(current, HOURLY, new ManualEnvironment(start + HOUR_MS / 2).environment())) {
            append(log, start + HOUR_MS / 2);
            assertThat(log.segmentCount()).isEqualTo(1);
        }
        try (UnifiedLog log =
                UnifiedLog.open(current, HOURLY, new ManualEnvironment(start + HOUR_MS + 60_000).environment())) {
            append(log, start + HOUR_MS + 60_000);
            assertThat(log.segmentCount()).isEqualTo(2);
        }
        // a first batch stamped far in the future does not postpone the roll: the file time caps it
        Path other = dir.resolve("p-1");
        try (UnifiedLog log = UnifiedLog.open(other, HOURLY, new ManualEnvironment(start).environment())) {
            append(log, start + 365L * 24 * HOUR_MS);
        }
        try (UnifiedLog log =
                UnifiedLog.open(other, HOURLY, new ManualEnvironment(start + HOUR_MS + 60_000).environment())) {
            append(log, start);
            assertThat(log.segmentCount()).isEqualTo(2);
        }
    }
}
