package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FlushPolicyTest {
    @TempDir
    Path dir;

    private static final long MS = 1_000_000L;

    @Test
    void defaultsNeverAskForAFlush() {
        FlushPolicy p = new FlushPolicy(LogConfig.defaults(), 0);
        assertThat(p.recordAppended(1_000_000, 0)).isFalse();
        assertThat(p.recordAppended(1, Long.MAX_VALUE / 2)).isFalse();
    }

    @Test
    void flushMessagesCountsRecordsSinceTheLastFlush() {
        FlushPolicy p = new FlushPolicy(LogConfig.builder().flushMessages(10).build(), 0);
        assertThat(p.recordAppended(4, 0)).isFalse();
        assertThat(p.recordAppended(5, 0)).isFalse();
        assertThat(p.recordAppended(1, 0)).isTrue();
        p.flushed(0);
        assertThat(p.recordAppended(9, 0)).isFalse();
        assertThat(p.recordAppended(30, 0)).isTrue();
    }

    @Test
    void flushMsAsksOnceThatMuchTimePassedSinceTheLastFlush() {
        FlushPolicy p = new FlushPolicy(LogConfig.builder().flushMs(100).build(), 5 * MS);
        assertThat(p.recordAppended(1, 104 * MS)).isFalse();
        assertThat(p.recordAppended(1, 105 * MS)).isTrue();
        p.flushed(105 * MS);
        assertThat(p.recordAppended(1, 204 * MS)).isFalse();
        assertThat(p.recordAppended(1, 205 * MS)).isTrue();
    }

    @Test
    void aHugeFlushMsSaturatesInsteadOfOverflowing() {
        FlushPolicy p =
                new FlushPolicy(LogConfig.builder().flushMs(Long.MAX_VALUE / 10).build(), 0);
        assertThat(p.recordAppended(1, Long.MAX_VALUE - 1)).isFalse();
    }

    @Test
    void flushMsZeroMakesEveryAppendDurableAndReportsEachFlush() throws IOException {
        AtomicInteger flushes = new AtomicInteger();
        LogEnvironment env = LogEnvironment.system().withMetrics(new LogMetrics() {
            @Override
            public void flush(long nanos) {
                flushes.incrementAndGet();
            }
        });
        try (UnifiedLog log =
                UnifiedLog.open(dir, LogConfig.builder().flushMs(0).build(), env)) {
            for (int i = 0; i < 3; i++) {
                ByteBuf b = TestBatches.batch(1000 + i);
                log.appendAsLeader(b, 0);
                b.release();
                assertThat(log.recoveryPoint()).isEqualTo(i + 1);
                assertThat(flushes.get()).isEqualTo(i + 1);
            }
        }
    }
}
