package io.stellflow.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A log's aborted transactions: one {@code .txnindex} file per segment that holds ABORT markers
 * ({@link AbortedTxnIndexLayout}), and all their entries in memory, ordered by the marker's offset,
 * for lock-free Fetch reads ({@link #overlapping}).
 *
 * <p>Files follow their segment: renamed to {@code .deleted} and deleted with it (retention,
 * truncation, recovery, {@link LogSegment#renameForDeletion}), moved with it into quarantine, kept
 * through a compaction swap (markers are never compacted away). A segment cut by a truncation keeps
 * its file until the producer-state rebuild that follows, which {@link #load trims} it to the
 * entries below its replay start and replays the rest. Entries are written without an fsync;
 * {@link #force} fsyncs them before a producer snapshot is written, so a snapshot never covers an
 * entry that a power loss could lose.
 *
 * <p>Memory: 48 bytes per aborted transaction still in the log; entries below the log start
 * offset are dropped at the next abort or load.
 *
 * <p>Thread-safety: writes under the owning log's write lock; {@link #overlapping} from any thread.
 */
final class AbortedTxnIndex {
    private static final Logger LOG = LoggerFactory.getLogger(AbortedTxnIndex.class);
    private static final AbortedTxn[] NONE = new AbortedTxn[0];

    private final Path dir;

    /** Every entry, ascending by lastOffset; replaced as a whole (copy on write, aborts are rare). */
    private volatile AbortedTxn[] entries = NONE;

    /** Segment bases whose file has entries not yet fsynced. Write lock. */
    private final TreeSet<Long> unforced = new TreeSet<>();

    AbortedTxnIndex(Path dir) {
        this.dir = dir;
    }

    static Path path(Path dir, long segmentBaseOffset) {
        return dir.resolve(LogSegment.fileStem(segmentBaseOffset) + AbortedTxnIndexLayout.SUFFIX);
    }

    /**
     * Reloads from the files of {@code segmentBases}, keeping in each only the entries whose marker
     * is below {@code keepBelow} (the offset the producer-state replay starts from: it writes the
     * later ones again). A torn or invalid entry ends its file there; files are cut to what is kept.
     */
    void load(long[] segmentBases, long keepBelow, long logStartOffset) throws IOException {
        List<AbortedTxn> kept = new ArrayList<>();
        unforced.clear();
        for (long base : segmentBases) {
            Path f = path(dir, base);
            if (!Files.exists(f)) {
                continue;
            }
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(f));
            int n = 0;
            for (int at = 0;
                    at + AbortedTxnIndexLayout.ENTRY_SIZE <= b.capacity();
                    at += AbortedTxnIndexLayout.ENTRY_SIZE) {
                AbortedTxn t = AbortedTxnIndexLayout.read(b, at);
                if (t == null) {
                    LOG.warn("Aborted-transaction index {} has an invalid entry at byte {}; cutting it there", f, at);
                    break;
                }
                if (t.lastOffset() >= keepBelow) {
                    break;
                }
                if (t.lastOffset() >= logStartOffset) {
                    kept.add(t);
                }
                n++;
            }
            long keepBytes = (long) n * AbortedTxnIndexLayout.ENTRY_SIZE;
            if (keepBytes == 0) {
                Files.delete(f);
            } else if (keepBytes != b.capacity()) {
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                    ch.truncate(keepBytes);
                }
            }
        }
        kept.sort((a, c) -> Long.compare(a.lastOffset(), c.lastOffset()));
        entries = kept.toArray(NONE);
    }

    /**
     * Records an aborted transaction whose ABORT marker is in the segment based at {@code
     * segmentBaseOffset}: appended to its file and published to readers. Entries below {@code
     * logStartOffset} are dropped from memory.
     */
    void append(long segmentBaseOffset, AbortedTxn t, long logStartOffset) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(AbortedTxnIndexLayout.ENTRY_SIZE);
        AbortedTxnIndexLayout.write(b, t);
        b.flip();
        try (FileChannel ch = FileChannel.open(
                path(dir, segmentBaseOffset),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
        unforced.add(segmentBaseOffset);
        AbortedTxn[] old = entries;
        int from = 0;
        while (from < old.length && old[from].lastOffset() < logStartOffset) {
            from++;
        }
        AbortedTxn[] next = Arrays.copyOfRange(old, from, old.length + 1);
        next[next.length - 1] = t;
        entries = next;
    }

    /** fsyncs every file written since the last call (before a producer snapshot). */
    void force() throws IOException {
        while (!unforced.isEmpty()) {
            Path f = path(dir, unforced.first());
            if (Files.exists(f)) { // its segment may be gone meanwhile
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
            }
            unforced.pollFirst();
        }
    }

    /** Forgets every entry (the log restarts empty; its segment files go with their segments). */
    void clear() {
        entries = NONE;
        unforced.clear();
    }

    /**
     * The aborted transactions that overlap {@code [fromOffset, upperExclusive)}: marker at or
     * after {@code fromOffset} and first offset below {@code upperExclusive}, ascending by marker
     * offset. An empty immutable list when there are none (no allocation). Any thread.
     */
    List<AbortedTxn> overlapping(long fromOffset, long upperExclusive) {
        AbortedTxn[] all = entries;
        int lo = 0;
        int hi = all.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (all[mid].lastOffset() < fromOffset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<AbortedTxn> out = null;
        for (int i = lo; i < all.length; i++) {
            if (all[i].firstOffset() < upperExclusive) {
                if (out == null) {
                    out = new ArrayList<>();
                }
                out.add(all[i]);
            }
        }
        return out == null ? List.of() : out;
    }

    /** Entries in memory (tests). */
    int size() {
        return entries.length;
    }
}
