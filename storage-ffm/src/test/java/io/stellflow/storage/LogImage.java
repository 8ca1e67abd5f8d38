package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * A partition directory as {@link UnifiedLog} left it, held in memory: every file's bytes by name,
 * and the batches that were acknowledged (appended without error) with their offsets, file and
 * position. The recovery fuzz target ({@link RecoveryFuzzTarget}) mutates copies of these images.
 *
 * <p>The variants are real logs written by {@link UnifiedLog} with {@link #CONFIG} (1 KiB segments,
 * an index entry per 100 bytes): five to six segments of one- to four-record batches from three
 * leader epochs, left by a crash without any checkpoint, by a crash after a flush and checkpoint
 * half way (the first segments are then trusted), and by a clean close. Built once per JVM, always
 * to the same bytes. Immutable after construction.
 */
final class LogImage {
    /** Small segments so a few dozen batches span several of them. */
    static final LogConfig CONFIG = new LogConfig(1024, 100, 1024, Long.MAX_VALUE, Long.MAX_VALUE);

    /** The fixed clock of the fuzz logs. */
    static final long NOW_MS = 1_746_768_000_000L;

    /** One acknowledged batch: its offsets, segment, position and stored bytes. */
    record Batch(long baseOffset, long lastOffset, long segmentBase, int position, byte[] bytes) {
        int epoch() {
            return Unpooled.wrappedBuffer(bytes).getInt(RecordBatchLayout.PARTITION_LEADER_EPOCH_OFFSET);
        }
    }

    /** How the log was left. */
    enum Variant {
        CRASH_WITHOUT_CHECKPOINT,
        CRASH_AFTER_CHECKPOINT,
        CLEAN_CLOSE
    }

    final Variant variant;
    /** File name to bytes, sorted by name. */
    final Map<String, byte[]> files;

    final List<Batch> batches;
    final long logEndOffset;

    private LogImage(Variant variant, Map<String, byte[]> files, List<Batch> batches, long logEndOffset) {
        this.variant = variant;
        this.files = files;
        this.batches = batches;
        this.logEndOffset = logEndOffset;
    }

    private static final List<LogImage> ALL = build();

    /** The images of every variant, in {@link Variant} order. */
    static List<LogImage> all() {
        return ALL;
    }

    /** The batches stored in the segment {@code base}, in file order. */
    List<Batch> batchesOf(long segmentBase) {
        return batches.stream().filter(b -> b.segmentBase() == segmentBase).toList();
    }

    private static List<LogImage> build() {
        try {
            Path root = Files.createTempDirectory("stellflow-log-image");
            try {
                List<LogImage> images = new ArrayList<>();
                for (Variant v : Variant.values()) {
                    images.add(write(v, root.resolve(v.name())));
                }
                return List.copyOf(images);
            } finally {
                deleteTree(root);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static LogImage write(Variant variant, Path dir) throws IOException {
        LogEnvironment env = new ManualEnvironment(NOW_MS).environment();
        UnifiedLog log = UnifiedLog.open(dir, CONFIG, env);
        for (int i = 0; i < 36; i++) {
            int epoch = i < 10 ? 1 : i < 24 ? 2 : 4;
            ByteBuf batch = batch(i);
            try {
                log.appendAsLeader(batch, epoch);
            } finally {
                batch.release();
            }
            if (variant == Variant.CRASH_AFTER_CHECKPOINT && i == 20) {
                log.flush();
                log.checkpoint();
            }
        }
        long leo = log.logEndOffset();
        if (variant == Variant.CLEAN_CLOSE) {
            log.close();
        } else {
            log.crashForTesting();
        }
        Map<String, byte[]> files = new TreeMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path f : list.sorted().toList()) {
                files.put(f.getFileName().toString(), Files.readAllBytes(f));
            }
        }
        return new LogImage(variant, files, walk(files), leo);
    }

    /** Batch {@code i}: one to four records, timestamps mostly rising (one step back), keys and values. */
    static ByteBuf batch(int i) {
        ByteBuf out = Unpooled.buffer();
        long ts = NOW_MS - 100_000 + i * 1000L - (i == 17 ? 5000 : 0);
        RecordBatchBuilder b = new RecordBatchBuilder(out, ts);
        for (int r = 0; r <= i % 4; r++) {
            b.append(
                    ts + r,
                    ("k" + (i % 5)).getBytes(StandardCharsets.UTF_8),
                    ("value-" + i + "-" + r).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        return out;
    }

    /** The batches of the {@code .log} files of a (valid) image, in offset order. */
    static List<Batch> walk(Map<String, byte[]> files) {
        List<Batch> batches = new ArrayList<>();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            long base = LogLoader.parseBase(Path.of(f.getKey()), LogSegment.LOG_SUFFIX);
            if (!f.getKey().endsWith(LogSegment.LOG_SUFFIX) || base < 0) {
                continue;
            }
            ByteBuf log = Unpooled.wrappedBuffer(f.getValue());
            for (int pos = 0; pos < log.capacity(); pos += RecordBatchLayout.batchSize(log, pos)) {
                long first = base + RecordBatchLayout.baseOffsetDelta(log, pos);
                int size = RecordBatchLayout.batchSize(log, pos);
                batches.add(new Batch(
                        first,
                        first + RecordBatchLayout.lastOffsetDelta(log, pos),
                        base,
                        pos,
                        Arrays.copyOfRange(f.getValue(), pos, pos + size)));
            }
        }
        batches.sort(Comparator.comparingLong(Batch::baseOffset));
        return List.copyOf(batches);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
