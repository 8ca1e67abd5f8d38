package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.server.common.file.FailureEpisode;
import io.stellflow.server.common.file.SmallTmpfs;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #23 point 4 for the log manager's periodic tasks on a real full file system (a small
 * tmpfs): checkpoints, compaction and retention run every second of a driven clock for more than 5
 * minutes while the disk is full, and each task logs one {@code BACKGROUND_TASK_FAILED} WARN line
 * without a stack trace, one summary line per 5 minutes, counts every later failure in the metric
 * hook, and logs one {@code BACKGROUND_TASK_RECOVERED} line once space is freed and its pass
 * succeeds again.
 */
@IntegrationTest
class BackgroundTaskFailureTest {
    private static final long PERIOD_MS = 1000;
    private static final List<String> TASKS = List.of("checkpoint", "compaction", "retention");

    @RegisterExtension
    final LogLines lines = LogLines.of(LogManager.class);

    private final Map<String, AtomicLong> counted = new ConcurrentHashMap<>();

    private static ByteBuf keyed(long ts, int batch) {
        return keyed(ts, 3, ("value-" + batch).getBytes(StandardCharsets.UTF_8));
    }

    /** {@code records} records with keys {@code key-0...} and {@code value} each. */
    private static ByteBuf keyed(long ts, int records, byte[] value) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, ts);
        for (int r = 0; r < records; r++) {
            b.append(ts, ("key-" + r).getBytes(StandardCharsets.UTF_8), value);
        }
        b.close();
        return out;
    }

    private long count(String task) {
        AtomicLong n = counted.get(task);
        return n == null ? 0 : n.get();
    }

    private List<ILoggingEvent> events(String event, String task) {
        return lines.events(event + " task=" + task);
    }

    @Test
    void aFullDiskLogsOneEventPerTaskCountsTheRestAndOneRecoveryOnceSpaceIsFreed() throws Exception {
        try (SmallTmpfs fs = SmallTmpfs.mountOrSkip(4 << 20)) {
            ManualEnvironment clock = new ManualEnvironment(1_746_768_000_000L);
            LogMetrics hook = new LogMetrics() {
                @Override
                public void backgroundTaskFailedAgain(String task) {
                    counted.computeIfAbsent(task, t -> new AtomicLong()).incrementAndGet();
                }
            };
            LogConfig.Builder small = LogConfig.builder()
                    .segmentBytes(1024)
                    .indexIntervalBytes(64)
                    .indexMaxBytes(4096)
                    .minCleanableDirtyRatio(0)
                    .fileDeleteDelayMs(1000);
            LogConfig compacted = small.cleanupPolicy("compact").build();
            LogConfig deleted = small.cleanupPolicy("delete").retentionMs(1).build();
            try (LogManager manager = LogManager.start(
                    new LogManager.Config(List.of(fs.dir().resolve("data")), PERIOD_MS, PERIOD_MS, 1),
                    topic -> topic.equals("cmp") ? compacted : deleted,
                    clock.environment().withMetrics(hook),
                    UnifiedLog::logEndOffset)) {
                List<UnifiedLog> logs = List.of(manager.getOrCreate("cmp", 0), manager.getOrCreate("del", 0));
                for (UnifiedLog log : logs) {
                    for (int i = 0; i < 30; i++) { // several 1 KiB segments, every key many times
                        ByteBuf b = keyed(clock.nowMs(), i);
                        log.appendAsLeader(b, 0);
                        b.release();
                    }
                    log.flush(); // a recovery point the next checkpoint must write
                }

                fs.fill(fs.dir().resolve("filler"));
                for (UnifiedLog log : logs) {
                    ByteBuf big = keyed(clock.nowMs(), 1, new byte[64 << 10]);
                    assertThatThrownBy(() -> log.appendAsLeader(big, 0))
                            .as("an append to a full disk")
                            .isInstanceOf(IOException.class);
                    big.release();
                }

                int passes = 305; // one pass per second for more than 5 minutes
                for (int i = 0; i < passes; i++) {
                    clock.advance(PERIOD_MS);
                }

                for (String task : TASKS) {
                    List<ILoggingEvent> failed = events(FailureEpisode.FAILED_EVENT, task);
                    assertThat(failed).as(task + ": one event for the episode").hasSize(1);
                    assertThat(failed.getFirst().getLevel()).isEqualTo(Level.WARN);
                    assertThat(failed.getFirst().getFormattedMessage())
                            .contains(" dir=" + fs.dir().resolve("data"), " freeBytes=0 ");
                    assertThat(events(FailureEpisode.FAILING_EVENT, task))
                            .as(task + ": one summary in 305 s")
                            .hasSize(1);
                }
                assertThat(events(FailureEpisode.FAILED_EVENT, "checkpoint")
                                .getFirst()
                                .getFormattedMessage())
                        .contains("reason=No space left on device");
                assertThat(lines.withThrowable())
                        .as("no stack trace for an I/O error")
                        .isEmpty();
                assertThat(lines.events().stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)))
                        .as("the WARN lines of the whole episode: one event and one summary per task")
                        .hasSize(2 * TASKS.size());
                // Every pass fails on both logs (compaction on the compacted one only), the first failure is logged.
                assertThat(count("checkpoint")).isEqualTo(2L * passes - 1);
                assertThat(count("retention")).isEqualTo(2L * passes - 1);
                assertThat(count("compaction")).isEqualTo(passes - 1L);

                Files.delete(fs.dir().resolve("filler"));
                for (UnifiedLog log : logs) {
                    log.reopen();
                }
                clock.advance(PERIOD_MS);
                clock.advance(PERIOD_MS);

                for (String task : TASKS) {
                    List<ILoggingEvent> recovered = events(FailureEpisode.RECOVERED_EVENT, task);
                    assertThat(recovered)
                            .as(task + ": one line at the end of the episode")
                            .hasSize(1);
                    assertThat(recovered.getFirst().getLevel()).isEqualTo(Level.INFO);
                }
                assertThat(events(FailureEpisode.RECOVERED_EVENT, "checkpoint")
                                .getFirst()
                                .getFormattedMessage())
                        .contains("failures=" + (2L * passes));
                assertThat(Files.readString(logs.getFirst().dir().resolve(LogLoader.RECOVERY_POINT_FILE)))
                        .as("the checkpoint was written once space was free")
                        .isNotEmpty();
            }
        }
    }
}
