package io.stellflow.storage;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The file mechanics shared by a segment's {@link OffsetIndex} and {@link TimeIndex}: an array of
 * fixed-size entries memory-mapped with the FFM API into a shared {@link Arena}; unmapped by closing
 * the arena (no cleaner hacks, no {@code Unsafe}).
 *
 * <p>Life cycle: an active index is mapped read-write over its whole preallocated size
 * ({@code maxEntries * entrySize} bytes, zeros after the last entry), allocated on disk before it
 * is mapped ({@link FileAllocator}: a full disk fails the creation, the roll or the truncation with
 * an {@link IOException}, never a write into the mapping). {@link #seal} (segment roll)
 * trims the file to {@code entries * entrySize} and remaps it read-only; {@link #close} trims and
 * unmaps; {@link #truncateToEntries} drops entries and maps the index read-write again (log
 * truncation makes a sealed segment active again).
 *
 * <p>Thread-safety: one writer (appends, seal, truncate, flush, close), any number of concurrent
 * readers. The entry count is volatile and written after the entry's bytes, so a reader never sees a
 * half-written entry. Remapping and unmapping take the write side of a read-write lock that readers
 * hold (via {@link #beginRead}) while they touch the mapping.
 */
abstract sealed class MappedIndex implements AutoCloseable permits OffsetIndex, TimeIndex {
    final Path file;
    final long baseOffset;
    private final int entrySize;
    final int maxEntries;
    private final ReentrantReadWriteLock mapLock = new ReentrantReadWriteLock();

    /** Guarded by mapLock (replaced on seal, truncate and close). */
    private Arena arena;

    MemorySegment memory = MemorySegment.NULL;
    private boolean writable;
    private boolean closed;

    /** Number of valid entries; a volatile write publishes the entry written before it. */
    volatile int entries;

    MappedIndex(Path file, long baseOffset, int maxEntries, int entrySize) {
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        this.maxEntries = maxEntries;
    }

    /** Empties (creating if needed) the file and maps it read-write, preallocated. */
    final void createEmpty() throws IOException {
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
        try {
            mapWritable();
        } catch (IOException e) {
            releaseAllocation(e);
            throw e;
        }
    }

    /**
     * After a failed allocation: trims the file back to its entries, so a partly allocated range
     * does not keep blocks of a full disk. A failure of that trim is added to {@code cause}.
     */
    private void releaseAllocation(IOException cause) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate((long) entries * entrySize);
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * Maps an existing file whose size says how many entries it holds. Returns false (nothing
     * mapped) when the size is not a whole number of entries or exceeds the preallocated size: such
     * a file cannot be trusted and the caller rebuilds it.
     */
    final boolean openSized(boolean asWritable) throws IOException {
        long size = Files.size(file);
        if (size % entrySize != 0 || size > (long) maxEntries * entrySize) {
            return false;
        }
        entries = (int) (size / entrySize);
        if (asWritable) {
            mapWritable();
        } else {
            mapReadOnly();
        }
        return true;
    }

    /**
     * Allocates the whole preallocated size on disk, then maps it read-write. The allocation comes
     * first: a mapping past the end of the file would extend it sparsely, and a write into a page
     * the full file system then cannot give faults ({@code SIGBUS}, an {@link InternalError} at the
     * append) instead of failing here with an {@link IOException}.
     */
    private void mapWritable() throws IOException {
        long sizeBytes = (long) maxEntries * entrySize;
        FileAllocator.allocate(file, (long) entries * entrySize, sizeBytes);
        Arena newArena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            memory = ch.map(MapMode.READ_WRITE, 0, sizeBytes, newArena);
        } catch (IOException | RuntimeException e) {
            newArena.close();
            throw e;
        }
        arena = newArena;
        writable = true;
    }

    private void mapReadOnly() throws IOException {
        long size = (long) entries * entrySize;
        writable = false;
        if (size == 0) {
            arena = null;
            memory = MemorySegment.NULL;
            return;
        }
        Arena newArena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            memory = ch.map(MapMode.READ_ONLY, 0, size, newArena);
        } catch (IOException | RuntimeException e) {
            newArena.close();
            throw e;
        }
        arena = newArena;
    }

    final int entries() {
        return entries;
    }

    /**
     * Trailing slots of the mapped entries whose bytes are all zero: the preallocated, never written
     * part of an active segment's index (a crashed broker's files, or a copy of a live segment). A
     * zero slot 0 counts only when every slot is zero: a lone entry (0, 0) would say no more than an
     * empty index (lookups start at position 0 either way), and a zero slot never follows an entry
     * because entries strictly increase ({@link OffsetIndex#isConsistentWith}). Reads the mapping
     * once; for the inspection tools and tests.
     */
    final int preallocatedTailSlots() {
        int n = entries;
        int tail = 0;
        while (tail < n && slotIsZero(n - tail - 1)) {
            tail++;
        }
        return tail;
    }

    private boolean slotIsZero(int slot) {
        long from = (long) slot * entrySize;
        for (long b = from; b < from + entrySize; b++) {
            if (memory.get(ValueLayout.JAVA_BYTE, b) != 0) {
                return false;
            }
        }
        return true;
    }

    final boolean isFull() {
        return entries >= maxEntries;
    }

    /** Free entry slots; 0 for a sealed index. */
    final int remainingEntries() {
        return writable ? maxEntries - entries : 0;
    }

    final boolean isWritable() {
        return writable;
    }

    /** Writer-side precondition of every append. */
    final void checkAppendable() {
        if (!writable || entries >= maxEntries) {
            throw new IllegalStateException("index " + file + " is sealed or full (" + entries + " entries)");
        }
    }

    /**
     * Starts a reader's access to the mapping; the caller must call {@link #endRead} in a finally.
     *
     * @throws ClosedChannelException the index is closed
     */
    final void beginRead() throws ClosedChannelException {
        mapLock.readLock().lock();
        if (closed) {
            mapLock.readLock().unlock();
            throw new ClosedChannelException();
        }
    }

    final void endRead() {
        mapLock.readLock().unlock();
    }

    /** Forces mapped changes to the device. Writer only. */
    final void flush() {
        if (writable && !closed) {
            memory.force();
        }
    }

    /** Trims the file to the used entries and remaps it read-only (on roll). Writer only. */
    final void seal() throws IOException {
        mapLock.writeLock().lock();
        try {
            if (closed || !writable) {
                return;
            }
            trimAndUnmap(false);
            mapReadOnly();
        } finally {
            mapLock.writeLock().unlock();
        }
    }

    /**
     * Keeps only the first {@code keep} entries and leaves the index mapped read-write,
     * preallocated (a truncated segment becomes the active one). Writer only.
     */
    final void truncateToEntries(int keep) throws IOException {
        mapLock.writeLock().lock();
        try {
            if (closed) {
                throw new ClosedChannelException();
            }
            if (keep < 0 || keep > entries) {
                throw new IllegalArgumentException("index " + file + ": cannot keep " + keep + " of " + entries);
            }
            entries = keep;
            // Trimming zeroes nothing in place: the stale entries past `keep` are cut from the file
            // and the remap re-extends it with zeros, so no stale entry survives a later crash.
            trimAndUnmap(true);
            try {
                mapWritable();
            } catch (IOException e) {
                // Readers keep a valid (read-only) view of the kept entries; the writer has failed.
                releaseAllocation(e);
                try {
                    mapReadOnly();
                } catch (IOException | RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        } finally {
            mapLock.writeLock().unlock();
        }
    }

    /** Unmaps; trims the file when it was mapped writable (or always, with {@code alwaysTrim}). */
    private void trimAndUnmap(boolean alwaysTrim) throws IOException {
        boolean wasWritable = writable;
        if (wasWritable) {
            memory.force();
        }
        memory = MemorySegment.NULL;
        if (arena != null) {
            arena.close(); // unmaps
            arena = null;
        }
        writable = false;
        if (!wasWritable && !alwaysTrim) {
            return; // a read-only map is already trimmed; the file may have been renamed for deletion
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate((long) entries * entrySize);
            ch.force(true);
        }
    }

    /** Trims (if writable) and unmaps. Idempotent. */
    @Override
    public final void close() throws IOException {
        mapLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            trimAndUnmap(false);
        } finally {
            mapLock.writeLock().unlock();
        }
    }

    /** Unmaps without trimming (a crash in tests, or before deleting the file). Idempotent. */
    final void abandon() {
        mapLock.writeLock().lock();
        try {
            closed = true;
            memory = MemorySegment.NULL;
            writable = false;
            if (arena != null) {
                arena.close();
                arena = null;
            }
        } finally {
            mapLock.writeLock().unlock();
        }
    }

    final Path file() {
        return file;
    }
}
