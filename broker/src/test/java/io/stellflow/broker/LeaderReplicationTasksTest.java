package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.cluster.HighWatermarkCheckpoint;
import io.stellflow.broker.replication.IsrManager;
import io.stellflow.broker.topic.LocalPartitions;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.server.common.file.FailureEpisode;
import io.stellflow.storage.LogConfig;
import io.stellflow.testsupport.LogLines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HW checkpoints of {@link LeaderReplicationTasks}: written every interval, and once more at
 * close; a dir whose write keeps failing is one WARN line per episode, not one per interval.
 */
class LeaderReplicationTasksTest {
    @TempDir
    Path dir;

    private Path logDir;
    private Path otherDir;
    private LocalPartitions partitions;
    private Partition partition;

    @RegisterExtension
    final LogLines lines = LogLines.of(LeaderReplicationTasks.class);

    @BeforeEach
    void setUp() throws IOException {
        logDir = Files.createDirectories(dir.resolve("data"));
        otherDir = Files.createDirectories(dir.resolve("empty"));
        partitions =
                LocalPartitions.open(logDir, new LogConfig(1 << 20, 4096, 1 << 20, Long.MAX_VALUE, Long.MAX_VALUE));
        partitions.create("t", 1);
        partition = partitions.partition("t", 0);
        append(3);
    }

    @AfterEach
    void tearDown() throws IOException {
        partitions.close();
    }

    @Test
    void closeWritesTheLastHighWatermarkOfEveryPartitionAndAFileInEveryLogDir() {
        LeaderReplicationTasks replication = replication(3_600_000);
        replication.start();
        long hw = partition.highWatermark();
        assertThat(hw).isEqualTo(3);
        assertThat(Files.exists(logDir.resolve(HighWatermarkCheckpoint.FILE_NAME)))
                .as("nothing before the first interval")
                .isFalse();

        replication.close();

        assertThat(HighWatermarkCheckpoint.readAll(List.of(logDir))).isEqualTo(Map.of("t-0", 3L));
        assertThat(otherDir.resolve(HighWatermarkCheckpoint.FILE_NAME)).exists();
        assertThat(HighWatermarkCheckpoint.readAll(List.of(otherDir))).isEmpty();
    }

    @Test
    void theCheckpointIsRewrittenEveryIntervalWhileRunning() throws Exception {
        LeaderReplicationTasks replication = replication(20);
        replication.start();
        try {
            awaitCheckpoint(3L);
            append(2);
            awaitCheckpoint(5L);
        } finally {
            replication.close();
        }
    }

    @Test
    void aFailingCheckpointIsOneWarnPerEpisodeCountedAfterwardsAndOneInfoOnceItIsWrittenAgain() throws Exception {
        List<String> counted = new ArrayList<>();
        Files.delete(otherDir);
        Files.writeString(otherDir, "a file where the log dir should be"); // every write there fails
        LeaderReplicationTasks replication = replication(3_600_000, counted::add);
        try {
            for (int i = 0; i < 50; i++) {
                replication.writeCheckpoints();
            }
            assertThat(HighWatermarkCheckpoint.readAll(List.of(logDir)))
                    .as("the healthy dir is still written")
                    .isEqualTo(Map.of("t-0", 3L));
            List<ILoggingEvent> warnings = lines.at(Level.WARN);
            assertThat(warnings).hasSize(1);
            assertThat(warnings.getFirst().getFormattedMessage())
                    .startsWith("BACKGROUND_TASK_FAILED task=hw-checkpoint dir=" + otherDir.toAbsolutePath() + " file="
                            + otherDir.toAbsolutePath().resolve(HighWatermarkCheckpoint.FILE_NAME) + ".tmp");
            assertThat(warnings.getFirst().getThrowableProxy()).isNull();
            assertThat(counted).hasSize(49).containsOnly("hw-checkpoint");

            Files.delete(otherDir);
            Files.createDirectories(otherDir);
            replication.writeCheckpoints();
            replication.writeCheckpoints();

            assertThat(lines.at(Level.INFO))
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .singleElement()
                    .asString()
                    .startsWith("BACKGROUND_TASK_RECOVERED task=hw-checkpoint failures=50 ");
            assertThat(otherDir.resolve(HighWatermarkCheckpoint.FILE_NAME)).exists();
        } finally {
            replication.close();
        }
    }

    private LeaderReplicationTasks replication(long intervalMs) {
        return replication(intervalMs, task -> {
            throw new AssertionError(task + " failed");
        });
    }

    private LeaderReplicationTasks replication(long intervalMs, FailureEpisode.RepeatCounter failedAgain) {
        Consumer<Consumer<Partition>> hosted = visit -> visit.accept(partition);
        IsrManager isr = new IsrManager(
                1,
                request -> {
                    throw new AssertionError("a single-replica partition never changes its ISR");
                },
                () -> -1L,
                hosted,
                30_000,
                System::currentTimeMillis);
        return new LeaderReplicationTasks(
                isr, List.of(logDir, otherDir), hosted, intervalMs, InstantSource.system(), failedAgain);
    }

    private void awaitCheckpoint(long hw) throws InterruptedException {
        long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Long.valueOf(hw)
                .equals(HighWatermarkCheckpoint.readAll(List.of(logDir)).get("t-0"))) {
            assertThat(System.nanoTime())
                    .as("checkpoint with HW " + hw + " within 10 s")
                    .isLessThan(deadlineNs);
            Thread.sleep(10);
        }
    }

    private void append(int records) throws IOException {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder builder = new RecordBatchBuilder(out, 1L);
        for (int i = 0; i < records; i++) {
            builder.append(1L, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        builder.close();
        partition.appendAsLeader(out);
    }
}
