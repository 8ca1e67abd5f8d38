package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The time index across rolls, clean restarts and damaged files found at load. */
class TimeIndexLoadTest {
    @TempDir
    Path dir;

    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
    private static final Path FIRST_TIME_INDEX = Path.of("00000000000000000000.timeindex");

    /** 30 batches of two records, timestamps 100*i and 100*i+50: several segments. */
    private static void appendThirty(UnifiedLog log) throws IOException {
        for (int i = 0; i < 30; i++) {
            ByteBuf b = TestBatches.batch(100L * i, 100L * i + 50);
            log.appendAsLeader(b, 0);
            b.release();
        }
    }

    private static Long offset(UnifiedLog log, long targetMs) throws IOException {
        TimestampOffset found = log.offsetForTimestamp(targetMs, Long.MAX_VALUE);
        return found == null ? null : found.offset();
    }

    private static void assertLookups(UnifiedLog log) throws IOException {
        for (int i = 0; i < 30; i++) {
            assertThat(offset(log, 100L * i)).isEqualTo(2L * i);
            assertThat(offset(log, 100L * i + 1)).isEqualTo(2L * i + 1);
            assertThat(offset(log, 100L * i + 50)).isEqualTo(2L * i + 1);
        }
        assertThat(offset(log, 2951)).isNull();
    }

    @Test
    void sealedSegmentsEndWithTheirMaxTimestamp() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendThirty(log);
            LogSegment[] segs = log.segmentsForTesting();
            assertThat(segs.length).isGreaterThan(2);
            for (int i = 0; i < segs.length - 1; i++) {
                long nextBase = segs[i + 1].baseOffset;
                // the last record of segment i is offset nextBase - 1, timestamp 100 * k + 50
                assertThat(segs[i].maxTimestampMs()).isEqualTo(100 * ((nextBase - 1) / 2) + 50);
            }
            assertLookups(log);
        }
        assertThat(Files.size(dir.resolve(FIRST_TIME_INDEX)) % TimeIndexLayout.ENTRY_SIZE)
                .isZero();
    }

    @Test
    void aRolledTimeIndexLeftAtItsPreallocatedSizeWithAZeroTailIsRebuilt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendThirty(log);
        }
        Path file = dir.resolve(FIRST_TIME_INDEX);
        byte[] original = Files.readAllBytes(file);
        assertThat(original.length).isPositive();
        Files.write(file, Arrays.copyOf(original, (int) TimeIndexLayout.maxBytesFor(SMALL.indexMaxBytes())));

        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.segmentsForTesting()[0].maxTimestampMs()).isEqualTo(lastTimestamp(original));
            assertLookups(log);
        }
        assertThat(Files.readAllBytes(file)).isEqualTo(original);
    }

    @Test
    void anAllZeroOrGarbageOrMissingTimeIndexIsRebuilt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendThirty(log);
        }
        Path file = dir.resolve(FIRST_TIME_INDEX);
        byte[] original = Files.readAllBytes(file);
        byte[] lastEntryWrong = original.clone();
        lastEntryWrong[original.length - 5] ^= 1; // last entry's timestamp no longer matches its batch
        for (byte[] damaged : new byte[][] {new byte[original.length], new byte[12], lastEntryWrong, new byte[0]}) {
            Files.write(file, damaged);
            try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
                assertLookups(log);
            }
            assertThat(Files.readAllBytes(file)).isEqualTo(original);
        }
        Files.delete(file);
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertLookups(log);
        }
        assertThat(Files.readAllBytes(file)).isEqualTo(original);
    }

    @Test
    void aCrashRebuildsTheActiveTimeIndexAndKeepsLookupsRight() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendThirty(log);
        log.crashForTesting();
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertLookups(reopened);
        }
    }

    @Test
    void anOutOfOrderTimestampDoesNotLowerTheSegmentMax() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            for (long ts : new long[] {1000, 5000, 2000, 3000}) {
                ByteBuf b = TestBatches.batch(ts);
                log.appendAsLeader(b, 0);
                b.release();
            }
            assertThat(log.segmentsForTesting()[0].maxTimestampMs()).isEqualTo(5000);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(log.segmentsForTesting()[0].maxTimestampMs()).isEqualTo(5000);
            assertThat(log.offsetForTimestamp(2500, Long.MAX_VALUE).offset()).isEqualTo(1);
            assertThat(log.offsetForTimestamp(4000, Long.MAX_VALUE).offset()).isEqualTo(1);
        }
    }

    private static long lastTimestamp(byte[] timeIndex) {
        return java.nio.ByteBuffer.wrap(timeIndex).getLong(timeIndex.length - TimeIndexLayout.ENTRY_SIZE);
    }
}
