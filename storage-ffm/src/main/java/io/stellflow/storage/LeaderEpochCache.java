package io.stellflow.storage;

import io.stellflow.server.common.file.CheckpointFile.CorruptCheckpointException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The partition's leader-epoch history: for each leader epoch that wrote to the log, the first
 * offset it wrote ({@code epoch -> start offset}), ordered by both. Persisted in {@value #FILE_NAME}
 * (format and atomic write: {@link Checkpoints}) after every change, so a follower can ask "where
 * did epoch e end?" ({@link #endOffsetFor}) after a restart.
 *
 * <p>Rules (as Kafka's): an entry is added when a batch arrives whose epoch differs from the latest
 * entry's; adding {@code (e, s)} first removes every entry with epoch &gt;= e or start offset &gt;= s,
 * so both columns always strictly increase. Log truncation removes entries starting at or after the
 * new end; raising the log start offset moves the start of the epoch holding it up to it. Negative
 * epochs are not recorded.
 *
 * <p>Thread-safety: mutations come from the log's writer (under its write lock); every method is
 * synchronized so {@link #endOffsetFor} and {@link #latestEpoch} may be called from any thread.
 *
 * <p>Errors: I/O failures writing the file as {@link IOException}; a file that does not parse as
 * {@link CorruptCheckpointException} from {@link #load}.
 */
final class LeaderEpochCache {
    static final String FILE_NAME = "leader-epoch-checkpoint";

    /** One history entry. */
    record Entry(int epoch, long startOffset) {}

    private final Path file;
    private final List<Entry> entries = new ArrayList<>();
    private boolean dirty;

    private LeaderEpochCache(Path file) {
        this.file = file;
    }

    /** An empty cache for {@code dir} (nothing is written until a change is flushed). */
    static LeaderEpochCache empty(Path dir) {
        return new LeaderEpochCache(dir.resolve(FILE_NAME));
    }

    /** True when {@code dir} has a checkpoint file. */
    static boolean exists(Path dir) {
        return Files.exists(dir.resolve(FILE_NAME));
    }

    /**
     * Loads the checkpoint of {@code dir} (empty when missing).
     *
     * @throws CorruptCheckpointException bad count, bad line, or entries not strictly
     *     increasing
     */
    static LeaderEpochCache load(Path dir) throws IOException {
        LeaderEpochCache cache = empty(dir);
        List<String> body = Checkpoints.read(cache.file);
        if (body == null) {
            return cache;
        }
        if (body.isEmpty()) {
            throw new CorruptCheckpointException(cache.file, "missing entry count");
        }
        long count = Checkpoints.parseLong(cache.file, body.getFirst());
        if (count != body.size() - 1) {
            throw new CorruptCheckpointException(
                    cache.file, "count " + count + " but " + (body.size() - 1) + " entry lines");
        }
        for (int i = 1; i < body.size(); i++) {
            String[] parts = body.get(i).trim().split(" ");
            if (parts.length != 2) {
                throw new CorruptCheckpointException(cache.file, "bad entry line '" + body.get(i) + "'");
            }
            long epoch = Checkpoints.parseLong(cache.file, parts[0]);
            long start = Checkpoints.parseLong(cache.file, parts[1]);
            Entry last = cache.entries.isEmpty() ? null : cache.entries.getLast();
            if (epoch < 0
                    || epoch > Integer.MAX_VALUE
                    || start < 0
                    || (last != null && (epoch <= last.epoch() || start <= last.startOffset()))) {
                throw new CorruptCheckpointException(
                        cache.file, "entry '" + body.get(i) + "' out of order or out of range");
            }
            cache.entries.add(new Entry((int) epoch, start));
        }
        return cache;
    }

    /**
     * Records that {@code epoch} wrote starting at {@code startOffset}. Returns true if the history
     * changed (then {@link #flush} persists it).
     */
    synchronized boolean assign(int epoch, long startOffset) {
        if (epoch < 0) {
            return false;
        }
        Entry last = entries.isEmpty() ? null : entries.getLast();
        if (last != null && last.epoch() == epoch && last.startOffset() <= startOffset) {
            return false;
        }
        entries.removeIf(e -> e.epoch() >= epoch || e.startOffset() >= startOffset);
        entries.add(new Entry(epoch, startOffset));
        dirty = true;
        return true;
    }

    /** Removes entries starting at or after {@code endOffset} (log truncated to it). */
    synchronized void truncateFromEnd(long endOffset) {
        dirty |= entries.removeIf(e -> e.startOffset() >= endOffset);
    }

    /** Drops history below {@code startOffset}: the epoch holding it now starts there. */
    synchronized void truncateFromStart(long startOffset) {
        int holder = -1;
        for (int i = 0; i < entries.size() && entries.get(i).startOffset() <= startOffset; i++) {
            holder = i;
        }
        if (holder < 0 || (holder == 0 && entries.getFirst().startOffset() == startOffset)) {
            return;
        }
        Entry kept = new Entry(entries.get(holder).epoch(), startOffset);
        entries.subList(0, holder + 1).clear();
        entries.addFirst(kept);
        dirty = true;
    }

    /** Forgets everything (the log was emptied). */
    synchronized void clear() {
        dirty |= !entries.isEmpty();
        entries.clear();
    }

    /**
     * Takes the history of {@code loaded}, a cache of the same directory that {@link LogLoader} just
     * loaded and reconciled with the log ({@link UnifiedLog#reopen}), including whether it still
     * needs a write.
     */
    synchronized void replaceWith(LeaderEpochCache loaded) {
        List<Entry> fresh = loaded.entries();
        entries.clear();
        entries.addAll(fresh);
        dirty = loaded.isDirty();
    }

    private synchronized boolean isDirty() {
        return dirty;
    }

    /** Writes the checkpoint file if anything changed since the last write. */
    synchronized void flush() throws IOException {
        if (!dirty) {
            return;
        }
        List<String> body = new ArrayList<>(entries.size() + 1);
        body.add(Integer.toString(entries.size()));
        for (Entry e : entries) {
            body.add(e.epoch() + " " + e.startOffset());
        }
        Checkpoints.write(file, body);
        dirty = false;
    }

    /** Marks the history as needing a write even if unchanged (a rebuilt or repaired file). */
    synchronized void markDirty() {
        dirty = true;
    }

    /** The latest epoch, -1 when the history is empty. */
    synchronized int latestEpoch() {
        return entries.isEmpty() ? -1 : entries.getLast().epoch();
    }

    /**
     * Where {@code epoch} ended, as Kafka's OffsetsForLeaderEpoch answers it: for the latest epoch,
     * ({@code epoch}, logEndOffset); for an older epoch, (the largest epoch &lt;= it, the start offset
     * of the first epoch above it); for an epoch below the first, ({@code epoch}, the first start
     * offset); for an epoch above the latest, or with an empty history, {@link
     * EpochEndOffset#UNDEFINED}.
     */
    synchronized EpochEndOffset endOffsetFor(int epoch, long logEndOffset) {
        if (entries.isEmpty() || epoch < 0) {
            return EpochEndOffset.UNDEFINED;
        }
        if (epoch == entries.getLast().epoch()) {
            return new EpochEndOffset(epoch, logEndOffset);
        }
        Entry floor = null;
        for (Entry e : entries) {
            if (e.epoch() > epoch) {
                return new EpochEndOffset(floor == null ? epoch : floor.epoch(), e.startOffset());
            }
            floor = e;
        }
        return EpochEndOffset.UNDEFINED;
    }

    /** A copy of the history, oldest first. */
    synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }
}
