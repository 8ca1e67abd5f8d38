package io.stellflow.storage;

import static io.stellflow.protocol.fuzz.Oracle.check;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Fuzz target: {@link UnifiedLog#open} (the {@link LogLoader} and {@link Recovery} scan) over a
 * partition directory written by {@link UnifiedLog} ({@link LogImage}) whose {@code .log}, {@code
 * .index}, {@code .timeindex} and checkpoint files were mutated as the input describes ({@link
 * DirMutation}: flipped bytes, truncations, zeroed ranges, duplicated and dropped batches, deleted
 * files, leftovers of interrupted operations). The files go to a tmpfs ({@code /dev/shm}, or {@code
 * -Dstellflow.fuzz.dir}).
 *
 * <p>Which segments the loader trusts (not scanned: after a clean shutdown, or below the
 * checkpointed recovery point, documented in {@link LogLoader}) is computed from the mutated files
 * the same way. A finding (crash) is:
 *
 * <ul>
 *   <li>always: any exception from {@code open} (the harness does no real I/O that can fail), an
 *       open or check that takes longer than {@value #TIMEOUT_SECONDS} s (a hang), a log start
 *       offset above the log end offset, an append after recovery that fails or does not read back,
 *       a clean close and reopen that changes the log end or start offset;
 *   <li>when no trusted segment's files changed (the recovery scan's promise): a batch left in the
 *       log that fails {@link RecordBatchValidator#validateFetched}, offsets that do not strictly
 *       increase, a log end offset other than the last batch's last offset + 1 (the one exception
 *       below), an index that disagrees with the log (an offset lookup that does not land on the
 *       batch holding the offset, a timestamp lookup that differs from a scan of the records), any
 *       acknowledged batch stored wholly before the first changed byte of the logs (and not below
 *       the log start offset) missing or changed, a log start offset other than the first
 *       segment's base while its checkpoint is intact, a latest leader epoch other than the last
 *       batch's while the epoch checkpoint is intact (except an epoch that began inside the gap
 *       below an empty last segment, the log end offset rule below), and, when no {@code .log} changed at all, any
 *       difference from the acknowledged log.
 * </ul>
 *
 * <p>The log end offset rule: offsets are never handed out twice, so recovery never moves the log
 * end offset below the base offset of a segment file it keeps. When the last segment is empty and
 * its base lies above the last batch kept + 1 (batches or a segment below it were lost), the log end
 * offset is that base and the lost offsets are a gap, as compaction leaves; an existing base proves
 * the offsets below it were handed out (and maybe read), and a compacted log has such an empty
 * active segment legitimately. Exactly these two log end offsets are allowed: last batch + 1, or
 * the base of an empty last segment above it; any other gap is a finding.
 *
 * <p>Corruption of trusted segments is not detected at open by design (as Kafka: they were fsynced
 * before the recovery point was checkpointed); for those inputs only the first group holds.
 */
final class RecoveryFuzzTarget {
    static final int TIMEOUT_SECONDS = 30;

    private static final ExecutorService WORKER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "recovery-fuzz");
        t.setDaemon(true);
        return t;
    });

    private static final Path ROOT = root();

    private RecoveryFuzzTarget() {}

    private static Path root() {
        String configured = System.getProperty("stellflow.fuzz.dir");
        Path shm = Path.of("/dev/shm");
        Path base = configured != null
                ? Path.of(configured)
                : Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            Path dir = Files.createTempDirectory(base, "stellflow-recovery-fuzz");
            // The last input's directory stays until the JVM exits (inputs reuse it).
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    LogImage.deleteTree(dir);
                } catch (IOException e) {
                    System.err.println("could not delete " + dir + ": " + e);
                }
            }));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void run(byte[] input) throws Exception {
        Future<?> f = WORKER.submit(() -> {
            runHere(input);
            return null;
        });
        try {
            f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw (Error) e.getCause();
        } catch (TimeoutException e) {
            throw new AssertionError("recovery of the mutated directory did not finish in " + TIMEOUT_SECONDS + " s");
        }
    }

    private static void runHere(byte[] input) throws IOException {
        LogImage image = DirMutation.image(input);
        Map<String, byte[]> files = DirMutation.apply(input);
        Path dir = ROOT.resolve("p");
        try {
            writeExactly(dir, files);
            checkRecovered(dir, image, files);
        } finally {
            deleteQuarantines();
        }
    }

    /**
     * Makes {@code dir} hold exactly {@code files}. The directory of the last input is reused: its
     * files are overwritten and only the names this input lacks are deleted, which saves a delete
     * and a create per file (file system calls were the target's main cost, measured with JFR).
     */
    private static void writeExactly(Path dir, Map<String, byte[]> files) throws IOException {
        Files.createDirectories(dir);
        try (DirectoryStream<Path> present = Files.newDirectoryStream(dir)) {
            for (Path p : present) {
                if (!files.containsKey(p.getFileName().toString())) {
                    LogImage.deleteTree(p);
                }
            }
        }
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            Files.write(dir.resolve(f.getKey()), f.getValue()); // CREATE, TRUNCATE_EXISTING, WRITE
        }
    }

    /** Recovery moves corrupt tails beside the partition ({@link SegmentQuarantine}): one per input. */
    private static void deleteQuarantines() throws IOException {
        try (DirectoryStream<Path> q = Files.newDirectoryStream(ROOT, "p.*" + SegmentQuarantine.DIR_SUFFIX)) {
            for (Path p : q) {
                LogImage.deleteTree(p);
            }
        }
    }

    private static void checkRecovered(Path dir, LogImage image, Map<String, byte[]> files) throws IOException {
        List<Long> bases = effectiveBases(image, files);
        boolean strong = trustedFilesUnchanged(dir, image, files, bases);
        List<LogImage.Batch> intact = intactBatches(image, files);
        LogEnvironment env = new ManualEnvironment(LogImage.NOW_MS).environment();
        long leo;
        long start;
        long appendedAt;
        List<Stored> before;
        try (UnifiedLog log = UnifiedLog.open(dir, LogImage.CONFIG, env)) {
            start = log.logStartOffset();
            leo = log.logEndOffset();
            check(start >= 0 && start <= leo, "log start offset " + start + " outside [0, " + leo + "]");
            before = strong ? strongChecks(log, image, files, bases, intact) : null;
            ByteBuf batch = LogImage.batch(3);
            try {
                appendedAt = log.appendAsLeader(batch, 9);
            } finally {
                batch.release();
            }
            check(appendedAt == leo, "append after recovery at " + appendedAt + ", log end offset was " + leo);
            check(log.logEndOffset() == leo + 4, "log end offset " + log.logEndOffset() + " after a 4-record append");
            checkAppended(log, appendedAt);
        }
        try (UnifiedLog log = UnifiedLog.open(dir, LogImage.CONFIG, env)) {
            check(log.logEndOffset() == leo + 4, "reopen changed the log end offset to " + log.logEndOffset());
            check(log.logStartOffset() == start, "reopen changed the log start offset to " + log.logStartOffset());
            checkAppended(log, appendedAt);
            if (before != null) {
                List<Stored> after = walk(log);
                check(
                        after.size() == before.size() + 1 && sameBatches(after.subList(0, before.size()), before),
                        "a clean close and reopen changed the recovered batches");
            }
        }
    }

    /** One batch as read back: offsets, position and stored bytes. */
    private record Stored(long base, long last, long position, byte[] bytes) {}

    private static List<Stored> walk(UnifiedLog log) throws IOException {
        List<Stored> out = new ArrayList<>();
        log.read(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true, (ch, position, size, base, last) -> {
            ByteBuffer b = ByteBuffer.allocate(size);
            while (b.hasRemaining()) {
                if (ch.read(b, position + b.position()) < 0) {
                    throw new IOException("end of segment in a batch");
                }
            }
            out.add(new Stored(base, last, position, b.array()));
        });
        return out;
    }

    private static boolean sameBatches(List<Stored> a, List<Stored> b) {
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i).base() != b.get(i).base()
                    || !Arrays.equals(a.get(i).bytes(), b.get(i).bytes())) {
                return false;
            }
        }
        return true;
    }

    private static List<Stored> strongChecks(
            UnifiedLog log, LogImage image, Map<String, byte[]> files, List<Long> bases, List<LogImage.Batch> intact)
            throws IOException {
        List<Stored> batches = walk(log);
        long start = log.logStartOffset();
        long previousLast = -1;
        for (Stored s : batches) {
            ByteBuf b = Unpooled.wrappedBuffer(s.bytes());
            short code = RecordBatchValidator.validateFetched(b, Integer.MAX_VALUE);
            check(code == Errors.NONE, "batch at offset " + s.base() + " left in the log is " + Errors.name(code));
            check(s.base() > previousLast && s.last() >= s.base(), "offsets do not increase at " + s.base());
            previousLast = s.last();
        }
        if (!batches.isEmpty()) {
            long afterLast = batches.getLast().last() + 1;
            long leo = log.logEndOffset();
            long lastBase = lastSegmentBase(log.dir());
            boolean gapUpToEmptyLastSegment =
                    leo == lastBase && lastBase > afterLast && log.activeSegmentSizeBytes() == 0;
            check(
                    leo == afterLast || gapUpToEmptyLastSegment,
                    "log end offset " + leo + " after last batch "
                            + batches.getLast().last()
                            + " (last segment base " + lastBase + ", "
                            + log.activeSegmentSizeBytes() + " bytes)");
        }
        for (LogImage.Batch a : intact) {
            if (a.lastOffset() < start) {
                continue;
            }
            check(
                    batches.stream().anyMatch(s -> s.base() == a.baseOffset() && Arrays.equals(s.bytes(), a.bytes())),
                    "acknowledged batch at offset " + a.baseOffset() + " before the first corrupt byte was lost");
        }
        if (unchanged(image, files, LogLoader.LOG_START_OFFSET_FILE)) {
            long firstBase = bases.isEmpty() ? 0 : bases.getFirst();
            check(
                    start == Math.min(firstBase, log.logEndOffset()),
                    "log start offset " + start + " with an intact checkpoint");
        }
        boolean logsUnchanged = image.files.keySet().stream()
                        .filter(n -> n.endsWith(LogSegment.LOG_SUFFIX))
                        .allMatch(n -> unchanged(image, files, n))
                && files.keySet().stream().noneMatch(n -> n.endsWith(LogCleaner.SWAP_SUFFIX));
        if (logsUnchanged) {
            check(log.logEndOffset() == image.logEndOffset, "log end offset changed with every .log intact");
            check(
                    batches.size()
                            == image.batches.stream()
                                    .filter(a -> a.lastOffset() >= start)
                                    .count(),
                    "batch count changed with every .log intact");
        }
        if (!batches.isEmpty() && unchanged(image, files, LeaderEpochCache.FILE_NAME)) {
            int lastEpoch = Unpooled.wrappedBuffer(batches.getLast().bytes()).getInt(8);
            long lastKept = batches.getLast().last();
            // The gap rule for epochs: when the log ends at an empty last segment above lost batches,
            // the epoch cache keeps the epochs that began inside the gap (their start offsets are
            // below the log end), as it keeps the gap's offsets.
            boolean epochBeganInGap = log.logEndOffset() > lastKept + 1
                    && log.latestLeaderEpoch() > lastEpoch
                    && log.endOffsetForEpoch(lastEpoch).endOffset() > lastKept;
            check(
                    log.latestLeaderEpoch() == lastEpoch || epochBeganInGap,
                    "latest leader epoch " + log.latestLeaderEpoch() + ", last batch's " + lastEpoch);
        }
        checkIndexes(log, batches, start);
        return batches;
    }

    /** The highest base offset of the {@code <base>.log} files in {@code dir}, -1 if none. */
    private static long lastSegmentBase(Path dir) throws IOException {
        long last = -1;
        try (DirectoryStream<Path> logs = Files.newDirectoryStream(dir, "*" + LogSegment.LOG_SUFFIX)) {
            for (Path p : logs) {
                last = Math.max(last, LogLoader.parseBase(p.getFileName(), LogSegment.LOG_SUFFIX));
            }
        }
        return last;
    }

    /** Offset lookups land on the batch holding the offset; timestamp lookups agree with a scan. */
    private static void checkIndexes(UnifiedLog log, List<Stored> batches, long start) throws IOException {
        for (Stored s : batches) {
            for (long offset : new long[] {Math.max(s.base(), start), s.last()}) {
                List<Stored> first = new ArrayList<>();
                log.read(
                        offset,
                        1,
                        Long.MAX_VALUE,
                        true,
                        (ch, position, size, base, last) -> first.add(new Stored(base, last, position, null)));
                check(
                        first.size() == 1
                                && first.getFirst().base() == s.base()
                                && first.getFirst().position() == s.position(),
                        "a read at offset " + offset + " does not start at the batch holding it");
            }
        }
        ByteBuf all = Unpooled.buffer();
        try {
            log.readInto(start, Integer.MAX_VALUE, Long.MAX_VALUE, true, all);
            List<DecodedRecord> records = new ArrayList<>(RecordBatchReader.decode(all, start));
            records.removeIf(r -> r.offset() < start);
            List<Long> targets = new ArrayList<>(List.of(Long.MIN_VALUE, 0L, Long.MAX_VALUE));
            records.forEach(r -> targets.add(r.timestampMs()));
            for (long target : targets) {
                DecodedRecord expected = records.stream()
                        .filter(r -> r.timestampMs() >= target)
                        .findFirst()
                        .orElse(null);
                TimestampOffset found = log.offsetForTimestamp(target, Long.MAX_VALUE);
                check(
                        expected == null
                                ? found == null
                                : found != null
                                        && found.offset() == expected.offset()
                                        && found.timestampMs() == expected.timestampMs(),
                        "offsetForTimestamp(" + target + ") gave " + found + ", the records say "
                                + (expected == null ? null : expected.offset()));
            }
        } finally {
            all.release();
        }
    }

    private static void checkAppended(UnifiedLog log, long at) throws IOException {
        ByteBuf out = Unpooled.buffer();
        ByteBuf expected = LogImage.batch(3);
        try {
            log.readInto(at, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
            List<DecodedRecord> read = RecordBatchReader.decode(out, at);
            List<DecodedRecord> want = RecordBatchReader.decode(expected, at);
            check(read.equals(want), "the batch appended after recovery reads back as " + read);
        } finally {
            out.release();
            expected.release();
        }
    }

    private static boolean unchanged(LogImage image, Map<String, byte[]> files, String name) {
        byte[] a = image.files.get(name);
        byte[] b = files.get(name);
        return a == null ? b == null : b != null && Arrays.equals(a, b);
    }

    /** The segment's log as the loader will see it: a pending compaction swap replaces it. */
    private static byte[] effectiveLog(Map<String, byte[]> files, String logName) {
        byte[] swap = files.get(logName + LogCleaner.SWAP_SUFFIX);
        return swap != null ? swap : files.get(logName);
    }

    private static List<Long> effectiveBases(LogImage image, Map<String, byte[]> files) {
        List<Long> bases = new ArrayList<>();
        for (String name : image.files.keySet()) {
            long base = LogLoader.parseBase(Path.of(name), LogSegment.LOG_SUFFIX);
            if (name.endsWith(LogSegment.LOG_SUFFIX) && base >= 0 && effectiveLog(files, name) != null) {
                bases.add(base);
            }
        }
        return bases;
    }

    /** True when every segment the loader trusts (same rule as {@link LogLoader}) has its original files. */
    private static boolean trustedFilesUnchanged(Path dir, LogImage image, Map<String, byte[]> files, List<Long> bases)
            throws IOException {
        int trusted;
        if (files.containsKey(UnifiedLog.CLEAN_SHUTDOWN_FILE)) {
            trusted = bases.size();
        } else {
            long recoveryPoint;
            try {
                recoveryPoint = Checkpoints.readOffset(dir.resolve(LogLoader.RECOVERY_POINT_FILE), 0);
            } catch (CorruptCheckpointException e) {
                recoveryPoint = 0;
            }
            trusted = 0;
            for (int i = 0; i < bases.size() && bases.get(i) <= recoveryPoint; i++) {
                trusted = i;
            }
        }
        for (int i = 0; i < trusted; i++) {
            String stem = LogSegment.fileStem(bases.get(i));
            String log = stem + LogSegment.LOG_SUFFIX;
            if (!Arrays.equals(effectiveLog(files, log), image.files.get(log))) {
                return false;
            }
            for (String index : new String[] {stem + LogSegment.INDEX_SUFFIX, stem + LogSegment.TIME_INDEX_SUFFIX}) {
                if (files.containsKey(index) && !unchanged(image, files, index)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The acknowledged batches stored wholly before the first byte in which the logs differ. */
    private static List<LogImage.Batch> intactBatches(LogImage image, Map<String, byte[]> files) {
        List<LogImage.Batch> intact = new ArrayList<>();
        for (String name : image.files.keySet()) {
            long base = LogLoader.parseBase(Path.of(name), LogSegment.LOG_SUFFIX);
            if (!name.endsWith(LogSegment.LOG_SUFFIX) || base < 0) {
                continue;
            }
            byte[] original = image.files.get(name);
            byte[] now = effectiveLog(files, name);
            int firstDifference = now == null ? 0 : Arrays.mismatch(original, now);
            for (LogImage.Batch b : image.batchesOf(base)) {
                if (firstDifference < 0 || b.position() + b.bytes().length <= firstDifference) {
                    intact.add(b);
                }
            }
            if (firstDifference >= 0) {
                break;
            }
        }
        return intact;
    }

    static String hex(byte[] b) {
        return ByteBufUtil.hexDump(b);
    }
}
