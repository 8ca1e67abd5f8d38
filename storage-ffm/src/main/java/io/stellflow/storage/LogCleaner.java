package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compaction of one partition's sealed segments ({@code cleanup.policy=compact}): the two passes
 * behind {@link UnifiedLog#compact}. The swap of a rewritten segment into the log is the log's
 * ({@link LogCompaction} documents the file protocol, {@link LogLoader} completes or rolls
 * back an interrupted one).
 *
 * <ol>
 *   <li>{@link #buildOffsetMap}: key -&gt; offset of its last record over the cleanable segments
 *       (all but the active one, below the high watermark).
 *   <li>{@link #writeCleaned}: for one segment, writes {@code <base>.log.cleaned} holding every
 *       batch with only the records whose offset is the last for their key; a tombstone (null
 *       value) that is the last for its key is dropped too once the segment's last modification is
 *       {@code delete.retention.ms} in the past. The file is fsynced and stamped with the old
 *       segment's modification time (so cleaning does not restart the tombstone or retention
 *       clocks).
 * </ol>
 *
 * <p>Rewritten batch format (storage only, never accepted from a producer): the header is the
 * original one (baseOffsetDelta, lastOffsetDelta, baseTimestamp, producer fields, leader epoch)
 * except {@code batchLength}, {@code recordCount}, {@code maxTimestamp} (the largest timestamp of
 * the kept records, at least baseTimestamp) and the CRC-32C, which are recomputed. Kept records are
 * copied byte for byte, so each still carries its original {@code offsetDelta}: record offset =
 * batch base + offsetDelta is its original offset, the batch's last offset is unchanged, and
 * {@code recordCount} may be smaller than {@code lastOffsetDelta + 1} (as in Kafka). {@code
 * docs/spec/wire-protocol.md} §7.7 ({@code offsetDelta == index}, {@code lastOffsetDelta ==
 * recordCount - 1}) applies to Produce only; consumers compute offsets from offsetDelta. A batch
 * left without records is dropped, so the log has offset gaps: reads return the next batch whose
 * last offset is &gt;= the fetch offset.
 *
 * <p>Compressed batches ({@link StoredBatchCodecs}) are decompressed in both passes and read like the
 * others; one that loses records is compressed again with its own codec at Kafka's default level
 * (CRC recomputed), one that loses none is copied as stored.
 *
 * <p>A live producer's newest batch is kept as stored (its records too, even when later records
 * supersede them): every producer id in the log's producer state (not expired by {@code
 * producer.id.expiration.ms}) keeps the batch with its last sequence. A retry of that batch is
 * recognised by comparing its records with the stored ones ({@link LogProducerState}), which an
 * emptied or rewritten batch would fail ({@code OUT_OF_ORDER_SEQUENCE_NUMBER} instead of the
 * original offset), and a replica that copies the compacted log rebuilds the producer's last
 * sequence from it. Kafka keeps only an empty header there; keeping the records costs at most one
 * batch per live producer (at most {@code producer.id.max.per.partition}) and needs no new batch
 * format. The producer's older remembered batches (up to 4) are compacted as any other.
 *
 * <p>Not compacted: records without a key (appended before the topic became compacted) are kept;
 * control batches (transaction markers, {@link ControlRecordLayout}) are kept whole and their keys
 * are not entered in the offset map (the aborted-transaction index and replicas rely on them); nor
 * are the keys of aborted transactions' records ({@link #buildOffsetMap}).
 *
 * <p>Memory: the offset map holds every distinct key of the cleanable range (a copy of the key
 * bytes plus a boxed offset); there is no bound yet, unlike Kafka's fixed-size cleaner buffer.
 *
 * <p>Thread-safety: stateless; reads sealed segments concurrently with appends and reads (their
 * bytes below {@link LogSegment#sizeBytes} never change unless truncated, which the swap detects).
 */
final class LogCleaner {
    /** Suffix of a rewritten segment log before the swap. */
    static final String CLEANED_SUFFIX = ".cleaned";

    /** Suffix of a rewritten segment log during the swap (the commit point). */
    static final String SWAP_SUFFIX = ".swap";

    private static final int RECORD_TIMESTAMP_DELTA_OFFSET = 5;
    private static final int RECORD_OFFSET_DELTA_OFFSET = 13;
    private static final int RECORD_KEY_OFFSET = 17;

    private LogCleaner() {}

    /** What the offset map pass found. */
    record OffsetMap(Map<ByteBuffer, Long> lastOffsetByKey, long records, long obsoleteRecords) {
        /** Fraction of the records that a cleaning would remove (superseded by a later one). */
        double dirtyRatio() {
            return records == 0 ? 0 : (double) obsoleteRecords / records;
        }

        boolean isLast(ByteBuffer key, long offset) {
            Long last = lastOffsetByKey.get(key);
            return last == null || last == offset;
        }
    }

    /** What {@link #writeCleaned} wrote. */
    record Cleaned(Path file, int sizeBytes, long recordsRemoved) {}

    /**
     * Pass 1: the last offset of every key over {@code segs} (with their sizes at the call), leaving
     * out the records of the batches of {@code aborted} transactions (a batch of the entry's producer between its first offset and its
     * ABORT marker): an aborted value must not supersede the committed one before it. Such a record
     * is then kept only while nothing else holds its key.
     */
    static OffsetMap buildOffsetMap(LogSegment[] segs, int[] sizes, List<AbortedTxn> aborted) throws IOException {
        Map<ByteBuffer, Long> map = new HashMap<>();
        long records = 0;
        long superseded = 0;
        ByteBuf stored = Unpooled.buffer(64 * 1024);
        try (StoredBatchCodecs codecs = new StoredBatchCodecs()) {
            for (int i = 0; i < segs.length; i++) {
                LogSegment s = segs[i];
                for (int pos = 0; pos < sizes[i]; ) {
                    readBatch(s, stored, pos);
                    int storedSize = stored.readableBytes();
                    ByteBuf buf = isCompressed(stored) ? codecs.decompress(stored, s, pos) : stored;
                    int size = buf.readableBytes();
                    long base = s.baseOffset + RecordBatchLayout.baseOffsetDelta(buf, 0);
                    int count = ControlRecordLayout.isControl(buf, 0)
                                    || isAborted(aborted, RecordBatchLayout.producerId(buf, 0), base)
                            ? 0
                            : RecordBatchLayout.recordCount(buf, 0);
                    int p = RecordBatchLayout.RECORDS_OFFSET;
                    for (int r = 0; r < count; r++) {
                        int recordSize = recordSize(buf, p, size, s, pos);
                        ByteBuffer key = key(buf, p);
                        if (key != null) {
                            records++;
                            long offset = base + buf.getInt(p + RECORD_OFFSET_DELTA_OFFSET);
                            if (map.put(key, offset) != null) {
                                superseded++;
                            }
                        }
                        p += recordSize;
                    }
                    pos += storedSize;
                }
            }
        } finally {
            stored.release();
        }
        return new OffsetMap(map, records, superseded);
    }

    /**
     * Pass 2: writes {@code <segment log>.cleaned} with the records to keep from {@code
     * segment[0, size)}, fsyncs it and gives it {@code mtimeMs}. Returns null (and writes nothing)
     * when no record would be removed.
     *
     * @param keepBatchBases base offsets (ascending) of batches kept as stored: the live producers'
     *     newest batches ({@link ProducerStateManager#lastBatchBaseOffsets})
     */
    static Cleaned writeCleaned(
            LogSegment s, int size, OffsetMap map, long[] keepBatchBases, boolean dropTombstones, long mtimeMs)
            throws IOException {
        ByteBuf in = Unpooled.buffer(64 * 1024);
        ByteBuf out = Unpooled.buffer(64 * 1024);
        ByteBuf recompressed = Unpooled.buffer(64 * 1024);
        Path target = s.logFile.resolveSibling(s.logFile.getFileName() + CLEANED_SUFFIX);
        long removed = 0;
        try (StoredBatchCodecs codecs = new StoredBatchCodecs();
                FileChannel ch = FileChannel.open(
                        target,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING,
                        StandardOpenOption.WRITE)) {
            for (int pos = 0; pos < size; ) {
                readBatch(s, in, pos);
                int batchSize = in.readableBytes();
                out.clear();
                int codec = StoredBatchCodecs.codecId(in);
                long batchBase = s.baseOffset + RecordBatchLayout.baseOffsetDelta(in, 0);
                if (Arrays.binarySearch(keepBatchBases, batchBase) >= 0) {
                    out.writeBytes(in, 0, batchSize); // a live producer's newest batch: kept as stored
                } else if (codec == 0) {
                    removed += filterBatch(s, pos, in, out, map, dropTombstones);
                } else {
                    // Read through its records uncompressed; a batch that lost records keeps its codec.
                    int n = filterBatch(s, pos, codecs.decompress(in, s, pos), out, map, dropTombstones);
                    removed += n;
                    if (n == 0) {
                        out.clear();
                        out.writeBytes(in, 0, batchSize); // untouched: the stored compressed bytes
                    } else if (out.isReadable()) {
                        recompressed.clear();
                        codecs.compress(out, codec, recompressed);
                        out.clear();
                        out.writeBytes(recompressed);
                    }
                }
                while (out.isReadable()) {
                    out.readBytes(ch, out.readableBytes());
                }
                pos += batchSize;
            }
            if (removed == 0) {
                ch.close();
                Files.delete(target);
                return null;
            }
            ch.force(true);
            int written = Math.toIntExact(ch.size());
            ch.close();
            Files.setLastModifiedTime(target, FileTime.fromMillis(mtimeMs));
            return new Cleaned(target, written, removed);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(target);
            throw e;
        } finally {
            in.release();
            out.release();
            recompressed.release();
        }
    }

    /**
     * Writes the kept part of the batch in {@code in} to {@code out} (nothing when no record is
     * kept). Returns the number of records removed.
     */
    private static int filterBatch(
            LogSegment s, int batchPos, ByteBuf in, ByteBuf out, OffsetMap map, boolean dropTombstones)
            throws IOException {
        int size = in.readableBytes();
        if (ControlRecordLayout.isControl(in, 0)) {
            out.writeBytes(in, 0, size); // a transaction marker: kept as stored
            return 0;
        }
        long base = s.baseOffset + RecordBatchLayout.baseOffsetDelta(in, 0);
        long baseTimestamp = RecordBatchLayout.baseTimestamp(in, 0);
        int count = RecordBatchLayout.recordCount(in, 0);
        out.writeBytes(in, 0, RecordBatchLayout.HEADER_SIZE);
        int kept = 0;
        long maxTimestamp = baseTimestamp;
        int p = RecordBatchLayout.RECORDS_OFFSET;
        for (int r = 0; r < count; r++) {
            int recordSize = recordSize(in, p, size, s, batchPos);
            ByteBuffer key = key(in, p);
            long offset = base + in.getInt(p + RECORD_OFFSET_DELTA_OFFSET);
            boolean keep = key == null || (map.isLast(key, offset) && !(dropTombstones && isTombstone(in, p)));
            if (keep) {
                out.writeBytes(in, p, recordSize);
                maxTimestamp = Math.max(maxTimestamp, baseTimestamp + in.getLong(p + RECORD_TIMESTAMP_DELTA_OFFSET));
                kept++;
            }
            p += recordSize;
        }
        if (kept == count) {
            out.clear();
            out.writeBytes(in, 0, size); // untouched: the original bytes and CRC
            return 0;
        }
        if (kept == 0) {
            out.clear();
            return count;
        }
        out.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, out.readableBytes() - RecordBatchLayout.LOG_OVERHEAD);
        out.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, kept);
        out.setLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET, maxTimestamp);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        return count - kept;
    }

    /** Whether the batch of {@code producerId} at {@code base} belongs to one of {@code aborted}. */
    private static boolean isAborted(List<AbortedTxn> aborted, long producerId, long base) {
        if (producerId < 0) {
            return false;
        }
        for (AbortedTxn t : aborted) {
            if (t.producerId() == producerId && base >= t.firstOffset() && base <= t.lastOffset()) {
                return true;
            }
        }
        return false;
    }

    private static boolean isCompressed(ByteBuf batch) {
        return (RecordBatchLayout.attributes(batch, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0;
    }

    /** Size (length field included) of the record at {@code p}, checked against the batch size. */
    private static int recordSize(ByteBuf buf, int p, int batchSize, LogSegment s, int batchPos) throws IOException {
        if (p + 4 > batchSize) {
            throw new IOException("corrupt batch at " + s.logFile + ":" + batchPos + ": truncated record");
        }
        int length = buf.getInt(p);
        if (length < RecordBatchLayout.MIN_RECORD_LENGTH || p + 4L + length > batchSize) {
            throw new IOException("corrupt batch at " + s.logFile + ":" + batchPos + ": record length " + length);
        }
        return 4 + length;
    }

    /** The key of the record at {@code p} (a copy), null for a null key. */
    private static ByteBuffer key(ByteBuf buf, int p) {
        int len = buf.getInt(p + RECORD_KEY_OFFSET);
        if (len < 0) {
            return null;
        }
        byte[] key = new byte[len];
        buf.getBytes(p + RECORD_KEY_OFFSET + 4, key);
        return ByteBuffer.wrap(key);
    }

    private static boolean isTombstone(ByteBuf buf, int p) {
        int keyLen = Math.max(buf.getInt(p + RECORD_KEY_OFFSET), 0);
        return buf.getInt(p + RECORD_KEY_OFFSET + 4 + keyLen) < 0;
    }

    /**
     * True when the record set holds a record with a null key (compressed batches are not looked
     * into). Used by {@link UnifiedLog#appendAsLeader} on compacted logs.
     */
    static boolean hasNullKey(ByteBuf records, int start, int end) {
        for (int b = start; b < end; b += RecordBatchLayout.batchSize(records, b)) {
            int attributes = RecordBatchLayout.attributes(records, b);
            if ((attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
                continue;
            }
            int count = RecordBatchLayout.recordCount(records, b);
            int p = b + RecordBatchLayout.RECORDS_OFFSET;
            for (int r = 0; r < count; r++) {
                if (records.getInt(p + RECORD_KEY_OFFSET) < 0) {
                    return true;
                }
                p += 4 + records.getInt(p);
            }
        }
        return false;
    }

    /** Reads the whole batch at {@code pos} into {@code buf} (readerIndex 0, writerIndex = size). */
    private static void readBatch(LogSegment s, ByteBuf buf, int pos) throws IOException {
        buf.clear();
        buf.ensureWritable(RecordBatchLayout.LOG_OVERHEAD);
        readInto(s, buf, pos, RecordBatchLayout.LOG_OVERHEAD);
        int size = RecordBatchLayout.LOG_OVERHEAD + buf.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET);
        if (size < RecordBatchLayout.HEADER_SIZE) {
            throw new IOException("corrupt batch at " + s.logFile + ":" + pos + ": size " + size);
        }
        buf.clear();
        buf.ensureWritable(size);
        readInto(s, buf, pos, size);
    }

    private static void readInto(LogSegment s, ByteBuf buf, long position, int length) throws IOException {
        int copied = 0;
        while (copied < length) {
            int n = buf.setBytes(copied, s.log, position + copied, length - copied);
            if (n < 0) {
                throw new EOFException("unexpected end of " + s.logFile + " at " + (position + copied));
            }
            copied += n;
        }
        buf.writerIndex(length);
    }
}
