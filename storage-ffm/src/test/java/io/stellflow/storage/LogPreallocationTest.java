package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.server.common.file.SmallTmpfs;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * {@code log.preallocate} ({@link LogConfig#preallocate}) on a real small file system, whose free
 * space shows every reserved block: the active segment reserves ahead of its end without changing
 * its size (1 MiB at first, as much as it holds as it grows, up to 16 MiB), gives the unused blocks
 * back at a roll and at close without changing the file's modification time, and on a full disk an
 * append still decides the outcome (a reservation that fails is skipped; reserved blocks are used,
 * then the append fails with {@code ENOSPC} and the log recovers once space is freed).
 */
class LogPreallocationTest {
    private static final int PAGE = 4096;
    private static final int MIB = 1 << 20;

    /** 2 MiB segments: reservations of 1 MiB, then 2 MiB. Small indexes, one entry per batch. */
    private static final LogConfig CONFIG = LogConfig.builder()
            .segmentBytes(2 * MIB)
            .indexIntervalBytes(0)
            .indexMaxBytes(4 * PAGE)
            .build();

    private static long append(UnifiedLog log, int valueBytes) throws IOException {
        ByteBuf b = TestBatches.sized(1, valueBytes);
        try {
            return log.appendAsLeader(b, 0);
        } finally {
            b.release();
        }
    }

    private static Path logFile(Path dir, long baseOffset) {
        return LogSegment.logPath(dir, baseOffset);
    }

    @Test
    void preallocateReservesPastTheEndWithoutChangingTheSizeAndTrimGivesItBack() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 * MIB)) {
            Path file = fs.dir().resolve("a.log");
            Files.write(file, new byte[100]);
            long free = fs.usableBytes();
            assertThat(FileAllocator.preallocate(file, 100, MIB)).isTrue();
            assertThat(Files.size(file)).as("the size is the bytes written").isEqualTo(100);
            assertThat(free - fs.usableBytes())
                    .as("the blocks past the data page")
                    .isEqualTo(MIB);
            assertThat(FileAllocator.trimPastSize(file, 100)).isTrue();
            assertThat(fs.usableBytes()).isEqualTo(free);
            assertThat(Files.readAllBytes(file)).hasSize(100).containsOnly(0);

            Path big = Files.createFile(fs.dir().resolve("b.log"));
            assertThatThrownBy(() -> FileAllocator.preallocate(big, 0, 8 * MIB))
                    .isInstanceOf(FileSystemException.class)
                    .satisfies(e -> assertThat(StorageErrors.isNoSpace(e)).isTrue())
                    .satisfies(e -> assertThat(StorageErrors.fileOf(e)).isEqualTo(big.toString()));
            assertThat(Files.size(big)).isZero();
        }
    }

    @Test
    void theActiveSegmentReservesAStepAheadAndGivesItBackAtRollAndClose() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(16 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            try (UnifiedLog log = UnifiedLog.open(dir, CONFIG)) {
                append(log, 1000);
                assertThat(Files.size(logFile(dir, 0)))
                        .as("the size is the bytes written")
                        .isEqualTo(log.activeSegmentSizeBytes())
                        .isLessThan(PAGE);
                assertThat(usedBytes(fs))
                        .as("1 MiB reserved for the active log at first, its data page in it")
                        .isEqualTo(pagesOfFilesBut(dir, logFile(dir, 0)) * PAGE + MIB);

                // Past 1 MiB the reservation grows to the segment's end (2 MiB), then nothing more.
                while (log.activeSegmentSizeBytes() <= MIB) {
                    append(log, 60_000);
                }
                assertThat(usedBytes(fs)).isEqualTo(pagesOfFilesBut(dir, logFile(dir, 0)) * PAGE + 2 * MIB);
                long before = fs.usableBytes();
                while (log.activeSegmentSizeBytes() < 2 * MIB - 64 * 1024) {
                    append(log, 60_000);
                }
                assertThat(fs.usableBytes())
                        .as("appends within the reservation")
                        .isEqualTo(before);

                // A batch that does not fit rolls: segment 0 gives back its blocks past its end.
                append(log, 100_000);
                assertThat(log.segmentCount()).isEqualTo(2);
                long activeBase = log.logEndOffset() - 1;
                assertThat(usedBytes(fs))
                        .as("every file's pages, the new active log's counted as its first 1 MiB")
                        .isEqualTo(pagesOfFilesBut(dir, logFile(dir, activeBase)) * PAGE + MIB);
            }
            assertThat(usedBytes(fs))
                    .as("after close every block in use holds a byte of some file: nothing reserved")
                    .isEqualTo(pagesOfFilesBut(dir, null) * PAGE);
        }
    }

    private static long usedBytes(SmallTmpfs fs) throws IOException {
        return Files.getFileStore(fs.dir()).getTotalSpace() - fs.usableBytes();
    }

    /** Pages of every file in {@code dir} except {@code excluded}, each rounded up to whole pages. */
    private static long pagesOfFilesBut(Path dir, Path excluded) throws IOException {
        long pages = 0;
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                if (!f.equals(excluded)) {
                    pages += (Files.size(f) + PAGE - 1) / PAGE;
                }
            }
        }
        return pages;
    }

    @Test
    void theReservationGrowsWithTheSegmentUpToSixteenMib() throws Exception {
        long m = MIB;
        assertThat(LogSegment.reservationEnd(1000, 64 * m)).isEqualTo(m);
        assertThat(LogSegment.reservationEnd(m + 1, 64 * m)).isEqualTo(2 * m);
        assertThat(LogSegment.reservationEnd(4 * m + 100, 64 * m)).isEqualTo(8 * m);
        assertThat(LogSegment.reservationEnd(20 * m + 5, 64 * m))
                .as("16 MiB ahead at most")
                .isEqualTo(36 * m);
        assertThat(LogSegment.reservationEnd(60 * m, 64 * m))
                .as("never past the segment")
                .isEqualTo(64 * m);
        assertThat(LogSegment.reservationEnd(70 * m, 64 * m))
                .as("a larger batch: its own end")
                .isEqualTo(70 * m);
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(24 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            try (UnifiedLog log = UnifiedLog.open(
                    dir, CONFIG.toBuilder().segmentBytes(64 * MIB).build())) {
                while (log.activeSegmentSizeBytes() <= 4 * MIB) {
                    append(log, 60_000);
                }
                assertThat(usedBytes(fs))
                        .as("past 4 MiB the reservation ends at 8 MiB")
                        .isEqualTo(pagesOfFilesBut(dir, logFile(dir, 0)) * PAGE + 8 * MIB);
            }
        }
    }

    @Test
    void givingBlocksBackKeepsTheModificationTimeThatRetentionReads() throws Exception {
        FileTime old = FileTime.from(Instant.parse("2020-01-01T00:00:00Z"));
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(16 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            long active;
            try (UnifiedLog log = UnifiedLog.open(dir, CONFIG)) {
                for (int i = 0; i < 3; i++) {
                    append(log, 500_000);
                }
                Files.setLastModifiedTime(logFile(dir, 0), old);
                append(log, 1_000_000); // does not fit: rolls, segment 0 is sealed and trimmed
                assertThat(log.segmentCount()).isEqualTo(2);
                assertThat(Files.getLastModifiedTime(logFile(dir, 0))).isEqualTo(old);
                active = log.logEndOffset() - 1;
                Files.setLastModifiedTime(logFile(dir, active), old);
            } // close trims the active segment
            assertThat(Files.getLastModifiedTime(logFile(dir, active))).isEqualTo(old);
            assertThat(usedBytes(fs)).as("both trimmed").isEqualTo(pagesOfFilesBut(dir, null) * PAGE);
        }
    }

    @Test
    void aStepThatDoesNotFitIsSkippedAndTheAppendStillSucceeds() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(MIB)) {
            Path dir = fs.dir().resolve("t-0");
            LogConfig bigSegments = CONFIG.toBuilder()
                    .segmentBytes(64 * MIB)
                    .build(); // the first 1 MiB step does not fit beside the indexes
            try (UnifiedLog log = UnifiedLog.open(dir, bigSegments)) {
                assertThat(append(log, 1000)).isZero();
                assertThat(append(log, 1000)).isOne();
                assertThat(usedBytes(fs)).as("no block reserved").isEqualTo(pagesOfFilesBut(dir, null) * PAGE);
            }
        }
    }

    @Test
    void onAFullDiskTheReservedBlocksAreUsedThenAppendsFailAndTheLogRecovers() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            LogConfig oneMibSegments = CONFIG.toBuilder().segmentBytes(MIB).build();
            long acknowledged;
            try (UnifiedLog log = UnifiedLog.open(dir, oneMibSegments)) {
                append(log, 1000);
                fs.fill(fs.dir().resolve("filler"));
                assertThat(fs.usableBytes()).as("the disk is full").isZero();

                // The reservation holds the next appends, up to the segment's end.
                for (int i = 0; i < 10; i++) {
                    append(log, 50_000);
                }
                assertThat(log.activeSegmentSizeBytes()).isGreaterThan(500_000);

                // Past it (a roll needs new index blocks, the new segment's log a block): ENOSPC.
                Throwable failure = null;
                for (int i = 0; i < 40 && failure == null; i++) {
                    ByteBuf b = TestBatches.sized(1, 50_000);
                    failure = catchThrowable(() -> log.appendAsLeader(b, 0));
                    b.release();
                }
                assertThat(failure).isInstanceOf(IOException.class);
                assertThat(StorageErrors.isNoSpace(failure)).isTrue();
                acknowledged = log.logEndOffset();

                Files.delete(fs.dir().resolve("filler"));
                long end = log.reopen();
                assertThat(end).isEqualTo(acknowledged);
                assertThat(append(log, 1000)).isEqualTo(end);
                acknowledged = end + 1;
            }
            try (UnifiedLog reopened = UnifiedLog.open(dir, oneMibSegments)) {
                assertThat(reopened.logEndOffset()).isEqualTo(acknowledged);
                ByteBuf out = Unpooled.buffer();
                reopened.readInto(0, Integer.MAX_VALUE, reopened.logEndOffset(), true, out);
                assertThat(TestBatches.decode(out, 0)).hasSize((int) acknowledged);
                out.release();
            }
        }
    }

    @Test
    void aDiskRunningFullKeepsAQuarterFreeOfReservations() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            Path filler = fs.dir().resolve("filler");
            Files.write(filler, new byte[5 * MIB / 2]);
            try (UnifiedLog log = UnifiedLog.open(dir, CONFIG)) {
                assertThat(append(log, 1000)).isZero();
                // About 1.4 MiB free: a 1 MiB reservation would leave less than a quarter (1 MiB).
                assertThat(usedBytes(fs))
                        .as("no block reserved")
                        .isEqualTo(pagesOfFilesBut(dir, null) * PAGE + Files.size(filler));
                Files.delete(filler);
                while (log.activeSegmentSizeBytes() <= MIB) { // the next step looks again: room now
                    append(log, 60_000);
                }
                assertThat(usedBytes(fs)).isEqualTo(pagesOfFilesBut(dir, logFile(dir, 0)) * PAGE + 2 * MIB);
            }
        }
    }

    @Test
    void offReservesNothing() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 * MIB)) {
            Path dir = fs.dir().resolve("t-0");
            try (UnifiedLog log =
                    UnifiedLog.open(dir, CONFIG.toBuilder().preallocate(false).build())) {
                append(log, 1000);
                assertThat(usedBytes(fs)).as("no block reserved").isEqualTo(pagesOfFilesBut(dir, null) * PAGE);
            }
        }
    }
}
