package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * One replica of a partition as it lies on disk, read without opening the log (nothing is recovered,
 * rewritten or locked): the segment files {@code <20-digit base offset>.log} of {@code
 * <logDir>/<topic>-<partition>/} in base-offset order, each a sequence of stored batches whose bytes
 * 0-3 hold the batch's base offset minus the segment's base offset (storage format, {@code
 * UnifiedLog}). Reading stops at the first batch that is torn or fails its CRC (what recovery would
 * drop after a crash); the bytes after it are counted in {@link #droppedTailBytes}.
 *
 * <p>Batches are compared by {@link Batch#body}: bytes 8..end (leader epoch, magic, CRC, attributes,
 * records), i.e. everything but the segment-relative base offset and the length, which differ only
 * when replicas rolled segments at different offsets.
 *
 * @param brokerIndex whose replica
 * @param logStartOffset the {@code log-start-offset} checkpoint, or the first batch's base offset
 * @param batches batches at or above the log start, in offset order
 * @param droppedTailBytes bytes after the first bad or torn batch of a segment
 */
record ReplicaLog(int brokerIndex, long logStartOffset, List<Batch> batches, long droppedTailBytes) {

    /** One stored batch. */
    record Batch(long baseOffset, long lastOffset, int leaderEpoch, byte[] body, List<Rec> records) {
        boolean sameBytes(Batch o) {
            return baseOffset == o.baseOffset && lastOffset == o.lastOffset && Arrays.equals(body, o.body);
        }
    }

    /** One record: its offset and its value as UTF-8 (the checker's values are ASCII). */
    record Rec(long offset, String value) {}

    /** The offset after the last batch (the log start when there is none). */
    long logEndOffset() {
        return batches.isEmpty()
                ? logStartOffset
                : batches.get(batches.size() - 1).lastOffset() + 1;
    }

    /** Every record at or above the log start, in offset order. */
    List<Rec> records() {
        List<Rec> out = new ArrayList<>();
        for (Batch b : batches) {
            for (Rec r : b.records()) {
                if (r.offset() >= logStartOffset) {
                    out.add(r);
                }
            }
        }
        return out;
    }

    /** Reads broker {@code brokerIndex}'s replica of {@code topic}-{@code partition} under {@code logDir}. */
    static ReplicaLog read(int brokerIndex, Path logDir, String topic, int partition) throws IOException {
        Path dir = logDir.resolve(topic + "-" + partition);
        List<Batch> batches = new ArrayList<>();
        long dropped = 0;
        long logStart = readCheckpoint(dir.resolve("log-start-offset"));
        if (!Files.isDirectory(dir)) {
            return new ReplicaLog(brokerIndex, Math.max(0, logStart), batches, 0);
        }
        List<Path> segments;
        try (Stream<Path> s = Files.list(dir)) {
            segments = s.filter(p -> p.getFileName().toString().matches("\\d{20}\\.log"))
                    .sorted()
                    .toList();
        }
        for (Path seg : segments) {
            String name = seg.getFileName().toString();
            long segBase = Long.parseLong(name.substring(0, 20));
            byte[] bytes = Files.readAllBytes(seg);
            ByteBuf buf = Unpooled.wrappedBuffer(bytes);
            int pos = 0;
            while (pos + RecordBatchLayout.LOG_OVERHEAD <= bytes.length) {
                int delta = buf.getInt(pos + RecordBatchLayout.BASE_OFFSET_DELTA_OFFSET);
                int length = buf.getInt(pos + RecordBatchLayout.BATCH_LENGTH_OFFSET);
                if (length < RecordBatchLayout.BATCH_LENGTH_HEADER_BYTES
                        || pos + RecordBatchLayout.LOG_OVERHEAD + (long) length > bytes.length) {
                    break; // zero fill or torn
                }
                int size = RecordBatchLayout.LOG_OVERHEAD + length;
                long base = segBase + delta;
                List<Rec> recs = new ArrayList<>();
                try {
                    RecordBatchReader.decode(
                            buf.slice(pos, size),
                            segBase, // bytes 0-3 count from the segment base
                            (offset, ts, key, value, headers) -> recs.add(
                                    new Rec(offset, value == null ? null : new String(value, StandardCharsets.UTF_8))));
                } catch (ProtocolException e) {
                    break; // bad CRC or malformed: recovery would truncate here
                }
                long last = base + buf.getInt(pos + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
                int epoch = buf.getInt(pos + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
                if (last >= logStart) {
                    batches.add(new Batch(
                            base,
                            last,
                            epoch,
                            Arrays.copyOfRange(
                                    bytes, pos + RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET, pos + size),
                            recs));
                }
                pos += size;
            }
            dropped += countNonZero(bytes, pos);
        }
        if (logStart < 0) {
            logStart = batches.isEmpty() ? 0 : batches.get(0).baseOffset();
        }
        return new ReplicaLog(brokerIndex, logStart, batches, dropped);
    }

    /** Bytes after {@code from} that are not zero fill (a preallocated tail is not data). */
    private static long countNonZero(byte[] bytes, int from) {
        int last = bytes.length;
        while (last > from && bytes[last - 1] == 0) {
            last--;
        }
        return last - from;
    }

    /** A single-offset checkpoint (version line, offset line), or -1 when absent or unreadable. */
    static long readCheckpoint(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return lines.size() >= 2 ? Long.parseLong(lines.get(1).trim()) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }
}
