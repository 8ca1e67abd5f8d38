package io.stellflow.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The segment list of one {@link UnifiedLog} and the offset range that readers see: the segments
 * ordered by base offset (never empty; the last one is the active segment, the only one appended
 * to), the log start offset (the first offset, at or above the first segment's base), the log end
 * offset (the offset the next record gets) and the leader epoch of the last appended batch.
 *
 * <p>Publication: the list is copy-on-write in a volatile field, the end offset another volatile
 * field. A lock-free reader reads {@link #endOffset} first, then {@link #snapshot}; writers keep
 * that pair consistent by publishing a grown list before any end offset inside the new segment
 * ({@link #roll}, then {@link #publishEnd}) and by lowering the end offset before shrinking the list
 * ({@link #cutEnd}, then {@link #keepFirst}). So a reader never pairs an end offset with a list that
 * lacks its segment.
 *
 * <p>Thread-safety: the reads ({@link #startOffset()}, {@link #endOffset()}, {@link #latestEpoch()},
 * {@link #snapshot}, {@link #active}, lookups, sizes) from any thread; every method that changes
 * something under the owning log's write lock.
 *
 * <p>Errors: {@link IOException} from the segment files on {@link #roll}; the list is unchanged when
 * it is thrown. Misuse (an empty list, an index out of range) is an {@link IllegalArgumentException}
 * or {@link IndexOutOfBoundsException}.
 */
final class LogSegments {
    private volatile LogSegment[] segments;
    private volatile long startOffset;
    private volatile long endOffset;
    private volatile int latestEpoch;

    /**
     * @param loaded the segments as opened, oldest first, at least one
     * @param startOffset the log start offset
     * @param endOffset the log end offset
     * @param latestEpoch the leader epoch of the last batch, -1 for an empty log
     */
    LogSegments(LogSegment[] loaded, long startOffset, long endOffset, int latestEpoch) {
        if (loaded.length == 0) {
            throw new IllegalArgumentException("a log has at least one segment");
        }
        this.segments = loaded;
        this.startOffset = startOffset;
        this.endOffset = endOffset;
        this.latestEpoch = latestEpoch;
    }

    /** The first offset of the log. Volatile read. */
    long startOffset() {
        return startOffset;
    }

    /** Raises (retention, delete-records) or resets (full truncation) the log start offset. Write lock. */
    void startOffset(long newStartOffset) {
        startOffset = newStartOffset;
    }

    /** The offset the next appended record gets. Volatile read; read it before {@link #snapshot}. */
    long endOffset() {
        return endOffset;
    }

    /** The leader epoch of the last appended batch, -1 if none. Volatile read. */
    int latestEpoch() {
        return latestEpoch;
    }

    /** The current segments, oldest first; the caller must not modify the array. Volatile read. */
    LogSegment[] snapshot() {
        return segments;
    }

    /** The active (last) segment. */
    LogSegment active() {
        LogSegment[] segs = segments;
        return segs[segs.length - 1];
    }

    /** Number of segments, at least 1. */
    int count() {
        return segments.length;
    }

    /** Bytes of the active segment's {@code .log}. */
    long activeSizeBytes() {
        return active().sizeBytes();
    }

    /** Total bytes of all {@code .log} files. */
    long sizeBytes() {
        long total = 0;
        for (LogSegment s : segments) {
            total += s.sizeBytes();
        }
        return total;
    }

    /**
     * Index of the segment that would hold {@code offset}: the last one whose base offset is &lt;=
     * {@code offset}, or -1 when {@code offset} is below the first base offset. Does not check the
     * end offset: an offset at or past it gives the active segment.
     */
    int floorIndex(long offset) {
        LogSegment[] segs = segments;
        int lo = 0;
        int hi = segs.length - 1;
        int found = -1;
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

    /** Index of {@code segment} (by identity) in the list, or -1 when it is no longer in it. */
    int indexOf(LogSegment segment) {
        LogSegment[] segs = segments;
        for (int i = 0; i < segs.length; i++) {
            if (segs[i] == segment) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Appended bytes up to (excluding) {@code newEndOffset} are written: publishes them to readers,
     * with {@code epoch} as the latest leader epoch. Write lock.
     */
    void publishEnd(long newEndOffset, int epoch) {
        latestEpoch = epoch;
        endOffset = newEndOffset; // volatile: publishes the bytes written before
    }

    /** Lowers the end offset before a truncation removes what lies above it ({@link #keepFirst}). Write lock. */
    void cutEnd(long newEndOffset) {
        endOffset = newEndOffset;
    }

    /** Sets the latest leader epoch (after a truncation, from the epoch history). Write lock. */
    void latestEpoch(int epoch) {
        latestEpoch = epoch;
    }

    /**
     * Seals the active segment and appends a new empty one at {@code baseOffset} (files created in
     * {@code dir} with {@code config}'s index sizes), published before any end offset inside it.
     * Write lock.
     *
     * @return the new active segment
     * @throws IOException sealing or creating failed; the list is unchanged
     */
    LogSegment roll(Path dir, long baseOffset, LogConfig config, long nowMs) throws IOException {
        LogSegment[] old = segments;
        old[old.length - 1].seal();
        LogSegment next = LogSegment.create(dir, baseOffset, config, nowMs);
        LogSegment[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = next;
        segments = grown; // volatile: published before any end offset inside the new segment
        return next;
    }

    /**
     * Keeps the first {@code count} segments (a truncation; lower the end offset first with {@link
     * #cutEnd}). Write lock.
     *
     * @return the removed segments, oldest first, for the caller to dispose of
     */
    LogSegment[] keepFirst(int count) {
        LogSegment[] segs = segments;
        checkCount(count, 1, segs.length);
        segments = Arrays.copyOf(segs, count);
        return Arrays.copyOfRange(segs, count, segs.length);
    }

    /**
     * Removes the first {@code count} segments (retention); at least the active one stays. Write lock.
     *
     * @return the removed segments, oldest first, for the caller to dispose of
     */
    LogSegment[] dropFirst(int count) {
        LogSegment[] segs = segments;
        checkCount(count, 0, segs.length - 1);
        segments = Arrays.copyOfRange(segs, count, segs.length);
        return Arrays.copyOf(segs, count);
    }

    /** Puts {@code fresh} in place of the segment at {@code index} (a compaction swap). Write lock. */
    void replace(int index, LogSegment fresh) {
        LogSegment[] replaced = segments.clone();
        if (replaced[index].baseOffset != fresh.baseOffset) {
            throw new IllegalArgumentException(fresh + " does not replace " + replaced[index]);
        }
        replaced[index] = fresh;
        segments = replaced; // volatile: new readers use the new file
    }

    /**
     * Makes {@code fresh} the only segment (a full truncation); set the end offset afterwards with
     * {@link #publishEnd}. Write lock.
     *
     * @return the previous segments, oldest first, for the caller to dispose of
     */
    LogSegment[] reset(LogSegment fresh) {
        LogSegment[] old = segments;
        segments =
                new LogSegment[] {fresh}; // volatile: before the end offset, so no reader pairs a new one with old data
        return old;
    }

    /**
     * Replaces the whole state with a freshly loaded one ({@link UnifiedLog#reopen}: the log was
     * recovered in place). The end offset is lowered first (when the new one is lower) and published
     * last, so a lock-free reader never pairs an end offset with a list that lacks its segment.
     * Write lock.
     *
     * @param loaded the segments as loaded, oldest first, at least one
     * @return the previous segments, for the caller to dispose of
     */
    LogSegment[] reload(LogSegment[] loaded, long newStartOffset, long newEndOffset, int newLatestEpoch) {
        if (loaded.length == 0) {
            throw new IllegalArgumentException("a log has at least one segment");
        }
        LogSegment[] old = segments;
        if (newEndOffset < endOffset) {
            endOffset = newEndOffset;
        }
        segments = loaded; // volatile: before the end offset
        startOffset = newStartOffset;
        latestEpoch = newLatestEpoch;
        endOffset = newEndOffset;
        return old;
    }

    private static void checkCount(int count, int min, int max) {
        if (count < min || count > max) {
            throw new IllegalArgumentException("count " + count + " not in [" + min + ", " + max + "]");
        }
    }
}
