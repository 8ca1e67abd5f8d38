package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The child JVM of {@link CrashTest}: opens (recovering) the log, then appends and flushes in a
 * loop until it is killed. After every fsync it prints {@code FLUSHED <log end offset>}: every
 * record below that offset is on the device. Record values are {@link #valueFor} their offset, so
 * the parent can check content, not only counts.
 *
 * <p>Usage: {@code CrashChild <partitionDir> <seed>}.
 */
final class CrashChild {
    /** Small segments and a dense index so kills land in rolls and index writes too. */
    static final LogConfig CONFIG = LogConfig.builder()
            .segmentBytes(32 * 1024)
            .indexIntervalBytes(512)
            .indexMaxBytes(4096)
            .build();

    private CrashChild() {}

    static String valueFor(long offset) {
        return "o" + offset + "-" + "x".repeat((int) (offset % 97));
    }

    /** One batch holding the records for offsets {@code first .. first + count - 1}. */
    static ByteBuf batch(long first, int count, long timestampMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampMs);
        for (int i = 0; i < count; i++) {
            b.append(timestampMs, null, valueFor(first + i).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        return out;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        SplittableRandom random = new SplittableRandom(Long.parseLong(args[1]));
        UnifiedLog log = UnifiedLog.open(dir, CONFIG);
        System.out.println("OPENED " + log.logEndOffset());
        System.out.flush();
        for (long flushes = 1; ; flushes++) {
            int batches = 1 + random.nextInt(3);
            for (int i = 0; i < batches; i++) {
                ByteBuf b = batch(log.logEndOffset(), 1 + random.nextInt(8), System.currentTimeMillis());
                log.appendAsLeader(b, 1);
                b.release();
            }
            log.flush();
            System.out.println("FLUSHED " + log.logEndOffset());
            System.out.flush();
            if (flushes % 16 == 0) {
                log.checkpoint(); // so some rounds recover from a recovery point, not from zero
            }
        }
    }
}
