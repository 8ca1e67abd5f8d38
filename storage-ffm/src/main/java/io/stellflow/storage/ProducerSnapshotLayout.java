package io.stellflow.storage;

import io.stellflow.server.common.file.AtomicFiles;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Binary layout of a producer-state snapshot ({@code <20-digit offset>.snapshot} in the partition
 * directory): the {@link ProducerStateManager} of the log at that offset (every batch below it
 * applied, none at or above it). Written at segment roll and clean close (temp file, fsync, rename,
 * fsync directory), so a load replays only the log after the latest snapshot not past its end.
 *
 * <pre>
 *  header, big-endian:
 *   0        4     6          10             18          22
 *  +--------+-----+----------+--------------+-----------+
 *  | magic  | ver |  crc32c  |    offset    |  entries  |
 *  | int32  |int16|  int32   |    int64     |   int32   |
 *  +--------+-----+----------+--------------+-----------+
 *  magic = 0x50534E50 ("PSNP"), ver = 3 (2 and 1 are still read), crc32c over bytes 10 .. end of file
 *
 *  entry (40 bytes in ver 3 and 2, 20 in ver 1, then batches x 32 bytes, x 24 before ver 3),
 *  ascending by producer id:
 *   0              8       10      12             20             28             36       40
 *  +--------------+-------+-------+--------------+--------------+--------------+--------+
 *  |  producerId  | epoch |batches| lastUpdateMs |txnFirstOffset| txnSequence  |coordEp.|
 *  |    int64     | int16 | int16 |    int64     |    int64     |    int64     | int32  |
 *  +--------------+-------+-------+--------------+--------------+--------------+--------+
 *  txnFirstOffset / txnSequence: the open transaction's BEGIN offset and sequence, -1 / -1 when
 *  none is open; coordEp.: the highest coordinatorEpoch of the producer's markers, -1 if none
 *  (ver 2 and 3; a ver 1 entry has none open and no marker seen). batches: 1..5 in ver 1, 0..5
 *  later (0: a producer known only from its BEGIN marker).
 *  batch (oldest first):
 *   0        4        8              16             24             32
 *  +--------+--------+--------------+--------------+--------------+
 *  |baseSeq |lastSeq |  baseOffset  |  lastOffset  |    digest    |
 *  | int32  | int32  |    int64     |    int64     |    int64     |
 *  +--------+--------+--------------+--------------+--------------+
 *  digest (ver 3 only): the batch's content digest (LogProducerState#contentDigest), 0 while not
 *  taken (it is taken before retention or compaction may remove the batch); a ver 1 or 2 batch
 *  reads as 0 and gets its digest the same way.
 * </pre>
 *
 * <p>Worked example: at offset 12, producer 7 epoch 0 with one batch of sequences 0..2 at offsets
 * 10..12, last append at ms 1000, in a transaction begun at offset 9 with sequence 4, no marker
 * seen, digest not taken: header {@code 50534e50 0003 <crc> 000000000000000c 00000001}, entry {@code
 * 0000000000000007 0000 0001 00000000000003e8 0000000000000009 0000000000000004 ffffffff}, batch
 * {@code 00000000 00000002 000000000000000a 000000000000000c 0000000000000000}: 22 + 40 + 32 = 94
 * bytes.
 *
 * <p>A build older than version 3 finds a version-3 file of an unknown version: it drops it as
 * corrupt and rebuilds from an older snapshot or the log (the state of batches below the log start
 * is then lost on that replica, so roll back only with the log's replicas in sync).
 *
 * <p>A snapshot that is short, has another magic or version, a bad CRC or an impossible count is
 * corrupt: {@link #read} throws and the log falls back to an older snapshot or a full replay.
 *
 * <p>Thread-safety: stateless; the files belong to the log's write lock.
 */
public final class ProducerSnapshotLayout {
    public static final String SUFFIX = ".snapshot";
    public static final int MAGIC = 0x50534E50;
    public static final short VERSION = 3;
    /** The version before content digests: batches without the digest, never written now. */
    public static final short VERSION_2 = 2;
    /** The version before transactions: entries without the two txn fields, never written now. */
    public static final short VERSION_1 = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int CRC_OFFSET = 6;
    public static final int OFFSET_OFFSET = 10;
    public static final int COUNT_OFFSET = 18;
    public static final int HEADER_SIZE = 22;
    public static final int ENTRY_SIZE = 40;
    public static final int ENTRY_SIZE_V1 = 20;
    public static final int BATCH_SIZE = 32;

    /** Snapshots kept; older ones are deleted after a new one is written. */
    static final int RETAINED = 2;

    private ProducerSnapshotLayout() {}

    /** The snapshot file of {@code offset} in {@code dir}. */
    public static Path file(Path dir, long offset) {
        return dir.resolve(String.format("%020d", offset) + SUFFIX);
    }

    /** Snapshot files of {@code dir} by offset (ascending); names that do not parse are skipped. */
    static TreeMap<Long, Path> list(Path dir) throws IOException {
        TreeMap<Long, Path> found = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                try {
                    found.put(Long.parseLong(name.substring(0, name.length() - SUFFIX.length())), f);
                } catch (NumberFormatException e) {
                    // Not ours (no 20-digit offset): left alone.
                }
            }
        }
        return found;
    }

    /** Writes the state at {@code offset} durably, then deletes all but the {@value #RETAINED} newest. */
    static void write(Path dir, long offset, List<ProducerStateManager.Entry> entries) throws IOException {
        int size = HEADER_SIZE;
        for (ProducerStateManager.Entry e : entries) {
            size += ENTRY_SIZE + e.count * BATCH_SIZE;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(MAGIC).putShort(VERSION).putInt(0).putLong(offset).putInt(entries.size());
        for (ProducerStateManager.Entry e : entries) {
            b.putLong(e.producerId).putShort(e.epoch).putShort((short) e.count).putLong(e.lastUpdateMs);
            b.putLong(e.txnFirstOffset).putLong(e.txnSequence).putInt(e.coordinatorEpoch);
            for (int i = 0; i < e.count; i++) {
                b.putInt(e.baseSequence[i])
                        .putInt(e.lastSequence[i])
                        .putLong(e.baseOffset[i])
                        .putLong(e.lastOffset[i])
                        .putLong(e.digest[i]);
            }
        }
        b.putInt(CRC_OFFSET, crc(b.array()));
        AtomicFiles.write(file(dir, offset), b.array());
        TreeMap<Long, Path> all = list(dir);
        while (all.size() > RETAINED) {
            Files.deleteIfExists(all.pollFirstEntry().getValue());
        }
    }

    /**
     * Reads a snapshot.
     *
     * @throws IOException the file cannot be read, or it is corrupt (the message names the file and why)
     */
    static List<ProducerStateManager.Entry> read(Path file, long expectedOffset) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            if (bytes.length < HEADER_SIZE || b.getInt(MAGIC_OFFSET) != MAGIC) {
                throw corrupt(file, "no snapshot header");
            }
            short version = b.getShort(VERSION_OFFSET);
            if (version != VERSION && version != VERSION_2 && version != VERSION_1) {
                throw corrupt(file, "unknown version " + version);
            }
            int entrySize = version == VERSION_1 ? ENTRY_SIZE_V1 : ENTRY_SIZE;
            int minBatches = version == VERSION_1 ? 1 : 0;
            if (b.getInt(CRC_OFFSET) != crc(bytes)) {
                throw corrupt(file, "CRC-32C mismatch");
            }
            if (b.getLong(OFFSET_OFFSET) != expectedOffset) {
                throw corrupt(file, "offset " + b.getLong(OFFSET_OFFSET) + " differs from its name");
            }
            int count = b.getInt(COUNT_OFFSET);
            if (count < 0 || count > (bytes.length - HEADER_SIZE) / entrySize) {
                throw corrupt(file, "entry count " + count);
            }
            b.position(HEADER_SIZE);
            List<ProducerStateManager.Entry> entries = new ArrayList<>(count);
            for (int n = 0; n < count; n++) {
                ProducerStateManager.Entry e = new ProducerStateManager.Entry(b.getLong(), b.getShort());
                int batches = b.getShort();
                if (batches < minBatches || batches > ProducerStateManager.BATCHES_PER_PRODUCER) {
                    throw corrupt(file, "producer " + e.producerId + " has " + batches + " batches");
                }
                e.lastUpdateMs = b.getLong();
                if (version != VERSION_1) {
                    e.txnFirstOffset = b.getLong();
                    e.txnSequence = b.getLong();
                    e.coordinatorEpoch = b.getInt();
                    if (e.txnFirstOffset < -1) {
                        throw corrupt(file, "producer " + e.producerId + " transaction at " + e.txnFirstOffset);
                    }
                }
                for (int i = 0; i < batches; i++) {
                    e.add(
                            b.getInt(),
                            b.getInt(),
                            b.getLong(),
                            b.getLong(),
                            version == VERSION ? b.getLong() : ProducerStateManager.NO_DIGEST);
                }
                entries.add(e);
            }
            if (b.hasRemaining()) {
                throw corrupt(file, b.remaining() + " bytes after the last entry");
            }
            return entries;
        } catch (BufferUnderflowException e) {
            throw corrupt(file, "truncated entry");
        }
    }

    private static int crc(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes, OFFSET_OFFSET, bytes.length - OFFSET_OFFSET);
        return (int) c.getValue();
    }

    private static IOException corrupt(Path file, String why) {
        return new IOException("corrupt producer snapshot " + file + ": " + why);
    }
}
