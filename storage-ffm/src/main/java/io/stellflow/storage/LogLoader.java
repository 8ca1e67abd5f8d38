package io.stellflow.storage;

import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a partition directory: finds the segments, decides which ones to trust, recovers the rest,
 * and loads the checkpoints ({@code recovery-point}, {@code log-start-offset}, {@code
 * leader-epoch-checkpoint}).
 *
 * <p>After a clean shutdown (marker present) every log is trusted and only indexes failing their
 * sanity checks ({@link SegmentIndexCheck}) are rebuilt. After an unclean stop the segments below
 * the one holding the recovery point are trusted the same way (they were fsynced before the
 * recovery point was checkpointed); that segment and all later ones are validated batch by batch
 * ({@link Recovery}: CRC-32C, lengths, offsets increasing and below the next segment's base) and
 * their indexes rebuilt; such an open reports once to {@link LogMetrics#logRecovered} (segments
 * scanned, bytes removed, segments quarantined). At the first invalid byte the log ends, and what
 * follows is either a torn tail (cut) or corruption (moved to a quarantine directory, {@link
 * SegmentQuarantine}, reported to {@link LogMetrics#logQuarantined}); {@link #endsLog} defines the
 * two. A trusted segment whose index is rebuilt is checked the same way (lengths and offsets, no
 * CRC) and any invalid byte in it is corruption. A missing or corrupt checkpoint never loses data: a
 * bad recovery point means "recover everything", a bad log start offset means "the first segment's
 * base", a bad epoch file is rebuilt from the batch headers.
 *
 * <p>Offsets are never handed out twice: recovery never moves the log end offset below the base
 * offset of a segment file it keeps. A segment's base proves that every offset below it was
 * handed out (and may have been read); so when batches below a kept segment were lost (an empty
 * last segment above a lost tail or a lost segment), the log end offset stays at that segment's base
 * and the lost offsets stay a gap, as compaction leaves (a read inside it returns the next batch).
 * Reusing them would let a consumer that had read up to the base skip the new records silently, and
 * a compacted log legitimately ends a sealed segment below the next segment's base. Segments
 * deleted with a torn tail or moved to a quarantine directory ({@link #endsLog}) are not kept.
 *
 * <p>An interrupted compaction swap ({@link UnifiedLog#compact}) is finished first: a {@code
 * <base>.log.swap} (written and fsynced completely before it got that name) replaces {@code
 * <base>.log} and that segment's indexes are deleted so they are rebuilt; a {@code .cleaned} file
 * (the swap had not started) is deleted, which keeps the old segment.
 *
 * <p>Also deletes leftovers: indexes without a log, {@code .deleted} files of an interrupted
 * delayed deletion and checkpoint {@code .tmp} files.
 *
 * <p>Thread-safety: called only while the log is being opened, by the opening thread.
 */
final class LogLoader {
    private static final Logger LOG = LoggerFactory.getLogger(LogLoader.class);

    static final String RECOVERY_POINT_FILE = "recovery-point";
    static final String LOG_START_OFFSET_FILE = "log-start-offset";

    /** Bytes of a batch header needed to walk the log: baseOffsetDelta..lastOffsetDelta. */
    static final int WALK_HEADER_BYTES = RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET + 4;

    /** The loaded state handed to the log. */
    record Loaded(
            LogSegment[] segments,
            long logEndOffset,
            int latestLeaderEpoch,
            long logStartOffset,
            long recoveryPoint,
            LeaderEpochCache epochCache) {}

    private final Path dir;
    private final LogConfig config;
    private final long nowMs;
    private final LogMetrics metrics;
    private LeaderEpochCache cache;
    private boolean rebuildEpochs;

    /** What an unclean open's recovery did ({@link LogMetrics#logRecovered}); 0 segments = none. */
    private int segmentsRecovered;

    private long droppedBytes;
    private int segmentsQuarantined;

    private LogLoader(Path dir, LogConfig config, LogEnvironment env) {
        this.dir = dir;
        this.config = config;
        this.nowMs = env.nowMs();
        this.metrics = env.metrics();
    }

    /** Writes the {@value UnifiedLog#CLEAN_SHUTDOWN_FILE} marker durably (file and directory fsynced). */
    static void writeCleanShutdownMarker(Path dir) throws IOException {
        Path marker = dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE);
        try (FileChannel ch = FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Checkpoints.fsyncDir(dir);
    }

    static Loaded load(Path dir, LogConfig config, LogEnvironment env) throws IOException {
        return new LogLoader(dir, config, env).load();
    }

    private Loaded load() throws IOException {
        long startNanos = System.nanoTime();
        Path marker = dir.resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE);
        boolean clean = Files.exists(marker);
        finishInterruptedCompaction();
        long[] bases = listSegmentBases();
        deleteLeftovers(bases);
        if (clean) {
            // From here on a crash must be treated as unclean.
            Files.delete(marker);
            Checkpoints.fsyncDir(dir);
        }
        loadEpochCache(bases.length > 0);
        long checkpointedRecoveryPoint = readCheckpoint(RECOVERY_POINT_FILE, 0, "recovering every segment");
        List<LogSegment> loaded = new ArrayList<>();
        long logEndOffset;
        try {
            if (bases.length == 0) {
                loaded.add(LogSegment.create(dir, 0, config, nowMs));
                logEndOffset = 0;
            } else {
                int firstUntrusted = clean ? bases.length : floorIndex(bases, checkpointedRecoveryPoint);
                logEndOffset = loadSegments(bases, firstUntrusted, loaded);
            }
            for (int i = 0; i < loaded.size() - 1; i++) {
                loaded.get(i).seal();
            }
            loaded.getLast().initRollBaseFromLog();
        } catch (IOException | RuntimeException e) {
            for (LogSegment s : loaded) {
                try {
                    s.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        LogSegment[] segments = loaded.toArray(new LogSegment[0]);
        long firstBase = segments[0].baseOffset;
        long logStartOffset = readCheckpoint(LOG_START_OFFSET_FILE, firstBase, "using the first segment's base");
        logStartOffset = Math.min(Math.max(logStartOffset, firstBase), logEndOffset);
        long recoveryPoint = clean ? logEndOffset : Math.min(checkpointedRecoveryPoint, logEndOffset);
        cache.truncateFromEnd(logEndOffset);
        cache.truncateFromStart(logStartOffset);
        cache.flush();
        if (segmentsRecovered > 0) {
            metrics.logRecovered(dir, segmentsRecovered, droppedBytes, segmentsQuarantined, logEndOffset);
        }
        metrics.logLoaded(System.nanoTime() - startNanos, clean);
        return new Loaded(segments, logEndOffset, cache.latestEpoch(), logStartOffset, recoveryPoint, cache);
    }

    /** Rolls every compaction swap forward or back (see the class comment). */
    private void finishInterruptedCompaction() throws IOException {
        boolean changed = false;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + LogCleaner.CLEANED_SUFFIX)) {
            for (Path f : files) {
                LOG.info("Deleting {} of a compaction that did not reach its swap", f);
                Files.delete(f);
                changed = true;
            }
        }
        String swapSuffix = LogSegment.LOG_SUFFIX + LogCleaner.SWAP_SUFFIX;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + swapSuffix)) {
            for (Path f : files) {
                long base = parseBase(f, swapSuffix);
                if (base == NOT_A_SEGMENT_NAME) {
                    continue;
                }
                LOG.warn("Completing the interrupted compaction swap of {}", f);
                replaceWithSwap(dir, base);
                changed = true;
            }
        }
        if (changed) {
            Checkpoints.fsyncDir(dir);
        }
    }

    /** Deletes the segment's indexes and renames {@code <base>.log.swap} over {@code <base>.log}. */
    private static void replaceWithSwap(Path dir, long base) throws IOException {
        Path log = LogSegment.logPath(dir, base);
        Files.deleteIfExists(LogSegment.indexPath(dir, base));
        Files.deleteIfExists(LogSegment.timeIndexPath(dir, base));
        Files.move(
                log.resolveSibling(log.getFileName() + LogCleaner.SWAP_SUFFIX),
                log,
                StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Second half of a compaction swap, after the commit point: replaces the log with its {@code
     * .swap} file and opens it as a sealed segment with rebuilt indexes. Called under the log's
     * write lock.
     */
    static LogSegment completeSwap(Path dir, long base, LogConfig config) throws IOException {
        replaceWithSwap(dir, base);
        Checkpoints.fsyncDir(dir);
        LogSegment s = LogSegment.openTrusted(dir, base, config, false);
        try {
            s.rebuildIndexStart(config);
            Recovery.recoverSegment(s, base, false, Recovery.BatchEpochs.IGNORE);
            s.seal();
        } catch (IOException | RuntimeException e) {
            s.abandon();
            throw e;
        }
        return s;
    }

    private void loadEpochCache(boolean hasSegments) throws IOException {
        try {
            cache = LeaderEpochCache.load(dir);
            rebuildEpochs = hasSegments && !LeaderEpochCache.exists(dir);
        } catch (CorruptCheckpointException e) {
            LOG.warn("{}; rebuilding it from the batch headers", e.getMessage());
            cache = LeaderEpochCache.empty(dir);
            rebuildEpochs = true;
        }
        if (rebuildEpochs) {
            cache.markDirty();
        }
    }

    private long readCheckpoint(String name, long missing, String fallback) throws IOException {
        try {
            return Checkpoints.readOffset(dir.resolve(name), missing);
        } catch (CorruptCheckpointException e) {
            LOG.warn("{}; {}", e.getMessage(), fallback);
            return missing;
        }
    }

    /** Index of the last base &lt;= offset (0 when none). */
    private static int floorIndex(long[] bases, long offset) {
        int found = 0;
        for (int i = 0; i < bases.length && bases[i] <= offset; i++) {
            found = i;
        }
        return found;
    }

    /**
     * Opens segments {@code [0, firstUntrusted)} as trusted and recovers the rest. Returns the log
     * end offset. Stops at a quarantine ({@link #endsLog}): later segments are gone from the log.
     */
    private long loadSegments(long[] bases, int firstUntrusted, List<LogSegment> loaded) throws IOException {
        int trustedCount = Math.min(firstUntrusted, bases.length);
        for (int i = 0; i < trustedCount; i++) {
            boolean active = i == bases.length - 1;
            LogSegment s = LogSegment.openTrusted(dir, bases[i], config, active);
            loaded.add(s);
            if (!s.hasIndex()) {
                LOG.warn("Offset or time index of {} missing or inconsistent, rebuilding both from the log", s.logFile);
                s.rebuildIndexStart(config);
                Recovery.Scanned r =
                        Recovery.scan(s, bases[i], nextBase(bases, i), false, Recovery.BatchEpochs.IGNORE, false);
                metrics.indexRebuilt();
                // A trusted log was fsynced (or closed cleanly): invalid bytes in it are corruption.
                if (endsLog(r, s, bases, i, true)) {
                    if (rebuildEpochs) {
                        walkEpochs(s);
                    }
                    return scanTailNextOffset(s);
                }
            }
            if (rebuildEpochs && !walkEpochs(s)) {
                distrust(s, loaded);
                trustedCount = i;
                break;
            }
        }
        if (trustedCount == bases.length) {
            long next = walkTail(loaded.getLast());
            if (next != UNWALKABLE) {
                return next;
            }
            distrust(loaded.getLast(), loaded);
            trustedCount--;
        }
        LOG.info(
                "No clean shutdown marker in {}, recovering {} of {} segment(s) from base offset {}",
                dir,
                bases.length - trustedCount,
                bases.length,
                bases[trustedCount]);
        // The cache may hold epochs of batches recovery is about to drop; the scan re-adds the rest.
        cache.truncateFromEnd(bases[trustedCount]);
        long next = bases[trustedCount];
        int lastWithBytes = lastSegmentWithBytes(bases);
        for (int i = trustedCount; i < bases.length; i++) {
            LogSegment s = LogSegment.openForRecovery(dir, bases[i], config);
            loaded.add(s);
            s.rebuildIndexStart(config);
            boolean laterData = lastWithBytes > i;
            Recovery.Scanned r =
                    Recovery.scan(s, Math.max(next, bases[i]), nextBase(bases, i), true, cache::assign, !laterData);
            metrics.indexRebuilt();
            segmentsRecovered++;
            next = r.nextOffset();
            if (endsLog(r, s, bases, i, laterData)) {
                break;
            }
        }
        return next;
    }

    /**
     * Ends the recovery of segment {@code i}: nothing to do when it is valid to its end. Otherwise
     * the invalid bytes are either a torn tail or corruption. A <b>torn tail</b> is what an
     * unclean stop leaves at the end of the log: invalid bytes (a partial header, a batch running
     * past the end of the file, a CRC that does not match what was only partly written) with no whole
     * valid batch after them in that segment and no bytes in any later segment; it is cut (a plain
     * truncation, the bytes are dropped), and empty later segments are deleted. Anything else is
     * <b>corruption</b> (invalid bytes followed by valid data, or in a trusted segment): the tail and
     * every later segment are moved to a quarantine directory ({@link SegmentQuarantine}), then the
     * segment is cut. Returns true when the log ends with this segment.
     */
    private boolean endsLog(Recovery.Scanned r, LogSegment s, long[] bases, int i, boolean corruptUnlessValid)
            throws IOException {
        if (!r.hasInvalidTail()) {
            Recovery.cut(s, r);
            return false;
        }
        long[] later = Arrays.copyOfRange(bases, i + 1, bases.length);
        if (!corruptUnlessValid && r.validBatchAfter() == Recovery.NONE_AFTER) {
            Recovery.cut(s, r);
            droppedBytes += r.invalidBytes();
            for (long base : later) {
                LOG.warn("Recovery of {}: deleting empty segment {} after the truncated one", dir, base);
                LogSegment.openForRecovery(dir, base, config).delete();
            }
            return true;
        }
        String reason = r.reason() == null ? "segment larger than 2 GiB" : r.reason();
        if (r.validBatchAfter() != Recovery.NONE_AFTER) {
            reason += ", valid batch at position " + r.validBatchAfter();
        }
        Quarantined q = SegmentQuarantine.move(dir, nowMs, s, r.validBytes(), reason, later);
        s.truncateTo(r.validBytes());
        LOG.warn(
                "Recovery of {}: invalid data in {} at position {} ({}); moved {} bytes of {} segment(s) to {}",
                dir,
                s.logFile,
                r.validBytes(),
                reason,
                q.bytes(),
                q.segments(),
                q.quarantineDir());
        droppedBytes += q.bytes();
        segmentsQuarantined += later.length;
        metrics.logQuarantined(q);
        return true;
    }

    /** The base offset of the segment after {@code bases[i]}, or {@link Recovery#NO_NEXT_SEGMENT}. */
    private static long nextBase(long[] bases, int i) {
        return i + 1 < bases.length ? bases[i + 1] : Recovery.NO_NEXT_SEGMENT;
    }

    /** Index of the last segment whose log file is not empty, -1 when all are. */
    private int lastSegmentWithBytes(long[] bases) throws IOException {
        for (int j = bases.length - 1; j >= 0; j--) {
            if (Files.size(LogSegment.logPath(dir, bases[j])) > 0) {
                return j;
            }
        }
        return -1;
    }

    /**
     * A trusted segment whose batch headers do not chain (a length below a batch's minimum or past
     * the end of the file, or offsets that do not increase from the segment base, {@link
     * #nextOffsetAfter}: its bytes changed after they were fsynced) is not trusted after all: it
     * is closed and recovered with the segments after it, like those above the recovery point.
     * Without this the walks would loop forever on a zero or negative length (found by {@code
     * RecoveryFuzzTest}). The caller recovers from {@code s} on.
     */
    private void distrust(LogSegment s, List<LogSegment> loaded) throws IOException {
        LOG.warn(
                "Batch headers of {} do not chain although the segment is trusted (clean shutdown or below the"
                        + " recovery point); recovering it",
                s.logFile);
        loaded.remove(s);
        s.close();
    }

    /** What {@link #walkTail} returns for a segment whose batch headers do not chain. */
    private static final long UNWALKABLE = -1;

    /**
     * Next offset of a trusted segment, walking from its last index entry.
     *
     * @throws IOException also when the batch headers from there do not chain to the end of the file
     */
    static long scanTailNextOffset(LogSegment s) throws IOException {
        long next = walkTail(s);
        if (next == UNWALKABLE) {
            throw new IOException("batch headers of " + s.logFile + " do not chain to its end (" + s.sizeBytes()
                    + " bytes) from its last index entry");
        }
        return next;
    }

    /** {@link #scanTailNextOffset}, or {@link #UNWALKABLE}. */
    private static long walkTail(LogSegment s) throws IOException {
        int end = s.sizeBytes();
        int pos = s.lookup(Long.MAX_VALUE);
        long next = s.baseOffset;
        ByteBuffer hdr = ByteBuffer.allocate(WALK_HEADER_BYTES);
        while (pos < end) {
            int batchBytes = nextBatchBytes(s, hdr, pos, end);
            if (batchBytes < 0) {
                return UNWALKABLE;
            }
            next = nextOffsetAfter(s, hdr, next);
            if (next == UNWALKABLE) {
                return UNWALKABLE;
            }
            pos += batchBytes;
        }
        return next;
    }

    /**
     * The offset after the batch whose walk header is in {@code hdr}, or {@link #UNWALKABLE} when
     * its offsets do not chain: a base offset below {@code minBase} (the previous batch's next offset,
     * or the segment base), a negative {@code lastOffsetDelta}, or a last offset past {@code
     * segmentBase + Integer.MAX_VALUE}. The bounds {@link Recovery} checks, without the CRC: a
     * trusted header's offsets become the log end offset, and a damaged one made it negative (found
     * by {@code RecoveryFuzzTest}).
     */
    private static long nextOffsetAfter(LogSegment s, ByteBuffer hdr, long minBase) {
        long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
        int lastOffsetDelta = hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
        long last = base + lastOffsetDelta;
        if (base < minBase || lastOffsetDelta < 0 || last > s.baseOffset + Integer.MAX_VALUE) {
            return UNWALKABLE;
        }
        return last + 1;
    }

    /**
     * Re-adds every batch's epoch of a trusted segment to the cache (a missing or corrupt file).
     *
     * @return false when the batch headers do not chain to the end of the file ({@link
     *     #nextBatchBytes}, {@link #nextOffsetAfter})
     */
    private boolean walkEpochs(LogSegment s) throws IOException {
        int end = s.sizeBytes();
        int pos = 0;
        long next = s.baseOffset;
        ByteBuffer hdr = ByteBuffer.allocate(WALK_HEADER_BYTES);
        while (pos < end) {
            int batchBytes = nextBatchBytes(s, hdr, pos, end);
            if (batchBytes < 0) {
                return false;
            }
            long batchNext = nextOffsetAfter(s, hdr, next);
            if (batchNext == UNWALKABLE) {
                return false;
            }
            cache.assign(
                    hdr.getInt(RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET),
                    s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET));
            next = batchNext;
            pos += batchBytes;
        }
        return true;
    }

    /**
     * Reads the walk header of the batch at {@code pos} into {@code hdr}; returns the batch's size
     * in bytes, or -1 when it does not fit in {@code [pos, end)} or its length is below a batch's
     * minimum.
     */
    private static int nextBatchBytes(LogSegment s, ByteBuffer hdr, int pos, int end) throws IOException {
        if (end - pos < WALK_HEADER_BYTES) {
            return -1;
        }
        hdr.clear();
        s.readFully(hdr, pos);
        int batchLength = hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
        if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                || batchLength > end - pos - RecordBatchLayout.LOG_OVERHEAD) {
            return -1;
        }
        return RecordBatchLayout.LOG_OVERHEAD + batchLength;
    }

    private long[] listSegmentBases() throws IOException {
        List<Long> bases = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + LogSegment.LOG_SUFFIX)) {
            for (Path f : files) {
                long base = parseBase(f, LogSegment.LOG_SUFFIX);
                if (base != NOT_A_SEGMENT_NAME) {
                    bases.add(base);
                }
            }
        }
        long[] sorted = new long[bases.size()];
        for (int i = 0; i < sorted.length; i++) {
            sorted[i] = bases.get(i);
        }
        Arrays.sort(sorted);
        return sorted;
    }

    private void deleteLeftovers(long[] bases) throws IOException {
        for (String suffix :
                new String[] {LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX, AbortedTxnIndexLayout.SUFFIX}) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + suffix)) {
                for (Path f : files) {
                    long base = parseBase(f, suffix);
                    if (base != NOT_A_SEGMENT_NAME && Arrays.binarySearch(bases, base) < 0) {
                        LOG.warn("Deleting index {} without a log", f);
                        Files.delete(f);
                    }
                }
            }
        }
        for (String suffix : new String[] {LogSegment.DELETED_SUFFIX, Checkpoints.TMP_SUFFIX}) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + suffix)) {
                for (Path f : files) {
                    LOG.info("Deleting leftover {}", f);
                    Files.delete(f);
                }
            }
        }
    }

    /** {@link #parseBase}: the name is not a 20-digit base offset and the suffix (not a segment file). */
    static final long NOT_A_SEGMENT_NAME = -1L;

    /** The base offset (&gt;= 0) a segment file's name gives, or {@link #NOT_A_SEGMENT_NAME}. */
    static long parseBase(Path file, String suffix) {
        String name = file.getFileName().toString();
        String stem = name.substring(0, name.length() - suffix.length());
        if (stem.length() != 20) {
            return NOT_A_SEGMENT_NAME;
        }
        for (int i = 0; i < stem.length(); i++) {
            if (stem.charAt(i) < '0' || stem.charAt(i) > '9') {
                return NOT_A_SEGMENT_NAME;
            }
        }
        return Long.parseLong(stem);
    }
}
