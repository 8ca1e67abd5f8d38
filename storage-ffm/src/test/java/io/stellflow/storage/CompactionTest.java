package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Compaction ({@code cleanup.policy=compact}): {@link UnifiedLog#compact} and its swap. */
@IntegrationTest
class CompactionTest {
    private static final long DAY = 86_400_000L;

    @TempDir
    Path dir;

    /** A stored record as the test reads it back: absolute offset, key, value (null = tombstone). */
    record Rec(long offset, String key, String value) {}

    private static LogConfig.Builder compacted() {
        return LogConfig.builder()
                .segmentBytes(1024)
                .indexIntervalBytes(64)
                .indexMaxBytes(4096)
                .cleanupPolicy("compact")
                .minCleanableDirtyRatio(0)
                .fileDeleteDelayMs(1000);
    }

    private static ByteBuf batch(long ts, String... keyValues) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, ts);
        for (int i = 0; i < keyValues.length; i += 2) {
            b.append(ts, bytes(keyValues[i]), bytes(keyValues[i + 1]));
        }
        b.close();
        return out;
    }

    private static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads the whole log through readInto and decodes it, checking each batch's CRC and framing. */
    static List<Rec> readAll(UnifiedLog log, long from) throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
            return decode(out, from);
        } finally {
            out.release();
        }
    }

    /**
     * Decodes a Fetch v0 style set allowing compacted batches (recordCount &lt;= lastOffsetDelta + 1,
     * offsetDelta not equal to the index); checks CRC, framing and that offsets increase inside the
     * batch and stay within base..base+lastOffsetDelta.
     */
    static List<Rec> decode(ByteBuf buf, long fetchOffset) {
        List<Rec> recs = new ArrayList<>();
        int pos = buf.readerIndex();
        while (pos < buf.writerIndex()) {
            int size = RecordBatchLayout.batchSize(buf, pos);
            assertThat(pos + size).isLessThanOrEqualTo(buf.writerIndex());
            assertThat(RecordBatchLayout.computeCrc(buf, pos)).isEqualTo(RecordBatchLayout.crc(buf, pos));
            long base = fetchOffset + RecordBatchLayout.baseOffsetDelta(buf, pos);
            int lastDelta = RecordBatchLayout.lastOffsetDelta(buf, pos);
            int count = RecordBatchLayout.recordCount(buf, pos);
            assertThat(count).isBetween(1, lastDelta + 1);
            long maxTs = Long.MIN_VALUE;
            int p = pos + RecordBatchLayout.RECORDS_OFFSET;
            int previousDelta = -1;
            for (int i = 0; i < count; i++) {
                int length = buf.getInt(p);
                maxTs = Math.max(maxTs, RecordBatchLayout.baseTimestamp(buf, pos) + buf.getLong(p + 5));
                int delta = buf.getInt(p + 13);
                assertThat(delta).isGreaterThan(previousDelta).isLessThanOrEqualTo(lastDelta);
                previousDelta = delta;
                int keyLen = buf.getInt(p + 17);
                String key = keyLen < 0 ? null : buf.toString(p + 21, keyLen, StandardCharsets.UTF_8);
                int v = p + 21 + Math.max(keyLen, 0);
                int valueLen = buf.getInt(v);
                String value = valueLen < 0 ? null : buf.toString(v + 4, valueLen, StandardCharsets.UTF_8);
                recs.add(new Rec(base + delta, key, value));
                p += 4 + length;
            }
            assertThat(p).isEqualTo(pos + size);
            assertThat(RecordBatchLayout.maxTimestamp(buf, pos)).isGreaterThanOrEqualTo(maxTs);
            pos += size;
        }
        return recs;
    }

    /** What compaction of the sealed range [.., activeBase) must leave of {@code before}. */
    private static List<Rec> expectedAfterCompaction(List<Rec> before, long activeBase, boolean dropTombstones) {
        Map<String, Long> last = new HashMap<>();
        for (Rec r : before) {
            if (r.offset() < activeBase && r.key() != null) {
                last.put(r.key(), r.offset());
            }
        }
        List<Rec> expected = new ArrayList<>();
        for (Rec r : before) {
            boolean sealed = r.offset() < activeBase;
            boolean keep = !sealed
                    || r.key() == null
                    || (last.get(r.key()) == r.offset() && !(dropTombstones && r.value() == null));
            if (keep) {
                expected.add(r);
            }
        }
        return expected;
    }

    private static long activeBase(UnifiedLog log) {
        LogSegment[] segs = log.segmentsForTesting();
        return segs[segs.length - 1].baseOffset;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 1234})
    void keepsTheLastRecordPerKeyWithOriginalOffsets(long seed) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        List<Rec> before;
        List<Rec> expected;
        try (UnifiedLog log = UnifiedLog.open(dir, compacted().build(), env.environment())) {
            int batches = 30 + random.nextInt(40);
            long next = 0;
            for (int b = 0; b < batches; b++) {
                int n = 1 + random.nextInt(5);
                String[] kv = new String[2 * n];
                for (int i = 0; i < n; i++) {
                    kv[2 * i] = "k" + random.nextInt(12);
                    kv[2 * i + 1] = random.nextInt(10) == 0 ? null : "v" + (next + i);
                }
                log.appendAsLeader(batch(env.nowMs(), kv), 1);
                next += n;
            }
            assertThat(log.segmentCount()).isGreaterThan(3);
            before = readAll(log, 0);
            long active = activeBase(log);
            expected = expectedAfterCompaction(before, active, false);
            byte[] activeBytes = Files.readAllBytes(LogSegment.logPath(dir, active));

            CompactionResult result = log.compact(Long.MAX_VALUE);

            assertThat(result.recordsRemoved()).isEqualTo(before.size() - expected.size());
            assertThat(result.bytesAfter()).isLessThan(result.bytesBefore());
            List<Rec> after = readAll(log, 0);
            assertThat(after).isEqualTo(expected);
            assertThat(log.logEndOffset()).isEqualTo(next);
            assertThat(Files.readAllBytes(LogSegment.logPath(dir, active))).isEqualTo(activeBytes);
            assertThat(activeBase(log)).isEqualTo(active);
            // Compacting again removes nothing more.
            assertThat(log.compact(Long.MAX_VALUE).recordsRemoved()).isZero();
            // A fetch from an offset that was compacted away starts at the next batch holding a later offset.
            for (Rec r : before) {
                if (!expected.contains(r)) {
                    List<Rec> from = readAll(log, r.offset());
                    assertThat(from.stream()
                                    .filter(x -> x.offset() >= r.offset())
                                    .toList())
                            .isEqualTo(expected.stream()
                                    .filter(x -> x.offset() >= r.offset())
                                    .toList());
                }
            }
            // The next append continues at the log end offset.
            assertThat(log.appendAsLeader(batch(env.nowMs(), "k0", "tail"), 1)).isEqualTo(next);
            expected.add(new Rec(next, "k0", "tail"));
        }
        // Clean reopen, then an unclean one (every compacted batch revalidated with its CRC).
        try (UnifiedLog log = UnifiedLog.open(dir, compacted().build(), env.environment())) {
            assertThat(readAll(log, 0)).isEqualTo(expected);
            log.crashForTesting();
        }
        Files.deleteIfExists(dir.resolve(LogLoader.RECOVERY_POINT_FILE));
        try (UnifiedLog log = UnifiedLog.open(dir, compacted().build(), env.environment())) {
            assertThat(readAll(log, 0)).isEqualTo(expected);
            assertThat(log.logEndOffset()).isEqualTo(expected.getLast().offset() + 1);
        }
    }

    @Test
    void tombstonesStayForDeleteRetentionThenGo() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = compacted().segmentMs(1).deleteRetentionMs(DAY).build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            log.appendAsLeader(batch(env.nowMs(), "a", "a1", "b", "b1"), 1); // 0, 1
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "a", null, "c", "c1"), 1); // 2 (tombstone), 3
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "d", "d1"), 1); // 4: active segment
            assertThat(log.segmentCount()).isEqualTo(3);

            log.compact(Long.MAX_VALUE);
            assertThat(readAll(log, 0))
                    .containsExactly(
                            new Rec(1, "b", "b1"), new Rec(2, "a", null), new Rec(3, "c", "c1"), new Rec(4, "d", "d1"));

            env.advance(DAY - 10); // not yet a day after the tombstone's segment was written
            log.compact(Long.MAX_VALUE);
            assertThat(readAll(log, 0)).extracting(Rec::offset).containsExactly(1L, 2L, 3L, 4L);

            env.advance(10);
            CompactionResult r = log.compact(Long.MAX_VALUE);
            assertThat(r.recordsRemoved()).isEqualTo(1);
            assertThat(readAll(log, 0))
                    .containsExactly(new Rec(1, "b", "b1"), new Rec(3, "c", "c1"), new Rec(4, "d", "d1"));
        }
    }

    @Test
    void neverTouchesTheActiveSegmentNorOffsetsAtOrAboveTheHighWatermark() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = compacted().segmentMs(1).build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            log.appendAsLeader(batch(env.nowMs(), "a", "1"), 1);
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "a", "2"), 1);
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "a", "3", "a", "4"), 1); // active: a twice
            // HW 1: only the first segment is below it; alone it has nothing to remove.
            assertThat(log.compact(1).segmentsCleaned()).isZero();
            assertThat(readAll(log, 0)).hasSize(4);
            log.compact(Long.MAX_VALUE);
            assertThat(readAll(log, 0))
                    .containsExactly(new Rec(1, "a", "2"), new Rec(2, "a", "3"), new Rec(3, "a", "4"));
        }
    }

    @Test
    void nullKeyIsRejectedOnACompactedLogOnly() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir.resolve("c"), compacted().build())) {
            ByteBuf bad = batch(1000, "a", "1", null, "2");
            assertThatThrownBy(() -> log.appendAsLeader(bad, 1))
                    .isInstanceOf(InvalidRecordException.class)
                    .hasMessageContaining("null key");
            assertThat(log.logEndOffset()).isZero();
            assertThat(log.appendAsLeader(batch(1000, "a", "1"), 1)).isZero();
        }
        try (UnifiedLog log = UnifiedLog.open(dir.resolve("d"), LogConfig.defaults())) {
            assertThat(log.appendAsLeader(batch(1000, null, "1"), 1)).isZero();
        }
    }

    @Test
    void compactDeleteAlsoAppliesRetentionButCompactAloneDoesNot() throws IOException {
        for (String policy : new String[] {"compact,delete", "compact"}) {
            Path d = dir.resolve(policy.replace(',', '_'));
            ManualEnvironment env = new ManualEnvironment(1_000_000);
            LogConfig config = compacted()
                    .cleanupPolicy(policy)
                    .segmentMs(1)
                    .retentionMs(10_000)
                    .build();
            try (UnifiedLog log = UnifiedLog.open(d, config, env.environment())) {
                log.appendAsLeader(batch(env.nowMs(), "a", "1", "a", "2"), 1);
                env.advance(1);
                log.appendAsLeader(batch(env.nowMs(), "b", "1"), 1);
                env.advance(1);
                log.appendAsLeader(batch(env.nowMs(), "c", "1"), 1);
                assertThat(log.compact(Long.MAX_VALUE).recordsRemoved()).isEqualTo(1);
                env.advance(20_000);
                int deleted = log.deleteOldSegments(Long.MAX_VALUE);
                if (policy.equals("compact")) {
                    assertThat(deleted).isZero();
                    assertThat(readAll(log, 0)).extracting(Rec::offset).containsExactly(1L, 2L, 3L);
                } else {
                    assertThat(deleted).isEqualTo(2);
                    assertThat(log.logStartOffset()).isEqualTo(3);
                    assertThat(readAll(log, 0)).extracting(Rec::offset).containsExactly(3L);
                }
            }
        }
    }

    @Test
    void aDeletePolicyLogIsNotCompacted() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = LogConfig.builder().segmentMs(1).build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            log.appendAsLeader(batch(env.nowMs(), "a", "1", "a", "2"), 1);
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "b", "1"), 1);
            assertThat(log.compact(Long.MAX_VALUE)).isEqualTo(CompactionResult.NONE);
            assertThat(readAll(log, 0)).hasSize(3);
        }
    }

    @Test
    void belowTheDirtyRatioNothingIsRewritten() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = compacted().segmentMs(1).minCleanableDirtyRatio(0.5).build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            log.appendAsLeader(batch(env.nowMs(), "a", "1", "b", "1", "c", "1", "a", "2"), 1); // 1 of 4 obsolete
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "z", "1"), 1);
            CompactionResult r = log.compact(Long.MAX_VALUE);
            assertThat(r.segmentsCleaned()).isZero();
            assertThat(r.dirtyRatio()).isEqualTo(0.25);
            assertThat(readAll(log, 0)).hasSize(5);
        }
    }

    /** Copies every regular file of {@code from} into {@code to}. */
    private static void copyDir(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /**
     * Builds a three-segment log in {@code original} (clean shutdown), and a compacted copy of it
     * in {@code compactedDir}; returns {records before, records after}.
     */
    private List<List<Rec>> originalAndCompacted(Path original, Path compactedDir, ManualEnvironment env)
            throws IOException {
        LogConfig config = compacted().segmentMs(1).build();
        List<Rec> before;
        try (UnifiedLog log = UnifiedLog.open(original, config, env.environment())) {
            log.appendAsLeader(batch(env.nowMs(), "a", "1", "b", "1", "a", "2"), 1);
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "b", "2", "c", "1"), 1);
            env.advance(1);
            log.appendAsLeader(batch(env.nowMs(), "a", "3"), 1);
            before = readAll(log, 0);
        }
        copyDir(original, compactedDir);
        List<Rec> after;
        try (UnifiedLog log = UnifiedLog.open(compactedDir, config, env.environment())) {
            assertThat(log.compact(Long.MAX_VALUE).segmentsCleaned()).isEqualTo(1);
            after = readAll(log, 0);
        }
        assertThat(after).hasSizeLessThan(before.size());
        return List.of(before, after);
    }

    @Test
    void crashBeforeTheSwapKeepsTheOldSegment() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        Path original = dir.resolve("orig");
        List<List<Rec>> both = originalAndCompacted(original, dir.resolve("done"), env);
        // The crash left a complete .cleaned file, and another one cut short.
        Path log0 = LogSegment.logPath(original, 0);
        Files.copy(LogSegment.logPath(dir.resolve("done"), 0), log0.resolveSibling(log0.getFileName() + ".cleaned"));
        Path log1 = LogSegment.logPath(original, 3);
        Files.write(log1.resolveSibling(log1.getFileName() + ".cleaned"), new byte[] {1, 2, 3});
        try (UnifiedLog log = UnifiedLog.open(original, compacted().build(), env.environment())) {
            assertThat(readAll(log, 0)).isEqualTo(both.get(0));
            assertThat(log.logEndOffset()).isEqualTo(6);
        }
        try (Stream<Path> files = Files.list(original)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".cleaned"));
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void crashAfterTheCommitPointCompletesTheSwap(boolean indexesAlreadyDeleted) throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        Path original = dir.resolve("orig");
        List<List<Rec>> both = originalAndCompacted(original, dir.resolve("done"), env);
        // The crash came after <base>.log.cleaned became <base>.log.swap, before it replaced <base>.log.
        Path log0 = LogSegment.logPath(original, 0);
        Files.copy(LogSegment.logPath(dir.resolve("done"), 0), log0.resolveSibling(log0.getFileName() + ".swap"));
        if (indexesAlreadyDeleted) {
            Files.delete(LogSegment.indexPath(original, 0));
            Files.delete(LogSegment.timeIndexPath(original, 0));
        }
        Files.deleteIfExists(original.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE)); // it was a crash
        try (UnifiedLog log = UnifiedLog.open(original, compacted().build(), env.environment())) {
            assertThat(readAll(log, 0)).isEqualTo(both.get(1));
            for (Rec r : both.get(1)) {
                // The rebuilt indexes lead a fetch to the batch holding r.
                assertThat(readAll(log, r.offset()).stream()
                                .filter(x -> x.offset() >= r.offset())
                                .findFirst())
                        .contains(r);
            }
            assertThat(log.appendAsLeader(batch(env.nowMs(), "z", "1"), 1)).isEqualTo(6);
        }
        try (Stream<Path> files = Files.list(original)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".swap"));
        }
    }

    @Test
    void followerCopiesACompactedLeaderWithGaps() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = compacted().segmentMs(1).build();
        try (UnifiedLog leader = UnifiedLog.open(dir.resolve("leader"), config, env.environment());
                UnifiedLog follower = UnifiedLog.open(dir.resolve("follower"), config, env.environment())) {
            leader.appendAsLeader(batch(env.nowMs(), "a", "1", "b", "1"), 1); // 0-1
            env.advance(1);
            leader.appendAsLeader(batch(env.nowMs(), "a", "2", "b", "2"), 1); // 2-3: batch 0-1 disappears
            env.advance(1);
            leader.appendAsLeader(batch(env.nowMs(), "a", "3", "c", "1"), 2); // 4-5
            env.advance(1);
            leader.appendAsLeader(batch(env.nowMs(), "d", "1"), 2); // 6: active
            leader.compact(Long.MAX_VALUE);
            assertThat(readAll(leader, 0)).extracting(Rec::offset).containsExactly(3L, 4L, 5L, 6L);
            while (follower.logEndOffset() < leader.logEndOffset()) {
                long fetchOffset = follower.logEndOffset();
                ByteBuf fetched = Unpooled.buffer();
                leader.readInto(fetchOffset, 100, Long.MAX_VALUE, true, fetched);
                assertThat(follower.appendAsFollower(fetched, fetchOffset)).isNotEqualTo(UnifiedLog.OFFSET_MISMATCH);
                fetched.release();
            }
            assertThat(follower.logEndOffset()).isEqualTo(7);
            assertThat(readAll(follower, 0)).isEqualTo(readAll(leader, 0));
            assertThat(follower.latestLeaderEpoch()).isEqualTo(2);
            // An overlapping fetch is still refused.
            ByteBuf stale = Unpooled.buffer();
            leader.readInto(4, 1000, Long.MAX_VALUE, true, stale);
            assertThat(follower.appendAsFollower(stale, 4)).isEqualTo(UnifiedLog.OFFSET_MISMATCH);
            stale.release();
        }
        // The leader's first segment is now empty; it reopens (clean, then after a crash) unchanged.
        try (UnifiedLog leader = UnifiedLog.open(dir.resolve("leader"), config, env.environment())) {
            assertThat(leader.segmentsForTesting()[0].sizeBytes()).isZero();
            assertThat(readAll(leader, 0)).extracting(Rec::offset).containsExactly(3L, 4L, 5L, 6L);
            leader.crashForTesting();
        }
        Files.delete(dir.resolve("leader").resolve(LogLoader.RECOVERY_POINT_FILE));
        try (UnifiedLog leader = UnifiedLog.open(dir.resolve("leader"), config, env.environment())) {
            assertThat(readAll(leader, 0)).extracting(Rec::offset).containsExactly(3L, 4L, 5L, 6L);
            assertThat(leader.logEndOffset()).isEqualTo(7);
        }
    }

    @Test
    void readersRacingCompactionSeeConsistentData() throws Exception {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig config = compacted().segmentBytes(2048).build();
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            LongAdder reads = new LongAdder();
            Thread[] readers = new Thread[3];
            for (int t = 0; t < readers.length; t++) {
                long seed = t;
                readers[t] = Thread.ofPlatform().start(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    try {
                        while (!done.get()) {
                            long end = log.logEndOffset();
                            if (end == 0) {
                                continue;
                            }
                            long from = random.nextLong(end);
                            ByteBuf out = Unpooled.buffer();
                            try {
                                log.readInto(from, 4096, Long.MAX_VALUE, true, out);
                                long previous = -1;
                                for (Rec r : decode(out, from)) {
                                    // Every record is the one appended at its offset.
                                    assertThat(r.key()).isEqualTo("k" + (r.offset() % 13));
                                    assertThat(r.value()).isEqualTo("v" + r.offset());
                                    assertThat(r.offset()).isGreaterThan(previous);
                                    previous = r.offset();
                                }
                            } finally {
                                out.release();
                            }
                            reads.increment();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            long next = 0;
            int compactions = 0;
            for (int round = 0; round < 30 && failure.get() == null; round++) {
                for (int b = 0; b < 10; b++) {
                    String[] kv = new String[6];
                    for (int i = 0; i < 3; i++) {
                        kv[2 * i] = "k" + ((next + i) % 13);
                        kv[2 * i + 1] = "v" + (next + i);
                    }
                    log.appendAsLeader(batch(env.nowMs(), kv), 1);
                    next += 3;
                }
                compactions += log.compact(Long.MAX_VALUE).segmentsCleaned();
            }
            done.set(true);
            for (Thread r : readers) {
                r.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("reader failed", failure.get());
            }
            assertThat(compactions).isGreaterThan(10);
            assertThat(reads.sum()).isPositive();
            // At most one record per key survives in the sealed segments.
            long active = activeBase(log);
            List<Rec> sealed =
                    readAll(log, 0).stream().filter(r -> r.offset() < active).toList();
            assertThat(sealed.stream().map(Rec::key).distinct().count()).isEqualTo(sealed.size());
            // Replaced segments are closed after the delete delay.
            env.advance(config.fileDeleteDelayMs());
            assertThat(env.pendingTasks()).isZero();
            assertThat(Arrays.stream(log.segmentsForTesting()).allMatch(s -> s.log.isOpen()))
                    .isTrue();
        }
    }
}
