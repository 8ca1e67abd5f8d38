package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
        final List<String> recovered = new ArrayList<>();
        final List<String> diskFull = new ArrayList<>();

        @Override
        public void logRecovered(
                Path logDir, int segmentsRecovered, long droppedBytes, int quarantined, long logEndOffset) {
            recovered.add(logDir.getFileName() + " segments=" + segmentsRecovered + " droppedBytes=" + droppedBytes
                    + " quarantined=" + quarantined + " leo=" + logEndOffset);
        }

        @Override
        public void diskFull(Path logDir, String operation, IOException cause) {
            diskFull.add(logDir.getFileName() + " " + operation + " " + StorageErrors.isNoSpace(cause));
        }

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

    private static final LogConfig SMALL_SEGMENTS = LogConfig.builder()
            .segmentBytes(1024)
            .indexIntervalBytes(0)
            .indexMaxBytes(1024)
            .build();

    @Test
    void anUncleanOpenReportsItsRecoveryOnceWithTheRemovedBytesAndQuarantinedSegments() throws IOException {
        Counting metrics = new Counting();
        LogEnvironment env = LogEnvironment.system().withMetrics(metrics);
        Path logDir = dir.resolve("t-0");
        UnifiedLog log = UnifiedLog.open(logDir, SMALL_SEGMENTS, env);
        assertThat(metrics.recovered)
                .as("a new directory is created, not recovered")
                .isEmpty();
        for (int i = 0; i < 40; i++) {
            ByteBuf b = TestBatches.batch(1000 + i);
            log.appendAsLeader(b, 1);
            b.release();
        }
        assertThat(log.segmentCount()).isGreaterThan(3);
        log.crashForTesting();
        List<Path> logs = SegmentFiles.logFiles(logDir);
        long secondBase = SegmentFiles.baseOf(logs.get(1));
        long dropped = 0;
        for (int i = 1; i < logs.size(); i++) {
            dropped += Files.size(logs.get(i));
        }
        // A byte of the second segment's first batch header (covered by the CRC) flips: that segment
        // is truncated to 0 bytes and it and every later one are moved to quarantine.
        RecoveryTest.flipByte(logs.get(1), 30);

        try (UnifiedLog reopened = UnifiedLog.open(logDir, SMALL_SEGMENTS, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(secondBase);
        }
        assertThat(metrics.recovered)
                .containsExactly("t-0 segments=2 droppedBytes=" + dropped + " quarantined=" + (logs.size() - 2)
                        + " leo=" + secondBase);

        try (UnifiedLog reopened = UnifiedLog.open(logDir, SMALL_SEGMENTS, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(secondBase);
        }
        assertThat(metrics.recovered).as("a clean open recovers nothing").hasSize(1);
    }

    /**
     * A real {@code ENOSPC}: the active segment's file is a symbolic link to {@code /dev/full}, on
     * which every {@code write(2)} fails with "No space left on device".
     */
    @Test
    void anAppendOnAFullFileSystemFailsAndIsReportedOncePerEpisode() throws IOException {
        Counting metrics = new Counting();
        LogEnvironment env = LogEnvironment.system().withMetrics(metrics);
        Path logDir = dir.resolve("full-0");
        SegmentFiles.activeSegmentOnDevFull(logDir, env);

        try (UnifiedLog log = UnifiedLog.open(logDir, LogConfig.defaults(), env)) {
            ByteBuf b = TestBatches.batch(1000);
            assertThatThrownBy(() -> log.appendAsLeader(b, 0))
                    .isInstanceOf(IOException.class)
                    .satisfies(e -> assertThat(StorageErrors.isNoSpace(e)).isTrue());
            assertThat(log.logEndOffset()).as("nothing acknowledged").isZero();
            // The log refuses appends until reopened: that error is not a second disk-full report.
            assertThatThrownBy(() -> log.appendAsLeader(b, 0)).isInstanceOf(IOException.class);
            b.release();
        }
        assertThat(metrics.diskFull).containsExactly("full-0 append true");
        assertThat(metrics.leaderAppends).isZero();
    }
}
