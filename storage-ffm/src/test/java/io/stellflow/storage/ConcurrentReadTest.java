package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@IntegrationTest
class ConcurrentReadTest {
    @TempDir
    Path dir;

    @Test
    void readersRacingAppendsAndRollsOnlySeeWholeContiguousBatches() throws Exception {
        LogConfig config = new LogConfig(4096, 256, 1024, Long.MAX_VALUE, Long.MAX_VALUE);
        try (UnifiedLog log = UnifiedLog.open(dir, config)) {
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            LongAdder reads = new LongAdder();
            Thread[] readers = new Thread[3];
            for (int t = 0; t < readers.length; t++) {
                long seed = t;
                readers[t] = Thread.ofPlatform().start(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    try {
                        while (!done.get()) {
                            long leo = log.logEndOffset();
                            if (leo == 0) {
                                continue;
                            }
                            long from = random.nextLong(leo);
                            ByteBuf out = Unpooled.buffer();
                            try {
                                log.readInto(from, 1 + random.nextInt(8192), Long.MAX_VALUE, true, out);
                                List<DecodedRecord> got = TestBatches.decode(out, from); // checks CRCs
                                assertThat(got).isNotEmpty();
                                assertThat(got.get(0).offset()).isLessThanOrEqualTo(from);
                                for (int i = 0; i < got.size(); i++) {
                                    DecodedRecord r = got.get(i);
                                    assertThat(r.offset()).isEqualTo(got.get(0).offset() + i);
                                    assertThat(r.timestampMs()).isEqualTo(r.offset()); // written as ts = offset
                                }
                                assertThat(got.get(got.size() - 1).offset()).isLessThan(log.logEndOffset());
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
            long next = 0;
            SplittableRandom random = new SplittableRandom(99);
            for (int i = 0; i < 3000 && failure.get() == null; i++) {
                int n = 1 + random.nextInt(5);
                long[] ts = new long[n];
                for (int j = 0; j < n; j++) {
                    ts[j] = next + j;
                }
                ByteBuf b = TestBatches.batch(ts);
                assertThat(log.appendAsLeader(b, 1)).isEqualTo(next);
                b.release();
                next += n;
            }
            done.set(true);
            for (Thread t : readers) {
                t.join();
            }
            assertThat(failure.get()).isNull();
            assertThat(reads.sum()).isPositive();
            assertThat(log.segmentCount()).isGreaterThan(10);
        }
    }
}
