package io.stellflow.broker;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.cluster.HighWatermarkCheckpoint;
import io.stellflow.broker.replication.IsrManager;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.server.common.concurrent.ExecutorClose;
import io.stellflow.server.common.file.FailureEpisode;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader side of a broker's replication besides the data path: the {@link IsrManager} (ISR
 * shrink and expand of the led partitions, {@code replica.lag.time.max.ms}) and the periodic high
 * watermark checkpoint of every log dir ({@code replica.high.watermark.checkpoint.interval.ms},
 * {@link HighWatermarkCheckpoint}), written once more at {@link #close} so that a clean shutdown
 * keeps the last HW of every partition.
 *
 * <p>Threads: the ISR manager's own, and one daemon thread {@code sf-hw-checkpoint} that writes the
 * checkpoints.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} are called once each, by the server's starting
 * and closing thread.
 *
 * <p>Errors: a failed checkpoint write is retried at the next interval, never thrown; its failures
 * are the {@code hw-checkpoint} task's episodes ({@link FailureEpisode}: one WARN line for the first
 * failure, later ones counted in {@code stellflow.log.background.error.count} and summarised at most
 * every 5 minutes, one INFO line once every dir was written again).
 */
final class LeaderReplicationTasks implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderReplicationTasks.class);

    private final IsrManager isrManager;
    private final List<Path> logDirs;
    private final Consumer<Consumer<Partition>> partitions;
    private final long checkpointIntervalMs;
    private final FailureEpisode checkpointFailures;
    private final ScheduledExecutorService checkpointer =
            Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-hw-checkpoint", true));

    /**
     * @param isrManager the ISR manager of the led partitions, not started yet
     * @param logDirs {@code log.dirs}: every dir gets a checkpoint file
     * @param partitions visits every hosted partition
     * @param checkpointIntervalMs the delay between two checkpoint writes, ms, above 0
     * @param clock wall clock of the failure episodes
     * @param failedAgain counts a failed checkpoint write after the first of its episode
     */
    LeaderReplicationTasks(
            IsrManager isrManager,
            List<Path> logDirs,
            Consumer<Consumer<Partition>> partitions,
            long checkpointIntervalMs,
            InstantSource clock,
            FailureEpisode.RepeatCounter failedAgain) {
        this.isrManager = isrManager;
        this.logDirs = logDirs;
        this.partitions = partitions;
        this.checkpointIntervalMs = checkpointIntervalMs;
        this.checkpointFailures = new FailureEpisode(BrokerMetrics.HW_CHECKPOINT_TASK, LOG, clock, failedAgain);
    }

    /**
     * Starts the ISR manager and the periodic checkpoint (the first write one interval from now);
     * once, after the replica manager was configured with the ISR manager and before the first
     * metadata arrives.
     */
    void start() {
        isrManager.start();
        checkpointer.scheduleWithFixedDelay(
                this::writeCheckpoints, checkpointIntervalMs, checkpointIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** Registers the checkpoint thread with {@code watchdog} (a probe task beats for it). */
    void watch(ThreadWatchdog watchdog) {
        watchdog.watchExecutor(
                "sf-hw-checkpoint", "LeaderReplicationTasks", checkpointer, true, checkpointer::isShutdown);
    }

    /** Writes the HW checkpoint of every log dir now (a failure goes to the task's episode). */
    void writeCheckpoints() {
        try {
            HighWatermarkCheckpoint.write(logDirs, partitions, checkpointFailures);
        } catch (RuntimeException e) {
            // Visiting the partitions failed (a bug): the executor would cancel the task on a throw.
            checkpointFailures.failed(logDirs.getFirst(), null, e);
        }
    }

    /**
     * Stops the ISR manager and the periodic checkpoint (waits up to 5 s for a running write) and
     * writes the last checkpoints. Call after the append agents and fetchers stopped, so that no HW
     * moves afterwards.
     */
    @Override
    public void close() {
        isrManager.close();
        ExecutorClose.shutdownNowAndAwait(checkpointer, 5_000);
        writeCheckpoints(); // clean shutdown: the last HW of every partition
    }
}
