package io.stellflow.broker.topic;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.telemetry.StorageMetrics;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.server.common.concurrent.ExecutorClose;
import io.stellflow.storage.LogConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovers partitions whose write failed because their log dir's file system was full, in place and
 * without a restart (issue #23: a full disk is not a dead disk). For each hosted partition whose
 * {@link PartitionFailure#noSpace} failure is at least {@code log.dir.failure.retry.ms} old, it
 * checks the free space of the partition's dir, then every {@code log.dir.failure.retry.ms}; once
 * the file system has room for a new segment's indexes and one largest batch of the partition's
 * topic ({@link #requiredFreeBytes}), it recovers the partition ({@link Partition#recoverInPlace}: the log is
 * reopened under its write lock and the tail recovered, the failure cleared) and logs one {@code
 * PARTITION_RECOVERED} INFO line. The partition then takes writes in the role it has now: Produce as
 * leader, the replica fetcher's appends as follower.
 *
 * <p>Only no-space failures are retried here. Any other failure (an I/O error, a fault) means the
 * disk or its data may be damaged: the partition stays failed, for the log dir's failure handling
 * (offline dir, leadership moved away) or a restart.
 *
 * <p>Time: {@link #checkNow} reads the injected clock (ms since the epoch, the clock of {@link
 * PartitionFailure#atMs}); {@link #start} runs it on one daemon thread {@code sf-disk-full-recovery}
 * every {@code min(retryMs, 1000)} ms, so a check is at most that late. While none has failed, a
 * pass costs one volatile read per hosted partition and one empty map.
 *
 * <p>Logging: {@code PARTITION_RECOVERED partition= dir= role=leader|follower operation= downMs=
 * freeBytes= logEndOffset=} (INFO) once per recovery; a recovery attempt that fails (the disk filled
 * again, the log cannot be loaded) logs one WARN per failure episode, later attempts DEBUG.
 *
 * <p>Thread-safety: {@link #checkNow} is confined to one thread at a time (the recovery thread, or a
 * test); {@link #start} and {@link #close} are called once each by the broker's starting and
 * closing thread.
 *
 * <p>Errors: never throws from a pass; a failed attempt is logged and retried.
 */
public final class DiskFullRecovery implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DiskFullRecovery.class);

    private static final int RECOVERED = 0;
    private static final int NO_ROOM = 1;
    private static final int CHANGED = 2;
    private static final int FAILED = 3;

    /** Longest pause between two passes, ms. */
    static final long MAX_TICK_MS = 1000;

    /** Usable bytes of the file system holding a directory. */
    @FunctionalInterface
    public interface FreeSpace {
        /** The real file system's ({@link StorageMetrics#freeBytes}). */
        FreeSpace SYSTEM = StorageMetrics::freeBytes;

        /** Usable bytes for the file system holding {@code dir}, -1 when that cannot be read. */
        long freeBytes(Path dir);
    }

    /** The schedule of one failed partition: which failure, when to check next, whether a retry was logged. */
    private record Schedule(PartitionFailure failure, long dueMs, boolean failureLogged) {}

    private final Consumer<Consumer<Partition>> partitions;
    private final long retryMs;
    private final int messageMaxBytes;
    private final FreeSpace freeSpace;
    private final LongSupplier clockMs;
    /** Owned by the thread running {@link #checkNow}; only failed partitions are in it. */
    private Map<Partition, Schedule> schedules = new IdentityHashMap<>();

    private ScheduledExecutorService executor;

    /**
     * @param partitions visits every hosted partition
     * @param retryMs {@code log.dir.failure.retry.ms}: how long after a failure, and then how often,
     *     the free space is checked, ms, above 0
     * @param messageMaxBytes {@code message.max.bytes}: the largest batch of a partition whose topic
     *     sets no {@code max.message.bytes}; room for one largest batch is part of {@link
     *     #requiredFreeBytes}
     * @param freeSpace reads a dir's free space ({@link FreeSpace#SYSTEM} outside tests)
     * @param clockMs ms since the epoch ({@link System#currentTimeMillis} outside tests)
     */
    public DiskFullRecovery(
            Consumer<Consumer<Partition>> partitions,
            long retryMs,
            int messageMaxBytes,
            FreeSpace freeSpace,
            LongSupplier clockMs) {
        if (retryMs <= 0) {
            throw new IllegalArgumentException("log.dir.failure.retry.ms must be > 0: " + retryMs);
        }
        this.partitions = partitions;
        this.retryMs = retryMs;
        this.messageMaxBytes = messageMaxBytes;
        this.freeSpace = freeSpace;
        this.clockMs = clockMs;
    }

    /** Starts the periodic passes on the daemon thread {@code sf-disk-full-recovery}. Once. */
    public void start() {
        long tickMs = Math.min(retryMs, MAX_TICK_MS);
        executor = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-disk-full-recovery", true));
        executor.scheduleWithFixedDelay(this::checkQuietly, tickMs, tickMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Registers the recovery thread with {@code watchdog} (a probe task beats for it); after {@link
     * #start}.
     */
    public void watch(ThreadWatchdog watchdog) {
        ScheduledExecutorService e = executor;
        watchdog.watchExecutor("sf-disk-full-recovery", "DiskFullRecovery", e, true, e::isShutdown);
    }

    /**
     * Free bytes the dir of {@code partition} must have before it is recovered: its log's
     * preallocated index size (what the next segment roll allocates) plus one largest batch of its
     * topic ({@link Partition#maxMessageBytes}: the topic's {@code max.message.bytes}, else {@code
     * message.max.bytes}). Less than that, and the first appends after the recovery would likely fail
     * again.
     */
    public long requiredFreeBytes(Partition partition) {
        return requiredFreeBytes(partition.log().config(), partition.maxMessageBytes(messageMaxBytes));
    }

    /**
     * Free bytes a log running with {@code config} needs to take writes: a new segment's preallocated
     * indexes plus one batch of {@code maxBatchBytes}. The rule for recovering a partition of a full
     * dir here and for placing a new partition ({@link LogDirFailures#canPlace}). At the defaults
     * (10 MiB offset index, its 15 MiB time index, 1 MiB {@code message.max.bytes}) 26 MiB; a topic
     * with a 40 MiB {@code max.message.bytes} needs 65 MiB.
     */
    public static long requiredFreeBytes(LogConfig config, int maxBatchBytes) {
        return config.preallocatedIndexBytes() + maxBatchBytes;
    }

    /**
     * One pass at the clock's time: checks every partition with a no-space failure whose check is
     * due and recovers those whose dir has room.
     *
     * @return the number of partitions recovered in this pass
     */
    public int checkNow() {
        long nowMs = clockMs.getAsLong();
        Map<Partition, Schedule> before = schedules;
        Map<Partition, Schedule> next = new IdentityHashMap<>(Math.max(4, before.size()));
        int[] recovered = {0};
        partitions.accept(p -> {
            PartitionFailure f = p.failure();
            if (f == null || !f.noSpace()) {
                return;
            }
            Schedule s = before.get(p);
            if (s == null || s.failure() != f) {
                s = new Schedule(f, f.atMs() + retryMs, false); // a new episode: first check retryMs after it
            }
            if (nowMs >= s.dueMs()) {
                int outcome = attempt(p, f, nowMs, s.failureLogged());
                if (outcome == RECOVERED) {
                    recovered[0]++;
                    return;
                }
                s = new Schedule(f, nowMs + retryMs, s.failureLogged() || outcome == FAILED);
            }
            next.put(p, s);
        });
        schedules = next; // partitions that recovered, left or failed otherwise drop out
        return recovered[0];
    }

    /**
     * Checks the space and recovers {@code p}; logs as the class comment says.
     *
     * @param failureLogged an earlier attempt of this episode failed and was logged at WARN
     * @return {@link #RECOVERED}, {@link #NO_ROOM} (not enough free space yet), {@link #CHANGED}
     *     (the failure is no longer {@code f}) or {@link #FAILED} (the reopen threw)
     */
    private int attempt(Partition p, PartitionFailure f, long nowMs, boolean failureLogged) {
        Path dir = p.log().dir();
        long free = freeSpace.freeBytes(dir);
        long required = requiredFreeBytes(p);
        if (free < required) {
            LOG.debug("{} stays failed: {} bytes free in {}, {} needed", p, free, dir, required);
            return NO_ROOM;
        }
        try {
            long logEndOffset = p.recoverInPlace(f);
            if (logEndOffset == Partition.UNKNOWN_OFFSET) {
                return CHANGED;
            }
            LOG.info(
                    "{} partition={} dir={} role={} operation={} downMs={} freeBytes={} logEndOffset={}",
                    LogEvents.PARTITION_RECOVERED,
                    p,
                    dir,
                    p.isLeader() ? "leader" : "follower",
                    f.operation(),
                    Math.max(0, nowMs - f.atMs()),
                    free,
                    logEndOffset);
            return RECOVERED;
        } catch (IOException | RuntimeException e) {
            if (failureLogged) {
                LOG.debug("Recovering {} failed again: {}", p, e.toString());
            } else {
                LOG.warn(
                        "Recovering {} in place failed ({} bytes free in {}); retrying every {} ms: {}",
                        p,
                        free,
                        dir,
                        retryMs,
                        e.toString());
            }
            return FAILED;
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (RuntimeException e) {
            LOG.error("Disk-full recovery pass failed", e);
        }
    }

    /** Stops the passes (waits up to 5 s for a running one). Idempotent. */
    @Override
    public void close() {
        if (executor == null) {
            return;
        }
        ExecutorClose.shutdownNowAndAwait(executor, 5_000);
    }
}
