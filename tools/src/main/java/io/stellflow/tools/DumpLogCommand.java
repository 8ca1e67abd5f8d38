package io.stellflow.tools;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.storage.SegmentDump;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-dump-log.sh}: prints a segment's files offline, read-only (works on a stopped
 * broker's log dir; a running broker's active segment may end in a half-written batch). For a {@code
 * .log}: one line per batch (base and last offset, record count, position, leader epoch, timestamps,
 * size, compression, whether the CRC-32C matches); {@code --deep-iteration} adds a line per record
 * (offset, timestamp, key and value sizes, header keys), {@code --print-data-log} (implies it) the key
 * and value as UTF-8; a compressed batch's records are decompressed first (at most {@link
 * #MAX_DECOMPRESSED_BYTES} per batch). For a {@code .index} or {@code .timeindex}: its entries, then
 * a check of each entry against the segment's {@code .log} beside it; {@code --index-sanity-check}
 * prints only the check. For a {@code .txnindex}: one line per aborted transaction (producerId,
 * firstOffset, lastOffset = its ABORT marker, lastStableOffset); a damaged entry or a torn last entry
 * is reported, not fatal. Files are read through {@link SegmentDump} (the storage's own layouts).
 *
 * <p>Exit status 0 when every file was read and found sound, 1 when a file is missing, is not a
 * segment file, or holds a damaged batch, a damaged tail, an index entry that disagrees with the log
 * or a damaged or torn {@code .txnindex} entry
 * (each printed; a last {@code error:} line on stderr names the file), 2 for bad arguments. Not
 * thread-safe (one invocation).
 */
@Command(
        name = "stellflow-dump-log",
        mixinStandardHelpOptions = true,
        description =
                "Print the batches and records of segment .log files and the entries of .index/.timeindex/.txnindex files.")
public final class DumpLogCommand implements Callable<Integer> {
    @Option(
            names = "--files",
            required = true,
            split = ",",
            arity = "1..*",
            description =
                    "segment files: <20-digit base offset>.log, .index, .timeindex or .txnindex (comma- or space-separated)")
    List<Path> files;

    @Option(
            names = "--deep-iteration",
            description = "print every record of each batch (a compressed batch's records decompressed)")
    boolean deepIteration;

    @Option(names = "--print-data-log", description = "print each record's key and value (implies --deep-iteration)")
    boolean printDataLog;

    @Option(names = "--index-sanity-check", description = "for index files: print only the check against the log")
    boolean indexSanityCheck;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Most bytes one compressed batch's records may decompress to here: the consumer's largest {@code
     * compression.max.decompressed.bytes} (1 GiB), and at most a quarter of this JVM's heap (the
     * expansion buffer grows by copying, so a batch near the cap takes about twice its size), so a
     * damaged container or a bomb is printed as not decoded, with the reason, instead of ending the
     * dump with an {@link OutOfMemoryError}.
     */
    static final long MAX_DECOMPRESSED_BYTES =
            Math.min(1L << 30, Math.max(1L << 20, Runtime.getRuntime().maxMemory() / 4));

    /** Expands compressed batches for --deep-iteration; made at the first one, closed at the end. */
    private RecordBatchDecompressor decompressor;

    @Override
    public Integer call() throws IOException {
        try {
            return dumpFiles();
        } finally {
            if (decompressor != null) {
                decompressor.close();
            }
        }
    }

    private int dumpFiles() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int rc = 0;
        for (Path file : files) {
            String problem;
            try {
                SegmentDump.baseOffsetOf(file);
                if (!Files.isRegularFile(file)) {
                    throw new NoSuchFileException(file.toString());
                }
                out.println("Dumping " + file);
                String name = file.getFileName().toString();
                problem = name.endsWith(".log")
                        ? dumpLog(file, out)
                        : name.endsWith(".txnindex")
                                ? dumpTxnIndex(file, out)
                                : dumpIndex(file, name.endsWith(".index"), out);
            } catch (NoSuchFileException e) {
                problem = "no such file";
            } catch (IllegalArgumentException e) {
                out.flush();
                err.println("error: " + e.getMessage());
                rc = 1;
                continue;
            }
            out.flush();
            if (problem != null) {
                err.println("error: " + file + ": " + problem);
                rc = 1;
            }
        }
        err.flush();
        return rc;
    }

    /** Prints the batches (and records); returns what is wrong with the file, or null. */
    private String dumpLog(Path file, PrintWriter out) throws IOException {
        long segmentBase = SegmentDump.baseOffsetOf(file);
        boolean records = deepIteration || printDataLog;
        int[] badCrc = {0};
        out.println("Starting offset: " + segmentBase);
        SegmentDump.LogWalk walk = SegmentDump.walkLog(file, b -> {
            if (!b.crcValid()) {
                badCrc[0]++;
            }
            out.println("baseOffset: " + b.baseOffset() + " lastOffset: " + b.lastOffset() + " count: "
                    + b.recordCount() + " position: " + b.position() + " leaderEpoch: " + b.leaderEpoch()
                    + " baseTimestamp: " + b.baseTimestampMs() + " maxTimestamp: " + b.maxTimestampMs()
                    + " size: " + b.sizeBytes() + " compression: " + compression(b.attributes())
                    + " producerId: " + b.producerId() + " crcValid: " + b.crcValid());
            if (records) {
                printRecords(b, segmentBase, out);
            }
        });
        out.println("Batches: " + walk.batches() + ", valid bytes: " + walk.validBytes() + " of " + walk.sizeBytes());
        if (walk.problem() != null) {
            out.println("Damaged tail after " + walk.validBytes() + " bytes: " + walk.problem());
            return "damaged tail: " + walk.problem();
        }
        return badCrc[0] == 0 ? null : badCrc[0] + " batch(es) whose CRC does not match";
    }

    /**
     * A control batch's one record, a transaction marker ({@link ControlRecordLayout}): its type
     * (COMMIT, ABORT as Kafka's DumpLogSegments prints them, and our BEGIN), the coordinator epoch,
     * the transaction sequence and the producer's epoch; a batch too short for the layout is said so.
     */
    private static void printMarker(SegmentDump.Batch b, PrintWriter out) {
        ByteBuf bytes = b.bytes();
        int at = bytes.readerIndex();
        if (bytes.readableBytes() < ControlRecordLayout.BATCH_SIZE) {
            out.println("| marker not decoded: a control batch of " + bytes.readableBytes() + " bytes, not "
                    + ControlRecordLayout.BATCH_SIZE);
            return;
        }
        short type = bytes.getShort(at + ControlRecordLayout.KEY_TYPE_OFFSET);
        String name = switch (type) {
            case ControlRecordLayout.ABORT -> "ABORT";
            case ControlRecordLayout.COMMIT -> "COMMIT";
            case ControlRecordLayout.BEGIN -> "BEGIN";
            default -> "unknown type " + type;
        };
        out.println("| offset: " + b.baseOffset() + " marker: " + name + " producerId: " + b.producerId()
                + " producerEpoch: " + RecordBatchLayout.producerEpoch(bytes, at) + " coordinatorEpoch: "
                + bytes.getInt(at + ControlRecordLayout.COORDINATOR_EPOCH_OFFSET) + " transactionSequence: "
                + bytes.getLong(at + ControlRecordLayout.TRANSACTION_SEQUENCE_OFFSET));
    }

    private void printRecords(SegmentDump.Batch b, long segmentBase, PrintWriter out) {
        if (ControlRecordLayout.isControl(b.attributes())) {
            printMarker(b, out);
            return;
        }
        ByteBuf bytes = b.bytes();
        if ((b.attributes() & RecordBatchLayout.COMPRESSION_CODEC_MASK) != 0) {
            if (decompressor == null) {
                decompressor = new RecordBatchDecompressor(MAX_DECOMPRESSED_BYTES);
            }
            // The walk's read-only view has no array a codec can read (zstd refuses it): a writable copy.
            bytes = bytes.copy();
        }
        try {
            // The CRC verdict is on the batch line: decode a damaged batch anyway, as far as it goes.
            RecordBatchReader.decode(
                    bytes, segmentBase, false, decompressor, (offset, timestampMs, key, value, headers) -> {
                        StringBuilder line = new StringBuilder("| offset: ")
                                .append(offset)
                                .append(" timestamp: ")
                                .append(timestampMs)
                                .append(" keySize: ")
                                .append(key == null ? -1 : key.length)
                                .append(" valueSize: ")
                                .append(value == null ? -1 : value.length)
                                .append(" headerKeys: [");
                        for (int i = 0; i < headers.size(); i++) {
                            Header h = headers.get(i);
                            line.append(i == 0 ? "" : ",").append(h.key());
                        }
                        line.append(']');
                        if (printDataLog) {
                            line.append(" key: ")
                                    .append(text(key))
                                    .append(" payload: ")
                                    .append(text(value));
                        }
                        out.println(line);
                    });
        } catch (ProtocolException e) {
            out.println("| records not decoded: " + e.getMessage());
        } catch (RuntimeException e) {
            // A codec's own failure (its native call, its library) costs this batch, not the dump.
            out.println("| records not decoded: " + e);
        } finally {
            if (bytes != b.bytes()) {
                bytes.release();
            }
        }
    }

    /** Prints the entries (unless --index-sanity-check) and the check; returns what is wrong, or null. */
    private String dumpIndex(Path file, boolean offsetIndex, PrintWriter out) throws IOException {
        SegmentDump.IndexDump d = offsetIndex ? SegmentDump.offsetIndex(file) : SegmentDump.timeIndex(file);
        if (!indexSanityCheck) {
            for (SegmentDump.IndexEntry e : d.entries()) {
                out.println(
                        offsetIndex
                                ? "offset: " + e.offset() + " position: " + e.value()
                                : "timestamp: " + e.value() + " offset: " + e.offset());
            }
            if (d.preallocatedSlots() > 0) {
                out.println(
                        "(" + d.preallocatedSlots() + " empty preallocated slots follow: an active segment's index)");
            }
        }
        for (String p : d.problems()) {
            out.println("Mismatch: " + p);
        }
        if (d.problems().isEmpty()) {
            out.println(file.getFileName() + " passed the check against "
                    + SegmentDump.logOf(file).getFileName() + ": " + d.entries().size() + " entries");
            return null;
        }
        return d.problems().size() + " index problem(s)";
    }

    /** Prints the aborted transactions, one line each; returns what is wrong with the file, or null. */
    private static String dumpTxnIndex(Path file, PrintWriter out) throws IOException {
        SegmentDump.TxnIndexDump d = SegmentDump.txnIndex(file);
        for (SegmentDump.TxnIndexEntry t : d.entries()) {
            out.println("producerId: " + t.producerId() + " firstOffset: " + t.firstOffset() + " lastOffset: "
                    + t.lastOffset() + " lastStableOffset: " + t.lastStableOffset());
        }
        for (String p : d.problems()) {
            out.println("Damaged: " + p);
        }
        out.println("Aborted transactions: " + d.entries().size());
        return d.problems().isEmpty() ? null : d.problems().size() + " txnindex problem(s)";
    }

    private static String compression(int attributes) {
        return switch (attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) {
            case 0 -> "none";
            case 1 -> "gzip";
            case 2 -> "snappy";
            case 3 -> "lz4";
            case 4 -> "zstd";
            default -> "undefined(" + (attributes & RecordBatchLayout.COMPRESSION_CODEC_MASK) + ")";
        };
    }

    private static String text(byte[] bytes) {
        return bytes == null ? "null" : new String(bytes, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) {
        System.exit(OneLineUsageErrors.commandLine(new DumpLogCommand()).execute(args));
    }
}
