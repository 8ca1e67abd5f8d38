package io.stellflow.storage;

import static io.stellflow.storage.TimeIndexLayout.ENTRY_SIZE;
import static io.stellflow.storage.TimeIndexLayout.INT_BE;
import static io.stellflow.storage.TimeIndexLayout.LONG_BE;
import static io.stellflow.storage.TimeIndexLayout.RELATIVE_OFFSET_OFFSET;
import static io.stellflow.storage.TimeIndexLayout.TIMESTAMP_OFFSET;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;

/**
 * A segment's sparse time index (format and entry semantics: {@link TimeIndexLayout}),
 * memory-mapped with the FFM API (mechanics in {@link MappedIndex}).
 *
 * <p>Thread-safety: one writer ({@link #maybeAppend}, {@link #seal}, {@link #truncateToEntries},
 * {@link #flush}, {@link #close}), any number of concurrent {@link #lookup} readers.
 *
 * <p>Errors: I/O failures as {@link IOException}; a lookup after close as {@link
 * ClosedChannelException}; appending to a full or sealed index or with a smaller relative offset is
 * a bug ({@link IllegalStateException}).
 */
final class TimeIndex extends MappedIndex {
    /** Timestamps below 0 (Kafka's -1 = "no timestamp") never make an entry. */
    static final long NO_TIMESTAMP = -1;

    private TimeIndex(Path file, long baseOffset, int offsetIndexMaxBytes) {
        super(file, baseOffset, TimeIndexLayout.maxEntriesFor(offsetIndexMaxBytes), ENTRY_SIZE);
    }

    /** Creates (or empties) the file, preallocated for one entry more than the offset index. */
    static TimeIndex create(Path file, long baseOffset, int offsetIndexMaxBytes) throws IOException {
        TimeIndex index = new TimeIndex(file, baseOffset, offsetIndexMaxBytes);
        index.createEmpty();
        return index;
    }

    /**
     * Opens an existing file; null when its size cannot be a time index of this configuration. The
     * caller must also check {@link #isConsistentWith} and the last entry against the log.
     */
    static TimeIndex openExisting(Path file, long baseOffset, int offsetIndexMaxBytes, boolean writable)
            throws IOException {
        TimeIndex index = new TimeIndex(file, baseOffset, offsetIndexMaxBytes);
        return index.openSized(writable) ? index : null;
    }

    long timestampAt(int n) {
        return memory.get(LONG_BE, TimeIndexLayout.entryOffset(n) + TIMESTAMP_OFFSET);
    }

    int relativeOffsetAt(int n) {
        return memory.get(INT_BE, TimeIndexLayout.entryOffset(n) + RELATIVE_OFFSET_OFFSET);
    }

    /** Timestamp of the last entry, {@link #NO_TIMESTAMP} if empty. Writer side. */
    long lastTimestamp() {
        int n = entries;
        return n == 0 ? NO_TIMESTAMP : timestampAt(n - 1);
    }

    /**
     * Checks that timestamps (&gt;= 0) and relative offsets strictly increase and that relative
     * offsets lie in {@code [0, maxRelativeOffset]}. A zero-filled tail fails: (0, 0) never follows
     * an entry. Writer side (at open).
     */
    boolean isConsistentWith(long maxRelativeOffset) {
        int n = entries;
        long prevTs = NO_TIMESTAMP;
        long prevRel = -1;
        for (int i = 0; i < n; i++) {
            long ts = timestampAt(i);
            int rel = relativeOffsetAt(i);
            if (ts <= prevTs || rel <= prevRel || rel > maxRelativeOffset) {
                return false;
            }
            prevTs = ts;
            prevRel = rel;
        }
        return true;
    }

    /**
     * Appends {@code (timestampMs, relativeOffset)} when {@code timestampMs} is larger than the last
     * entry's (and &gt;= 0). Writer only.
     *
     * @return true if an entry was added
     * @throws IllegalStateException sealed or full index, or a relative offset not above the last
     */
    boolean maybeAppend(long timestampMs, int relativeOffset) {
        int n = entries;
        if (timestampMs <= NO_TIMESTAMP || (n > 0 && timestampMs <= timestampAt(n - 1))) {
            return false;
        }
        checkAppendable();
        if (n > 0 && relativeOffset <= relativeOffsetAt(n - 1)) {
            throw new IllegalStateException("time index " + file + ": relative offset " + relativeOffset
                    + " not above the last entry's " + relativeOffsetAt(n - 1));
        }
        long at = TimeIndexLayout.entryOffset(n);
        memory.set(LONG_BE, at + TIMESTAMP_OFFSET, timestampMs);
        memory.set(INT_BE, at + RELATIVE_OFFSET_OFFSET, relativeOffset);
        entries = n + 1; // volatile: publishes the entry
        return true;
    }

    /**
     * Like {@link #maybeAppend}, but when the index is full the new entry replaces the last one
     * (lookups stay correct: they may only start earlier). Used for the final entry on roll/close.
     */
    void appendOrReplaceLast(long timestampMs, int relativeOffset) {
        int n = entries;
        if (n < maxEntries || timestampMs <= NO_TIMESTAMP || timestampMs <= timestampAt(n - 1)) {
            maybeAppend(timestampMs, relativeOffset);
            return;
        }
        entries = n - 1; // readers see n - 1 entries while the last slot is rewritten
        maybeAppend(timestampMs, relativeOffset);
    }

    /**
     * The absolute offset from which to search for the first record with timestamp &gt;= targetMs:
     * the batch of the last entry whose timestamp is &lt;= targetMs, or the segment base when there is
     * none. Safe to call concurrently with {@link #maybeAppend}.
     */
    long lookup(long targetMs) throws IOException {
        beginRead();
        try {
            int lo = 0;
            int hi = entries - 1;
            int found = -1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (timestampAt(mid) <= targetMs) {
                    found = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            return found < 0 ? baseOffset : baseOffset + relativeOffsetAt(found);
        } finally {
            endRead();
        }
    }

    /** Number of entries whose relative offset is &lt; {@code relativeOffset}. Writer side. */
    int entriesBelowRelativeOffset(long relativeOffset) {
        int n = entries;
        int count = 0;
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (relativeOffsetAt(mid) < relativeOffset) {
                count = mid + 1;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return count;
    }
}
