package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Readers racing appends, rolls and retention never fail and only see whole, correct batches. */
@IntegrationTest
class ConcurrentRetentionTest {
    @TempDir
    Path dir;

    @Test
    void readersSurviveSegmentsDeletedUnderThem() throws Exception {
        LogConfig config = LogConfig.builder()
                .segmentBytes(16 * 1024)
                .indexIntervalBytes(256)
                .indexMaxBytes(1024)
                .retentionBytes(64 * 1024)
                .fileDeleteDelayMs(60_000)
                .build();
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (UnifiedLog log = UnifiedLog.open(dir, config, env.environment())) {
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            LongAdder reads = new LongAdder();
            Thread[] readers = new Thread[2];
            for (int t = 0; t < readers.length; t++) {
                long seed = t;
                readers[t] = Thread.ofPlatform().start(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    try {
                        while (!done.get()) {
                            long start = log.logStartOffset();
                            long end = log.logEndOffset();
                            if (end <= start) {
                                continue;
                            }
                            long from = start + random.nextLong(end - start);
                            ByteBuf out = Unpooled.buffer();
                            try {
                                log.readInto(from, 8192, Long.MAX_VALUE, true, out);
                                List<DecodedRecord> records = TestBatches.decode(out, from);
                                long expected = records.isEmpty()
                                        ? 0
                                        : records.getFirst().offset();
                                for (DecodedRecord r : records) {
                                    String value = new String(r.value(), StandardCharsets.UTF_8);
                                    if (r.offset() != expected++ || !value.equals(CrashChild.valueFor(r.offset()))) {
                                        throw new AssertionError("read from " + from + ": offset " + r.offset()
                                                + " value " + value + ", expected offset " + (expected - 1));
                                    }
                                }
                            } finally {
                                out.release();
                            }
                            reads.increment();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            SplittableRandom random = new SplittableRandom(42);
            int deleted = 0;
            for (int i = 0; i < 2000 && failure.get() == null; i++) {
                ByteBuf b = CrashChild.batch(log.logEndOffset(), 1 + random.nextInt(4), env.nowMs());
                log.appendAsLeader(b, 0);
                b.release();
                if (i % 100 == 0) { // each run writes checkpoints (fsyncs): keep the test short
                    deleted += log.deleteOldSegments(log.logEndOffset());
                }
            }
            done.set(true);
            for (Thread t : readers) {
                t.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(deleted).isGreaterThan(5);
            assertThat(reads.sum()).isPositive();
            assertThat(log.sizeInBytes()).isLessThan(64 * 1024 + 100 * 5 * 120);
            env.advance(60_000); // the delayed deletions run now
            assertThat(env.pendingTasks()).isZero();
        }
    }
}
