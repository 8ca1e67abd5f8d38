package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogMetricsTest {
    @TempDir
    Path dir;

    /** Counts every hook call. */
    private static final class Counting implements LogMetrics {
        int leaderAppends;
        int followerAppends;
        int flushes;
        int rolls;
        int cleanLoads;
        int uncleanLoads;
        int indexRebuilds;
        int segmentsDeleted;
        long appendNanos;

        @Override
        public void append(long nanos, boolean leader) {
            appendNanos += nanos;
            if (leader) {
                leaderAppends++;
            } else {
                followerAppends++;
            }
        }

        @Override
        public void flush(long nanos) {
            flushes++;
        }

        @Override
        public void segmentRolled() {
            rolls++;
        }

        @Override
        public void logLoaded(long nanos, boolean clean) {
            if (clean) {
                cleanLoads++;
            } else {
                uncleanLoads++;
            }
        }

        @Override
        public void indexRebuilt() {
            indexRebuilds++;
        }

        @Override
        public void segmentsDeleted(int count) {
            segmentsDeleted += count;
        }
    }

    @Test
    void everyStorageEventReachesTheHooks() throws IOException {
        Counting metrics = new Counting();
        ManualEnvironment manual = new ManualEnvironment(System.currentTimeMillis());
        LogEnvironment env = manual.environment().withMetrics(metrics);
        LogConfig config = LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(0)
                .indexMaxBytes(1024)
                .retentionMs(1000)
                .build();
        Path leaderDir = dir.resolve("leader");
        try (UnifiedLog log = UnifiedLog.open(leaderDir, config, env)) {
            for (int i = 0; i < 30; i++) {
                ByteBuf b = TestBatches.batch(manual.nowMs());
                log.appendAsLeader(b, 0);
                b.release();
            }
            log.flush();
            assertThat(log.activeSegmentSizeBytes()).isPositive();
            manual.advance(2000);
            assertThat(log.deleteOldSegments(log.logEndOffset())).isPositive();
        }
        assertThat(metrics.leaderAppends).isEqualTo(30);
        assertThat(metrics.appendNanos).isPositive();
        assertThat(metrics.rolls).isGreaterThan(1);
        assertThat(metrics.flushes).isEqualTo(2); // flush() and close()
        assertThat(metrics.segmentsDeleted).isEqualTo(metrics.rolls);
        assertThat(metrics.uncleanLoads).isEqualTo(1); // a new directory has no marker

        try (UnifiedLog log = UnifiedLog.open(leaderDir, config, env);
                UnifiedLog follower = UnifiedLog.open(dir.resolve("follower"), config, env)) {
            assertThat(metrics.cleanLoads).isEqualTo(1);
            follower.truncateFullyAndStartAt(log.logStartOffset());
            ByteBuf fetched = io.netty.buffer.Unpooled.buffer();
            log.readInto(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true, fetched);
            follower.appendAsFollower(fetched, log.logStartOffset());
            fetched.release();
            assertThat(metrics.followerAppends).isEqualTo(1);
            log.crashForTesting();
        }
        try (UnifiedLog log = UnifiedLog.open(leaderDir, config, env)) {
            assertThat(metrics.uncleanLoads).isEqualTo(3); // new leader dir, new follower dir, the crash
            assertThat(metrics.indexRebuilds).isEqualTo(1); // only the segment holding the recovery point
        }
    }
}
