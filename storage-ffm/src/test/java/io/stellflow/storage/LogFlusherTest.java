package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link LogFlusher}, mostly through a log whose monotonic clock the test drives: no sleeping. */
class LogFlusherTest {
    private static final long MS_NS = 1_000_000L;

    @TempDir
    Path dir;

    private final AtomicLong nowNs = new AtomicLong(5 * MS_NS);
    private final List<Long> flushNanos = new ArrayList<>();
    private final LogEnvironment env = LogEnvironment.system()
            .withMetrics(new LogMetrics() {
                @Override
                public void flush(long nanos) {
                    flushNanos.add(nanos);
                }
            })
            .withNanoClock(nowNs::get);

    private static void append(UnifiedLog log) throws IOException {
        ByteBuf b = TestBatches.batch(1000);
        try {
            log.appendAsLeader(b, 0);
        } finally {
            b.release();
        }
    }

    @Test
    void flushMsFlushesTheFirstAppendThatMuchTimeAfterTheLastFlushOnTheInjectedClock() throws IOException {
        try (UnifiedLog log =
                UnifiedLog.open(dir, LogConfig.builder().flushMs(100).build(), env)) {
            append(log);
            nowNs.addAndGet(99 * MS_NS);
            append(log);
            assertThat(log.recoveryPoint()).isZero();
            assertThat(flushNanos).isEmpty();

            nowNs.addAndGet(MS_NS); // 100 ms since the log was opened
            append(log);
            assertThat(log.recoveryPoint()).isEqualTo(3);
            assertThat(flushNanos).containsExactly(0L); // the clock did not move during the flush

            nowNs.addAndGet(99 * MS_NS); // the interval restarts at the flush
            append(log);
            assertThat(log.recoveryPoint()).isEqualTo(3);
            nowNs.addAndGet(MS_NS);
            append(log);
            assertThat(log.recoveryPoint()).isEqualTo(5);
            assertThat(flushNanos).hasSize(2);
        }
    }

    @Test
    void anExplicitFlushRestartsTheFlushMsInterval() throws IOException {
        try (UnifiedLog log =
                UnifiedLog.open(dir, LogConfig.builder().flushMs(100).build(), env)) {
            append(log);
            nowNs.addAndGet(60 * MS_NS);
            log.flush();
            assertThat(log.recoveryPoint()).isEqualTo(1);
            nowNs.addAndGet(60 * MS_NS); // 120 ms since open, 60 since the flush
            append(log);
            assertThat(log.recoveryPoint()).isEqualTo(1);
            nowNs.addAndGet(40 * MS_NS);
            append(log);
            assertThat(log.recoveryPoint()).isEqualTo(3);
        }
    }

    @Test
    void aConfigUpdateAppliesTheNewFlushMsToTheRunningInterval() throws IOException {
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults(), env)) {
            nowNs.addAndGet(1_000 * MS_NS);
            append(log);
            assertThat(log.recoveryPoint()).isZero(); // default flush.ms: never
            log.updateConfig(LogConfig.builder().flushMs(500).build());
            append(log); // 1 s since open >= 500 ms
            assertThat(log.recoveryPoint()).isEqualTo(2);
        }
    }

    @Test
    void theFlushLatencyIsMeasuredOnTheInjectedClock() throws IOException {
        AtomicLong ticks = new AtomicLong();
        LogEnvironment ticking = env.withNanoClock(() -> ticks.getAndAdd(7 * MS_NS)); // 7 ms per read
        try (UnifiedLog log = UnifiedLog.open(dir, LogConfig.defaults(), ticking)) {
            append(log);
            log.flush();
            assertThat(flushNanos).containsExactly(7 * MS_NS);
            assertThat(log.recoveryPoint()).isEqualTo(1);
        }
    }

    @Test
    void checkpointsAreWrittenOnlyWhenChangedAndATruncationLowersTheRecoveryPoint() throws IOException {
        LogFlusher flusher = new LogFlusher(dir, LogConfig.defaults(), env, 2);
        Path rp = dir.resolve(LogLoader.RECOVERY_POINT_FILE);
        Path lso = dir.resolve(LogLoader.LOG_START_OFFSET_FILE);
        flusher.writeCheckpoints(0);
        assertThat(Checkpoints.readOffset(rp, -1)).isEqualTo(2);
        assertThat(Checkpoints.readOffset(lso, -1)).isZero();

        Files.delete(rp);
        flusher.writeCheckpoints(0); // unchanged: not rewritten
        assertThat(rp).doesNotExist();

        flusher.truncated(5, 0); // above the recovery point: nothing to lower
        assertThat(rp).doesNotExist();
        flusher.truncated(1, 0);
        assertThat(flusher.recoveryPoint()).isEqualTo(1);
        assertThat(Checkpoints.readOffset(rp, -1)).isEqualTo(1);

        flusher.restartedAt(9);
        flusher.writeCheckpoints(9);
        assertThat(Checkpoints.readOffset(rp, -1)).isEqualTo(9);
        assertThat(Checkpoints.readOffset(lso, -1)).isEqualTo(9);
    }
}
