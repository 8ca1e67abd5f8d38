package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One log segment: {@code <20-digit base offset>.log} (stored batches back to back, each with
 * baseOffsetDelta = batch base offset - segment base offset and the leader epoch stamped) and its
 * {@link OffsetIndex}.
 *
 * <p>Thread-safety: one writer (the owning {@link PartitionLog} under its append lock) calls {@link
 * #append}, {@link #seal}, {@link #flush}, {@link #truncateTo} and {@link #close}; readers may call
 * {@link #sizeBytes}, {@link #lookup} and {@link #readFully} concurrently. {@link #sizeBytes} is a
 * volatile published after the bytes and index entries are written: every byte below it belongs to a
 * complete batch.
 */
final class Segment {
    static final String LOG_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";

    final long baseOffset;
    final Path logFile;
    final FileChannel log;
    private final int indexIntervalBytes;
    private OffsetIndex index;

    /** Committed size in bytes: readers may read [0, sizeBytes). */
    private volatile int sizeBytes;

    /** Writer-only state. */
    private int bytesSinceIndexEntry;

    private int flushedSizeBytes;

    private Segment(long baseOffset, Path logFile, FileChannel log, int indexIntervalBytes) {
        this.baseOffset = baseOffset;
        this.logFile = logFile;
        this.log = log;
        this.indexIntervalBytes = indexIntervalBytes;
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

    /** Creates a new empty active segment (its files must not hold data). */
    static Segment create(Path dir, long baseOffset, LogConfig config) throws IOException {
        Segment s = openLog(dir, baseOffset, config);
        try {
            s.log.truncate(0);
            s.index = OffsetIndex.create(indexPath(dir, baseOffset), baseOffset, config.indexMaxBytes());
        } catch (IOException | RuntimeException e) {
            s.log.close();
            throw e;
        }
        s.sizeBytes = 0;
        return s;
    }

    /**
     * Opens an existing segment whose log is trusted (clean shutdown). The index is used only if it
     * passes the sanity checks (size, strictly increasing entries inside the log, last entry on a
     * batch start, no entry missing at the tail); otherwise {@link #hasIndex()} is false and the
     * caller must {@link #rebuildIndexStart} and scan.
     *
     * @param active true for the last segment: its index is mapped read-write, preallocated
     */
    static Segment openTrusted(Path dir, long baseOffset, LogConfig config, boolean active) throws IOException {
        Segment s = openLog(dir, baseOffset, config);
        try {
            s.loadTrusted(dir, config, active);
        } catch (IOException | RuntimeException e) {
            s.log.close();
            throw e;
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
        if (!Files.exists(indexFile)) {
            return; // index == null: caller rebuilds
        }
        OffsetIndex idx = OffsetIndex.openExisting(indexFile, baseOffset, config.indexMaxBytes(), active);
        if (idx == null) {
            return;
        }
        boolean trusted;
        try {
            trusted = idx.isConsistentWith(size) && lastIndexEntryIsABatchStart(idx) && indexCoversTail(idx);
        } catch (IOException | RuntimeException e) {
            idx.abandon();
            throw e;
        }
        if (!trusted) {
            idx.abandon();
            return;
        }
        index = idx;
        bytesSinceIndexEntry = idx.entries() == 0 ? (int) size : (int) size - idx.positionAt(idx.entries() - 1);
    }

    /** Opens the log file of an untrusted segment (unclean shutdown); the index is rebuilt. */
    static Segment openForRecovery(Path dir, long baseOffset, LogConfig config) throws IOException {
        Segment s = openLog(dir, baseOffset, config);
        long size = s.log.size();
        s.sizeBytes = (int) Math.min(size, Integer.MAX_VALUE);
        return s;
    }

    private static Segment openLog(Path dir, long baseOffset, LogConfig config) throws IOException {
        Path logFile = logPath(dir, baseOffset);
        FileChannel ch =
                FileChannel.open(logFile, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new Segment(baseOffset, logFile, ch, config.indexIntervalBytes());
    }

    private boolean lastIndexEntryIsABatchStart(OffsetIndex idx) throws IOException {
        int n = idx.entries();
        if (n == 0) {
            return true;
        }
        int pos = idx.positionAt(n - 1);
        ByteBuffer hdr = ByteBuffer.allocate(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET + 4);
        if (pos + hdr.capacity() > sizeBytes) {
            return false;
        }
        readFully(hdr, pos);
        return hdr.getInt(RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET) == idx.relativeOffsetAt(n - 1)
                && hdr.get(RecordBatchLayout.MAGIC_OFFSET) == RecordBatchLayout.MAGIC;
    }

    /**
     * False when the index is short: a batch after the last entry should have had an entry under the
     * interval rule of {@link #indexBatch} (or the tail does not walk cleanly to the end of the log).
     * Walks at most about {@code indexIntervalBytes} of batch headers when the index is complete.
     */
    private boolean indexCoversTail(OffsetIndex idx) throws IOException {
        int n = idx.entries();
        if (idx.isFull()) {
            return true; // a full index legitimately misses the tail
        }
        int anchor = n == 0 ? 0 : idx.positionAt(n - 1);
        int pos = anchor;
        int end = sizeBytes;
        ByteBuffer hdr = ByteBuffer.allocate(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET + 4);
        while (pos < end) {
            boolean indexed = n > 0 && pos == anchor;
            if (!indexed && (long) pos - anchor >= indexIntervalBytes) {
                return false;
            }
            if (end - pos < hdr.capacity()) {
                return false;
            }
            hdr.clear();
            readFully(hdr, pos);
            int batchLength = hdr.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || (long) pos + RecordBatchLayout.LOG_OVERHEAD + batchLength > end) {
                return false;
            }
            pos += RecordBatchLayout.LOG_OVERHEAD + batchLength;
        }
        return true;
    }

    boolean hasIndex() {
        return index != null;
    }

    /** Starts an index rebuild: a new empty preallocated index; the caller then calls {@link #indexBatch}. */
    void rebuildIndexStart(LogConfig config) throws IOException {
        if (index != null) {
            index.abandon();
        }
        index = OffsetIndex.create(indexPath(logFile.getParent(), baseOffset), baseOffset, config.indexMaxBytes());
        bytesSinceIndexEntry = 0;
    }

    /** Committed size in bytes (volatile read). */
    int sizeBytes() {
        return sizeBytes;
    }

    /** Bytes known to be on the device (fsynced); writer-side diagnostics and tests. */
    int flushedSizeBytes() {
        return flushedSizeBytes;
    }

    /** Number of index entries (for tests and diagnostics). */
    int indexEntries() {
        return index.entries();
    }

    /**
     * True when a run of {@code runBatches} batches totalling {@code runBytes}, the last of which
     * ends at {@code lastOffset}, can still go into this segment.
     */
    boolean fits(int runBytes, int runBatches, long lastOffset, int segmentBytes) {
        long committed = sizeBytes;
        boolean bytesOk = (committed == 0 && runBatches == 1) || committed + runBytes <= segmentBytes;
        boolean offsetsOk = lastOffset - baseOffset <= Integer.MAX_VALUE;
        // Conservative: assume every batch of the run needs an index entry.
        boolean indexOk = index.remainingEntries() >= runBatches;
        return bytesOk && offsetsOk && indexOk;
    }

    /**
     * Writes the already stamped batches in {@code buf[start, start + length)} at the end of the log
     * with one gather write, adds index entries, then publishes the new size. Writer only.
     */
    void append(ByteBuf buf, int start, int length) throws IOException {
        int position = sizeBytes;
        ByteBuffer[] parts = buf.nioBuffers(start, length);
        long remaining = length;
        while (remaining > 0) {
            long n = log.write(parts);
            remaining -= n;
        }
        int p = start;
        int end = start + length;
        while (p < end) {
            int size = RecordBatchLayout.LOG_OVERHEAD + buf.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            indexBatch(buf.getInt(p + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET), position + (p - start), size);
            p += size;
        }
        sizeBytes = position + length; // volatile: publishes the batches
    }

    /** Applies the index interval rule to one batch at {@code position}. Writer only. */
    void indexBatch(int relativeOffset, int position, int sizeInBytes) {
        if (bytesSinceIndexEntry >= indexIntervalBytes && !index.isFull()) {
            index.append(relativeOffset, position);
            bytesSinceIndexEntry = 0;
        }
        bytesSinceIndexEntry += sizeInBytes;
    }

    /** Log position from which to scan for {@code targetOffset}. Safe for concurrent readers. */
    int lookup(long targetOffset) throws IOException {
        return index.lookup(targetOffset);
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

    /** Cuts the log at {@code sizeBytes} (recovery or a failed write). Writer only. */
    void truncateTo(int newSizeBytes) throws IOException {
        log.truncate(newSizeBytes);
        log.position(newSizeBytes);
        sizeBytes = newSizeBytes;
        flushedSizeBytes = Math.min(flushedSizeBytes, newSizeBytes);
    }

    /** Marks the recovered size as committed and positions the writer at the end. Writer only. */
    void recovered(int validSizeBytes) throws IOException {
        log.position(validSizeBytes);
        sizeBytes = validSizeBytes;
    }

    /** fsyncs the log (if it changed since the last flush) and the index. Writer only. */
    void flush() throws IOException {
        int size = sizeBytes;
        if (size != flushedSizeBytes) {
            log.force(true);
            flushedSizeBytes = size;
        }
        index.flush();
    }

    /** Seals on roll: the index is trimmed and remapped read-only. Writer only. */
    void seal() throws IOException {
        index.seal();
    }

    /** Closes the index (trimming it) and the log channel. */
    void close() throws IOException {
        try {
            if (index != null) {
                index.close();
            }
        } finally {
            log.close();
        }
    }

    /** Simulates a crash: unmaps and closes without trimming or flushing. Tests only. */
    void abandon() throws IOException {
        if (index != null) {
            index.abandon();
        }
        log.close();
    }

    /** Closes and deletes both files (recovery dropping segments after a corrupt one). */
    void delete() throws IOException {
        if (index != null) {
            index.abandon();
        }
        log.close();
        Files.deleteIfExists(logFile);
        Files.deleteIfExists(indexPath(logFile.getParent(), baseOffset));
    }

    @Override
    public String toString() {
        return "Segment[" + logFile + ", size=" + sizeBytes + "]";
    }
}
