package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Offline, read-only access to one segment's files for inspection ({@code stellflow-dump-log.sh}):
 * the batches of a {@code .log}, the entries of its {@code .index} and {@code .timeindex}, and a check
 * of each index entry against the log; the aborted transactions of its {@code .txnindex} ({@link
 * AbortedTxnIndexLayout}). Reads the formats through the storage's own classes ({@link
 * RecordBatchLayout}, {@link OffsetIndex}, {@link TimeIndex}, {@link RecordTimestamps}); never writes,
 * truncates or locks a file, so it may run on the files of a stopped broker (or, with a view that may
 * end in a half-written batch, of a running one).
 *
 * <p>Errors: I/O failures as {@link IOException}; a file name that is not {@code <20-digit base
 * offset>.log|.index|.timeindex|.txnindex} as {@link IllegalArgumentException}. Damaged content is reported,
 * never thrown: a batch whose CRC does not match is handed out with {@code crcValid} false, a log
 * whose tail is not a whole batch ends the walk with {@link LogWalk#problem}.
 *
 * <p>Thread-safety: stateless; each call opens and closes its own files.
 */
public final class SegmentDump {
    private SegmentDump() {}

    /**
     * One stored batch of a {@code .log}.
     *
     * @param baseOffset absolute offset of its first record (segment base + stored bytes 0-3)
     * @param lastOffset absolute offset of its last record
     * @param recordCount the header's record count
     * @param position byte position in the {@code .log}
     * @param sizeBytes whole batch size in bytes (8 + batchLength)
     * @param leaderEpoch the partition leader epoch stamped at append
     * @param attributes the header's attributes (compression in bits 0-2, control bit 4, ...)
     * @param baseTimestampMs the header's base timestamp (epoch ms)
     * @param maxTimestampMs the real largest record timestamp (epoch ms), not the header's hint
     * @param producerId the header's producer id (-1 for a plain producer)
     * @param crcValid whether the stored CRC-32C matches bytes 17..end
     * @param bytes the whole batch (read-only view, valid during the callback only), for record decoding
     */
    public record Batch(
            long baseOffset,
            long lastOffset,
            int recordCount,
            int position,
            int sizeBytes,
            int leaderEpoch,
            int attributes,
            long baseTimestampMs,
            long maxTimestampMs,
            long producerId,
            boolean crcValid,
            ByteBuf bytes) {}

    /** Receives each batch of {@link #walkLog}, in file order. */
    @FunctionalInterface
    public interface BatchSink {
        /** One batch; {@code batch.bytes()} must not be kept after the call. */
        void batch(Batch batch) throws IOException;
    }

    /**
     * How a walk of a {@code .log} ended.
     *
     * @param batches whole batches handed out
     * @param validBytes bytes covered by them
     * @param sizeBytes the file size
     * @param problem null when the file ends on a batch boundary, else why the walk stopped at validBytes
     */
    public record LogWalk(int batches, long validBytes, long sizeBytes, String problem) {}

    /**
     * An index entry: {@code offset} is absolute (segment base + relative offset), {@code value} is a
     * log position ({@code .index}) or a timestamp in epoch ms ({@code .timeindex}).
     */
    public record IndexEntry(long offset, long value) {}

    /**
     * The entries of an index file and what the check against its log found.
     *
     * @param entries the entries before any zero-filled preallocated tail
     * @param preallocatedSlots trailing all-zero slots (an active segment's preallocated index; a file
     *     of zeros only has no entries)
     * @param problems one line per inconsistency (empty: the index agrees with the log)
     */
    public record IndexDump(List<IndexEntry> entries, int preallocatedSlots, List<String> problems) {}

    /**
     * One aborted transaction of a {@code .txnindex} (the fields of {@link AbortedTxn}, here so the
     * tools depend on this class only).
     *
     * @param producerId the aborting producer
     * @param firstOffset its BEGIN marker
     * @param lastOffset its ABORT marker (in this segment)
     * @param lastStableOffset the partition's last stable offset right after the abort
     */
    public record TxnIndexEntry(long producerId, long firstOffset, long lastOffset, long lastStableOffset) {}

    /**
     * The entries of a {@code .txnindex} and what is wrong with the file.
     *
     * @param entries the valid entries, in file order
     * @param problems one line per damaged entry, out-of-order entry or torn tail (empty: sound)
     */
    public record TxnIndexDump(List<TxnIndexEntry> entries, List<String> problems) {}

    /** The segment base offset named by {@code file} ({@code 00000000000000001000.log} gives 1000). */
    public static long baseOffsetOf(Path file) {
        String name = file.getFileName().toString();
        int dot = name.indexOf('.');
        String stem = dot < 0 ? name : name.substring(0, dot);
        String suffix = dot < 0 ? "" : name.substring(dot);
        boolean known = suffix.equals(LogSegment.LOG_SUFFIX)
                || suffix.equals(LogSegment.INDEX_SUFFIX)
                || suffix.equals(LogSegment.TIME_INDEX_SUFFIX)
                || suffix.equals(AbortedTxnIndexLayout.SUFFIX);
        if (!known || stem.length() != 20 || !stem.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException(
                    file + " is not a segment file (<20-digit base offset>.log, .index, .timeindex or .txnindex)");
        }
        return Long.parseLong(stem);
    }

    /** The {@code .log} of the segment {@code indexFile} belongs to (same directory and base offset). */
    public static Path logOf(Path indexFile) {
        long base = baseOffsetOf(indexFile);
        return LogSegment.logPath(indexFile.toAbsolutePath().getParent(), base);
    }

    /** Hands every whole batch of {@code logFile} to {@code sink}, in order; stops at a damaged tail. */
    public static LogWalk walkLog(Path logFile, BatchSink sink) throws IOException {
        long base = baseOffsetOf(logFile);
        try (FileChannel ch = FileChannel.open(logFile, StandardOpenOption.READ)) {
            long size = ch.size();
            long pos = 0;
            int batches = 0;
            ByteBuffer head = ByteBuffer.allocate(RecordBatchLayout.LOG_OVERHEAD);
            while (pos < size) {
                if (size - pos < RecordBatchLayout.HEADER_SIZE) {
                    return new LogWalk(batches, pos, size, (size - pos) + " trailing bytes, fewer than a batch header");
                }
                head.clear();
                readFully(ch, head, pos);
                int batchLength = head.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
                long whole = RecordBatchLayout.LOG_OVERHEAD + (long) batchLength;
                if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH || pos + whole > size) {
                    return new LogWalk(
                            batches,
                            pos,
                            size,
                            "batchLength " + batchLength + " at position " + pos + " does not fit the file");
                }
                ByteBuffer data = ByteBuffer.allocate((int) whole);
                readFully(ch, data, pos);
                ByteBuf buf = Unpooled.wrappedBuffer(data.array()).asReadOnly();
                if (RecordBatchLayout.magic(buf, 0) != RecordBatchLayout.MAGIC) {
                    return new LogWalk(
                            batches, pos, size, "magic " + RecordBatchLayout.magic(buf, 0) + " at position " + pos);
                }
                long first = base + RecordBatchLayout.baseOffsetDelta(buf, 0);
                sink.batch(new Batch(
                        first,
                        first + RecordBatchLayout.lastOffsetDelta(buf, 0),
                        RecordBatchLayout.recordCount(buf, 0),
                        (int) pos,
                        (int) whole,
                        RecordBatchLayout.partitionLeaderEpoch(buf, 0),
                        RecordBatchLayout.attributes(buf, 0),
                        RecordBatchLayout.baseTimestamp(buf, 0),
                        RecordTimestamps.maxOf(data, 0, (int) whole),
                        RecordBatchLayout.producerId(buf, 0),
                        RecordBatchLayout.computeCrc(buf, 0) == RecordBatchLayout.crc(buf, 0),
                        buf));
                batches++;
                pos += whole;
            }
            return new LogWalk(batches, pos, size, null);
        }
    }

    /**
     * The aborted transactions of {@code txnIndexFile} ({@link AbortedTxnIndexLayout}): every whole
     * entry, with a problem for an entry that is not a valid version-0 one (skipped), an entry whose
     * ABORT marker is below the segment base or not after the previous entry's, and a length that is
     * not a whole number of entries (a torn last entry, which the broker drops at its next open).
     */
    public static TxnIndexDump txnIndex(Path txnIndexFile) throws IOException {
        long base = baseOffsetOf(txnIndexFile);
        if (!txnIndexFile.getFileName().toString().endsWith(AbortedTxnIndexLayout.SUFFIX)) {
            throw new IllegalArgumentException(txnIndexFile + " is not a .txnindex file");
        }
        List<TxnIndexEntry> entries = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        ByteBuffer b;
        try (FileChannel ch = FileChannel.open(txnIndexFile, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE) {
                throw new IOException(txnIndexFile + ": " + size + " bytes, too large for an aborted index");
            }
            b = ByteBuffer.allocate((int) size);
            readFully(ch, b, 0);
        }
        int whole = b.capacity() / AbortedTxnIndexLayout.ENTRY_SIZE;
        long previousLast = base - 1;
        for (int i = 0; i < whole; i++) {
            int at = i * AbortedTxnIndexLayout.ENTRY_SIZE;
            AbortedTxn t = AbortedTxnIndexLayout.read(b, at);
            if (t == null) {
                problems.add("entry " + i + " at byte " + at + " is not a valid version-"
                        + AbortedTxnIndexLayout.VERSION + " entry (version "
                        + b.getShort(at + AbortedTxnIndexLayout.VERSION_OFFSET) + ")");
                continue;
            }
            if (t.lastOffset() <= previousLast) {
                problems.add("entry " + i + " at byte " + at + ": lastOffset " + t.lastOffset()
                        + (previousLast < base
                                ? " is below the segment base " + base
                                : " is not after " + previousLast));
            }
            previousLast = Math.max(previousLast, t.lastOffset());
            entries.add(new TxnIndexEntry(t.producerId(), t.firstOffset(), t.lastOffset(), t.lastStableOffset()));
        }
        int torn = b.capacity() % AbortedTxnIndexLayout.ENTRY_SIZE;
        if (torn != 0) {
            problems.add("torn entry: " + torn + " trailing byte(s) after " + whole + " whole "
                    + AbortedTxnIndexLayout.ENTRY_SIZE + "-byte entries (dropped when the broker opens the log)");
        }
        return new TxnIndexDump(entries, problems);
    }

    /**
     * The entries of {@code indexFile} and a check against its segment's {@code .log} (same directory):
     * entries strictly increase and each names the start of a batch with that base offset.
     */
    public static IndexDump offsetIndex(Path indexFile) throws IOException {
        long base = baseOffsetOf(indexFile);
        long size = Files.size(indexFile);
        List<String> problems = new ArrayList<>();
        List<IndexEntry> entries = new ArrayList<>();
        int slots = (int) (size / OffsetIndexLayout.ENTRY_SIZE);
        int tail = 0;
        if (size % OffsetIndexLayout.ENTRY_SIZE != 0) {
            problems.add(
                    "size " + size + " is not a whole number of " + OffsetIndexLayout.ENTRY_SIZE + "-byte entries");
        } else if (slots > 0) {
            OffsetIndex idx = OffsetIndex.openExisting(indexFile, base, (int) size, false);
            try {
                tail = idx.preallocatedTailSlots();
                for (int i = 0; i < slots - tail; i++) {
                    entries.add(new IndexEntry(base + idx.relativeOffsetAt(i), idx.positionAt(i)));
                }
            } finally {
                idx.abandon();
            }
        }
        checkAgainstLog(indexFile, entries, false, problems);
        return new IndexDump(entries, tail, problems);
    }

    /**
     * The entries of {@code timeIndexFile} and a check against its {@code .log}: timestamps and offsets
     * strictly increase and each names a batch (by base offset) whose largest record timestamp is the
     * entry's.
     */
    public static IndexDump timeIndex(Path timeIndexFile) throws IOException {
        long base = baseOffsetOf(timeIndexFile);
        long size = Files.size(timeIndexFile);
        List<String> problems = new ArrayList<>();
        List<IndexEntry> entries = new ArrayList<>();
        int slots = (int) (size / TimeIndexLayout.ENTRY_SIZE);
        int tail = 0;
        if (size % TimeIndexLayout.ENTRY_SIZE != 0) {
            problems.add("size " + size + " is not a whole number of " + TimeIndexLayout.ENTRY_SIZE + "-byte entries");
        } else if (slots > 0) {
            TimeIndex idx = TimeIndex.openExisting(timeIndexFile, base, slots * OffsetIndexLayout.ENTRY_SIZE, false);
            try {
                tail = idx.preallocatedTailSlots();
                for (int i = 0; i < slots - tail; i++) {
                    entries.add(new IndexEntry(base + idx.relativeOffsetAt(i), idx.timestampAt(i)));
                }
            } finally {
                idx.abandon();
            }
        }
        checkAgainstLog(timeIndexFile, entries, true, problems);
        return new IndexDump(entries, tail, problems);
    }

    private static void checkAgainstLog(Path index, List<IndexEntry> entries, boolean time, List<String> problems)
            throws IOException {
        for (int i = 1; i < entries.size(); i++) {
            IndexEntry prev = entries.get(i - 1);
            IndexEntry e = entries.get(i);
            if (e.offset() <= prev.offset() || e.value() <= prev.value()) {
                problems.add(
                        "entry " + i + " " + describe(e, time) + " does not increase after " + describe(prev, time));
            }
        }
        Path log = logOf(index);
        if (!Files.isRegularFile(log)) {
            problems.add("no log file " + log + " to check the entries against");
            return;
        }
        Map<Long, Batch> byBase = new HashMap<>();
        Map<Integer, Long> baseByPosition = new HashMap<>();
        LogWalk walk = walkLog(log, b -> {
            Batch kept = new Batch(
                    b.baseOffset(),
                    b.lastOffset(),
                    b.recordCount(),
                    b.position(),
                    b.sizeBytes(),
                    b.leaderEpoch(),
                    b.attributes(),
                    b.baseTimestampMs(),
                    b.maxTimestampMs(),
                    b.producerId(),
                    b.crcValid(),
                    null);
            byBase.put(b.baseOffset(), kept);
            baseByPosition.put(b.position(), b.baseOffset());
        });
        for (int i = 0; i < entries.size(); i++) {
            IndexEntry e = entries.get(i);
            if (time) {
                Batch b = byBase.get(e.offset());
                if (b == null) {
                    problems.add("entry " + i + " " + describe(e, true) + ": no batch starts at offset " + e.offset());
                } else if (b.maxTimestampMs() != e.value()) {
                    problems.add("entry " + i + " " + describe(e, true) + ": the batch at offset " + e.offset()
                            + " has max timestamp " + b.maxTimestampMs());
                }
            } else {
                Long at = baseByPosition.get((int) e.value());
                if (at == null) {
                    problems.add("entry " + i + " " + describe(e, false) + ": no batch starts at position " + e.value()
                            + (e.value() >= walk.validBytes()
                                    ? " (past the log's " + walk.validBytes() + " valid bytes)"
                                    : ""));
                } else if (at != e.offset()) {
                    problems.add("entry " + i + " " + describe(e, false) + ": the batch at position " + e.value()
                            + " starts at offset " + at);
                }
            }
        }
    }

    private static String describe(IndexEntry e, boolean time) {
        return time
                ? "(timestamp " + e.value() + ", offset " + e.offset() + ")"
                : "(offset " + e.offset() + ", position " + e.value() + ")";
    }

    private static void readFully(FileChannel ch, ByteBuffer dst, long position) throws IOException {
        long at = position;
        while (dst.hasRemaining()) {
            int n = ch.read(dst, at);
            if (n < 0) {
                throw new IOException("unexpected end of file at " + at);
            }
            at += n;
        }
    }
}
