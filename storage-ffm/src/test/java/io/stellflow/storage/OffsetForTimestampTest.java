package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OffsetForTimestampTest {
    @TempDir
    Path dir;

    private UnifiedLog logWithBatches(long[]... batches) throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE));
        for (long[] timestamps : batches) {
            ByteBuf b = TestBatches.batch(timestamps);
            log.appendAsLeader(b, 0);
            b.release();
        }
        return log;
    }

    private static Long offset(UnifiedLog log, long targetMs) throws IOException {
        TimestampOffset found = log.offsetForTimestamp(targetMs, Long.MAX_VALUE);
        return found == null ? null : found.offset();
    }

    @Test
    void outOfOrderTimestampsInSeparateBatchesGiveTheFirstOffsetAtOrAfterTheTarget() throws IOException {
        try (UnifiedLog log =
                logWithBatches(new long[] {1000}, new long[] {3000}, new long[] {2000}, new long[] {4000})) {
            assertThat(offset(log, 0)).isEqualTo(0);
            assertThat(offset(log, 1000)).isEqualTo(0);
            assertThat(offset(log, 2000)).isEqualTo(1);
            assertThat(offset(log, 2500)).isEqualTo(1);
            assertThat(offset(log, 3500)).isEqualTo(3);
            assertThat(offset(log, 4000)).isEqualTo(3);
            assertThat(offset(log, 4001)).isNull();
            assertThat(log.offsetForTimestamp(2000, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(3000, 1));
        }
    }

    @Test
    void recordGranularityInsideOneBatch() throws IOException {
        try (UnifiedLog log = logWithBatches(new long[] {2, 4, 6, 8})) {
            assertThat(offset(log, 3)).isEqualTo(1);
            assertThat(offset(log, 5)).isEqualTo(2);
            assertThat(offset(log, 7)).isEqualTo(3);
            assertThat(offset(log, 8)).isEqualTo(3);
            assertThat(offset(log, 9)).isNull();
            assertThat(log.offsetForTimestamp(5, Long.MAX_VALUE)).isEqualTo(new TimestampOffset(6, 2));
        }
    }

    @Test
    void upperBoundHidesLaterRecords() throws IOException {
        try (UnifiedLog log = logWithBatches(new long[] {2, 4, 6, 8}, new long[] {10})) {
            assertThat(log.offsetForTimestamp(5, 2)).isNull();
            assertThat(log.offsetForTimestamp(5, 3)).isEqualTo(new TimestampOffset(6, 2));
            assertThat(log.offsetForTimestamp(9, 4)).isNull();
            assertThat(log.offsetForTimestamp(9, 5)).isEqualTo(new TimestampOffset(10, 4));
        }
    }

    @Test
    void searchesAcrossSegmentsAndSurvivesRestart() throws IOException {
        long[][] batches = new long[30][];
        for (int i = 0; i < 30; i++) {
            batches[i] = new long[] {100L * i, 100L * i + 50};
        }
        try (UnifiedLog log = logWithBatches(batches)) {
            assertThat(log.segmentCount()).isGreaterThan(2);
            assertThat(offset(log, 1460)).isEqualTo(30);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(offset(log, 1460)).isEqualTo(30);
            assertThat(offset(log, 2901)).isEqualTo(59);
            assertThat(offset(log, 2951)).isNull();
            assertThat(offset(log, 2900)).isEqualTo(58);
        }
    }

    @Test
    void maxTimestampIsTheFirstRecordWithTheLargestTimestampBelowTheBound() throws IOException {
        try (UnifiedLog log = logWithBatches(
                new long[] {1000}, new long[] {3000, 4000}, new long[] {2000}, new long[] {4000}, new long[] {500})) {
            assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE)).isEqualTo(new TimestampOffset(4000, 2));
            assertThat(log.offsetOfMaxTimestamp(2)).isEqualTo(new TimestampOffset(1000, 0));
            assertThat(log.offsetOfMaxTimestamp(0)).isNull();
        }
    }

    @Test
    void maxTimestampAcrossSegmentsAndAboveARaisedStartOffset() throws IOException {
        long[][] batches = new long[30][];
        for (int i = 0; i < 30; i++) {
            batches[i] = new long[] {i == 3 ? 99_999 : 100L * i, 100L * i + 50};
        }
        try (UnifiedLog log = logWithBatches(batches)) {
            assertThat(log.segmentCount()).isGreaterThan(2);
            assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE).offset()).isEqualTo(6);
            log.maybeIncrementLogStartOffset(8, Long.MAX_VALUE);
            assertThat(log.offsetOfMaxTimestamp(Long.MAX_VALUE)).isEqualTo(new TimestampOffset(2950, 59));
            assertThat(log.offsetOfMaxTimestamp(40)).isEqualTo(new TimestampOffset(1950, 39));
        }
    }
}
