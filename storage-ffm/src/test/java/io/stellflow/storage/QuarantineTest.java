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
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery never discards what it cannot read: corruption is moved to a quarantine directory beside
 * the partition ({@link SegmentQuarantine}, decided by {@link LogLoader}), a torn tail is cut.
 */
class QuarantineTest {
    @TempDir
    Path logDir;

    private Path dir;

    private static final long NOW_MS = 1_764_770_000_000L;
    private static final LogConfig SMALL = new LogConfig(1024, 0, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    /** Records every quarantine and recovery report. */
    private static final class Recording implements LogMetrics {
        final List<Quarantined> quarantined = new ArrayList<>();
        final List<String> recovered = new ArrayList<>();

        @Override
        public void logQuarantined(Quarantined q) {
            quarantined.add(q);
        }

        @Override
        public void logRecovered(
                Path partitionDir, int segmentsRecovered, long droppedBytes, int segmentsQuarantined, long leo) {
            recovered.add("segments=" + segmentsRecovered + " droppedBytes=" + droppedBytes + " quarantined="
                    + segmentsQuarantined + " leo=" + leo);
        }
    }

    private final Recording metrics = new Recording();
    private LogEnvironment env;

    @BeforeEach
    void setUp() {
        dir = logDir.resolve("orders-3");
        env = new ManualEnvironment(NOW_MS).environment().withMetrics(metrics);
    }

    /** Appends {@code count} one-record batches. */
    private static void appendSingles(UnifiedLog log, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            ByteBuf b = TestBatches.batch(1000 + i);
            log.appendAsLeader(b, 1);
            b.release();
        }
    }

    /** Writes {@code bytes} over the file at {@code position}. */
    private static void overwrite(Path file, long position, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), position);
        }
    }

    private static List<Long> allOffsets(UnifiedLog log) throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            log.readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
            return offsets(TestBatches.decode(out, 0));
        } finally {
            out.release();
        }
    }

    private List<Path> segmentLogs() throws IOException {
        return SegmentFiles.logFiles(dir);
    }

    private List<Path> quarantineDirs() throws IOException {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.filter(p -> !p.equals(dir)).toList();
        }
    }

    private static List<String> names(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static long base(Path segmentLog) {
        return LogLoader.parseBase(segmentLog, LogSegment.LOG_SUFFIX);
    }

    /** File positions of the batches of a segment log, read from their length fields. */
    private static List<Integer> batchPositions(Path segmentLog) throws IOException {
        byte[] bytes = Files.readAllBytes(segmentLog);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        List<Integer> positions = new ArrayList<>();
        for (int p = 0;
                p < bytes.length;
                p += RecordBatchLayout.LOG_OVERHEAD + b.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET)) {
            positions.add(p);
        }
        return positions;
    }

    /**
     * The case: a flipped byte in the first of three segments after an unclean stop. The log
     * keeps the batches before it; the corrupt segment's tail and the two later segments (log and
     * both indexes each) are in {@code orders-3.<now>.quarantine}, byte for byte; the metrics hook
     * names the file, the position and every moved file.
     */
    @Test
    void aFlippedByteInSegmentOneOfThreeMovesItsTailAndTheLaterSegmentsToQuarantine() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL, env);
        while (log.segmentCount() < 3) {
            appendSingles(log, 1);
        }
        appendSingles(log, 2); // the third (active) segment holds three batches
        assertThat(log.segmentCount()).isEqualTo(3);
        log.crashForTesting();
        List<Path> logs = segmentLogs();
        Path first = logs.get(0);
        List<Integer> positions = batchPositions(first);
        int badBatch = 5;
        int cut = positions.get(badBatch);
        byte[] firstBytes = Files.readAllBytes(first);
        RecoveryTest.flipByte(first, cut + 60); // inside the record, covered by the CRC
        byte[] corruptTail = Arrays.copyOfRange(Files.readAllBytes(first), cut, firstBytes.length);
        byte[] second = Files.readAllBytes(logs.get(1));
        byte[] third = Files.readAllBytes(logs.get(2));

        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(badBatch);
            assertThat(reopened.segmentCount()).isEqualTo(1);
            assertThat(allOffsets(reopened))
                    .isEqualTo(LongStream.range(0, badBatch).boxed().toList());
            ByteBuf next = TestBatches.batch(9);
            assertThat(reopened.appendAsLeader(next, 2)).isEqualTo(badBatch);
            next.release();
        }

        Path quarantine = logDir.resolve("orders-3." + NOW_MS + ".quarantine");
        assertThat(quarantineDirs()).containsExactly(quarantine);
        String tailName = first.getFileName() + ".tail-" + cut;
        List<String> later = new ArrayList<>();
        for (Path l : logs.subList(1, 3)) {
            String stem = l.getFileName().toString().substring(0, 20);
            later.addAll(List.of(stem + ".log", stem + ".index", stem + ".timeindex"));
        }
        List<String> expected = new ArrayList<>(later);
        expected.addFirst(tailName);
        assertThat(names(quarantine)).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(Files.readAllBytes(quarantine.resolve(tailName))).isEqualTo(corruptTail);
        assertThat(Files.readAllBytes(quarantine.resolve(logs.get(1).getFileName())))
                .isEqualTo(second);
        assertThat(Files.readAllBytes(quarantine.resolve(logs.get(2).getFileName())))
                .isEqualTo(third);
        assertThat(logs.get(1)).doesNotExist();
        assertThat(logs.get(2)).doesNotExist();

        long movedBytes = corruptTail.length + second.length + third.length;
        assertThat(metrics.quarantined).hasSize(1);
        Quarantined q = metrics.quarantined.getFirst();
        assertThat(q.partitionDir()).isEqualTo(dir);
        assertThat(q.file()).isEqualTo(first);
        assertThat(q.position()).isEqualTo(cut);
        assertThat(q.reason()).startsWith("CRC-32C mismatch");
        assertThat(q.quarantineDir()).isEqualTo(quarantine);
        assertThat(q.files()).isEqualTo(expected);
        assertThat(q.segments()).isEqualTo(3);
        assertThat(q.bytes()).isEqualTo(movedBytes);
        assertThat(metrics.recovered)
                .containsExactly("segments=1 droppedBytes=" + movedBytes + " quarantined=2 leo=" + badBatch);

        // The quarantine stays where it is across clean and unclean opens.
        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(badBatch + 1);
        }
        assertThat(names(quarantine)).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(metrics.quarantined).hasSize(1);
    }

    /**
     * The active segment: a flipped byte in a batch followed by valid batches is corruption (only the
     * tail moves); half a batch at the end is a torn tail (cut, nothing moved).
     */
    @Test
    void inTheActiveSegmentValidBatchesAfterTheBadOneMeanCorruptionAndAPartialLastBatchATornTail() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults(), env);
        appendSingles(log, 6);
        log.crashForTesting();
        Path active = segmentLogs().getFirst();
        List<Integer> positions = batchPositions(active);
        long size = Files.size(active);
        RecoveryTest.flipByte(active, positions.get(2) + 60);

        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults(), env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
        }
        assertThat(Files.size(active)).isEqualTo((long) positions.get(2));
        Path quarantine = logDir.resolve("orders-3." + NOW_MS + ".quarantine");
        assertThat(names(quarantine)).containsExactly(active.getFileName() + ".tail-" + positions.get(2));
        assertThat(Files.size(quarantine.resolve(active.getFileName() + ".tail-" + positions.get(2))))
                .isEqualTo(size - positions.get(2));
        assertThat(metrics.quarantined.getFirst().reason())
                .isEqualTo("CRC-32C mismatch, valid batch at position " + positions.get(3));
        assertThat(metrics.quarantined.getFirst().segments()).isEqualTo(1);

        // Now a torn tail: half a batch appended after an unclean stop.
        Files.delete(dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE));
        ByteBuf torn = TestBatches.batch(7000);
        int tornBytes = torn.readableBytes() / 2;
        UnifiedLogTest.appendRaw(active, torn.nioBuffer(0, tornBytes));
        torn.release();
        try (UnifiedLog reopened = UnifiedLog.open(dir, LogConfig.defaults(), env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(2);
            assertThat(allOffsets(reopened)).containsExactly(0L, 1L);
        }
        assertThat(quarantineDirs()).containsExactly(quarantine);
        assertThat(metrics.quarantined).hasSize(1);
        assertThat(metrics.recovered.getLast())
                .isEqualTo("segments=1 droppedBytes=" + tornBytes + " quarantined=0 leo=2");
    }

    /** The last batch of the log with a bad CRC and nothing after it looks like a torn write: it is cut. */
    @Test
    void aBadLastBatchWithNothingAfterItIsATornTail() throws IOException {
        UnifiedLog log = UnifiedLog.open(dir, SMALL, env);
        appendSingles(log, 30);
        int segments = log.segmentCount();
        assertThat(segments).isGreaterThan(1);
        log.crashForTesting();
        Path last = segmentLogs().getLast();
        List<Integer> positions = batchPositions(last);
        RecoveryTest.flipByte(last, positions.getLast() + 60);

        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(29);
            assertThat(reopened.segmentCount()).isEqualTo(segments);
        }
        assertThat(quarantineDirs()).isEmpty();
        assertThat(metrics.quarantined).isEmpty();
    }

    /**
     * After a clean shutdown the logs are trusted; a sealed segment whose index is missing is scanned
     * to rebuild it, and a broken batch length there is corruption: that segment's tail and the later
     * segments go to quarantine, the next open of the same millisecond uses the next name.
     */
    @Test
    void invalidBytesInATrustedSegmentAreQuarantinedToo() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, SMALL, env)) {
            appendSingles(log, 40);
            assertThat(log.segmentCount()).isGreaterThan(3);
        }
        Files.createDirectory(logDir.resolve("orders-3." + NOW_MS + ".quarantine"));
        List<Path> logs = segmentLogs();
        Path second = logs.get(1);
        int cut = batchPositions(second).get(2);
        Files.delete(LogSegment.indexPath(dir, base(second)));
        overwrite(second, cut + RecordBatchLayout.BATCH_LENGTH_OFFSET, new byte[] {0x7f, 0, 0, 0
        }); // batchLength past the file end

        try (UnifiedLog reopened = UnifiedLog.open(dir, SMALL, env)) {
            assertThat(reopened.logEndOffset()).isEqualTo(base(second) + 2);
            assertThat(reopened.segmentCount()).isEqualTo(2);
        }
        Path quarantine = logDir.resolve("orders-3." + (NOW_MS + 1) + ".quarantine");
        assertThat(names(quarantine))
                .contains(
                        second.getFileName() + ".tail-" + cut, "" + logs.get(2).getFileName());
        assertThat(metrics.quarantined.getFirst().segments()).isEqualTo(logs.size() - 1);
        assertThat(metrics.quarantined.getFirst().reason()).startsWith("batchLength");
        assertThat(metrics.recovered).as("a clean open is not a recovery").isEmpty();
    }

    /** The log manager skips quarantine directories: they are no partitions and stay untouched. */
    @Test
    void theLogManagerDoesNotLoadQuarantineDirectories() throws IOException {
        Path q = logDir.resolve(SegmentQuarantine.dirName("orders-3", NOW_MS));
        Files.createDirectories(q);
        Files.write(q.resolve("00000000000000000000.log.tail-0"), new byte[] {1, 2, 3});
        try (LogManager manager =
                LogManager.start(LogManager.Config.of(List.of(logDir)), SMALL, env, UnifiedLog::logEndOffset)) {
            assertThat(manager.logs()).isEmpty();
            manager.getOrCreate("orders", 3);
            assertThat(manager.logs()).containsOnlyKeys("orders-3");
        }
        assertThat(names(q)).containsExactly("00000000000000000000.log.tail-0");
    }
}
