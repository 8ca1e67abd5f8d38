package io.stellflow.storage;

import static io.stellflow.storage.TestBatches.offsets;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecoveryTest {
    @TempDir
    Path logDir;

    /** The partition directory; quarantine directories go beside it, in {@link #logDir}. */
    private Path dir;

    @BeforeEach
    void partitionDir() {
        dir = logDir.resolve("t-0");
    }

    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
    private static final Path FIRST_LOG = Path.of("00000000000000000000.log");
    private static final Path FIRST_INDEX = Path.of("00000000000000000000.index");

    /** Appends one single-record batch per timestamp; returns each batch's file position. */
    private static List<Integer> appendSingles(UnifiedLog log, int count) throws IOException {
        List<Integer> positions = new ArrayList<>();
        int pos = 0;
        for (int i = 0; i < count; i++) {
            ByteBuf b = TestBatches.batch(1000 + i);
            positions.add(pos);
            pos += b.readableBytes();
            log.appendAsLeader(b, 1);
            b.release();
        }
        return positions;
    }

    private static List<Long> allOffsets(UnifiedLog log, long from) throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
            return offsets(TestBatches.decode(out, from));
        } finally {
            out.release();
        }
    }

    @Test
    void tornTailIsTruncatedAndTheNextAppendContinuesAfterTheLastWholeBatch() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        appendSingles(log, 3);
        log.crashForTesting();
        Path logFile = dir.resolve(FIRST_LOG);
        long sizeOfThree = Files.size(logFile);
        ByteBuf fourth = TestBatches.batch(4000);
        ByteBuffer half = fourth.nioBuffer(0, fourth.readableBytes() / 2);
        UnifiedLogTest.appendRaw(logFile, half);
        fourth.release();

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(3);
            assertThat(Files.size(logFile)).isEqualTo(sizeOfThree);
            ByteBuf next = TestBatches.batch(5000);
            assertThat(reopened.appendAsLeader(next, 2)).isEqualTo(3);
            next.release();
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L, 2L, 3L);
        }
    }

    @Test
    void tornTailAfterACleanCloseWithoutMarkerIsAlsoTruncated() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            appendSingles(log, 3);
        }
        Files.delete(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        UnifiedLogTest.appendRaw(dir.resolve(FIRST_LOG), ByteBuffer.wrap(new byte[] {0, 0, 0, 0, 0, 0, 1}));
        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(3);
        }
    }

    @Test
    void aFlippedByteUnderTheCrcOfTheLastBatchIsCutLikeATornTail() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        List<Integer> positions = appendSingles(log, 3);
        log.crashForTesting();
        flipByte(dir.resolve(FIRST_LOG), positions.get(2) + 60); // inside the record, covered by the CRC

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
            assertThat(Files.size(dir.resolve(FIRST_LOG))).isEqualTo((long) positions.get(2));
            ByteBuf next = TestBatches.batch(9);
            assertThat(reopened.appendAsLeader(next, 2)).isEqualTo(2);
            next.release();
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L, 2L);
        }
    }

    @Test
    void corruptionInAnOlderSegmentMovesTheLaterSegmentsToQuarantine() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 40);
        assertThat(log.segmentCount()).isGreaterThan(3);
        log.crashForTesting();
        List<Path> logs = SegmentFiles.logFiles(dir);
        Path second = logs.get(1);
        long secondBase = SegmentFiles.baseOf(second);
        flipByte(second, 30); // first batch of the second segment, inside the CRC-covered header

        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(secondBase);
            assertThat(reopened.segmentCount()).isEqualTo(2);
            assertThat(allOffsets(reopened, 0))
                    .isEqualTo(LongStream.range(0, secondBase).boxed().toList());
        }
        Path quarantine;
        try (var dirs = Files.list(logDir)) {
            quarantine = dirs.filter(p -> !p.equals(dir)).findFirst().orElseThrow();
        }
        assertThat(quarantine.resolve(second.getFileName() + ".tail-0")).exists();
        for (int i = 2; i < logs.size(); i++) {
            assertThat(logs.get(i)).doesNotExist();
            assertThat(quarantine.resolve(logs.get(i).getFileName())).exists();
        }
    }

    /**
     * The CRC does not cover a batch's base offset delta. One damaged so that the last batch of a
     * segment claims offsets of the next segment (found by {@code RecoveryFuzzTest}) was accepted
     * as an offset gap: the log end moved past the next segment's base, the next segment was
     * quarantined but stayed as the empty active segment, and reads of the claimed offsets went to
     * that empty segment and found nothing. That batch is corruption: the log ends before it.
     */
    @Test
    void aBatchClaimingOffsetsOfTheNextSegmentEndsTheLogBeforeIt() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 40);
        assertThat(log.segmentCount()).isGreaterThan(3);
        log.crashForTesting();
        List<Path> logs = SegmentFiles.logFiles(dir);
        long secondBase = SegmentFiles.baseOf(logs.get(1));
        long thirdBase = SegmentFiles.baseOf(logs.get(2));
        List<Integer> starts = DirMutation.batchStarts(Files.readAllBytes(logs.get(1)));
        int lastBatch = starts.get(starts.size() - 2);
        overwriteInt(logs.get(1), lastBatch, (int) (thirdBase - secondBase + 1000));

        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(thirdBase - 1);
            for (long offset = 0; offset < thirdBase - 1; offset++) {
                assertThat(allOffsets(reopened, offset).getFirst()).isEqualTo(offset);
            }
            ByteBuf next = TestBatches.batch(9);
            assertThat(reopened.appendAsLeader(next, 2)).isEqualTo(thirdBase - 1);
            next.release();
            assertThat(allOffsets(reopened, thirdBase - 1)).containsExactly(thirdBase - 1);
        }
        for (int i = 2; i < logs.size(); i++) {
            assertThat(logs.get(i)).doesNotExist();
        }
    }

    /**
     * A segment lost between two others, and the last one torn to nothing: the empty last segment
     * is kept and its base stays the log end offset (offsets are never handed out twice; the lost
     * ones are a gap). Commit eb66370 had deleted that segment and ended the log at the data before
     * the lost one, handing out the lost offsets again (RecoveryFuzzTest input {@code
     * crash-91f4e4bc...}: segment 71 lost, segment 86 torn at its first batch); reverted.
     */
    @Test
    void anEmptyLastSegmentAboveALostSegmentKeepsItsBaseAsTheLogEnd() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 40);
        assertThat(log.segmentCount()).isGreaterThan(3);
        log.crashForTesting();
        List<Path> logs = SegmentFiles.logFiles(dir);
        Path lost = logs.get(logs.size() - 2);
        Path last = logs.getLast();
        long lostBase = SegmentFiles.baseOf(lost);
        Files.delete(lost);
        Files.delete(dir.resolve(LogSegment.fileStem(lostBase) + LogSegment.INDEX_SUFFIX));
        try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
            ch.truncate(10); // a torn first batch: a partial header
        }

        assertGapUpToTheEmptyLastSegment(lostBase, SegmentFiles.baseOf(last));
        assertThat(last).exists();
    }

    /**
     * The last batches of a segment lost and the next (last) segment empty, with no invalid byte
     * anywhere (RecoveryFuzzTest inputs {@code crash-a49597d1...}, {@code crash-574e361b...}: batches
     * 83-85 lost, segment 86 empty): the log end offset stays 86, the lost offsets are a gap, and a
     * read inside it returns the next batch, as in a compacted log.
     */
    @Test
    void anEmptyLastSegmentAboveLostTailBatchesKeepsItsBaseAsTheLogEnd() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL);
        appendSingles(log, 40);
        assertThat(log.segmentCount()).isGreaterThan(3);
        log.crashForTesting();
        List<Path> logs = SegmentFiles.logFiles(dir);
        Path before = logs.get(logs.size() - 2);
        Path last = logs.getLast();
        List<Integer> starts = DirMutation.batchStarts(Files.readAllBytes(before));
        assertThat(starts).hasSizeGreaterThan(3);
        int keptBatches = starts.size() - 3; // the last two batches are lost
        try (FileChannel ch = FileChannel.open(before, StandardOpenOption.WRITE)) {
            ch.truncate(starts.get(keptBatches));
        }
        try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }

        assertGapUpToTheEmptyLastSegment(SegmentFiles.baseOf(before) + keptBatches, SegmentFiles.baseOf(last));
    }

    /**
     * Opens {@link #dir}, whose data ends at {@code dataEnd} below an empty last segment at {@code
     * lastBase}: the log end offset is {@code lastBase}, the data reads back, the next append lands
     * at {@code lastBase}, and a read ({@link UnifiedLog#read} and the Fetch copy {@link
     * UnifiedLog#readInto}) at any offset of the gap returns that batch first; a clean reopen keeps
     * all of it.
     */
    private void assertGapUpToTheEmptyLastSegment(long dataEnd, long lastBase) throws IOException {
        assertThat(lastBase).isGreaterThan(dataEnd);
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(lastBase);
            for (long offset = 0; offset < dataEnd; offset++) {
                assertThat(allOffsets(reopened, offset).getFirst()).isEqualTo(offset);
            }
            assertThat(allOffsets(reopened, dataEnd)).isEmpty();
            ByteBuf next = TestBatches.batch(9, 10);
            assertThat(reopened.appendAsLeader(next, 2)).isEqualTo(lastBase);
            next.release();
            assertThat(reopened.logEndOffset()).isEqualTo(lastBase + 2);
        }
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL)) {
            assertThat(reopened.logEndOffset()).isEqualTo(lastBase + 2);
            for (long offset = dataEnd; offset <= lastBase; offset++) {
                List<Long> bases = new ArrayList<>();
                reopened.read(
                        offset, 1, Long.MAX_VALUE, true, (ch, position, size, base, lastOffset) -> bases.add(base));
                assertThat(bases).as("read at %d in the gap", offset).containsExactly(lastBase);
                assertThat(allOffsets(reopened, offset)).containsExactly(lastBase, lastBase + 1);
            }
            assertThat(allOffsets(reopened, dataEnd - 1)).containsExactly(dataEnd - 1, lastBase, lastBase + 1);
        }
    }

    /** Nor may a batch reach past {@code base + Integer.MAX_VALUE}, which appends never write. */
    @Test
    void aBatchWhoseRelativeOffsetsPassAnIntEndsTheLogBeforeIt() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        ByteBuf one = TestBatches.batch(1000);
        int secondPosition = one.readableBytes();
        log.appendAsLeader(one, 1);
        one.release();
        ByteBuf two = TestBatches.batch(2000, 2001);
        log.appendAsLeader(two, 1);
        two.release();
        log.crashForTesting();
        overwriteInt(dir.resolve(FIRST_LOG), secondPosition, Integer.MAX_VALUE);

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(1);
            assertThat(allOffsets(reopened, 0)).containsExactly(0L);
        }
    }

    /**
     * A trusted segment (clean shutdown) whose last batch's {@code lastOffsetDelta} was damaged:
     * the tail walk took the header's offsets as the log end offset, which became negative
     * (RecoveryFuzzTest input {@code crash-1176b595...}: {@code log start offset -1958 outside [0,
     * -1958]}). Offsets that do not increase from the segment base make the segment untrusted; its
     * scan then cuts the damaged batch (its CRC no longer matches) like a torn tail.
     */
    @Test
    void aTrustedBatchWithANegativeLastOffsetDeltaIsRecoveredNotTrusted() throws IOException {
        List<Integer> positions;
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults())) {
            positions = appendSingles(log, 3);
        }
        assertThat(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)).exists();
        overwriteInt(dir.resolve(FIRST_LOG), positions.get(2) + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, -2000);

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logStartOffset()).isZero();
            assertThat(reopened.logEndOffset()).isEqualTo(2);
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L);
        }
    }

    /**
     * The CRC does not cover a batch's leader epoch. A batch whose epoch turned negative was kept
     * as the last one while the epoch cache, which records no negative epoch, named the previous
     * epoch as the latest (RecoveryFuzzTest input {@code crash-243afe05...}: {@code latest leader
     * epoch 4, last batch's -2147483644}). A negative epoch makes the batch invalid: it is cut like
     * a torn tail.
     */
    @Test
    void aBatchWithANegativeLeaderEpochEndsTheLogBeforeIt() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        List<Integer> positions = appendSingles(log, 2);
        ByteBuf third = TestBatches.batch(3000);
        int thirdPosition = positions.get(1) + third.readableBytes();
        log.appendAsLeader(third, 2);
        third.release();
        assertThat(log.latestLeaderEpoch()).isEqualTo(2);
        log.crashForTesting();
        overwriteInt(
                dir.resolve(FIRST_LOG), thirdPosition + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET, 0x80000002);

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L);
            assertThat(reopened.latestLeaderEpoch()).isEqualTo(1);
        }
    }

    private static void overwriteInt(Path file, long position, int value) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, value), position);
        }
    }

    @Test
    void aZeroedIndexIsRebuiltIdenticallyAndLookupsAreRight() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendSingles(log, 10);
        }
        Path index = dir.resolve(FIRST_INDEX);
        byte[] original = Files.readAllBytes(index);
        assertThat(original.length).isEqualTo(10 * OffsetIndexLayout.ENTRY_SIZE);
        Files.write(index, new byte[original.length]);

        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            for (long offset = 0; offset < 10; offset++) {
                assertThat(allOffsets(log, offset).get(0)).isEqualTo(offset);
            }
        }
        assertThat(Files.readAllBytes(index)).isEqualTo(original);
    }

    @Test
    void aShortGarbageOrMissingIndexIsRebuilt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendSingles(log, 10);
        }
        Path index = dir.resolve(FIRST_INDEX);
        byte[] original = Files.readAllBytes(index);
        byte[] garbage = new byte[original.length];
        new Random(42).nextBytes(garbage);
        List<byte[]> corruptions = List.of(new byte[] {1, 2, 3, 4, 5}, garbage, new byte[0]);
        for (byte[] corrupt : corruptions) {
            Files.write(index, corrupt);
            try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
                assertThat(log.logEndOffset()).isEqualTo(10);
                for (long offset = 0; offset < 10; offset++) {
                    assertThat(allOffsets(log, offset).get(0)).isEqualTo(offset);
                }
            }
            assertThat(Files.readAllBytes(index)).isEqualTo(original);
        }
        Files.delete(index);
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(allOffsets(log, 7).get(0)).isEqualTo(7);
        }
        assertThat(Files.readAllBytes(index)).isEqualTo(original);
    }

    @Test
    void aValidButShortIndexIsCompletedAndAnIntactOneIsKept() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendSingles(log, 10);
        }
        Path index = dir.resolve(FIRST_INDEX);
        byte[] original = Files.readAllBytes(index);
        Files.write(index, Arrays.copyOf(original, 5 * OffsetIndexLayout.ENTRY_SIZE));
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.segmentsForTesting()[0].indexEntries()).isEqualTo(10);
        }
        assertThat(Files.readAllBytes(index)).isEqualTo(original);
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.segmentsForTesting()[0].indexEntries()).isEqualTo(10);
            assertThat(allOffsets(log, 9)).containsExactly(9L);
        }
        assertThat(Files.readAllBytes(index)).isEqualTo(original);
    }

    @Test
    void anIndexPointingPastTheLogIsRebuilt() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            appendSingles(log, 5);
        }
        Path index = dir.resolve(FIRST_INDEX);
        try (FileChannel ch = FileChannel.open(index, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).putInt(0, 4).putInt(4, 1_000_000), 32); // entry 4
        }
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL)) {
            assertThat(log.logEndOffset()).isEqualTo(5);
            assertThat(allOffsets(log, 4)).containsExactly(4L);
        }
    }

    @Test
    void cleanRestartReopensTrimmedIndexesAndKeepsIndexing() throws IOException {
        LogConfig config = new LogConfig(1 << 20, 0, 4096, Long.MAX_VALUE, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            appendSingles(log, 5);
        }
        assertThat(Files.size(dir.resolve(FIRST_INDEX))).isEqualTo(5 * 8);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            appendSingles(log, 5);
            assertThat(log.logEndOffset()).isEqualTo(10);
        }
        assertThat(Files.size(dir.resolve(FIRST_INDEX))).isEqualTo(10 * 8);
    }

    @Test
    void aFullIndexRollsTheSegment() throws IOException {
        LogConfig config = new LogConfig(1 << 20, 0, 4 * 8, Long.MAX_VALUE, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            appendSingles(log, 10);
            assertThat(log.segmentCount()).isEqualTo(3); // 4 + 4 + 2 batches
            assertThat(allOffsets(log, 0))
                    .isEqualTo(LongStream.range(0, 10).boxed().toList());
        }
        assertThat(dir.resolve("00000000000000000004.log")).exists();
        assertThat(dir.resolve("00000000000000000008.log")).exists();
    }

    static void flipByte(Path file, long position) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, position);
            one.put(0, (byte) (one.get(0) ^ 0x5A));
            ch.write(one.rewind(), position);
        }
    }

    /**
     * Batches of 300 KiB and one of 2.5 MiB: batches cross the 1 MiB chunk boundaries of the scan
     * and one is larger than the chunk buffer; all survive an unclean open. Then a byte flipped in a
     * batch that starts in one chunk and ends in the next truncates the log exactly there.
     */
    @Test
    void batchesAcrossChunkBoundariesAndLargerThanAChunkAreValidatedWhole() throws IOException {
        int[] valueBytes = {300 * 1024, 300 * 1024, 300 * 1024, 300 * 1024, 2560 * 1024, 300 * 1024, 300 * 1024};
        List<Long> positions = new ArrayList<>();
        long pos = 0;
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults());
        for (int v : valueBytes) {
            ByteBuf b = TestBatches.sized(1, v);
            positions.add(pos);
            pos += b.readableBytes();
            log.appendAsLeader(b, 1);
            b.release();
        }
        log.crashForTesting();
        assertThat(positions.get(3)).isLessThan(Recovery.CHUNK_BYTES);
        assertThat(positions.get(4)).isGreaterThan(Recovery.CHUNK_BYTES); // batch 3 straddles 1 MiB
        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(valueBytes.length);
            assertThat(reopened.sizeInBytes()).isEqualTo(pos);
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
        }
        Files.delete(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        Files.deleteIfExists(dir.resolve(LogLoader.RECOVERY_POINT_FILE));
        Path logFile = dir.resolve(FIRST_LOG);
        long flipAt = Recovery.CHUNK_BYTES + 100L; // inside batch 3, past the chunk end
        try (FileChannel ch = FileChannel.open(logFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, flipAt);
            one.put(0, (byte) ~one.get(0)).rewind();
            ch.write(one, flipAt);
        }
        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults())) {
            assertThat(reopened.logEndOffset()).isEqualTo(3);
            assertThat(Files.size(logFile)).isEqualTo(positions.get(3));
            assertThat(allOffsets(reopened, 0)).containsExactly(0L, 1L, 2L);
        }
    }
}
