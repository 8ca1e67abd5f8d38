package io.stellflow.storage;

import static io.stellflow.storage.OffsetIndexLayout.ENTRY_SIZE;
import static io.stellflow.storage.OffsetIndexLayout.INT_BE;
import static io.stellflow.storage.OffsetIndexLayout.POSITION_OFFSET;
import static io.stellflow.storage.OffsetIndexLayout.RELATIVE_OFFSET_OFFSET;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;

/**
 * A segment's sparse offset index (format: {@link OffsetIndexLayout}), memory-mapped with the FFM
 * API into a shared {@link Arena}; unmapped by closing the arena (mechanics in {@link MappedIndex}).
 *
 * <p>Thread-safety: one writer ({@link #append}, {@link #seal}, {@link #truncateToEntries}, {@link
 * #flush}, {@link #close}), any number of concurrent {@link #lookup} readers.
 *
 * <p>Errors: I/O failures as {@link IOException}; a lookup after close as {@link
 * ClosedChannelException}; appending out of order or to a full or sealed index is a bug ({@link
 * IllegalStateException}).
 */
final class OffsetIndex extends MappedIndex {

    private OffsetIndex(Path file, long baseOffset, int maxBytes) {
        super(file, baseOffset, maxBytes / ENTRY_SIZE, ENTRY_SIZE);
    }

    /** Creates (or empties) the index file and maps it read-write, preallocated to maxBytes. */
    static OffsetIndex create(Path file, long baseOffset, int maxBytes) throws IOException {
        OffsetIndex index = new OffsetIndex(file, baseOffset, maxBytes);
        index.createEmpty();
        return index;
    }

    /**
     * Opens an existing, trimmed index file (clean shutdown). Returns null when the file cannot be an
     * index of this configuration (size not a multiple of 8, or larger than maxBytes), so the caller
     * rebuilds it; callers must also check {@link #isConsistentWith}.
     */
    static OffsetIndex openExisting(Path file, long baseOffset, int maxBytes, boolean writable) throws IOException {
        OffsetIndex index = new OffsetIndex(file, baseOffset, maxBytes);
        return index.openSized(writable) ? index : null;
    }

    int relativeOffsetAt(int n) {
        return memory.get(INT_BE, OffsetIndexLayout.entryOffset(n) + RELATIVE_OFFSET_OFFSET);
    }

    int positionAt(int n) {
        return memory.get(INT_BE, OffsetIndexLayout.entryOffset(n) + POSITION_OFFSET);
    }

    /**
     * Checks that entries strictly increase in both fields and point inside a log of logSizeBytes.
     * Writer-side only (at open). A zero-filled tail fails: (0, 0) never follows an entry.
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
        checkAppendable();
        int n = entries;
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
        beginRead();
        try {
            int found = floorEntry(target);
            return found < 0 ? 0 : positionAt(found);
        } finally {
            endRead();
        }
    }

    /** Index of the last entry with relativeOffset &lt;= target, -1 if none. Caller holds the read side. */
    private int floorEntry(int target) {
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
        return found;
    }

    /** Number of entries whose position is &lt; {@code position} (entries to keep when cutting the log there). */
    int entriesBelowPosition(int position) {
        int n = entries;
        int lo = 0;
        int hi = n - 1;
        int count = 0;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (positionAt(mid) < position) {
                count = mid + 1;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return count;
    }
}
