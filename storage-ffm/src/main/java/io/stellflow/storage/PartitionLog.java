package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One partition's log: a directory of {@link Segment}s named by their 20-digit base offset.
 *
 * <p>Storage format: each stored batch is the RecordBatch (wire spec §7) as produced, with bytes 0-3
 * (baseOffsetDelta) = batch base offset - segment base offset and bytes 8-11 (partitionLeaderEpoch) =
 * the epoch passed to {@link #appendAsLeader}. Bytes 17.. (covered by the CRC) are never changed.
 * A file {@value #CLEAN_SHUTDOWN_FILE} in the directory marks a clean {@link #close}; without it,
 * {@link #open} validates every batch (CRC-32C included), truncates at the first invalid byte and
 * rebuilds the indexes.
 *
 * <p>Thread-safety: all methods may be called from any thread; appends are serialized by the log
 * (single writer at a time, a lock; {@link #flush} and {@link #close} take the same lock); reads
 * ({@link #read}, {@link #readInto}, {@link #offsetForTimestamp}) run concurrently with appends and
 * only see fully written batches: the log end offset is a volatile published after the batch bytes
 * and index entries are written. Reads racing with {@link #close} may fail with {@link
 * ClosedChannelException}.
 *
 * <p>Errors: {@link IOException} for I/O failures; after a failed append the log refuses further
 * appends (the file may hold a partial write) until it is closed and reopened, which recovers it.
 * A record set that is not a well-formed batch sequence is a caller bug: {@link
 * IllegalArgumentException}. Use after close: {@link IllegalStateException} for appends.
 *
 * <p>Durability: by default nothing is fsynced until {@link #flush} or {@link #close} (OS page
 * cache, as Kafka); {@link LogConfig#flushMessages()} / {@link LogConfig#flushMs()} make appends
 * flush after that many records / that much time since the last flush.
 */
public final class PartitionLog implements AutoCloseable {
    /** Present in the partition directory only after a clean {@link #close}. */
    public static final String CLEAN_SHUTDOWN_FILE = ".clean-shutdown";

    private static final Logger LOG = LoggerFactory.getLogger(PartitionLog.class);

    /** Bytes of a batch header needed to walk the log: baseOffsetDelta..lastOffsetDelta. */
    private static final int WALK_HEADER_BYTES = RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET + 4;

    private final Path dir;
    private final LogConfig config;
    private final ReentrantLock appendLock = new ReentrantLock();

    /** Copy-on-write, ordered by base offset; published before the LEO that needs it. */
    private volatile Segment[] segments;

    private volatile long logEndOffset;
    private volatile int latestLeaderEpoch;
    private volatile boolean closed;

    /** Guarded by appendLock. */
    private boolean failed;

    private long unflushedRecords;
    private long lastFlushNanos = System.nanoTime();

    private PartitionLog(Path dir, LogConfig config) {
        this.dir = dir;
        this.config = config;
    }

    /**
     * Opens (creating if needed) or recovers the log in {@code partitionDir}. Without a clean
     * shutdown marker every segment is validated and truncated at the first invalid byte (a WARN
     * names the file and the dropped bytes), later segments are deleted, indexes are rebuilt. With
     * the marker the logs are trusted, but any index that fails its sanity checks is rebuilt.
     */
    public static PartitionLog open(Path partitionDir, LogConfig config) throws IOException {
        Files.createDirectories(partitionDir);
        PartitionLog log = new PartitionLog(partitionDir, config);
        log.load();
        return log;
    }

    private void load() throws IOException {
        Path marker = dir.resolve(CLEAN_SHUTDOWN_FILE);
        boolean clean = Files.exists(marker);
        long[] bases = listSegmentBases();
        deleteOrphanIndexes(bases);
        if (clean) {
            // From here on a crash must be treated as unclean.
            Files.delete(marker);
            fsyncDir();
        }
        List<Segment> loaded = new ArrayList<>();
        try {
            if (bases.length == 0) {
                loaded.add(Segment.create(dir, 0, config, System.currentTimeMillis()));
                logEndOffset = 0;
                latestLeaderEpoch = -1;
            } else if (clean) {
                loadClean(bases, loaded);
            } else {
                loadUnclean(bases, loaded);
            }
            for (int i = 0; i < loaded.size() - 1; i++) {
                loaded.get(i).seal();
            }
        } catch (IOException | RuntimeException e) {
            for (Segment s : loaded) {
                try {
                    s.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        segments = loaded.toArray(new Segment[0]);
    }

    private void loadClean(long[] bases, List<Segment> loaded) throws IOException {
        for (int i = 0; i < bases.length; i++) {
            boolean active = i == bases.length - 1;
            Segment s = Segment.openTrusted(dir, bases[i], config, active);
            loaded.add(s);
            if (!s.hasIndex()) {
                LOG.warn("Offset or time index of {} missing or inconsistent, rebuilding both from the log", s.logFile);
                s.rebuildIndexStart(config);
                Recovery.recoverSegment(s, bases[i], false, Recovery.BatchEpochs.IGNORE);
            }
        }
        long[] tail = scanTail(loaded.get(loaded.size() - 1));
        logEndOffset = tail[0];
        int epoch = (int) tail[1];
        if (epoch == -1 && loaded.size() > 1) {
            epoch = (int) scanTail(loaded.get(loaded.size() - 2))[1];
        }
        latestLeaderEpoch = epoch;
    }

    private void loadUnclean(long[] bases, List<Segment> loaded) throws IOException {
        LOG.info("No clean shutdown marker in {}, recovering {} segment(s)", dir, bases.length);
        long next = bases[0];
        int epoch = -1;
        for (int i = 0; i < bases.length; i++) {
            Segment s = Segment.openForRecovery(dir, bases[i], config);
            loaded.add(s);
            s.rebuildIndexStart(config);
            Recovery.Result r = Recovery.recoverSegment(s, next, true, Recovery.BatchEpochs.IGNORE);
            next = r.nextOffset();
            if (r.lastLeaderEpoch() != -1) {
                epoch = r.lastLeaderEpoch();
            }
            if (r.droppedBytes() > 0 && i < bases.length - 1) {
                for (int j = i + 1; j < bases.length; j++) {
                    Segment later = Segment.openForRecovery(dir, bases[j], config);
                    LOG.warn(
                            "Recovery of {}: deleting segment {} ({} bytes) after the truncated one",
                            dir,
                            later.logFile,
                            later.sizeBytes());
                    later.delete();
                }
                break;
            }
        }
        logEndOffset = next;
        latestLeaderEpoch = epoch;
    }

    /** {next offset, last epoch or -1} of a trusted segment, scanning from its last index entry. */
    private static long[] scanTail(Segment s) throws IOException {
        int end = s.sizeBytes();
        int pos = s.lookup(Long.MAX_VALUE);
        long next = s.baseOffset;
        long epoch = -1;
        ByteBuffer hdr = ByteBuffer.allocate(WALK_HEADER_BYTES);
        while (pos < end) {
            hdr.clear();
            s.readFully(hdr, pos);
            long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
            next = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET) + 1;
            epoch = hdr.getInt(RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
            pos += RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
        }
        return new long[] {next, epoch};
    }

    private long[] listSegmentBases() throws IOException {
        List<Long> bases = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + Segment.LOG_SUFFIX)) {
            for (Path f : files) {
                long base = parseBase(f, Segment.LOG_SUFFIX);
                if (base >= 0) {
                    bases.add(base);
                }
            }
        }
        long[] sorted = bases.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    private void deleteOrphanIndexes(long[] bases) throws IOException {
        for (String suffix : new String[] {Segment.INDEX_SUFFIX, Segment.TIME_INDEX_SUFFIX}) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + suffix)) {
                for (Path f : files) {
                    long base = parseBase(f, suffix);
                    if (base >= 0 && Arrays.binarySearch(bases, base) < 0) {
                        LOG.warn("Deleting index {} without a log", f);
                        Files.delete(f);
                    }
                }
            }
        }
    }

    private static long parseBase(Path file, String suffix) {
        String name = file.getFileName().toString();
        String stem = name.substring(0, name.length() - suffix.length());
        if (stem.length() != 20) {
            return -1;
        }
        for (int i = 0; i < stem.length(); i++) {
            if (stem.charAt(i) < '0' || stem.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(stem);
    }

    private void fsyncDir() throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * {@code records} = a VALIDATED RecordBatchSet (readerIndex..writerIndex). Assigns consecutive
     * offsets from LEO to every record of every batch, stamps partitionLeaderEpoch, writes all
     * batches. Returns the base offset (offset of the first record).
     *
     * <p>Buffer ownership: does not release {@code records} and does not move its reader or writer
     * index, but OVERWRITES bytes 0-3 (baseOffsetDelta, now relative to the segment base) and 8-11
     * (partitionLeaderEpoch) of every batch in place. The buffer is not retained after return.
     *
     * <p>Blocks while another append, flush or close runs. May roll to a new segment before any batch
     * (segment full, index full, or offsets beyond int32 relative to the base).
     *
     * @throws IOException the write (or a policy fsync) failed: do not acknowledge; some of the
     *     batches may already be readable (as in Kafka, a retry can duplicate them); the log refuses
     *     further appends until it is closed and reopened, which recovers it
     * @throws IllegalArgumentException {@code records} is empty or not a sequence of whole batches
     * @throws IllegalStateException the log is closed
     */
    public long appendAsLeader(ByteBuf records, int leaderEpoch) throws IOException {
        int start = records.readerIndex();
        int end = records.writerIndex();
        if (start >= end) {
            throw new IllegalArgumentException("empty record set");
        }
        checkWholeBatches(records, start, end);
        appendLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            if (failed) {
                throw new IOException("log " + dir + " had a failed write; reopen it to recover");
            }
            Segment seg = segments[segments.length - 1];
            try {
                return appendLocked(records, start, end, leaderEpoch, seg);
            } catch (IOException e) {
                failed = true;
                throw e;
            }
        } finally {
            appendLock.unlock();
        }
    }

    /**
     * Checks the framing the append relies on before anything is changed, so a bad set is rejected
     * whole: whole batches back to back, batchLength and lastOffsetDelta in range. The full
     * validation (CRC, records) is the caller's (RecordBatchValidator).
     */
    private static void checkWholeBatches(ByteBuf records, int start, int end) {
        int p = start;
        while (p < end) {
            if (end - p < RecordBatchLayout.HEADER_SIZE) {
                throw new IllegalArgumentException("partial batch at " + (p - start) + " of the record set");
            }
            int batchLength = records.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            int lastOffsetDelta = records.getInt(p + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || batchLength > end - p - RecordBatchLayout.LOG_OVERHEAD
                    || lastOffsetDelta < 0) {
                throw new IllegalArgumentException("record set not validated: batch at " + (p - start)
                        + " has batchLength " + batchLength + ", lastOffsetDelta " + lastOffsetDelta);
            }
            p += RecordBatchLayout.LOG_OVERHEAD + batchLength;
        }
    }

    private long appendLocked(ByteBuf records, int start, int end, int leaderEpoch, Segment active) throws IOException {
        Segment seg = active;
        long first = logEndOffset;
        long next = first;
        int runStart = start;
        int runBytes = 0;
        int runBatches = 0;
        long recordsAppended = 0;
        int p = start;
        while (p < end) {
            int batchLength = records.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            int lastOffsetDelta = records.getInt(p + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            int size = RecordBatchLayout.LOG_OVERHEAD + batchLength;
            long last = next + lastOffsetDelta;
            if (!seg.fits(runBytes + size, runBatches + 1, last, config.segmentBytes())) {
                if (runBatches > 0) {
                    commitRun(seg, records, runStart, runBytes, next, leaderEpoch);
                }
                seg = roll(seg, next);
                runStart = p;
                runBytes = 0;
                runBatches = 0;
            }
            records.setInt(p + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET, (int) (next - seg.baseOffset));
            records.setInt(p + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET, leaderEpoch);
            runBytes += size;
            runBatches++;
            recordsAppended += lastOffsetDelta + 1L;
            next = last + 1;
            p += size;
        }
        commitRun(seg, records, runStart, runBytes, next, leaderEpoch);
        maybeFlush(recordsAppended);
        return first;
    }

    private void commitRun(Segment seg, ByteBuf records, int runStart, int runBytes, long nextOffset, int epoch)
            throws IOException {
        int before = seg.sizeBytes();
        try {
            seg.append(records, runStart, runBytes, System.currentTimeMillis());
        } catch (IOException e) {
            try {
                seg.truncateTo(before);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        latestLeaderEpoch = epoch;
        logEndOffset = nextOffset; // volatile: publishes the run to readers
    }

    private Segment roll(Segment current, long baseOffset) throws IOException {
        current.seal();
        Segment next = Segment.create(dir, baseOffset, config, System.currentTimeMillis());
        Segment[] old = segments;
        Segment[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = next;
        segments = grown; // volatile: published before any LEO inside the new segment
        LOG.debug("Rolled {} to new segment at base offset {}", dir, baseOffset);
        return next;
    }

    private void maybeFlush(long recordsAppended) throws IOException {
        unflushedRecords += recordsAppended;
        boolean byCount = unflushedRecords >= config.flushMessages();
        boolean byTime = config.flushMs() != Long.MAX_VALUE
                && TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastFlushNanos) >= config.flushMs();
        if (byCount || byTime) {
            flushLocked();
        }
    }

    private void flushLocked() throws IOException {
        for (Segment s : segments) {
            s.flush();
        }
        unflushedRecords = 0;
        lastFlushNanos = System.nanoTime();
    }

    /**
     * Visits whole batches whose last offset &gt;= fetchOffset, in order, while their last offset &lt;
     * maxOffsetExclusive (and &lt; the log end offset read at the start), stopping before a batch that
     * would take the total past maxBytes, except the first batch when minOneBatch. Returns bytes
     * visited. Runs concurrently with appends; the visitor is called on the calling thread with the
     * segment's channel, which it may read positionally (it must not change the channel's position
     * or write to it).
     */
    public int read(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, BatchVisitor visitor)
            throws IOException {
        long upper = Math.min(maxOffsetExclusive, logEndOffset); // volatile LEO read first
        Segment[] segs = segments; // then the segments: at least as new as the LEO
        if (fetchOffset >= upper) {
            return 0;
        }
        ByteBuffer hdr = ByteBuffer.allocate(WALK_HEADER_BYTES);
        int visited = 0;
        boolean first = true;
        for (int i = floorSegment(segs, fetchOffset); i < segs.length; i++) {
            Segment s = segs[i];
            int end = s.sizeBytes();
            int pos = s.lookup(fetchOffset);
            while (pos < end) {
                hdr.clear();
                s.readFully(hdr, pos);
                int size = RecordBatchLayout.LOG_OVERHEAD + hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
                long base = s.baseOffset + hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                long last = base + hdr.getInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                if (last >= fetchOffset) {
                    if (last >= upper) {
                        return visited;
                    }
                    if ((long) visited + size > maxBytes && !(first && minOneBatch)) {
                        return visited;
                    }
                    visitor.batch(s.log, pos, size, base, last);
                    visited += size;
                    first = false;
                }
                pos += size;
            }
        }
        return visited;
    }

    private static int floorSegment(Segment[] segs, long offset) {
        int lo = 0;
        int hi = segs.length - 1;
        int found = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (segs[mid].baseOffset <= offset) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Receives whole stored batches from {@link #read}. */
    public interface BatchVisitor {
        /**
         * One stored batch: {@code sizeInBytes} bytes at {@code filePosition} of {@code channel}, with
         * records at offsets {@code baseOffset..lastOffset}. The stored bytes 0-3 hold baseOffset minus
         * the segment base (not meaningful to clients; rewrite them); bytes 8-11 hold the leader
         * epoch of the append.
         */
        void batch(FileChannel channel, long filePosition, int sizeInBytes, long baseOffset, long lastOffset)
                throws IOException;
    }

    /**
     * Convenience: copies what read() visits into {@code out} (at its writerIndex, growing it as
     * needed), rewriting each batch's bytes 0-3 (baseOffsetDelta) to (baseOffset - fetchOffset) as
     * Fetch v0 requires (spec §6.4 step 5). All other bytes are as stored (bytes 8-11 = the leader
     * epoch of the append). Returns bytes copied. On an IOException {@code out} may hold a partial
     * copy.
     */
    public int readInto(long fetchOffset, int maxBytes, long maxOffsetExclusive, boolean minOneBatch, ByteBuf out)
            throws IOException {
        return read(fetchOffset, maxBytes, maxOffsetExclusive, minOneBatch, (ch, position, size, base, last) -> {
            int at = out.writerIndex();
            out.ensureWritable(size);
            int copied = 0;
            while (copied < size) {
                int n = out.writeBytes(ch, position + copied, size - copied);
                if (n < 0) {
                    throw new IOException("unexpected end of segment file at " + (position + copied));
                }
                copied += n;
            }
            out.setInt(at + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET, Math.toIntExact(base - fetchOffset));
        });
    }

    /**
     * First record (record granularity, spec §6.5) in offset order with timestamp &gt;= targetMs and
     * offset &lt; maxOffsetExclusive, or null. Segments whose max timestamp is below targetMs are
     * skipped; in a candidate segment the time index gives where to start, batches whose
     * maxTimestamp is below targetMs are skipped by their header, and the first candidate batch's
     * records are scanned. Records below the log start offset are not considered. Runs concurrently
     * with appends.
     *
     * @throws IOException on I/O failure or a stored batch whose records do not parse
     */
    public TimestampOffset offsetForTimestamp(long targetMs, long maxOffsetExclusive) throws IOException {
        long upper = Math.min(maxOffsetExclusive, logEndOffset);
        Segment[] segs = segments;
        return TimestampSearch.search(segs, targetMs, logStartOffset(), upper);
    }

    /** A record's timestamp (ms) and offset. */
    public record TimestampOffset(long timestampMs, long offset) {}

    /** The offset the next appended record will get. Volatile read; any thread. */
    public long logEndOffset() {
        return logEndOffset;
    }

    /** The first offset in the log: the first segment's base offset (0 until retention exists). */
    public long logStartOffset() {
        return segments[0].baseOffset;
    }

    /** The epoch stamped on the last appended batch, -1 if the log is empty. Any thread. */
    public int latestLeaderEpoch() {
        return latestLeaderEpoch;
    }

    /** The partition directory. */
    public Path dir() {
        return dir;
    }

    /** The segments, oldest first (tests). */
    Segment[] segmentsForTesting() {
        return segments;
    }

    /** Number of segments (diagnostics and tests). */
    public int segmentCount() {
        return segments.length;
    }

    /** fsyncs every segment's log and index that changed. Blocks appends while it runs. */
    public void flush() throws IOException {
        appendLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("log " + dir + " is closed");
            }
            flushLocked();
        } finally {
            appendLock.unlock();
        }
    }

    /**
     * Simulates a process crash for tests: releases files and mappings without flushing, trimming
     * the indexes or writing the clean shutdown marker.
     */
    void crashForTesting() throws IOException {
        appendLock.lock();
        try {
            closed = true;
            for (Segment s : segments) {
                s.abandon();
            }
        } finally {
            appendLock.unlock();
        }
    }

    /**
     * Clean shutdown: flushes, trims and unmaps indexes, closes files and writes the clean shutdown
     * marker (not after a failed append, so the next open recovers). Idempotent.
     */
    @Override
    public void close() throws IOException {
        appendLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            IOException error = null;
            try {
                flushLocked();
            } catch (IOException e) {
                error = e;
            }
            for (Segment s : segments) {
                try {
                    s.close();
                } catch (IOException e) {
                    if (error == null) {
                        error = e;
                    } else {
                        error.addSuppressed(e);
                    }
                }
            }
            if (error != null) {
                throw error;
            }
            if (!failed) {
                Path marker = dir.resolve(CLEAN_SHUTDOWN_FILE);
                try (FileChannel ch = FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                fsyncDir();
            }
        } finally {
            appendLock.unlock();
        }
    }
}
