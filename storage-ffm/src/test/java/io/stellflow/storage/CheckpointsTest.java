package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointsTest {
    @TempDir
    Path dir;

    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    @Test
    void offsetsRoundTripAndAMissingFileGivesTheDefault() throws IOException {
        Path file = dir.resolve("recovery-point");
        assertThat(Checkpoints.readOffset(file, 7)).isEqualTo(7);
        Checkpoints.writeOffset(file, 123_456_789_012L);
        assertThat(Files.readString(file)).isEqualTo("0\n123456789012\n");
        assertThat(Checkpoints.readOffset(file, 7)).isEqualTo(123_456_789_012L);
        Checkpoints.writeOffset(file, 5);
        assertThat(Checkpoints.readOffset(file, 7)).isEqualTo(5);
        assertThat(dir.resolve("recovery-point.tmp")).doesNotExist();
    }

    @Test
    void aLeftoverTempFileIsOverwrittenAndNeverRead() throws IOException {
        Path file = dir.resolve("log-start-offset");
        Checkpoints.writeOffset(file, 10);
        Files.writeString(dir.resolve("log-start-offset.tmp"), "0\n99"); // a crash before the rename
        assertThat(Checkpoints.readOffset(file, 0)).isEqualTo(10);
        Checkpoints.writeOffset(file, 11);
        assertThat(Checkpoints.readOffset(file, 0)).isEqualTo(11);
    }

    @Test
    void corruptFilesAreReportedWithTheirName() throws IOException {
        Path file = dir.resolve("recovery-point");
        for (String bad : List.of("", "1\n5\n", "0\n", "0\nabc\n", "0\n-3\n", "0\n1\n2\n")) {
            Files.writeString(file, bad);
            assertThatThrownBy(() -> Checkpoints.readOffset(file, 0))
                    .isInstanceOf(CorruptCheckpointException.class)
                    .hasMessageContaining(file.toString());
        }
    }

    @Test
    void recoveryStartsAtTheSegmentHoldingTheRecoveryPoint() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 0, 30);
        log.flush();
        log.checkpoint();
        long recoveryPoint = log.recoveryPoint();
        assertThat(recoveryPoint).isEqualTo(30);
        assertThat(Checkpoints.readOffset(dir.resolve(LogLoader.RECOVERY_POINT_FILE), -1))
                .isEqualTo(30);
        appendSingles(log, 30, 10);
        LogSegment[] segs = log.segmentsForTesting();
        assertThat(segs.length).isGreaterThan(3);
        log.crashForTesting();
        // Damage a record of the first segment (below the recovery point): a full scan would cut
        // the log there; starting at the recovery point's segment trusts it as fsynced.
        RecoveryTest.flipByte(segs[0].logFile, 60);
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(40);
        }
    }

    @Test
    void withoutARecoveryPointEverySegmentIsValidated() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 0, 30);
        LogSegment[] segs = log.segmentsForTesting();
        log.crashForTesting();
        RecoveryTest.flipByte(segs[0].logFile, 60);
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isZero();
        }
    }

    @Test
    void aCorruptRecoveryPointMeansFullRecoveryAndACorruptEpochFileIsRebuilt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendSingles(log, 0, 5);
            ByteBuf b = TestBatches.batch(1);
            log.appendAsLeader(b, 4);
            b.release();
        }
        Files.writeString(dir.resolve(LeaderEpochCache.FILE_NAME), "0\n7\ngarbage");
        Files.writeString(dir.resolve(LogLoader.RECOVERY_POINT_FILE), "junk");
        Files.delete(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.logEndOffset()).isEqualTo(6);
            assertThat(log.epochCacheForTesting().entries())
                    .containsExactly(new LeaderEpochCache.Entry(1, 0), new LeaderEpochCache.Entry(4, 5));
        }
        Files.delete(dir.resolve(LeaderEpochCache.FILE_NAME)); // a log from before the epoch file
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 5));
        }
        assertThat(Files.readAllLines(dir.resolve(LeaderEpochCache.FILE_NAME))).containsExactly("0", "2", "1 0", "4 5");
    }

    private static void appendSingles(UnifiedLog log, int from, int count) throws IOException {
        for (int i = from; i < from + count; i++) {
            ByteBuf b = TestBatches.batch(1000 + i);
            log.appendAsLeader(b, 1);
            b.release();
        }
    }
}
