package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogManagerTest {
    @TempDir
    Path root;

    private static final LogConfig SMALL = LogConfig.builder()
            .segmentBytes(1024)
            .indexIntervalBytes(0)
            .indexMaxBytes(1024)
            .retentionMs(1000)
            .fileDeleteDelayMs(0)
            .build();

    private static void append(UnifiedLog log, long timestampMs, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            ByteBuf b = TestBatches.batch(timestampMs);
            log.appendAsLeader(b, 0);
            b.release();
        }
    }

    private LogManager start(ManualEnvironment env, List<Path> dirs) throws IOException {
        return LogManager.start(
                new LogManager.Config(dirs, 60_000, 300_000, 2), SMALL, env.environment(), UnifiedLog::logEndOffset);
    }

    @Test
    void newPartitionsGoToTheLeastLoadedDirAndAreFoundAgainAfterARestart() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"), root.resolve("d2"), root.resolve("d3"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (LogManager manager = start(env, dirs)) {
            for (int p = 0; p < 7; p++) {
                append(manager.getOrCreate("orders", p), env.nowMs(), p + 1);
            }
            assertThat(manager.partitionCounts()).containsExactly(3, 2, 2);
            assertThat(manager.getOrCreate("orders", 0)).isSameAs(manager.get("orders", 0));
            assertThat(manager.logDirOf("orders", 1)).isEqualTo(dirs.get(1));
        }
        assertThat(dirs.get(0).resolve("orders-0").resolve(UnifiedLog.CLEAN_SHUTDOWN_FILE))
                .exists();
        try (LogManager manager = start(env, dirs)) {
            assertThat(manager.partitionCounts()).containsExactly(3, 2, 2);
            for (int p = 0; p < 7; p++) {
                assertThat(manager.get("orders", p).logEndOffset()).isEqualTo(p + 1);
            }
            assertThat(manager.get("orders", 7)).isNull();
            manager.getOrCreate("payments", 0);
            assertThat(manager.partitionCounts()).containsExactly(3, 3, 2);
        }
    }

    @Test
    void thePlacementFilterKeepsNewPartitionsOffRefusedDirsAndNoDirLeftIsAnError() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"), root.resolve("d2"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (LogManager manager = start(env, dirs)) {
            manager.getOrCreate("orders", 0);
            manager.getOrCreate("orders", 1);
            manager.placementFilter((dir, config, maxBatchBytes) -> !dir.equals(dirs.get(0)));
            manager.getOrCreate("orders", 2); // a tie would go to d1
            assertThat(manager.logDirOf("orders", 2)).isEqualTo(dirs.get(1));
            assertThat(manager.getOrCreate("orders", 0))
                    .as("an existing log is found wherever it is")
                    .isSameAs(manager.get("orders", 0));

            manager.placementFilter((dir, config, maxBatchBytes) -> false);
            assertThatThrownBy(() -> manager.getOrCreate("orders", 3))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("no log dir of " + dirs + " can take a new partition");
            assertThat(manager.get("orders", 3)).isNull();
            assertThat(dirs.get(0).resolve("orders-3")).doesNotExist();
            assertThat(dirs.get(1).resolve("orders-3")).doesNotExist();
        }
    }

    @Test
    void thePlacementFilterWeighsTheNewLogsConfigAndLargestBatch() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        List<String> asked = new ArrayList<>();
        try (LogManager manager = start(env, dirs)) {
            manager.placementFilter((dir, config, maxBatchBytes) -> {
                asked.add(config.indexMaxBytes() + "+" + maxBatchBytes);
                return true;
            });
            LogConfig bigIndex = SMALL.toBuilder().indexMaxBytes(8192).build();
            manager.getOrCreate("big", 0, bigIndex, 40 << 20);
            manager.getOrCreate("plain", 0);
            manager.getOrCreate("big", 0, bigIndex, 40 << 20); // exists: no placement
        }
        assertThat(asked)
                .as("the topic's config and max.message.bytes; the defaults' when the caller gives none")
                .containsExactly("8192+" + (40 << 20), "1024+" + LogManager.DEFAULT_MAX_BATCH_BYTES);
    }

    @Test
    void checkpointsAndRetentionRunPeriodicallyAndStopAtClose() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        LogManager manager = start(env, dirs);
        UnifiedLog log = manager.getOrCreate("t", 0);
        append(log, env.nowMs(), 40);
        log.flush();
        Path recoveryPoint = log.dir().resolve(LogLoader.RECOVERY_POINT_FILE);
        assertThat(recoveryPoint).doesNotExist();
        env.advance(60_000);
        assertThat(Checkpoints.readOffset(recoveryPoint, -1)).isEqualTo(40);
        assertThat(log.segmentCount()).isGreaterThan(1);
        env.advance(240_000); // 300 s: the retention check; the segments are far older than 1 s
        assertThat(log.segmentCount()).isEqualTo(1);
        manager.close();
        int pending = env.pendingTasks();
        env.advance(600_000);
        assertThat(env.pendingTasks()).isLessThanOrEqualTo(pending);
        assertThat(env.pendingTasks()).isZero();
    }

    @Test
    void aPartitionInTwoDirsOrAStrayDirectoryFailsTheStart() throws IOException {
        Files.createDirectories(root.resolve("d1").resolve("t-0"));
        Files.createDirectories(root.resolve("d2").resolve("t-0"));
        ManualEnvironment env = new ManualEnvironment(0);
        assertThatThrownBy(() -> start(env, List.of(root.resolve("d1"), root.resolve("d2"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("t-0")
                .hasMessageContaining("two log dirs");
        Files.createDirectories(root.resolve("d3").resolve("no-partition-number"));
        assertThatThrownBy(() -> start(env, List.of(root.resolve("d3"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no-partition-number");
    }

    @Test
    void manyPartitionsLoadInParallelAfterACrash() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"), root.resolve("d2"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        LogManager manager = start(env, dirs);
        for (int p = 0; p < 12; p++) {
            append(manager.getOrCreate("t", p), env.nowMs(), 3);
            manager.get("t", p).crashForTesting();
        }
        try (LogManager reopened = start(env, dirs)) {
            for (int p = 0; p < 12; p++) {
                assertThat(reopened.get("t", p).logEndOffset()).isEqualTo(3);
            }
        }
    }

    @Test
    void thePeriodicRetentionTaskCompactsCompactedLogs() throws IOException {
        ManualEnvironment env = new ManualEnvironment(1_000_000);
        LogConfig compacted = SMALL.toBuilder()
                .cleanupPolicy("compact")
                .segmentMs(1)
                .minCleanableDirtyRatio(0)
                .build();
        try (LogManager manager = LogManager.start(
                new LogManager.Config(List.of(root.resolve("d")), 60_000, 300_000, 1),
                compacted,
                env.environment(),
                UnifiedLog::logEndOffset)) {
            UnifiedLog log = manager.getOrCreate("state", 0);
            for (String v : new String[] {"1", "2", "3"}) {
                ByteBuf b = Unpooled.buffer();
                RecordBatchBuilder builder = new RecordBatchBuilder(b, env.nowMs());
                builder.append(env.nowMs(), "k".getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8));
                builder.close();
                log.appendAsLeader(b, 0);
                b.release();
                env.advance(1);
            }
            assertThat(CompactionTest.readAll(log, 0)).hasSize(3);
            env.advance(300_000);
            // The active segment (offset 2) is never compacted; of offsets 0-1 only the last stays.
            assertThat(CompactionTest.readAll(log, 0))
                    .extracting(CompactionTest.Rec::offset)
                    .containsExactly(1L, 2L);
            assertThat(log.logEndOffset()).isEqualTo(3);
        }
    }

    @Test
    void eachTopicsLogsAreOpenedWithThatTopicsConfigAtStartAndAtCreation() throws IOException {
        List<Path> dirs = List.of(root.resolve("d1"), root.resolve("d2"));
        LogConfig compacted = SMALL.toBuilder().cleanupPolicy("compact").build();
        java.util.function.Function<String, LogConfig> configs = t -> t.equals("state") ? compacted : SMALL;
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        LogManager.Config config = new LogManager.Config(dirs, 60_000, 300_000, 2);
        try (LogManager manager = LogManager.start(config, configs, env.environment(), UnifiedLog::logEndOffset)) {
            assertThat(manager.getOrCreate("state", 0).config().cleanupPolicy())
                    .isEqualTo(LogConfig.CleanupPolicy.COMPACT);
            assertThat(manager.getOrCreate("orders", 0).config()).isEqualTo(SMALL);
            LogConfig given = SMALL.toBuilder().retentionMs(5).build();
            assertThat(manager.getOrCreate("given", 0, given, LogManager.DEFAULT_MAX_BATCH_BYTES)
                            .config())
                    .isEqualTo(given);
        }
        try (LogManager manager = LogManager.start(config, configs, env.environment(), UnifiedLog::logEndOffset)) {
            assertThat(manager.get("state", 0).config()).isEqualTo(compacted);
            assertThat(manager.get("orders", 0).config()).isEqualTo(SMALL);
            assertThat(manager.get("given", 0).config()).isEqualTo(SMALL); // config is the caller's to keep
        }
    }

    @Test
    void hiddenDirectoriesAreNotPartitionsAndDeleteRemovesALogAndItsFiles() throws IOException {
        Path d1 = root.resolve("d1");
        Files.createDirectories(d1.resolve(".topics"));
        ManualEnvironment env = new ManualEnvironment(System.currentTimeMillis());
        try (LogManager manager = start(env, List.of(d1))) {
            UnifiedLog log = manager.getOrCreate("gone", 0);
            append(log, env.nowMs(), 3);
            assertThat(manager.logs()).containsOnlyKeys("gone-0");
            assertThat(manager.delete("gone", 0)).isTrue();
            assertThat(manager.delete("gone", 0)).isFalse();
            assertThat(manager.get("gone", 0)).isNull();
            assertThat(d1.resolve("gone-0")).doesNotExist();
            assertThat(manager.getOrCreate("gone", 0).logEndOffset()).isZero();
        }
        assertThat(d1.resolve(".topics")).isDirectory();
    }
}
