package io.stellflow.storage;

import io.stellflow.server.common.file.FailureEpisode;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partition logs of a broker across its {@code log.dirs}: loads every partition directory
 * ({@code <topic>-<partition>}) at start in parallel, places a new partition on the log dir holding
 * the fewest partitions, and periodically writes every log's recovery-point and log-start-offset
 * checkpoints ({@code log.flush.offset.checkpoint.interval.ms}) and applies retention ({@code
 * log.retention.check.interval.ms}) up to the high watermark a caller-supplied function gives.
 *
 * <p>Thread-safety: all methods may be called from any thread; creation is serialized. Periodic
 * work runs on the environment's scheduler and stops at {@link #close}.
 *
 * <p>Errors: a partition found in two log dirs, or a bad partition directory name, fails {@link
 * #start} with {@link IllegalStateException} naming the directories; I/O failures while loading as
 * {@link IOException}. A periodic task's failure on one log does not stop the others; each task
 * ({@code checkpoint}, {@code compaction}, {@code retention}) logs its failures as episodes ({@link
 * FailureEpisode}: one WARN line for the first failure, later ones counted through {@link
 * LogMetrics#backgroundTaskFailedAgain} and summarised at most every 5 minutes, one INFO line once a
 * pass succeeds on every log again).
 */
public final class LogManager implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogManager.class);

    /** Task name of the recovery-point and log-start-offset checkpoints (log lines, metric attribute). */
    public static final String CHECKPOINT_TASK = "checkpoint";

    /** Task name of the periodic compaction. */
    public static final String COMPACTION_TASK = "compaction";

    /** Task name of the periodic retention. */
    public static final String RETENTION_TASK = "retention";

    /**
     * The {@code maxBatchBytes} of a new log whose topic sets no largest batch of its own: the {@link
     * PlacementFilter} counts its default (the broker's {@code message.max.bytes}).
     */
    public static final int DEFAULT_MAX_BATCH_BYTES = -1;

    /** Where a new partition may go ({@link #placementFilter}). */
    @FunctionalInterface
    public interface PlacementFilter {
        /** Every log dir. */
        PlacementFilter ANY = (dir, config, maxBatchBytes) -> true;

        /**
         * Whether {@code dir} may take a new partition whose log runs with {@code config}.
         *
         * @param maxBatchBytes the largest batch the partition takes (its topic's {@code
         *     max.message.bytes}), or {@link #DEFAULT_MAX_BATCH_BYTES}
         */
        boolean accepts(Path dir, LogConfig config, int maxBatchBytes);
    }

    /**
     * Settings of the manager itself.
     *
     * @param logDirs {@code log.dirs}: at least one directory, created if missing
     * @param checkpointIntervalMs {@code log.flush.offset.checkpoint.interval.ms} (default 60000); 0
     *     = no periodic checkpoints
     * @param retentionCheckIntervalMs {@code log.retention.check.interval.ms} (default 300000); 0 =
     *     no periodic retention
     * @param loadThreads {@code num.recovery.threads.per.data.dir} times the dir count: threads
     *     loading logs at start (&gt;= 1)
     */
    public record Config(
            List<Path> logDirs, long checkpointIntervalMs, long retentionCheckIntervalMs, int loadThreads) {
        public Config {
            logDirs = List.copyOf(logDirs);
            if (logDirs.isEmpty()) {
                throw new IllegalArgumentException("log.dirs must name at least one directory");
            }
            if (checkpointIntervalMs < 0) {
                throw new IllegalArgumentException(
                        "log.flush.offset.checkpoint.interval.ms must be >= 0: " + checkpointIntervalMs);
            }
            if (retentionCheckIntervalMs < 0) {
                throw new IllegalArgumentException(
                        "log.retention.check.interval.ms must be >= 0: " + retentionCheckIntervalMs);
            }
            if (loadThreads < 1) {
                throw new IllegalArgumentException("num.recovery.threads.per.data.dir must be >= 1: " + loadThreads);
            }
        }

        /** Kafka's defaults for the intervals, one load thread per log dir. */
        public static Config of(List<Path> logDirs) {
            return new Config(logDirs, 60_000, 300_000, logDirs.size());
        }
    }

    private final Config config;
    private final Function<String, LogConfig> configForTopic;
    private final LogEnvironment env;
    private final ToLongFunction<UnifiedLog> highWatermark;
    private final Map<String, UnifiedLog> logs = new ConcurrentHashMap<>();
    private final Map<String, Path> logDirOf = new ConcurrentHashMap<>();
    private final Object createLock = new Object();
    private final FailureEpisode checkpointFailures;
    private final FailureEpisode compactionFailures;
    private final FailureEpisode retentionFailures;
    private volatile boolean closed;
    /** Which log dirs may get a new partition; every one unless {@link #placementFilter} said otherwise. */
    private volatile PlacementFilter placeable = PlacementFilter.ANY;

    private LogManager(
            Config config,
            Function<String, LogConfig> configForTopic,
            LogEnvironment env,
            ToLongFunction<UnifiedLog> highWatermark) {
        this.config = config;
        this.configForTopic = configForTopic;
        this.env = env;
        this.highWatermark = highWatermark;
        this.checkpointFailures = episode(CHECKPOINT_TASK);
        this.compactionFailures = episode(COMPACTION_TASK);
        this.retentionFailures = episode(RETENTION_TASK);
    }

    private FailureEpisode episode(String task) {
        return new FailureEpisode(task, LOG, env.clock(), t -> env.metrics().backgroundTaskFailedAgain(t));
    }

    /**
     * Loads every partition of every log dir in parallel and starts the periodic tasks.
     *
     * @param highWatermark retention never deletes at or above this offset of a log (give {@link
     *     UnifiedLog#logEndOffset} when there is no replication)
     */
    public static LogManager start(
            Config config, LogConfig logConfig, LogEnvironment env, ToLongFunction<UnifiedLog> highWatermark)
            throws IOException {
        return start(config, topic -> logConfig, env, highWatermark);
    }

    /**
     * As {@link #start(Config, LogConfig, LogEnvironment, ToLongFunction)} with a config per topic:
     * every log found at start is opened with {@code configForTopic.apply(topic)} (topic = the
     * directory name up to its last {@code -}), as is every log {@link #getOrCreate(String, int)}
     * creates.
     */
    public static LogManager start(
            Config config,
            Function<String, LogConfig> configForTopic,
            LogEnvironment env,
            ToLongFunction<UnifiedLog> highWatermark)
            throws IOException {
        LogManager manager = new LogManager(config, configForTopic, env, highWatermark);
        manager.loadAll();
        manager.scheduleCheckpoints();
        manager.scheduleRetention();
        return manager;
    }

    /** The manager's settings ({@code log.dirs}, intervals). */
    public Config config() {
        return config;
    }

    /** Name of a partition's directory: {@code <topic>-<partition>}. */
    public static String dirName(String topic, int partition) {
        return topic + "-" + partition;
    }

    private void loadAll() throws IOException {
        Map<String, Path> found = new HashMap<>();
        for (Path logDir : config.logDirs()) {
            Files.createDirectories(logDir);
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(logDir, Files::isDirectory)) {
                for (Path partitionDir : entries) {
                    String name = partitionDir.getFileName().toString();
                    if (name.startsWith(".")) {
                        continue; // broker metadata (.topics) and other hidden directories
                    }
                    if (SegmentQuarantine.isQuarantineDir(name)) {
                        LOG.warn("Not loading {}: segments recovery moved out of a corrupt log", partitionDir);
                        continue;
                    }
                    checkName(partitionDir, name);
                    Path other = found.put(name, partitionDir);
                    if (other != null) {
                        throw new IllegalStateException(
                                "partition " + name + " found in two log dirs: " + other + " and " + partitionDir);
                    }
                }
            }
        }
        long startNanos = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(config.loadThreads(), r -> {
            Thread t = new Thread(r, "stellflow-log-loader");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<UnifiedLog>> loading = new ArrayList<>();
            for (Path partitionDir : found.values()) {
                String topic = topicOf(partitionDir.getFileName().toString());
                loading.add(pool.submit(() -> UnifiedLog.open(partitionDir, configForTopic.apply(topic), env)));
            }
            IOException failure = null;
            for (Future<UnifiedLog> f : loading) {
                try {
                    UnifiedLog log = f.get();
                    String name = log.dir().getFileName().toString();
                    logs.put(name, log);
                    logDirOf.put(name, log.dir().getParent());
                } catch (ExecutionException e) {
                    IOException cause = e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
                    if (failure == null) {
                        failure = cause;
                    } else {
                        failure.addSuppressed(cause);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while loading logs", e);
                }
            }
            if (failure != null) {
                closeLogs();
                throw failure;
            }
        } finally {
            pool.shutdownNow();
        }
        LOG.info(
                "Loaded {} partition log(s) from {} log dir(s) in {} ms",
                logs.size(),
                config.logDirs().size(),
                (System.nanoTime() - startNanos) / 1_000_000);
    }

    private static String topicOf(String dirName) {
        return dirName.substring(0, dirName.lastIndexOf('-'));
    }

    private static void checkName(Path partitionDir, String name) {
        int dash = name.lastIndexOf('-');
        boolean ok = dash > 0 && dash < name.length() - 1;
        for (int i = dash + 1; ok && i < name.length(); i++) {
            ok = Character.isDigit(name.charAt(i));
        }
        if (!ok) {
            throw new IllegalStateException("not a partition directory (<topic>-<partition>): " + partitionDir);
        }
    }

    /** The log of a partition, or null when it does not exist. */
    public UnifiedLog get(String topic, int partition) {
        return logs.get(dirName(topic, partition));
    }

    /**
     * Restricts where new partitions go: only to log dirs {@code placeable} accepts for the new log's
     * config and largest batch (the broker's log dir failure handling refuses offline dirs and dirs
     * without room for the partition's first segment). Read at each creation; any thread.
     */
    public void placementFilter(PlacementFilter placeable) {
        this.placeable = placeable;
    }

    /**
     * The log of a partition, created on the log dir holding the fewest partitions (ties: the first
     * listed) among those the {@link #placementFilter} accepts, when it does not exist yet.
     *
     * @throws IOException no log dir accepts a new partition, or creating the log failed
     * @throws IllegalStateException the manager is closed
     */
    public UnifiedLog getOrCreate(String topic, int partition) throws IOException {
        return getOrCreate(topic, partition, null, DEFAULT_MAX_BATCH_BYTES);
    }

    /**
     * As {@link #getOrCreate(String, int)}; a log created now gets {@code logConfig} (null: the
     * topic's config from the start function). An existing log keeps the config it was opened with.
     *
     * @param maxBatchBytes the largest batch the partition takes (its topic's {@code
     *     max.message.bytes}) or {@link #DEFAULT_MAX_BATCH_BYTES}: what the {@link #placementFilter}
     *     counts besides the log's indexes
     */
    public UnifiedLog getOrCreate(String topic, int partition, LogConfig logConfig, int maxBatchBytes)
            throws IOException {
        String name = dirName(topic, partition);
        UnifiedLog existing = logs.get(name);
        if (existing != null) {
            return existing;
        }
        synchronized (createLock) {
            if (closed) {
                throw new IllegalStateException("log manager is closed");
            }
            existing = logs.get(name);
            if (existing != null) {
                return existing;
            }
            LogConfig cfg = logConfig != null ? logConfig : configForTopic.apply(topic);
            Path logDir = leastLoadedDir(cfg, maxBatchBytes);
            Path partitionDir = logDir.resolve(name);
            boolean existed = Files.exists(partitionDir);
            UnifiedLog log;
            try {
                log = UnifiedLog.open(partitionDir, cfg, env);
            } catch (IOException | RuntimeException e) {
                if (!existed) {
                    // A half-created log (the disk filled, the dir failed) would be loaded at the next
                    // start as a log of unknown origin; a later attempt creates it afresh.
                    deleteTree(partitionDir, e);
                }
                throw e;
            }
            logDirOf.put(name, logDir);
            logs.put(name, log);
            LOG.info("Created log {} in {}", name, logDir);
            return log;
        }
    }

    /**
     * Closes a partition's log and deletes its directory (a topic creation that never committed).
     * Returns false when there is no such log.
     *
     * @throws IOException closing or deleting failed (the log is gone from the manager either way)
     */
    public boolean delete(String topic, int partition) throws IOException {
        String name = dirName(topic, partition);
        UnifiedLog log;
        synchronized (createLock) {
            log = logs.remove(name);
            logDirOf.remove(name);
        }
        if (log == null) {
            return false;
        }
        log.close();
        try (var walk = Files.walk(log.dir())) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
        Checkpoints.fsyncDir(log.dir().getParent());
        LOG.info("Deleted log {}", log.dir());
        return true;
    }

    /** Deletes {@code dir} and its files, best effort: what cannot be deleted is added to {@code cause}. */
    private static void deleteTree(Path dir, Throwable cause) {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** Every partition log, by directory name {@code <topic>-<partition>} (a snapshot). */
    public Map<String, UnifiedLog> logs() {
        return Map.copyOf(logs);
    }

    private Path leastLoadedDir(LogConfig cfg, int maxBatchBytes) throws IOException {
        Map<Path, Integer> counts = new HashMap<>();
        for (Path dir : logDirOf.values()) {
            counts.merge(dir, 1, Integer::sum);
        }
        Path best = null;
        int bestCount = Integer.MAX_VALUE;
        PlacementFilter accepts = placeable;
        for (Path dir : config.logDirs()) {
            int n = counts.getOrDefault(dir, 0);
            if (n < bestCount && accepts.accepts(dir, cfg, maxBatchBytes)) {
                best = dir;
                bestCount = n;
            }
        }
        if (best == null) {
            throw new IOException("no log dir of " + config.logDirs()
                    + " can take a new partition (offline, or without room for a new segment)");
        }
        return best;
    }

    /** The log dir holding a partition, or null. */
    public Path logDirOf(String topic, int partition) {
        return logDirOf.get(dirName(topic, partition));
    }

    /** Number of partitions per log dir, in {@code log.dirs} order. */
    public List<Integer> partitionCounts() {
        List<Integer> out = new ArrayList<>();
        for (Path dir : config.logDirs()) {
            int n = 0;
            for (Path d : logDirOf.values()) {
                n += d.equals(dir) ? 1 : 0;
            }
            out.add(n);
        }
        return out;
    }

    /**
     * Writes every log's recovery-point and log-start-offset checkpoints. Returns failures (logged
     * as the {@code checkpoint} task's episode).
     */
    public int checkpointAll() {
        int failures = 0;
        for (UnifiedLog log : logs.values()) {
            try {
                log.checkpoint();
            } catch (IOException | IllegalStateException e) {
                failures++;
                checkpointFailures.failed(log.dir(), null, e);
            }
        }
        if (failures == 0) {
            checkpointFailures.succeeded();
        }
        return failures;
    }

    /**
     * Compacts every log whose cleanup policy includes {@code compact} ({@link UnifiedLog#compact})
     * up to its high watermark, one log after the other on the calling thread; a failure is logged
     * (the {@code compaction} task's episode) and the log skipped. The periodic retention task runs
     * this first. Returns the segments rewritten.
     */
    public int compactAll() {
        int cleaned = 0;
        boolean failed = false;
        for (UnifiedLog log : logs.values()) {
            try {
                cleaned += log.compact(highWatermark.applyAsLong(log)).segmentsCleaned();
            } catch (IOException | IllegalStateException e) {
                failed = true;
                compactionFailures.failed(log.dir(), null, e);
            }
        }
        if (!failed) {
            compactionFailures.succeeded();
        }
        return cleaned;
    }

    /**
     * Applies retention to every log up to its high watermark; a failure is logged (the {@code
     * retention} task's episode) and the log skipped. Returns the segments deleted.
     */
    public int retainAll() {
        int deleted = 0;
        boolean failed = false;
        for (UnifiedLog log : logs.values()) {
            try {
                deleted += log.deleteOldSegments(highWatermark.applyAsLong(log));
            } catch (IOException | IllegalStateException e) {
                failed = true;
                retentionFailures.failed(log.dir(), null, e);
            }
        }
        if (!failed) {
            retentionFailures.succeeded();
        }
        return deleted;
    }

    private void scheduleCheckpoints() {
        if (config.checkpointIntervalMs() > 0 && !closed) {
            env.scheduler()
                    .schedule(
                            () -> {
                                if (!closed) {
                                    checkpointAll();
                                    scheduleCheckpoints();
                                }
                            },
                            config.checkpointIntervalMs());
        }
    }

    private void scheduleRetention() {
        if (config.retentionCheckIntervalMs() > 0 && !closed) {
            env.scheduler()
                    .schedule(
                            () -> {
                                if (!closed) {
                                    compactAll();
                                    retainAll();
                                    scheduleRetention();
                                }
                            },
                            config.retentionCheckIntervalMs());
        }
    }

    /**
     * The count of producer ids the logs of this manager keep and its bound, {@code
     * producer.id.max.per.broker} (for the gauge {@code stellflow.log.producer_id.count}).
     */
    public BrokerProducerIds producerIds() {
        return env.producerIds();
    }

    /** Stops the periodic tasks and closes every log cleanly (checkpoints, clean shutdown markers). */
    @Override
    public void close() throws IOException {
        synchronized (createLock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closeLogs();
    }

    private void closeLogs() throws IOException {
        IOException error = null;
        for (UnifiedLog log : logs.values()) {
            try {
                log.close();
            } catch (IOException e) {
                if (error == null) {
                    error = e;
                } else {
                    error.addSuppressed(e);
                }
            }
        }
        if (error != null) {
            throw error;
        }
    }
}
