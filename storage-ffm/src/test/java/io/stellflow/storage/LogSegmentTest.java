package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogSegmentTest {
    @TempDir
    Path dir;

    private static final LogConfig CONFIG = new LogConfig(4096, 0, 64, Long.MAX_VALUE, Long.MAX_VALUE);

    @Test
    void filesAreNamedByTheTwentyDigitBaseOffset() {
        assertThat(LogSegment.logPath(dir, 42).getFileName().toString()).isEqualTo("00000000000000000042.log");
        assertThat(LogSegment.indexPath(dir, Long.MAX_VALUE).getFileName().toString())
                .isEqualTo("09223372036854775807.index");
    }

    @Test
    void fitsRefusesOffsetsThatDoNotFitAnInt32RelativeToTheBase() throws IOException {
        LogSegment s = LogSegment.create(dir, 1000, CONFIG, 0);
        try {
            assertThat(s.fits(100, 1, 1000L + Integer.MAX_VALUE, 4096)).isTrue();
            assertThat(s.fits(100, 1, 1000L + Integer.MAX_VALUE + 1, 4096)).isFalse();
        } finally {
            s.close();
        }
    }

    @Test
    void fitsAcceptsAnOversizedBatchOnlyIntoAnEmptySegment() throws IOException {
        LogSegment s = LogSegment.create(dir, 0, CONFIG, 0);
        try {
            assertThat(s.fits(10_000, 1, 0, 4096)).isTrue();
            assertThat(s.fits(10_000, 2, 1, 4096)).isFalse();
            assertThat(s.fits(4096, 9, 8, 4096)).isFalse(); // 9 index entries needed, 8 slots
            assertThat(s.fits(4096, 8, 7, 4096)).isTrue();
        } finally {
            s.close();
        }
    }

    @Test
    void flushMessagesTriggersAnFsyncAfterThatManyRecords() throws IOException {
        LogConfig config = new LogConfig(1 << 20, 0, 1024, 3, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            LogSegment active = log.segmentsForTesting()[0];
            append(log, 1, 2);
            assertThat(active.flushedSizeBytes()).isZero();
            append(log, 3);
            assertThat(active.flushedSizeBytes()).isEqualTo(active.sizeBytes());
            append(log, 4);
            assertThat(active.flushedSizeBytes()).isLessThan(active.sizeBytes());
            log.flush();
            assertThat(active.flushedSizeBytes()).isEqualTo(active.sizeBytes());
        }
    }

    @Test
    void byDefaultAppendsDoNotFsync() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, 1, 2, 3);
            LogSegment active = log.segmentsForTesting()[0];
            assertThat(active.sizeBytes()).isPositive();
            assertThat(active.flushedSizeBytes()).isZero();
        }
    }

    private static void append(UnifiedLog log, long... timestamps) throws IOException {
        ByteBuf b = TestBatches.batch(timestamps);
        try {
            log.appendAsLeader(b, 0);
        } finally {
            b.release();
        }
    }
}
