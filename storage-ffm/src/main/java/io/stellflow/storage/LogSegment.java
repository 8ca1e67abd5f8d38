package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log segment: {@code <20-digit base offset>.log} (stored batches back to back, each with
 * baseOffsetDelta = batch base offset - segment base offset and the leader epoch stamped), its
 * {@link OffsetIndex} ({@code .index}) and its {@link TimeIndex} ({@code .timeindex}); a {@code
 * .txnindex} ({@link AbortedTxnIndex}, written by the log) is deleted and renamed with them.
 *
 * <p>Thread-safety: one writer (the owning {@link UnifiedLog} under its write lock) calls {@link
 * #append}, {@link #seal}, {@link #flush}, {@link #truncateTo}, {@link #truncateAt} and {@link
 * #close}; readers may call {@link #sizeBytes}, {@link #lookup}, {@link #timeLookup}, {@link
 * #maxTimestampMs} and {@link #readFully} concurrently. {@link #sizeBytes} is a volatile published
 * after the bytes and index entries are written: every byte below it belongs to a complete batch.
 *
 * <p>Preallocation ({@link LogConfig#preallocate}): before an append that would pass the blocks
 * already reserved, the writer reserves ahead of the write's end as many bytes as the segment will
 * then hold, at least {@link #PREALLOCATE_MIN_STEP_BYTES} and at most {@link
 * #PREALLOCATE_STEP_BYTES}, in whole MiB and never past {@code segmentBytes} ({@link
 * FileAllocator#preallocate}): a segment that takes little reserves little. The file's size stays the
 * bytes written, so readers and recovery see no difference. {@link #seal} and {@link #close} give
 * the unused blocks back and restore the file's modification time (retention and compaction read it
 * after a restart); a truncation that shortens the file frees them with the cut. A crash leaves the
 * blocks of the segments that were active; they are given back when such a segment is sealed or
 * closed after the restart (whatever {@code log.preallocate} then says). No reservation takes the
 * file system below {@link #PREALLOCATE_MIN_FREE_BYTES} free (or a quarter of a smaller one): a disk
 * running full keeps its space for data and the indexes. A failed reservation (full disk, quota)
 * turns preallocation off for this segment, with one log line; the append itself decides the
 * outcome, as without preallocation.
 */
final class LogSegment {
    static final String LOG_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";
    static final String TIME_INDEX_SUFFIX = ".timeindex";
    /** Appended to every file of a segment removed by retention or truncation until it is deleted. */
    static final String DELETED_SUFFIX = ".deleted";

    /** Most bytes reserved ahead of the end ({@link LogConfig#preallocate}): 16 MiB. */
    static final int PREALLOCATE_STEP_BYTES = 16 << 20;

    /** Fewest bytes reserved ahead, and the unit of a reservation's end: 1 MiB. */
    static final int PREALLOCATE_MIN_STEP_BYTES = 1 << 20;

    /** Free space a reservation must leave: 1 GiB, or a quarter of a smaller file system. */
    static final long PREALLOCATE_MIN_FREE_BYTES = 1L << 30;

    private static final Logger LOG = LoggerFactory.getLogger(LogSegment.class);

    /** Batch header bytes up to and including maxTimestamp. */
    static final int TIME_HEADER_BYTES = RecordBatchLayout.MAX_TIMESTAMP_OFFSET + 8;

    final long baseOffset;
    final Path logFile;
    final FileChannel log;
    private final int indexIntervalBytes;
    private OffsetIndex index;
    private TimeIndex timeIndex;

    /** Committed size in bytes: readers may read [0, sizeBytes). */
    private volatile int sizeBytes;

    /**
     * Largest record timestamp in the segment (the batches' real maxima, not their headers'
     * maxTimestamp: {@link RecordTimestamps}), {@link TimeIndex#NO_TIMESTAMP} if none.
     */
    private volatile long maxTimestampMs = TimeIndex.NO_TIMESTAMP;

    /** Wall-clock ms of the last append (or the file's mtime at load); for time retention. */
    private volatile long lastAppendTimeMs;

    /** Writer-only state. */
    private int relativeOffsetOfMaxTimestamp;

    /** When the segment started, for {@code log.roll.ms}; -1 until its first append. */
    private long rollBaseMs = -1;

    private int bytesSinceIndexEntry;
    private int flushedSizeBytes;

    /** {@code log.preallocate} of the config the segment was opened with. */
    private boolean preallocateConfigured;

    /** {@code segmentBytes}: no step reserves past it (a larger single batch reserves its own end). */
    private int preallocateMaxEndBytes;

    /**
     * The log file's identity when it was opened ({@code fileKey}: device and inode): a trim by path
     * acts only on that file, never on another one under the same name.
     */
    private Object fileKey;

    /** The log file's file system, looked up at the first reservation. Writer only. */
    private FileStore fileStore;

    /**
     * Blocks below this byte are reserved: an append ending at or below it preallocates nothing.
     * {@link Long#MAX_VALUE} when preallocation is off for this segment. Writer only.
     */
    private long preallocatedEndBytes = Long.MAX_VALUE;

    /** True when blocks past the end may be reserved, to give back at seal or close. Writer only. */
    private boolean mayHoldBlocksPastEnd;

    private LogSegment(long baseOffset, Path logFile, FileChannel log, int indexIntervalBytes) {
        this.baseOffset = baseOffset;
        this.logFile = logFile;
        this.log = log;
        this.indexIntervalBytes = indexIntervalBytes;
    }

    /**
     * The segment takes appends from {@code size} (created, loaded as the last one, recovered, or
     * reactivated by a truncation): reservations start there when the config asks for them, and the
     * blocks past the end are given back at its seal or close when it reserves, or when it was
     * loaded from disk ({@code loaded}: a crashed run may have left some, whatever the config says
     * now). A new segment with preallocation off does no trim.
     */
    private void becomeActive(long size, boolean loaded) {
        mayHoldBlocksPastEnd |= loaded || preallocateConfigured;
        preallocatedEndBytes = preallocateConfigured ? size : Long.MAX_VALUE;
    }

    static String fileStem(long baseOffset) {
        return String.format("%020d", baseOffset);
    }

    static Path logPath(Path dir, long baseOffset) {
        return dir.resolve(fileStem(baseOffset) + LOG_SUFFIX);
    }

    static Path indexPath(Path dir, long baseOffset) {
        return dir.resolve(fileStem(baseOffset) + INDEX_SUFFIX);
    }

    static Path timeIndexPath(Path dir, long baseOffset) {
        return dir.resolve(fileStem(baseOffset) + TIME_INDEX_SUFFIX);
    }

    /** Creates a new empty active segment (its files must not hold data). */
    static LogSegment create(Path dir, long baseOffset, LogConfig config, long nowMs) throws IOException {
        LogSegment s = openLog(dir, baseOffset, config);
        try {
            s.log.truncate(0);
            s.createIndexes(config);
        } catch (IOException | RuntimeException e) {
            s.abandon();
            throw e;
        }
        s.sizeBytes = 0;
        s.lastAppendTimeMs = nowMs;
        s.becomeActive(0, false);
        return s;
    }

    private void createIndexes(LogConfig config) throws IOException {
        Path dir = logFile.getParent();
        index = OffsetIndex.create(indexPath(dir, baseOffset), baseOffset, config.indexMaxBytes());
        timeIndex = TimeIndex.create(timeIndexPath(dir, baseOffset), baseOffset, config.indexMaxBytes());
    }

    /**
     * Opens an existing segment whose log is trusted (clean shutdown, or below the recovery point).
     * The indexes are used only if they pass the sanity checks in {@link SegmentIndexCheck};
     * otherwise {@link #hasIndex()} is false and the caller must {@link #rebuildIndexStart} and scan.
     *
     * @param active true for the last segment: its indexes are mapped read-write, preallocated
     */
    static LogSegment openTrusted(Path dir, long baseOffset, LogConfig config, boolean active) throws IOException {
        LogSegment s = openLog(dir, baseOffset, config);
        try {
            s.loadTrusted(dir, config, active);
        } catch (IOException | RuntimeException e) {
            s.abandon();
            throw e;
        }
        if (active) {
            s.becomeActive(s.sizeBytes, true);
        }
        return s;
    }

    private void loadTrusted(Path dir, LogConfig config, boolean active) throws IOException {
        long size = log.size();
        if (size > Integer.MAX_VALUE) {
            throw new IOException("segment " + logFile + " is larger than 2 GiB: " + size + " bytes");
        }
        sizeBytes = (int) size;
        flushedSizeBytes = (int) size;
        log.position(size);
        Path indexFile = indexPath(dir, baseOffset);
        Path timeFile = timeIndexPath(dir, baseOffset);
        if (!Files.exists(indexFile) || !Files.exists(timeFile)) {
            return; // no index: caller rebuilds
        }
        OffsetIndex idx = OffsetIndex.openExisting(indexFile, baseOffset, config.indexMaxBytes(), active);
        if (idx == null) {
            return;
        }
        TimeIndex tidx = null;
        SegmentIndexCheck.Verdict verdict;
        try {
            tidx = TimeIndex.openExisting(timeFile, baseOffset, config.indexMaxBytes(), active);
            verdict = tidx == null ? null : SegmentIndexCheck.check(this, idx, tidx, indexIntervalBytes);
        } catch (IOException | RuntimeException e) {
            idx.abandon();
            if (tidx != null) {
                tidx.abandon();
            }
            throw e;
        }
        if (verdict == null) {
            idx.abandon();
            if (tidx != null) {
                tidx.abandon();
            }
            return;
        }
        index = idx;
        timeIndex = tidx;
        maxTimestampMs = verdict.maxTimestampMs();
        relativeOffsetOfMaxTimestamp = verdict.relativeOffsetOfMaxTimestamp();
        bytesSinceIndexEntry = idx.entries() == 0 ? (int) size : (int) size - idx.positionAt(idx.entries() - 1);
    }

    /** Opens the log file of an untrusted segment (unclean shutdown); the indexes are rebuilt. */
    static LogSegment openForRecovery(Path dir, long baseOffset, LogConfig config) throws IOException {
        LogSegment s = openLog(dir, baseOffset, config);
        long size = s.log.size();
        s.sizeBytes = (int) Math.min(size, Integer.MAX_VALUE);
        s.becomeActive(size, true);
        return s;
    }

    private static LogSegment openLog(Path dir, long baseOffset, LogConfig config) throws IOException {
        Path logFile = logPath(dir, baseOffset);
        FileChannel ch =
                FileChannel.open(logFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        LogSegment s = new LogSegment(baseOffset, logFile, ch, config.indexIntervalBytes());
        try {
            BasicFileAttributes attrs = Files.readAttributes(logFile, BasicFileAttributes.class);
            s.lastAppendTimeMs = attrs.lastModifiedTime().toMillis();
            s.fileKey = attrs.fileKey();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        s.preallocateConfigured = config.preallocate();
        s.preallocateMaxEndBytes = config.segmentBytes();
        return s;
    }

    boolean hasIndex() {
        return index != null;
    }

    /**
     * Starts an index rebuild: new empty preallocated offset and time indexes; the caller then calls
     * {@link #indexBatch} for every batch (see {@link Recovery}).
     */
    void rebuildIndexStart(LogConfig config) throws IOException {
        abandonIndexes();
        createIndexes(config);
        bytesSinceIndexEntry = 0;
        maxTimestampMs = TimeIndex.NO_TIMESTAMP;
        relativeOffsetOfMaxTimestamp = 0;
    }

    /** Committed size in bytes (volatile read). */
    int sizeBytes() {
        return sizeBytes;
    }

    /** Bytes known to be on the device (fsynced); writer-side diagnostics and tests. */
    int flushedSizeBytes() {
        return flushedSizeBytes;
    }

    /** Largest record timestamp in the segment, -1 when it has none (volatile read). */
    long maxTimestampMs() {
        return maxTimestampMs;
    }

    /** Wall-clock ms of the last append, or the file's mtime when loaded (volatile read). */
    long lastAppendTimeMs() {
        return lastAppendTimeMs;
    }

    /** Number of offset index entries (for tests and diagnostics). */
    int indexEntries() {
        return index.entries();
    }

    /** Number of time index entries (for tests and diagnostics). */
    int timeIndexEntries() {
        return timeIndex.entries();
    }

    /**
     * True when a run of {@code runBatches} batches totalling {@code runBytes}, the last of which
     * ends at {@code lastOffset}, can still go into this segment.
     */
    boolean fits(int runBytes, int runBatches, long lastOffset, int segmentBytes) {
        long committed = sizeBytes;
        boolean bytesOk = (committed == 0 && runBatches == 1) || committed + runBytes <= segmentBytes;
        boolean offsetsOk = lastOffset - baseOffset <= Integer.MAX_VALUE;
        // Conservative: assume every batch of the run needs an index entry. The time index has one
        // slot more than the offset index and never more entries, so it cannot fill first.
        boolean indexOk = index.remainingEntries() >= runBatches;
        return bytesOk && offsetsOk && indexOk;
    }

    /** True when this non-empty segment started {@code segmentMs} or more before {@code nowMs}. Writer only. */
    boolean isDueToRoll(long nowMs, long segmentMs) {
        return sizeBytes > 0 && rollBaseMs >= 0 && nowMs - rollBaseMs >= segmentMs;
    }

    /**
     * Sets the roll base of a segment loaded from disk (or reactivated by truncation), never later
     * than the last append: the later of its first batch's maxTimestamp and the {@code .log} file's
     * creation time (so replayed old timestamps do not roll at every restart), capped by the last
     * append time (so a future timestamp does not postpone the roll). Where the file system has no
     * creation time the JDK reports the mtime, which can only delay a roll. -1 (start at the next
     * append) when empty. Writer only.
     */
    void initRollBaseFromLog() throws IOException {
        if (sizeBytes == 0) {
            rollBaseMs = -1;
            return;
        }
        ByteBuffer hdr = ByteBuffer.allocate(TIME_HEADER_BYTES);
        readFully(hdr, 0);
        long firstTs = hdr.getLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET);
        long createdMs = Files.readAttributes(logFile, BasicFileAttributes.class)
                .creationTime()
                .toMillis();
        rollBaseMs = Math.min(Math.max(firstTs, createdMs), lastAppendTimeMs);
    }

    /**
     * Writes the already stamped batches in {@code buf[start, start + length)} at the end of the log
     * with one gather write, adds index entries, then publishes the new size. Writer only.
     *
     * @param maxTimestamps the real largest record timestamp of each batch; the batches written here
     *     are entries {@code firstBatch, firstBatch + 1, ...}
     */
    void append(ByteBuf buf, int start, int length, long nowMs, BatchMaxTimestamps maxTimestamps, int firstBatch)
            throws IOException {
        int position = sizeBytes;
        if (position + (long) length > preallocatedEndBytes) {
            preallocate(position + (long) length);
        }
        ByteBuffer[] parts = buf.nioBuffers(start, length);
        long remaining = length;
        try {
            while (remaining > 0) {
                long n = log.write(parts);
                remaining -= n;
            }
        } catch (FileSystemException | ClosedChannelException e) {
            throw e;
        } catch (IOException e) {
            // The channel's error carries no file name: name it for the operator (DISK_FULL file=).
            throw FileAllocator.failure(logFile, e.getMessage(), e);
        }
        int p = start;
        int end = start + length;
        int batch = firstBatch;
        while (p < end) {
            int size = RecordBatchLayout.LOG_OVERHEAD + buf.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            indexBatch(
                    buf.getInt(p + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET),
                    position + (p - start),
                    size,
                    maxTimestamps.get(batch++));
            p += size;
        }
        lastAppendTimeMs = nowMs;
        if (rollBaseMs < 0) {
            rollBaseMs = nowMs;
        }
        sizeBytes = position + length; // volatile: publishes the batches
    }

    /**
     * Where a reservation for an append ending at {@code endBytes} ends: {@code endBytes} plus as
     * many bytes as that (at least {@link #PREALLOCATE_MIN_STEP_BYTES}, at most {@link
     * #PREALLOCATE_STEP_BYTES}), rounded down to whole MiB but never below the MiB that holds {@code
     * endBytes}, capped by {@code maxEndBytes} and never below {@code endBytes}.
     */
    static long reservationEnd(long endBytes, long maxEndBytes) {
        long mib = PREALLOCATE_MIN_STEP_BYTES;
        long ahead = Math.min(PREALLOCATE_STEP_BYTES, Math.max(mib, endBytes));
        long end = Math.max((endBytes + mib - 1) / mib * mib, (endBytes + ahead) / mib * mib);
        return Math.max(endBytes, Math.min(end, maxEndBytes));
    }

    /**
     * Reserves blocks from {@link #preallocatedEndBytes} to {@link #reservationEnd}. A failure turns
     * preallocation off for this segment (logged once); the append goes on. Writer only (a segment
     * renamed for deletion reserves nothing, {@link #renameForDeletion}).
     */
    private void preallocate(long endBytes) {
        long target = reservationEnd(endBytes, preallocateMaxEndBytes);
        try {
            if (!leavesFreeSpace(target - preallocatedEndBytes)) {
                preallocatedEndBytes = target; // this step goes without; the next one looks again
                return;
            }
            if (FileAllocator.preallocate(logFile, preallocatedEndBytes, target - preallocatedEndBytes)) {
                preallocatedEndBytes = target;
                return;
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "log.preallocate: could not reserve {} bytes of {} ({}); appending without preallocation",
                    target - preallocatedEndBytes,
                    logFile,
                    e.getMessage());
        }
        preallocatedEndBytes = Long.MAX_VALUE;
    }

    /**
     * True when reserving {@code lengthBytes} leaves the file system at least {@link
     * #PREALLOCATE_MIN_FREE_BYTES}, or a quarter of its size if that is less: a disk running full
     * keeps its space for data and for the indexes a roll or a recovery needs, not for reservations.
     */
    private boolean leavesFreeSpace(long lengthBytes) throws IOException {
        if (fileStore == null) {
            fileStore = Files.getFileStore(logFile);
        }
        long floor = Math.min(PREALLOCATE_MIN_FREE_BYTES, fileStore.getTotalSpace() / 4);
        return fileStore.getUsableSpace() - lengthBytes >= floor;
    }

    /**
     * Gives back blocks reserved past the end ({@link FileAllocator#trimPastSize} at the file's
     * current size: no byte is cut), then restores the modification time the truncation call
     * changed. Only on the file this segment opened (same device and inode: after a failed truncation
     * another file may hold its name).
     * Errors are logged, not thrown: the blocks are then given back with the segment's deletion.
     * Writer only.
     */
    private void trimPreallocation() {
        if (!mayHoldBlocksPastEnd) {
            return;
        }
        mayHoldBlocksPastEnd = false;
        try {
            BasicFileAttributes attrs = Files.readAttributes(logFile, BasicFileAttributes.class);
            if (fileKey == null || !fileKey.equals(attrs.fileKey())) {
                return;
            }
            if (FileAllocator.trimPastSize(logFile, attrs.size())) {
                Files.setLastModifiedTime(logFile, attrs.lastModifiedTime());
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "log.preallocate: could not give back the blocks past the end of {} ({})", logFile, e.getMessage());
        }
    }

    /**
     * Applies the index interval rule to one batch at {@code position}: tracks the max timestamp and,
     * at each offset index entry, adds a time index entry if the max grew. Writer only.
     *
     * @param batchMaxTimestampMs the batch's real largest record timestamp (never its header's
     *     maxTimestamp alone, decision 9.s of {@code docs/spec/wire-protocol.md})
     */
    void indexBatch(int relativeOffset, int position, int sizeInBytes, long batchMaxTimestampMs) {
        if (batchMaxTimestampMs > maxTimestampMs) {
            relativeOffsetOfMaxTimestamp = relativeOffset;
            maxTimestampMs = batchMaxTimestampMs;
        }
        if (bytesSinceIndexEntry >= indexIntervalBytes && !index.isFull()) {
            index.append(relativeOffset, position);
            if (timeIndex.entries() < index.entries()) {
                timeIndex.maybeAppend(maxTimestampMs, relativeOffsetOfMaxTimestamp);
            }
            bytesSinceIndexEntry = 0;
        }
        bytesSinceIndexEntry += sizeInBytes;
    }

    /** Log position from which to scan for {@code targetOffset}. Safe for concurrent readers. */
    int lookup(long targetOffset) throws IOException {
        return index.lookup(targetOffset);
    }

    /**
     * Log position from which to scan for the first record with timestamp &gt;= targetMs: no batch
     * before it can hold one. Safe for concurrent readers.
     */
    int timeLookup(long targetMs) throws IOException {
        return index.lookup(timeIndex.lookup(targetMs));
    }

    /** Reads exactly {@code dst.remaining()} bytes at {@code position}. Safe for concurrent readers. */
    void readFully(ByteBuffer dst, long position) throws IOException {
        long p = position;
        while (dst.hasRemaining()) {
            int n = log.read(dst, p);
            if (n < 0) {
                throw new EOFException("unexpected end of " + logFile + " at position " + p);
            }
            p += n;
        }
    }

    /**
     * The real largest record timestamp of the {@code size}-byte batch at {@code position} ({@link
     * RecordTimestamps}); reads the batch whole. Off the append path (checks, truncation). Safe for
     * concurrent readers.
     */
    long batchMaxTimestampMs(int position, int size) throws IOException {
        if (size < RecordBatchLayout.HEADER_SIZE) {
            throw new IOException("batch of " + size + " bytes at " + logFile + ":" + position);
        }
        ByteBuffer batch = ByteBuffer.allocate(size);
        readFully(batch, position);
        return RecordTimestamps.maxOf(batch, 0, size);
    }

    /** Cuts the log at {@code sizeBytes} (recovery or a failed write). Writer only. */
    void truncateTo(int newSizeBytes) throws IOException {
        log.truncate(newSizeBytes);
        log.position(newSizeBytes);
        sizeBytes = newSizeBytes;
        if (preallocatedEndBytes != Long.MAX_VALUE) {
            preallocatedEndBytes = newSizeBytes; // a shorter file lost its blocks past the cut
        }
        flushedSizeBytes = Math.min(flushedSizeBytes, newSizeBytes);
    }

    /** Where a truncation cuts the log: the first batch to remove. */
    record Cut(int position, long baseOffset) {}

    /**
     * The first batch holding an offset &gt;= {@code offset}, or null when there is none. Read-only;
     * writer side (readers would race with {@link #truncateAt}).
     */
    Cut findCut(long offset) throws IOException {
        int end = sizeBytes;
        ByteBuffer hdr = ByteBuffer.allocate(TIME_HEADER_BYTES);
        int pos = index.lookup(offset);
        while (pos < end) {
            hdr.clear();
            readFully(hdr, pos);
            long base = baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            long last = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            if (last >= offset) {
                return new Cut(pos, base);
            }
            pos += RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
        }
        return null;
    }

    /**
     * Cuts the log at {@code position} (a batch start, or the size to keep everything), drops the
     * index entries past the cut, recomputes the max timestamp, and leaves both indexes mapped
     * read-write: this segment becomes the active one. Writer only.
     *
     * @param cutBaseOffset base offset of the batch at {@code position}, or -1 when nothing is cut
     */
    void truncateAt(int position, long cutBaseOffset) throws IOException {
        int keepOffsetEntries = index.entriesBelowPosition(position);
        long keepBelowRel = cutBaseOffset < 0 ? Long.MAX_VALUE : cutBaseOffset - baseOffset;
        // Cap the time index at the offset index's count: keeps "time entries <= offset entries",
        // which guarantees the final entry of seal/close a free slot. Fewer entries only make
        // lookups start earlier; they stay correct.
        int keepTimeEntries = Math.min(timeIndex.entriesBelowRelativeOffset(keepBelowRel), keepOffsetEntries);
        index.truncateToEntries(keepOffsetEntries);
        timeIndex.truncateToEntries(keepTimeEntries);
        truncateTo(position);
        becomeActive(position, false);
        bytesSinceIndexEntry = keepOffsetEntries == 0 ? position : position - index.positionAt(keepOffsetEntries - 1);
        recomputeMaxTimestamp(ByteBuffer.allocate(TIME_HEADER_BYTES));
        initRollBaseFromLog();
    }

    /**
     * Max timestamp after a truncation: the last time entry, then a walk of the batches after it
     * (each read whole for its records' real maximum).
     */
    private void recomputeMaxTimestamp(ByteBuffer hdr) throws IOException {
        int n = timeIndex.entries();
        long max = TimeIndex.NO_TIMESTAMP;
        int relOfMax = 0;
        int pos = 0;
        if (n > 0) {
            max = timeIndex.timestampAt(n - 1);
            relOfMax = timeIndex.relativeOffsetAt(n - 1);
            pos = index.lookup(baseOffset + relOfMax);
        }
        int end = sizeBytes;
        while (pos < end) {
            hdr.clear();
            readFully(hdr, pos);
            int size = RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
            long ts = batchMaxTimestampMs(pos, size);
            if (ts > max) {
                max = ts;
                relOfMax = hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            }
            pos += size;
        }
        maxTimestampMs = max;
        relativeOffsetOfMaxTimestamp = relOfMax;
    }

    /** Marks the recovered size as committed and positions the writer at the end. Writer only. */
    void recovered(int validSizeBytes) throws IOException {
        log.position(validSizeBytes);
        sizeBytes = validSizeBytes;
    }

    /** fsyncs the log (if it changed since the last flush) and the indexes. Writer only. */
    void flush() throws IOException {
        int size = sizeBytes;
        if (size != flushedSizeBytes) {
            log.force(true);
            flushedSizeBytes = size;
        }
        index.flush();
        timeIndex.flush();
    }

    /** Adds the final time index entry (the segment's max timestamp) if it is missing. */
    private void appendFinalTimeEntry() {
        if (timeIndex != null && timeIndex.isWritable()) {
            timeIndex.appendOrReplaceLast(maxTimestampMs, relativeOffsetOfMaxTimestamp);
        }
    }

    /**
     * Seals on roll: blocks reserved past the end given back, final time entry, both indexes trimmed
     * and remapped read-only. Writer only.
     */
    void seal() throws IOException {
        trimPreallocation();
        appendFinalTimeEntry();
        index.seal();
        timeIndex.seal();
    }

    /** Closes the indexes (final time entry, trimming them) and the log channel. */
    void close() throws IOException {
        try {
            trimPreallocation();
            appendFinalTimeEntry();
            if (index != null) {
                index.close();
            }
            if (timeIndex != null) {
                timeIndex.close();
            }
        } finally {
            log.close();
        }
    }

    private void abandonIndexes() {
        if (index != null) {
            index.abandon();
        }
        if (timeIndex != null) {
            timeIndex.abandon();
        }
    }

    /** Simulates a crash: unmaps and closes without trimming or flushing. Tests only. */
    void abandon() throws IOException {
        abandonIndexes();
        log.close();
    }

    /** Closes and deletes all files now (recovery dropping segments after a corrupt one). */
    void delete() throws IOException {
        abandon();
        Path dir = logFile.getParent();
        Files.deleteIfExists(logFile);
        Files.deleteIfExists(indexPath(dir, baseOffset));
        Files.deleteIfExists(timeIndexPath(dir, baseOffset));
        Files.deleteIfExists(AbortedTxnIndex.path(dir, baseOffset));
    }

    /**
     * First step of a delayed deletion: renames the files to {@code <name>.deleted} (readers holding
     * this segment keep reading through the open channel). Writer only.
     */
    void renameForDeletion() throws IOException {
        mayHoldBlocksPastEnd = false; // the blocks go with the file; nothing is reserved by its old name
        preallocatedEndBytes = Long.MAX_VALUE;
        Path dir = logFile.getParent();
        for (Path f : new Path[] {
            logFile, indexPath(dir, baseOffset), timeIndexPath(dir, baseOffset), AbortedTxnIndex.path(dir, baseOffset)
        }) {
            if (Files.exists(f)) {
                Path target = f.resolveSibling(f.getFileName() + DELETED_SUFFIX);
                Files.move(f, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
        }
    }

    /** Second step: unmaps, closes and deletes the renamed files. Any thread, once. */
    void deleteRenamed() throws IOException {
        abandon();
        Path dir = logFile.getParent();
        for (Path f : new Path[] {
            logFile, indexPath(dir, baseOffset), timeIndexPath(dir, baseOffset), AbortedTxnIndex.path(dir, baseOffset)
        }) {
            Files.deleteIfExists(f.resolveSibling(f.getFileName() + DELETED_SUFFIX));
        }
    }

    @Override
    public String toString() {
        return "LogSegment[" + logFile + ", size=" + sizeBytes + "]";
    }
}
