package io.stellflow.broker.topic;

import io.stellflow.server.common.file.AtomicFiles;
import io.stellflow.server.common.topic.TopicNames;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogEnvironment;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.TopicConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topics this broker hosts: their metadata, persisted in the first log dir, and their partition
 * logs, spread over every {@code log.dirs} entry by a {@link LogManager} (a new partition goes to the
 * dir holding the fewest; all logs are loaded in parallel at start; recovery-point and
 * log-start-offset checkpoints, retention and compaction run periodically).
 *
 * <p>Layout: {@code <firstLogDir>/.topics/<topic-id>.properties} holds {@code topic}, {@code
 * topic.id}, {@code partition.count}, {@code leader.epoch} and the topic's config overrides as
 * {@code config.<key>} ({@link TopicConfig} keys, e.g. {@code config.cleanup.policy=compact});
 * each partition's log lives in {@code <someLogDir>/<topic>-<partition>/}. The metadata file is named by the topic id (a 36-character
 * UUID), not the name: a 249-character name plus {@code .properties.tmp} would pass the 255-byte file
 * name limit. The {@code .topics} directory name has no {@code -N} suffix, so it can never be a
 * partition directory. The metadata file is written last (atomically), so it is the commit point of a
 * creation: partition directories without it are orphans; they are loaded but serve nothing, deleted when a
 * creation of that name fails, and deleted before a new topic of that name takes their place (so a
 * new topic never inherits an uncommitted one's records).
 *
 * <p>High watermark: retention and compaction never act at or above {@link Partition#highWatermark}
 * (the log end offset on a single node; the hook replication fills in).
 *
 * <p>Thread-safety: lookups are lock-free and may run on any thread; {@link #create} and
 * {@link #close} are serialised by the registry's monitor.
 *
 * <p>Errors: {@link IOException} when a directory or file cannot be read or written; a metadata file
 * that does not parse fails {@link #open} with a message naming the file.
 */
public final class TopicRegistry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TopicRegistry.class);

    /** Directory under the log dir that holds one metadata file per topic. */
    public static final String TOPICS_DIR = ".topics";

    private static final String SUFFIX = ".properties";
    private static final int FORMAT_VERSION = 1;

    /** Leader epoch of every partition on a single node; no leader change ever bumps it. */
    public static final int INITIAL_LEADER_EPOCH = 0;

    private static final String CONFIG_PREFIX = "config.";

    private final Path logDir;
    private final Path topicsDir;
    private final LogConfig logConfig;
    private final int maxPartitions;
    private final ConcurrentHashMap<String, Topic> topics = new ConcurrentHashMap<>();
    /** Partitions by log directory name ({@code <topic>-<partition>}), for the high watermark. */
    private final ConcurrentHashMap<String, Partition> byLogName = new ConcurrentHashMap<>();

    private volatile int minInsyncReplicas = 1;

    private LogManager logs;
    private boolean closed;

    private TopicRegistry(Path metadataDir, LogConfig logConfig, int maxPartitions) {
        this.logDir = metadataDir;
        this.topicsDir = metadataDir.resolve(TOPICS_DIR);
        this.logConfig = logConfig;
        this.maxPartitions = maxPartitions;
    }

    /**
     * Opens the registry, creating the directories if needed and reopening every persisted topic and
     * its partition logs (storage recovers each log).
     *
     * @param maxPartitions largest partition count {@link #create} accepts
     */
    public static TopicRegistry open(Path logDir, LogConfig logConfig, int maxPartitions) throws IOException {
        return open(LogManager.Config.of(List.of(logDir)), logConfig, maxPartitions, LogEnvironment.system());
    }

    /**
     * Opens the registry over several log dirs: reads the topic metadata from the first, loads every
     * partition log of every dir in parallel (each with its topic's config: {@code logConfig} with
     * the topic's overrides) and starts the periodic checkpoints, retention and compaction.
     *
     * @param managerConfig {@code log.dirs} and the periodic intervals
     * @param logConfig broker defaults for every topic
     * @param maxPartitions largest partition count {@link #create} accepts
     * @param env clock, scheduler (periodic work, delayed deletion) and storage metrics
     */
    public static TopicRegistry open(
            LogManager.Config managerConfig, LogConfig logConfig, int maxPartitions, LogEnvironment env)
            throws IOException {
        TopicRegistry registry = new TopicRegistry(managerConfig.logDirs().get(0), logConfig, maxPartitions);
        Files.createDirectories(registry.topicsDir);
        try {
            registry.load(managerConfig, env);
        } catch (IOException | RuntimeException e) {
            registry.close();
            throw e;
        }
        return registry;
    }

    /** A topic's metadata file as read at start. */
    private record TopicMeta(String name, UUID topicId, int leaderEpoch, int partitionCount, LogConfig config) {}

    private void load(LogManager.Config managerConfig, LogEnvironment env) throws IOException {
        List<TopicMeta> metas = readMetadata();
        Map<String, LogConfig> configs = new HashMap<>();
        for (TopicMeta m : metas) {
            if (configs.put(m.name(), m.config()) != null) {
                throw new IOException("Two metadata files in " + topicsDir + " name topic " + m.name());
            }
        }
        logs = LogManager.start(
                managerConfig, topic -> configs.getOrDefault(topic, logConfig), env, this::highWatermarkOf);
        for (TopicMeta m : metas) {
            Topic topic = openTopic(m.name(), m.topicId(), m.leaderEpoch(), m.partitionCount(), m.config());
            topics.put(topic.name(), topic);
        }
        LOG.info("Loaded {} topics from {} (logs in {})", topics.size(), logDir, managerConfig.logDirs());
    }

    /** Retention and compaction bound: the partition's high watermark (the LEO for an orphan log). */
    private long highWatermarkOf(UnifiedLog log) {
        Partition p = byLogName.get(log.dir().getFileName().toString());
        return p != null && p.log() == log ? p.highWatermark() : log.logEndOffset();
    }

    private List<TopicMeta> readMetadata() throws IOException {
        List<TopicMeta> metas = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(topicsDir)) {
            for (Path file : files) {
                String fileName = file.getFileName().toString();
                if (fileName.endsWith(AtomicFiles.TEMP_SUFFIX)) {
                    LOG.warn("Deleting incomplete topic metadata file {}", file);
                    Files.delete(file);
                    continue;
                }
                if (!fileName.endsWith(SUFFIX)) {
                    continue;
                }
                metas.add(readTopic(file, fileName.substring(0, fileName.length() - SUFFIX.length())));
            }
        }
        return metas;
    }

    private TopicMeta readTopic(Path file, String idFromFile) throws IOException {
        Properties props = AtomicFiles.readProperties(file);
        String name = props.getProperty("topic");
        int partitionCount;
        int leaderEpoch;
        UUID topicId;
        try {
            partitionCount = Integer.parseInt(props.getProperty("partition.count", ""));
            leaderEpoch = Integer.parseInt(props.getProperty("leader.epoch", ""));
            topicId = UUID.fromString(props.getProperty("topic.id", ""));
        } catch (IllegalArgumentException e) {
            throw new IOException("Corrupt topic metadata file " + file + ": " + props, e);
        }
        if (!idFromFile.equals(topicId.toString()) || !TopicNames.isValid(name) || partitionCount <= 0) {
            throw new IOException("Corrupt topic metadata file " + file + ": " + props);
        }
        Map<String, String> overrides = new TreeMap<>();
        for (String key : props.stringPropertyNames()) {
            if (key.startsWith(CONFIG_PREFIX)) {
                overrides.put(key.substring(CONFIG_PREFIX.length()), props.getProperty(key));
            }
        }
        LogConfig config;
        try {
            config = TopicConfig.apply(logConfig, overrides);
        } catch (IllegalArgumentException e) {
            throw new IOException("Corrupt topic metadata file " + file + ": " + e.getMessage(), e);
        }
        return new TopicMeta(name, topicId, leaderEpoch, partitionCount, config);
    }

    /** Opens (creating where missing) the partition logs; on failure nothing stays registered. */
    private Topic openTopic(String name, UUID topicId, int leaderEpoch, int partitionCount, LogConfig config)
            throws IOException {
        List<Partition> partitions = new ArrayList<>(partitionCount);
        for (int p = 0; p < partitionCount; p++) {
            UnifiedLog log = logs.getOrCreate(name, p, config);
            Partition partition = new Partition(name, p, leaderEpoch, log);
            partition.minInsyncReplicas(minInsyncReplicas);
            partitions.add(partition);
        }
        for (Partition p : partitions) {
            byLogName.put(LogManager.dirName(name, p.partition()), p);
        }
        return new Topic(name, topicId, leaderEpoch, List.copyOf(partitions));
    }

    /**
     * The broker's {@code min.insync.replicas} for every partition, now and created later: on a single
     * node the ISR is this broker alone, so a value above 1 refuses every acks=-1 Produce with
     * {@code NOT_ENOUGH_REPLICAS}, as in Kafka.
     */
    public void minInsyncReplicas(int value) {
        minInsyncReplicas = value;
        for (Partition p : byLogName.values()) {
            p.minInsyncReplicas(value);
        }
    }

    /** The directory of one partition's log ({@code <someLogDir>/<topic>-<partition>}), or null. */
    public Path partitionDir(String topic, int partition) {
        Path dir = logs.logDirOf(topic, partition);
        return dir == null ? null : dir.resolve(LogManager.dirName(topic, partition));
    }

    /** The log manager behind the partitions (tests and tools: periodic work, placement). */
    public LogManager logManager() {
        return logs;
    }

    /** The topic, or null when it does not exist. */
    public Topic topic(String name) {
        return topics.get(name);
    }

    /** The partition, or null when the topic or the partition does not exist. */
    public Partition partition(String topic, int partition) {
        Topic t = topics.get(topic);
        return t == null ? null : t.partition(partition);
    }

    /** Every topic, sorted by name. */
    public List<Topic> topics() {
        List<Topic> all = new ArrayList<>(topics.values());
        all.sort(Comparator.comparing(Topic::name));
        return all;
    }

    /** Outcome of {@link #create}. */
    public enum CreateStatus {
        /** The topic was created and persisted. */
        CREATED,
        /** The topic already existed with the requested partition count (idempotent create). */
        EXISTS,
        /** The topic already exists with a different partition count. */
        PARTITION_COUNT_MISMATCH,
        /** The name breaks {@link TopicNames} rules. */
        INVALID_NAME,
        /** The partition count is &lt;= 0 or above the limit. */
        INVALID_PARTITIONS,
        /** A topic config key is unknown or its value invalid ({@link TopicConfig}). */
        INVALID_CONFIG
    }

    /**
     * Result of {@link #create}.
     *
     * @param status what happened
     * @param topic the created or existing topic; null for invalid input
     */
    public record CreateResult(CreateStatus status, Topic topic) {}

    /** {@link #create(String, int, Map)} with the broker's defaults (no topic overrides). */
    public CreateResult create(String name, int partitionCount) throws IOException {
        return create(name, partitionCount, Map.of());
    }

    /**
     * Creates a topic with {@code partitionCount} partitions at leader epoch 0, or returns the
     * existing one (whose config is not changed). Durable when it returns {@code CREATED}: the logs
     * exist and the metadata file, holding {@code topicConfig}, is fsynced.
     *
     * @param topicConfig topic-level overrides of the broker defaults ({@link TopicConfig} keys, e.g.
     *     {@code cleanup.policy=compact}); an unknown key or bad value gives {@code INVALID_CONFIG}
     * @throws IOException when the logs or the metadata file cannot be written (nothing is published)
     */
    public synchronized CreateResult create(String name, int partitionCount, Map<String, String> topicConfig)
            throws IOException {
        if (!TopicNames.isValid(name)) {
            return new CreateResult(CreateStatus.INVALID_NAME, null);
        }
        Topic existing = topics.get(name);
        if (existing != null) {
            return new CreateResult(
                    existing.partitionCount() == partitionCount
                            ? CreateStatus.EXISTS
                            : CreateStatus.PARTITION_COUNT_MISMATCH,
                    existing);
        }
        if (partitionCount <= 0 || partitionCount > maxPartitions) {
            return new CreateResult(CreateStatus.INVALID_PARTITIONS, null);
        }
        LogConfig config;
        try {
            config = TopicConfig.apply(logConfig, topicConfig);
        } catch (IllegalArgumentException e) {
            LOG.info("Rejected topic {}: {}", name, e.getMessage());
            return new CreateResult(CreateStatus.INVALID_CONFIG, null);
        }
        if (closed) {
            throw new IOException("Topic registry for " + logDir + " is closed");
        }
        UUID topicId = UUID.randomUUID();
        deleteOrphanPartitionDirs(name, partitionCount);
        Topic topic;
        try {
            topic = openTopic(name, topicId, INITIAL_LEADER_EPOCH, partitionCount, config);
        } catch (IOException | RuntimeException e) {
            deleteOrphanPartitionDirs(name, partitionCount);
            throw e;
        }
        try {
            for (Path dir : logs.config().logDirs()) {
                AtomicFiles.fsyncDirectory(dir);
            }
            Properties props = new Properties();
            props.setProperty("version", Integer.toString(FORMAT_VERSION));
            props.setProperty("topic", name);
            props.setProperty("topic.id", topicId.toString());
            props.setProperty("partition.count", Integer.toString(partitionCount));
            props.setProperty("leader.epoch", Integer.toString(INITIAL_LEADER_EPOCH));
            for (Map.Entry<String, String> e : new TreeMap<>(topicConfig).entrySet()) {
                props.setProperty(CONFIG_PREFIX + e.getKey(), e.getValue().strip());
            }
            AtomicFiles.writeProperties(topicsDir.resolve(topicId + SUFFIX), props, "Stellflow topic metadata");
        } catch (IOException | RuntimeException e) {
            deleteOrphanPartitionDirs(name, partitionCount);
            throw e;
        }
        topics.put(name, topic);
        LOG.info(
                "TOPIC_CREATED topic={} partitions={} topicId={} config={}",
                name,
                partitionCount,
                topicId,
                new TreeMap<>(topicConfig));
        return new CreateResult(CreateStatus.CREATED, topic);
    }

    /**
     * Deletes the logs {@code <topic>-<p>} for p in [0, partitionCount), wherever they are: logs of a
     * creation that never committed its metadata file. Only called for a name without a committed
     * topic.
     */
    private void deleteOrphanPartitionDirs(String name, int partitionCount) throws IOException {
        for (int p = 0; p < partitionCount; p++) {
            byLogName.remove(LogManager.dirName(name, p));
            if (logs.get(name, p) != null) {
                LOG.warn("Deleting orphan partition log {}-{} (no committed topic metadata)", name, p);
                logs.delete(name, p);
            }
        }
    }

    /** Stops the periodic work and closes every partition log cleanly. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (logs != null) {
            try {
                logs.close();
            } catch (IOException | RuntimeException e) {
                LOG.error("Failed to close the logs", e);
            }
        }
    }
}
