package io.stellflow.storage;

import static io.stellflow.storage.TestBatches.decode;
import static io.stellflow.storage.TestBatches.offsets;
import static io.stellflow.storage.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UnifiedLogTest {
    @TempDir
    Path dir;

    /** Small segments and an index entry per batch so rolls and index lookups happen in small tests. */
    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    private static long append(UnifiedLog log, ByteBuf batch, int epoch) throws IOException {
        try {
            return log.appendAsLeader(batch, epoch);
        } finally {
            batch.release();
        }
    }

    private static List<DecodedRecord> fetch(UnifiedLog log, long fetchOffset, int maxBytes, long upper)
            throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            int n = log.readInto(fetchOffset, maxBytes, upper, true, out);
            assertThat(n).isEqualTo(out.readableBytes());
            return decode(out, fetchOffset);
        } finally {
            out.release();
        }
    }

    private static List<DecodedRecord> fetchAll(UnifiedLog log, long fetchOffset) throws IOException {
        return fetch(log, fetchOffset, Integer.MAX_VALUE, Long.MAX_VALUE);
    }

    @Test
    void emptyLogHasOffsetZeroAndReadsNothing() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(log.logEndOffset()).isZero();
            assertThat(log.logStartOffset()).isZero();
            assertThat(log.latestLeaderEpoch()).isEqualTo(-1);
            assertThat(fetchAll(log, 0)).isEmpty();
            assertThat(log.offsetForTimestamp(0, Long.MAX_VALUE)).isNull();
        }
        assertThat(dir.resolve("00000000000000000000.log")).exists();
        assertThat(dir.resolve("00000000000000000000.index")).exists();
    }

    @Test
    void appendsAssignConsecutiveOffsetsPerRecord() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(append(log, TestBatches.batch(1, 2, 3), 5)).isZero();
            assertThat(append(log, TestBatches.batch(4), 5)).isEqualTo(3);
            ByteBuf two = Unpooled.buffer();
            TestBatches.appendBatch(two, 5, 6);
            TestBatches.appendBatch(two, 7);
            assertThat(append(log, two, 6)).isEqualTo(4);
            assertThat(log.logEndOffset()).isEqualTo(7);
            assertThat(log.latestLeaderEpoch()).isEqualTo(6);

            List<DecodedRecord> all = fetchAll(log, 0);
            assertThat(offsets(all)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
            assertThat(values(all)).containsExactly("v1", "v2", "v3", "v4", "v5", "v6", "v7");
        }
    }

    @Test
    void appendStampsEpochAndSegmentRelativeDeltaInPlaceWithoutMovingIndexes() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, TestBatches.batch(1, 2), 3);
            ByteBuf b = TestBatches.batch(3);
            int crcBefore = RecordBatchLayout.crc(b, 0);
            int readable = b.readableBytes();
            log.appendAsLeader(b, 9);
            assertThat(b.readerIndex()).isZero();
            assertThat(b.readableBytes()).isEqualTo(readable);
            assertThat(b.refCnt()).isEqualTo(1);
            assertThat(RecordBatchLayout.baseOffsetDelta(b, 0)).isEqualTo(2);
            assertThat(RecordBatchLayout.partitionLeaderEpoch(b, 0)).isEqualTo(9);
            assertThat(RecordBatchLayout.computeCrc(b, 0)).isEqualTo(crcBefore);
            b.release();
        }
    }

    @Test
    void readIntoRewritesBaseOffsetDeltaRelativeToFetchOffsetAndKeepsEpoch() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, TestBatches.batch(1, 2, 3), 4);
            append(log, TestBatches.batch(4, 5), 7);
            ByteBuf out = Unpooled.buffer();
            try {
                log.readInto(1, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
                // First batch holds offsets 0-2: base 0 - fetch 1 = -1 (the client skips offset 0).
                assertThat(RecordBatchLayout.baseOffsetDelta(out, 0)).isEqualTo(-1);
                assertThat(RecordBatchLayout.partitionLeaderEpoch(out, 0)).isEqualTo(4);
                int second = RecordBatchLayout.batchSize(out, 0);
                assertThat(RecordBatchLayout.baseOffsetDelta(out, second)).isEqualTo(2);
                assertThat(RecordBatchLayout.partitionLeaderEpoch(out, second)).isEqualTo(7);
                assertThat(offsets(decode(out, 1))).containsExactly(0L, 1L, 2L, 3L, 4L);
            } finally {
                out.release();
            }
        }
    }

    @Test
    void visitorSeesWholeBatchesWithAbsoluteOffsetsAndPositions() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            ByteBuf first = TestBatches.batch(1, 2, 3);
            int firstSize = first.readableBytes();
            append(log, first, 0);
            append(log, TestBatches.batch(4, 5), 0);
            List<long[]> seen = new ArrayList<>();
            int bytes = log.read(4, Integer.MAX_VALUE, Long.MAX_VALUE, true, (ch, pos, size, base, last) -> {
                seen.add(new long[] {pos, size, base, last});
            });
            assertThat(seen).hasSize(1);
            assertThat(seen.get(0)).containsExactly(firstSize, bytes, 3, 4);
        }
    }

    @Test
    void minOneBatchReturnsFirstBatchEvenWhenLargerThanMaxBytes() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            ByteBuf big = TestBatches.sized(3, 200);
            int bigSize = big.readableBytes();
            append(log, big, 0);
            append(log, TestBatches.batch(9), 0);
            ByteBuf out = Unpooled.buffer();
            try {
                assertThat(log.readInto(0, 10, Long.MAX_VALUE, true, out)).isEqualTo(bigSize);
                assertThat(offsets(decode(out, 0))).containsExactly(0L, 1L, 2L);
                out.clear();
                assertThat(log.readInto(0, 10, Long.MAX_VALUE, false, out)).isZero();
                assertThat(out.readableBytes()).isZero();
            } finally {
                out.release();
            }
        }
    }

    @Test
    void maxBytesStopsBeforeTheBatchThatWouldExceedIt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            ByteBuf b = TestBatches.batch(1);
            int size = b.readableBytes();
            append(log, b, 0);
            for (int i = 1; i < 5; i++) {
                append(log, TestBatches.batch(1), 0); // same size
            }
            assertThat(offsets(fetch(log, 0, 3 * size, Long.MAX_VALUE))).containsExactly(0L, 1L, 2L);
            assertThat(offsets(fetch(log, 0, 3 * size - 1, Long.MAX_VALUE))).containsExactly(0L, 1L);
            assertThat(offsets(fetch(log, 2, 2 * size, Long.MAX_VALUE))).containsExactly(2L, 3L);
        }
    }

    @Test
    void upperBoundExcludesBatchesReachingIt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            append(log, TestBatches.batch(1, 2), 0); // 0-1
            append(log, TestBatches.batch(3, 4), 0); // 2-3
            append(log, TestBatches.batch(5), 0); // 4
            assertThat(offsets(fetch(log, 0, Integer.MAX_VALUE, 4))).containsExactly(0L, 1L, 2L, 3L);
            assertThat(offsets(fetch(log, 0, Integer.MAX_VALUE, 3))).containsExactly(0L, 1L);
            assertThat(fetch(log, 0, Integer.MAX_VALUE, 0)).isEmpty();
            assertThat(fetch(log, 4, Integer.MAX_VALUE, 4)).isEmpty();
            assertThat(fetch(log, 5, Integer.MAX_VALUE, Long.MAX_VALUE)).isEmpty();
        }
    }

    @Test
    void fetchFromTheMiddleOfABatchReturnsTheWholeBatch() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            for (int i = 0; i < 20; i++) {
                append(log, TestBatches.batch(10 * i, 10 * i + 1, 10 * i + 2), 0);
            }
            assertThat(log.segmentCount()).isGreaterThan(1);
            for (long offset = 0; offset < 60; offset++) {
                List<DecodedRecord> got = fetchAll(log, offset);
                long batchBase = offset - offset % 3;
                assertThat(got.get(0).offset()).isEqualTo(batchBase);
                assertThat(got).hasSize((int) (60 - batchBase));
            }
        }
    }

    @Test
    void rollsSegmentsAndReadsAcrossThem() throws IOException {
        List<String> expected = new ArrayList<>();
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            for (int i = 0; i < 50; i++) {
                List<String> vals = IntStream.rangeClosed(0, i % 4)
                        .mapToObj(j -> "r" + expected.size() + "-" + j)
                        .collect(Collectors.toList());
                expected.addAll(vals);
                ByteBuf b = Unpooled.buffer();
                TestBatches.appendValues(b, vals);
                append(log, b, 1);
            }
            assertThat(log.segmentCount()).isGreaterThan(3);
            assertThat(log.logEndOffset()).isEqualTo(expected.size());
            assertThat(values(fetchAll(log, 0))).isEqualTo(expected);
        }
        try (var files = Files.list(dir)) {
            List<Path> logs =
                    files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
            assertThat(logs).hasSizeGreaterThan(3);
            for (Path p : logs) {
                assertThat(Files.size(p)).isLessThanOrEqualTo(1024);
                assertThat(p.getFileName().toString()).matches("\\d{20}\\.log");
            }
        }
    }

    @Test
    void aBatchLargerThanTheSegmentSizeGetsASegmentOfItsOwn() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            append(log, TestBatches.batch(1), 0);
            append(log, TestBatches.sized(4, 600), 0); // > 1024 bytes
            append(log, TestBatches.batch(2), 0);
            assertThat(log.segmentCount()).isEqualTo(3);
            assertThat(offsets(fetchAll(log, 0))).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        }
    }

    @Test
    void oneAppendSpanningSeveralSegmentsKeepsAllBatches() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            ByteBuf many = Unpooled.buffer();
            for (int i = 0; i < 30; i++) {
                TestBatches.appendBatch(many, i, i + 1);
            }
            assertThat(append(log, many, 2)).isZero();
            assertThat(log.segmentCount()).isGreaterThan(2);
            assertThat(offsets(fetchAll(log, 0)))
                    .isEqualTo(LongStream.range(0, 60).boxed().toList());
        }
    }

    @Test
    void compositeAndDirectBuffersAreWrittenWithGatherWrites() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            ByteBuf a = TestBatches.batch(1, 2);
            ByteBuf b = TestBatches.batch(3);
            // Split batch b across two components, one of them direct.
            int half = b.readableBytes() / 2;
            ByteBuf bTail = Unpooled.directBuffer().writeBytes(b, half, b.readableBytes() - half);
            CompositeByteBuf composite = Unpooled.compositeBuffer();
            composite.addComponents(true, a, b.retainedSlice(0, half), bTail);
            b.release();
            assertThat(composite.nioBufferCount()).isGreaterThan(1);
            assertThat(append(log, composite, 1)).isZero();
            assertThat(values(fetchAll(log, 0))).containsExactly("v1", "v2", "v3");
        }
    }

    @Test
    void restartAfterCleanCloseKeepsDataAndEpoch() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            for (int i = 0; i < 40; i++) {
                append(log, TestBatches.batch(i), i / 10);
            }
        }
        assertThat(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)).exists();
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)).doesNotExist();
            assertThat(log.logEndOffset()).isEqualTo(40);
            assertThat(log.latestLeaderEpoch()).isEqualTo(3);
            assertThat(append(log, TestBatches.batch(40), 4)).isEqualTo(40);
            assertThat(offsets(fetchAll(log, 0)))
                    .isEqualTo(LongStream.range(0, 41).boxed().toList());
        }
    }

    @Test
    void restartAfterCrashRecoversEveryWrittenBatch() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        for (int i = 0; i < 40; i++) {
            append(log, TestBatches.batch(i), 2);
        }
        log.crashForTesting();
        // The active index is still preallocated: it must be rebuilt, not trusted.
        assertThat(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)).doesNotExist();
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(40);
            assertThat(reopened.latestLeaderEpoch()).isEqualTo(2);
            for (long offset = 0; offset < 40; offset++) {
                assertThat(fetchAll(reopened, offset).get(0).offset()).isEqualTo(offset);
            }
            assertThat(append(reopened, TestBatches.batch(40), 3)).isEqualTo(40);
        }
    }

    @Test
    void flushAfterEveryMessageKeepsWorking() throws IOException {
        LogConfig config = new LogConfig(1024, 0, 1024, 1, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            for (int i = 0; i < 10; i++) {
                append(log, TestBatches.batch(i), 0);
            }
            log.flush();
            assertThat(log.logEndOffset()).isEqualTo(10);
        }
    }

    @Test
    void misuseIsRejected() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        ByteBuf empty = Unpooled.buffer();
        assertThatThrownBy(() -> log.appendAsLeader(empty, 0)).isInstanceOf(IllegalArgumentException.class);
        ByteBuf partial = TestBatches.batch(1);
        partial.writerIndex(partial.writerIndex() - 1);
        assertThatThrownBy(() -> log.appendAsLeader(partial, 0)).isInstanceOf(IllegalArgumentException.class);
        partial.release();
        empty.release();
        log.close();
        log.close(); // idempotent
        ByteBuf b = TestBatches.batch(1);
        assertThatThrownBy(() -> log.appendAsLeader(b, 0)).isInstanceOf(IllegalStateException.class);
        b.release();
    }

    /** Writes raw bytes at the end of a segment file, as a torn write would leave them. */
    static void appendRaw(Path file, ByteBuffer bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            while (bytes.hasRemaining()) {
                ch.write(bytes);
            }
        }
    }
}
