package io.stellflow.perf.jmh.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Helpers shared by the storage benchmarks: record sets built with the protocol's {@link
 * RecordBatchBuilder} from a fixed seed, and scratch directories on the real disk.
 *
 * <p>Scratch directories live under {@code -Dsf.bench.dir} when set, else under {@code
 * java.io.tmpdir} ({@code /tmp} is ext4 on the root disk of the lab machine, not tmpfs).
 *
 * <p>Thread-safety: stateless; every method builds new objects.
 */
final class StorageBenchFiles {
    /** Base timestamp of every generated record, in ms since the epoch. */
    static final long BASE_TIMESTAMP_MS = 1_700_000_000_000L;

    private StorageBenchFiles() {}

    /**
     * A direct buffer holding whole batches of {@code valueBytes}-byte records (null key, no
     * headers, random values from {@code seed}), each batch at most {@code maxBatchBytes}, the set
     * at most {@code setBytes}. The set validates (CRC-32C filled in).
     */
    static ByteBuf recordSet(int setBytes, int maxBatchBytes, int valueBytes, long seed) {
        ByteBuf out = Unpooled.directBuffer(setBytes);
        SplittableRandom random = new SplittableRandom(seed);
        byte[] value = new byte[valueBytes];
        int perRecord = RecordBatchBuilder.recordSizeInBytes(0, valueBytes, java.util.List.of());
        int overhead = RecordBatchBuilder.batchOverheadBytes();
        long ts = BASE_TIMESTAMP_MS;
        while (out.writerIndex() + overhead + perRecord <= setBytes) {
            int room = Math.min(maxBatchBytes, setBytes - out.writerIndex());
            RecordBatchBuilder b = new RecordBatchBuilder(out, ts);
            while (b.sizeInBytes() + perRecord <= room) {
                random.nextBytes(value);
                b.append(ts++, null, value);
            }
            b.close();
        }
        if (RecordBatchValidator.validate(out, Integer.MAX_VALUE) != Errors.NONE) {
            throw new IllegalStateException("the generated record set does not validate");
        }
        return out;
    }

    static Path newScratchDir(String prefix) throws IOException {
        String base = System.getProperty("sf.bench.dir");
        if (base == null) {
            return Files.createTempDirectory(prefix);
        }
        Path parent = Paths.get(base);
        Files.createDirectories(parent);
        return Files.createTempDirectory(parent, prefix);
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
