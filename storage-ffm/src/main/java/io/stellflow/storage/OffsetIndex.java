package io.stellflow.storage;

import static io.stellflow.storage.OffsetIndexLayout.ENTRY_SIZE;
import static io.stellflow.storage.OffsetIndexLayout.INT_BE;
import static io.stellflow.storage.OffsetIndexLayout.POSITION_OFFSET;
import static io.stellflow.storage.OffsetIndexLayout.RELATIVE_OFFSET_OFFSET;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A segment's sparse offset index (format: {@link OffsetIndexLayout}), memory-mapped with the FFM
 * API into a shared {@link Arena}; unmapped by closing the arena.
 *
 * <p>Thread-safety: one writer ({@link #append}, {@link #seal}, {@link #flush}, {@link #close}),
 * any number of concurrent {@link #lookup} readers. The entry count is volatile and written after
 * the entry's bytes, so a reader never sees a half-written entry. {@link #seal} and {@link #close}
 * remap or unmap, so they take the write side of a read-write lock that lookups hold while they
 * touch the mapping.
 *
 * <p>Errors: I/O failures as {@link IOException}; a lookup after close as {@link
 * ClosedChannelException}; appending out of order or to a full or sealed index is a bug ({@link
 * IllegalStateException}).
 */
final class OffsetIndex implements AutoCloseable {
    private final Path file;
    private final long baseOffset;
    private final int maxEntries;
    private final ReentrantReadWriteLock mapLock = new ReentrantReadWriteLock();

    /** Guarded by mapLock (replaced on seal/close). */
    private Arena arena;

    private MemorySegment memory;
    private boolean writable;
    private boolean closed;

    /** Number of valid entries; volatile write publishes the entry written before it. */
    private volatile int entries;

    private OffsetIndex(Path file, long baseOffset, int maxBytes) {
        this.file = file;
        this.baseOffset = baseOffset;
        this.maxEntries = maxBytes / ENTRY_SIZE;
    }

    /** Creates (or empties) the index file and maps it read-write, preallocated to maxBytes. */
    static OffsetIndex create(Path file, long baseOffset, int maxBytes) throws IOException {
        OffsetIndex index = new OffsetIndex(file, baseOffset, maxBytes);
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
        index.mapWritable();
        return index;
    }

    /**
     * Opens an existing, trimmed index file (clean shutdown). Returns null when the file cannot be an
     * index of this configuration (size not a multiple of 8, or larger than maxBytes), so the caller
     * rebuilds it; callers must also check {@link #isConsistentWith}.
     */
    static OffsetIndex openExisting(Path file, long baseOffset, int maxBytes, boolean writable) throws IOException {
        long size = Files.size(file);
        if (size % ENTRY_SIZE != 0 || size > (long) (maxBytes / ENTRY_SIZE) * ENTRY_SIZE) {
            return null;
        }
        OffsetIndex index = new OffsetIndex(file, baseOffset, maxBytes);
        index.entries = (int) (size / ENTRY_SIZE);
        if (writable) {
            index.mapWritable();
        } else {
            index.mapReadOnly();
        }
        return index;
    }

    private void mapWritable() throws IOException {
        Arena newArena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // Mapping past the end extends the file: this is the preallocation (sparse on Linux).
            memory = ch.map(MapMode.READ_WRITE, 0, (long) maxEntries * ENTRY_SIZE, newArena);
        } catch (IOException | RuntimeException e) {
            newArena.close();
            throw e;
        }
        arena = newArena;
        writable = true;
    }

    private void mapReadOnly() throws IOException {
        long size = (long) entries * ENTRY_SIZE;
        if (size == 0) {
            arena = null;
            memory = MemorySegment.NULL;
            writable = false;
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
        writable = false;
    }

    int entries() {
        return entries;
    }

    boolean isFull() {
        return entries >= maxEntries;
    }

    /** Free entry slots; 0 for a sealed index. */
    int remainingEntries() {
        return writable ? maxEntries - entries : 0;
    }

    int relativeOffsetAt(int n) {
        return memory.get(INT_BE, OffsetIndexLayout.entryOffset(n) + RELATIVE_OFFSET_OFFSET);
    }

    int positionAt(int n) {
        return memory.get(INT_BE, OffsetIndexLayout.entryOffset(n) + POSITION_OFFSET);
    }

    /**
     * Checks that entries strictly increase in both fields and point inside a log of logSizeBytes.
     * Writer-side only (at open).
     */
    boolean isConsistentWith(long logSizeBytes) {
        int n = entries;
        long prevRel = -1;
        long prevPos = -1;
        for (int i = 0; i < n; i++) {
            int rel = relativeOffsetAt(i);
            int pos = positionAt(i);
            if (rel <= prevRel || pos <= prevPos || pos >= logSizeBytes) {
                return false;
            }
            prevRel = rel;
            prevPos = pos;
        }
        return true;
    }

    /**
     * Adds an entry. Writer only. Relative offsets and positions must strictly increase.
     *
     * @throws IllegalStateException when full, sealed, or out of order (a bug in the caller)
     */
    void append(int relativeOffset, int position) {
        int n = entries;
        if (!writable || n >= maxEntries) {
            throw new IllegalStateException("index " + file + " is sealed or full (" + n + " entries)");
        }
        if (n > 0 && (relativeOffset <= relativeOffsetAt(n - 1) || position <= positionAt(n - 1))) {
            throw new IllegalStateException("index " + file + ": out-of-order entry (" + relativeOffset + ", "
                    + position + ") after (" + relativeOffsetAt(n - 1) + ", " + positionAt(n - 1) + ")");
        }
        long at = OffsetIndexLayout.entryOffset(n);
        memory.set(INT_BE, at + RELATIVE_OFFSET_OFFSET, relativeOffset);
        memory.set(INT_BE, at + POSITION_OFFSET, position);
        entries = n + 1; // volatile: publishes the entry
    }

    /**
     * The log position of the last indexed batch whose base offset is &lt;= targetOffset, or 0 when
     * there is none. Safe to call concurrently with {@link #append}.
     */
    int lookup(long targetOffset) throws IOException {
        long rel = targetOffset - baseOffset;
        if (rel < 0) {
            return 0;
        }
        int target = rel > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) rel;
        ReentrantReadWriteLock.ReadLock lock = mapLock.readLock();
        lock.lock();
        try {
            if (closed) {
                throw new ClosedChannelException();
            }
            int lo = 0;
            int hi = entries - 1; // volatile read: all entries below are fully written
            int found = -1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (relativeOffsetAt(mid) <= target) {
                    found = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            return found < 0 ? 0 : positionAt(found);
        } finally {
            lock.unlock();
        }
    }

    /** Forces mapped changes to the device. Writer only. */
    void flush() {
        if (writable && !closed) {
            memory.force();
        }
    }

    /** Trims the file to the used entries and remaps it read-only (on roll). Writer only. */
    void seal() throws IOException {
        ReentrantReadWriteLock.WriteLock lock = mapLock.writeLock();
        lock.lock();
        try {
            if (closed || !writable) {
                return;
            }
            trimAndUnmap();
            mapReadOnly();
        } finally {
            lock.unlock();
        }
    }

    private void trimAndUnmap() throws IOException {
        if (writable) {
            memory.force();
        }
        memory = MemorySegment.NULL;
        if (arena != null) {
            arena.close(); // unmaps
            arena = null;
        }
        if (writable) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate((long) entries * ENTRY_SIZE);
                ch.force(true);
            }
        }
        writable = false;
    }

    /** Trims (if writable) and unmaps. Idempotent. */
    @Override
    public void close() throws IOException {
        ReentrantReadWriteLock.WriteLock lock = mapLock.writeLock();
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            trimAndUnmap();
        } finally {
            lock.unlock();
        }
    }

    /** Unmaps without trimming (used before deleting the file). Idempotent. */
    void abandon() {
        ReentrantReadWriteLock.WriteLock lock = mapLock.writeLock();
        lock.lock();
        try {
            closed = true;
            memory = MemorySegment.NULL;
            writable = false;
            if (arena != null) {
                arena.close();
                arena = null;
            }
        } finally {
            lock.unlock();
        }
    }

    Path file() {
        return file;
    }
}
