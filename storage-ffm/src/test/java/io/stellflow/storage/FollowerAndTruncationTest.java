package io.stellflow.storage;

import static io.stellflow.storage.TestBatches.decode;
import static io.stellflow.storage.TestBatches.offsets;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** appendAsFollower, truncateTo, truncateFullyAndStartAt and delete-records. */
class FollowerAndTruncationTest {
    @TempDir
    Path dir;

    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    private static void appendLeader(UnifiedLog log, int epoch, long... timestamps) throws IOException {
        ByteBuf b = TestBatches.batch(timestamps);
        try {
            log.appendAsLeader(b, epoch);
        } finally {
            b.release();
        }
    }

    private static ByteBuf fetch(UnifiedLog log, long from) throws IOException {
        ByteBuf out = Unpooled.buffer();
        log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
        return out;
    }

    private static List<Long> allOffsets(UnifiedLog log, long from) throws IOException {
        ByteBuf out = fetch(log, from);
        try {
            return offsets(decode(out, from));
        } finally {
            out.release();
        }
    }

    private static List<Long> range(long from, long to) {
        return LongStream.range(from, to).boxed().toList();
    }

    private long filesWithSuffix(String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(suffix)).count();
        }
    }

    @Test
    void aFollowerCopiesTheLeadersBatchesByteForByteWithTheirEpochs() throws IOException {
        Path leaderDir = dir.resolve("leader");
        Path followerDir = dir.resolve("follower");
        try (UnifiedLog leader = UnifiedLog.open(leaderDir, SMALL);
                UnifiedLog follower = UnifiedLog.open(followerDir, SMALL)) {
            appendLeader(leader, 1, 10, 11);
            appendLeader(leader, 1, 12);
            appendLeader(leader, 3, 13, 14, 15);
            ByteBuf fetched = fetch(leader, 0);
            byte[] expected = ByteBufUtil.getBytes(fetched);
            assertThat(follower.appendAsFollower(fetched, 0)).isEqualTo(6);
            fetched.release();

            ByteBuf copy = fetch(follower, 0);
            assertThat(ByteBufUtil.getBytes(copy)).isEqualTo(expected);
            copy.release();
            assertThat(follower.latestLeaderEpoch()).isEqualTo(3);
            assertThat(follower.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 3));
            assertThat(follower.endOffsetForEpoch(2)).isEqualTo(new EpochEndOffset(1, 3));
            assertThat(follower.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 6));
            assertThat(follower.endOffsetForEpoch(4)).isEqualTo(EpochEndOffset.UNDEFINED);
            assertThat(follower.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(0, 0));

            appendLeader(leader, 3, 16);
            ByteBuf more = fetch(leader, 6);
            assertThat(follower.appendAsFollower(more, 6)).isEqualTo(7);
            more.release();
        }
        try (UnifiedLog follower = UnifiedLog.open(followerDir, SMALL)) {
            assertThat(follower.logEndOffset()).isEqualTo(7);
            assertThat(follower.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 3));
            assertThat(follower.latestLeaderEpoch()).isEqualTo(3);
        }
        assertThat(Files.readAllLines(followerDir.resolve(LeaderEpochCache.FILE_NAME)))
                .containsExactly("0", "2", "1 0", "3 3");
    }

    @Test
    void aFollowerAppendThatDoesNotContinueTheLogEndOffsetChangesNothing() throws IOException {
        try (UnifiedLog leader = UnifiedLog.open(dir.resolve("l"), SMALL);
                UnifiedLog follower = UnifiedLog.open(dir.resolve("f"), SMALL)) {
            appendLeader(leader, 0, 1, 2);
            appendLeader(leader, 0, 3);
            ByteBuf fetched = fetch(leader, 0);
            assertThat(follower.appendAsFollower(fetched.duplicate(), 1)).isEqualTo(UnifiedLog.OFFSET_MISMATCH);
            // a gap between the two batches: the second one's delta is moved one further
            ByteBuf gap = fetched.copy();
            int second = io.stellflow.protocol.record.RecordBatchLayout.batchSize(gap, 0);
            gap.setInt(second, gap.getInt(second) + 1);
            assertThat(follower.appendAsFollower(gap, 0)).isEqualTo(UnifiedLog.OFFSET_MISMATCH);
            gap.release();
            assertThat(follower.logEndOffset()).isZero();
            assertThat(follower.segmentsForTesting()[0].sizeBytes()).isZero();
            assertThat(follower.appendAsFollower(fetched, 0)).isEqualTo(3);
            fetched.release();
        }
    }

    @Test
    void truncateToABatchBoundaryDropsLaterSegmentsAndTheNextAppendContinuesThere() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env.environment())) {
            for (int i = 0; i < 40; i++) {
                appendLeader(log, i < 20 ? 1 : 2, 1000 + i);
            }
            int before = log.segmentCount();
            assertThat(before).isGreaterThan(3);
            long cutAt = log.segmentsForTesting()[1].baseOffset + 1; // inside the second segment
            assertThat(log.truncateTo(cutAt)).isEqualTo(cutAt);
            assertThat(log.logEndOffset()).isEqualTo(cutAt);
            assertThat(log.segmentCount()).isEqualTo(2);
            assertThat(allOffsets(log, 0)).isEqualTo(range(0, cutAt));
            assertThat(filesWithSuffix(".log.deleted")).isEqualTo(before - 2);
            env.advance(SMALL.fileDeleteDelayMs());
            assertThat(filesWithSuffix(".deleted")).isZero();
            assertThat(log.latestLeaderEpoch()).isEqualTo(1);
            assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, cutAt));
            assertThat(log.endOffsetForEpoch(2)).isEqualTo(EpochEndOffset.UNDEFINED);
            assertThat(log.offsetForTimestamp(1000 + cutAt, Long.MAX_VALUE)).isNull();

            for (int i = 0; i < 20; i++) {
                appendLeader(log, 3, 5000 + i);
            }
            assertThat(log.logEndOffset()).isEqualTo(cutAt + 20);
            assertThat(allOffsets(log, 0)).isEqualTo(range(0, cutAt + 20));
            assertThat(log.offsetForTimestamp(1000 + cutAt - 1, Long.MAX_VALUE).offset())
                    .isEqualTo(cutAt - 1);
            assertThat(log.offsetForTimestamp(5000, Long.MAX_VALUE).offset()).isEqualTo(cutAt);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(allOffsets(log, 0)).hasSize((int) log.logEndOffset());
            assertThat(log.endOffsetForEpoch(1).endOffset()).isEqualTo(log.logEndOffset() - 20);
        }
    }

    @Test
    void truncateToASegmentBaseReactivatesTheSealedSegmentBeforeIt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            for (int i = 0; i < 40; i++) {
                appendLeader(log, 0, 1000 + i);
            }
            LogSegment[] segs = log.segmentsForTesting();
            long boundary = segs[2].baseOffset;
            assertThat(log.truncateTo(boundary)).isEqualTo(boundary);
            assertThat(log.segmentsForTesting()).containsExactly(segs[0], segs[1]);
            assertThat(segs[1].maxTimestampMs()).isEqualTo(1000 + boundary - 1);
            for (int i = 0; i < 30; i++) {
                appendLeader(log, 1, 2000 + i); // fills segment 1 again, then rolls
            }
            assertThat(log.segmentCount()).isGreaterThan(2);
            assertThat(allOffsets(log, 0)).isEqualTo(range(0, boundary + 30));
            assertThat(log.offsetForTimestamp(1000 + boundary, Long.MAX_VALUE).offset())
                    .isEqualTo(boundary);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.logEndOffset())
                    .isEqualTo(log.segmentsForTesting()[0].baseOffset
                            + allOffsets(log, 0).size());
            assertThat(log.offsetForTimestamp(2029, Long.MAX_VALUE).offset()).isEqualTo(log.logEndOffset() - 1);
        }
    }

    @Test
    void truncateInsideABatchRemovesTheWholeBatch() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            appendLeader(log, 0, 1, 2, 3);
            appendLeader(log, 0, 4, 5, 6);
            assertThat(log.truncateTo(4)).isEqualTo(3);
            assertThat(allOffsets(log, 0)).isEqualTo(range(0, 3));
            assertThat(log.truncateTo(10)).isEqualTo(3); // at or above the end: nothing
            appendLeader(log, 0, 7);
            assertThat(allOffsets(log, 0)).isEqualTo(range(0, 4));
        }
    }

    @Test
    void truncationSurvivesACrash() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        for (int i = 0; i < 30; i++) {
            appendLeader(log, 0, 1000 + i);
        }
        log.flush();
        log.checkpoint();
        log.truncateTo(7);
        appendLeader(log, 1, 9999);
        log.crashForTesting();
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(8);
            assertThat(allOffsets(reopened, 0)).isEqualTo(range(0, 8));
            assertThat(reopened.offsetForTimestamp(9999, Long.MAX_VALUE).offset())
                    .isEqualTo(7);
        }
    }

    @Test
    void truncateFullyRestartsTheLogAtTheGivenOffset() throws IOException {
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env.environment())) {
            for (int i = 0; i < 20; i++) {
                appendLeader(log, 2, 1000 + i);
            }
            log.truncateFullyAndStartAt(100);
            assertThat(log.logStartOffset()).isEqualTo(100);
            assertThat(log.logEndOffset()).isEqualTo(100);
            assertThat(log.segmentCount()).isEqualTo(1);
            assertThat(log.latestLeaderEpoch()).isEqualTo(-1);
            assertThat(log.endOffsetForEpoch(2)).isEqualTo(EpochEndOffset.UNDEFINED);
            appendLeader(log, 3, 5);
            assertThat(allOffsets(log, 100)).containsExactly(100L);
            env.advance(SMALL.fileDeleteDelayMs());
        }
        assertThat(dir.resolve("00000000000000000000.log")).doesNotExist();
        UnifiedLog crashed = UnifiedLog.open(dir, SMALL);
        crashed.crashForTesting();
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.logStartOffset()).isEqualTo(100);
            assertThat(log.logEndOffset()).isEqualTo(101);
            assertThat(log.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 101));
        }
    }

    @Test
    void theLogStartOffsetNeverPassesTheHighWatermarkAndIsCheckpointed() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        for (int i = 0; i < 10; i++) {
            appendLeader(log, 0, 1000 + i);
        }
        assertThat(log.maybeIncrementLogStartOffset(6, 5)).isEqualTo(LogStartOffsetResult.BEYOND_HIGH_WATERMARK);
        assertThat(log.maybeIncrementLogStartOffset(11, 20)).isEqualTo(LogStartOffsetResult.BEYOND_HIGH_WATERMARK);
        assertThat(log.maybeIncrementLogStartOffset(4, 5)).isEqualTo(LogStartOffsetResult.INCREMENTED);
        assertThat(log.maybeIncrementLogStartOffset(3, 5)).isEqualTo(LogStartOffsetResult.UNCHANGED);
        assertThat(log.logStartOffset()).isEqualTo(4);
        assertThat(log.offsetForTimestamp(0, Long.MAX_VALUE).offset()).isEqualTo(4);
        log.crashForTesting();
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logStartOffset()).isEqualTo(4);
        }
    }
}
