package io.stellflow.broker.topic;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.server.common.concurrent.ExecutorClose;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Log dir failure handling (issue #23, Kafka's KIP-112 model): a log dir becomes OFFLINE when a write
 * of one of its partitions failed with an I/O error that is not "no space" ({@link
 * PartitionFailure#noSpace} failures recover in place, {@link DiskFullRecovery}), or when a cheap probe
 * finds the dir, or the dir of a partition on it, gone or not accessible. Then every partition on
 * that dir is marked failed ({@link Partition#markOffline}: appends answer {@code
 * BROKER_NOT_AVAILABLE}, reads too) and the broker's heartbeats list them, so the controller moves
 * their leadership to other replicas; partitions on the other dirs are served as before. No new
 * partition is placed on an offline dir, nor on a dir with less free space than a new segment of it
 * needs: its preallocated indexes plus one largest batch of its topic ({@link #canPlace(Path,
 * LogConfig, int)}). An offline dir stays offline until the broker restarts (the operator replaces
 * the disk or repairs the dir first: docs/operations.md, "A failed log dir").
 *
 * <p>Logging: one {@code LOG_DIR_OFFLINE dir= reason= partitions=} ERROR line per dir. Metric: the
 * gauge {@code stellflow.log.dir.offline} (1 or 0 per dir, {@link #isOffline}).
 *
 * <p>Probe cost: per pass one {@code stat} of each log dir and one of each hosted partition's dir
 * (about a microsecond each from the dentry cache; 1,000 partitions once a second is about 1 ms of one
 * core). As root, permissions do not fail the probe (root may read and write a {@code chmod 000} dir,
 * and so may the broker).
 *
 * <p>Thread-safety: {@link #checkNow} is confined to one thread at a time (the check thread or a
 * test); the queries ({@link #canPlace}, {@link #isOffline}, {@link #hasWritableLogDir}) run on any
 * thread.
 */
public final class LogDirFailures implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogDirFailures.class);

    /** Pause between two passes, ms: how late an unusable dir is noticed at most (plus the pass). */
    static final long TICK_MS = 1000;

    private final List<Path> logDirs;
    private final Consumer<Consumer<Partition>> partitions;
    private final LogConfig defaults;
    private final int messageMaxBytes;
    private final DiskFullRecovery.FreeSpace freeSpace;
    private final LongSupplier clockMs;
    private final Runnable afterPass;
    private final Predicate<Partition> owned;
    private final Set<Path> offline = ConcurrentHashMap.newKeySet();
    private ScheduledExecutorService executor;

    /**
     * @param logDirs {@code log.dirs}
     * @param partitions visits every hosted partition
     * @param defaults the broker's log defaults: the indexes of a new partition whose topic
     *     overrides none, what {@link #canPlace(Path)} counts
     * @param messageMaxBytes {@code message.max.bytes}: the largest batch of a partition whose topic
     *     sets no {@code max.message.bytes}
     * @param freeSpace reads a dir's free space ({@link DiskFullRecovery.FreeSpace#SYSTEM} outside tests)
     * @param clockMs ms since the epoch, the time of a failure
     * @param afterPass run at the end of each pass (the replica manager retries partitions it could
     *     not create)
     * @param owned whether a partition's log is still the one the log manager holds: a partition dir
     *     found missing counts as a failure only then, not while the partition is being deleted (the
     *     manager lets go of a log before it deletes its files)
     */
    public LogDirFailures(
            List<Path> logDirs,
            Consumer<Consumer<Partition>> partitions,
            LogConfig defaults,
            int messageMaxBytes,
            DiskFullRecovery.FreeSpace freeSpace,
            LongSupplier clockMs,
            Runnable afterPass,
            Predicate<Partition> owned) {
        this.owned = owned;
        this.logDirs = List.copyOf(logDirs);
        this.partitions = partitions;
        this.defaults = defaults;
        this.messageMaxBytes = messageMaxBytes;
        this.freeSpace = freeSpace;
        this.clockMs = clockMs;
        this.afterPass = afterPass;
    }

    /** Starts the passes on the daemon thread {@code sf-log-dir-check}, every {@link #TICK_MS}. Once. */
    public void start() {
        executor = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-log-dir-check", true));
        executor.scheduleWithFixedDelay(this::checkQuietly, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * One pass: probes the dirs that are online, takes offline every dir with a failed probe or a
     * partition failed by an I/O error, marks every partition of an offline dir, then runs the
     * after-pass action.
     *
     * @return the number of dirs that went offline in this pass
     */
    public int checkNow() {
        int wentOffline = 0;
        for (Path dir : logDirs) {
            if (!offline.contains(dir)) {
                String why = probe(dir);
                if (why != null && takeOffline(dir, why)) {
                    wentOffline++;
                }
            }
        }
        List<Path> failedDirs = new ArrayList<>();
        List<String> reasons = new ArrayList<>();
        partitions.accept(p -> {
            Path dir = logDirOf(p);
            if (offline.contains(dir) || failedDirs.contains(dir)) {
                return;
            }
            PartitionFailure f = p.failure();
            if (f != null && !f.noSpace() && !f.logDirOffline() && isIoError(f.error())) {
                failedDirs.add(dir);
                reasons.add(f.operation() + " of " + p + " failed: " + f.reason());
            } else if (!Files.isDirectory(p.log().dir()) && owned.test(p)) {
                failedDirs.add(dir);
                reasons.add("partition dir " + p.log().dir() + " is gone");
            }
        });
        for (int i = 0; i < failedDirs.size(); i++) {
            if (takeOffline(failedDirs.get(i), reasons.get(i))) {
                wentOffline++;
            }
        }
        if (!offline.isEmpty()) {
            markPartitionsOfOfflineDirs(null);
        }
        afterPass.run();
        return wentOffline;
    }

    /** Whether {@code dir} (one of {@code log.dirs}) is offline. Any thread. */
    public boolean isOffline(Path dir) {
        return offline.contains(dir);
    }

    /** The {@code log.dirs} this handler watches. */
    public List<Path> logDirs() {
        return logDirs;
    }

    /**
     * Whether a new partition of a topic that overrides neither its index size nor {@code
     * max.message.bytes} may be created in {@code dir} ({@link #canPlace(Path, LogConfig, int)} at the
     * broker's defaults). Any thread.
     */
    public boolean canPlace(Path dir) {
        return canPlace(dir, defaults, LogManager.DEFAULT_MAX_BATCH_BYTES);
    }

    /**
     * Whether a new partition whose log runs with {@code config} may be created in {@code dir}: the
     * dir is online and its file system has room for the partition's first segment, its preallocated
     * indexes plus one largest batch ({@link DiskFullRecovery#requiredFreeBytes(LogConfig, int)}, the
     * rule its recovery from a full disk waits for). One {@code statfs}. Any thread; the log
     * manager's {@link LogManager.PlacementFilter}.
     *
     * @param maxBatchBytes the topic's {@code max.message.bytes}, or {@link
     *     LogManager#DEFAULT_MAX_BATCH_BYTES} when it sets none ({@code message.max.bytes} counts)
     */
    public boolean canPlace(Path dir, LogConfig config, int maxBatchBytes) {
        int batchBytes = maxBatchBytes == LogManager.DEFAULT_MAX_BATCH_BYTES ? messageMaxBytes : maxBatchBytes;
        return !offline.contains(dir)
                && freeSpace.freeBytes(dir) >= DiskFullRecovery.requiredFreeBytes(config, batchBytes);
    }

    /**
     * Whether any log dir {@link #canPlace(Path)} a new partition at the broker's defaults (the
     * heartbeat's {@code no_writable_log_dir}, negated: the controller does not know which topic a
     * replica will come from; a topic with a larger {@code max.message.bytes} may still find no dir).
     */
    public boolean hasWritableLogDir() {
        for (Path dir : logDirs) {
            if (canPlace(dir)) {
                return true;
            }
        }
        return false;
    }

    /** Null when {@code dir} looks usable, else why not. */
    private static String probe(Path dir) {
        if (!Files.isDirectory(dir)) {
            return "the dir is gone";
        }
        if (!Files.isReadable(dir) || !Files.isWritable(dir) || !Files.isExecutable(dir)) {
            return "the dir is not readable, writable and searchable by the broker";
        }
        return null;
    }

    /** Marks {@code dir} offline and its partitions failed, and logs it; false when it was offline already. */
    private boolean takeOffline(Path dir, String reason) {
        if (!offline.add(dir)) {
            return false;
        }
        List<String> names = markPartitionsOfOfflineDirs(new PartitionFailure(
                PartitionFailure.LOG_DIR_OFFLINE,
                dir.toString(),
                reason,
                IOException.class.getName(),
                clockMs.getAsLong(),
                false));
        LOG.error("{} dir={} reason={} partitions={}", LogEvents.LOG_DIR_OFFLINE, dir, reason, names);
        return true;
    }

    /**
     * Marks every partition of an offline dir that is not marked yet (one hosted after the dir went
     * offline included); returns their names.
     *
     * @param why the failure to record, or null for a new one per partition
     */
    private List<String> markPartitionsOfOfflineDirs(PartitionFailure why) {
        List<String> names = new ArrayList<>();
        partitions.accept(p -> {
            Path dir = logDirOf(p);
            PartitionFailure f = p.failure();
            if (offline.contains(dir) && (f == null || !f.logDirOffline())) {
                p.markOffline(
                        why != null
                                ? why
                                : new PartitionFailure(
                                        PartitionFailure.LOG_DIR_OFFLINE,
                                        dir.toString(),
                                        "its log dir is offline",
                                        IOException.class.getName(),
                                        clockMs.getAsLong(),
                                        false));
                names.add(p.toString());
            }
        });
        return names;
    }

    private static Path logDirOf(Partition p) {
        return p.log().dir().getParent();
    }

    /** Whether the class named {@code className} is an {@link IOException} (not a bug's RuntimeException). */
    private static boolean isIoError(String className) {
        try {
            return IOException.class.isAssignableFrom(
                    Class.forName(className, false, LogDirFailures.class.getClassLoader()));
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private void checkQuietly() {
        try {
            checkNow();
        } catch (RuntimeException e) {
            LOG.error("Log dir check failed", e);
        }
    }

    /**
     * Registers the check thread with {@code watchdog} (a probe task beats for it); after {@link
     * #start}. A stuck check (a hung probe of a dead disk) is then an event and fences the broker.
     */
    public void watch(ThreadWatchdog watchdog) {
        ScheduledExecutorService e = executor;
        watchdog.watchExecutor("sf-log-dir-check", "LogDirFailures", e, true, e::isShutdown);
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
