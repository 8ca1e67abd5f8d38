package io.stellflow.broker.topic;

import io.stellflow.storage.LogConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topics this broker hosts, persisted under one log directory.
 *
 * <p>Layout: {@code <logDir>/.topics/<topic-id>.properties} holds {@code topic}, {@code topic.id},
 * {@code partition.count} and {@code leader.epoch}; each partition's log lives in
 * {@code <logDir>/<topic>-<partition>/}. The metadata file is named by the topic id (a 36-character
 * UUID), not the name: a 249-character name plus {@code .properties.tmp} would pass the 255-byte file
 * name limit. The {@code .topics} directory name has no {@code -N} suffix, so it can never be a
 * partition directory. The metadata file is written last (atomically), so it is the commit point of a
 * creation: partition directories without it are orphans; they are ignored at load, deleted when a
 * creation of that name fails, and deleted before a new topic of that name takes their place (so a
 * new topic never inherits an uncommitted one's records).
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

    private final Path logDir;
    private final Path topicsDir;
    private final LogConfig logConfig;
    private final int maxPartitions;
    private final ConcurrentHashMap<String, Topic> topics = new ConcurrentHashMap<>();
    private boolean closed;

    private TopicRegistry(Path logDir, LogConfig logConfig, int maxPartitions) {
        this.logDir = logDir;
        this.topicsDir = logDir.resolve(TOPICS_DIR);
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
        TopicRegistry registry = new TopicRegistry(logDir, logConfig, maxPartitions);
        Files.createDirectories(registry.topicsDir);
        try {
            registry.load();
        } catch (IOException | RuntimeException e) {
            registry.close();
            throw e;
        }
        return registry;
    }

    private void load() throws IOException {
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
                Topic topic = loadTopic(file, fileName.substring(0, fileName.length() - SUFFIX.length()));
                if (topics.putIfAbsent(topic.name(), topic) != null) {
                    closeAll(topic.partitions());
                    throw new IOException("Two metadata files in " + topicsDir + " name topic " + topic.name());
                }
            }
        }
        LOG.info("Loaded {} topics from {}", topics.size(), logDir);
    }

    private Topic loadTopic(Path file, String idFromFile) throws IOException {
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
        return openTopic(name, topicId, leaderEpoch, partitionCount);
    }

    private Topic openTopic(String name, UUID topicId, int leaderEpoch, int partitionCount) throws IOException {
        List<Partition> partitions = new ArrayList<>(partitionCount);
        try {
            for (int p = 0; p < partitionCount; p++) {
                UnifiedLog log = UnifiedLog.open(partitionDir(name, p), logConfig);
                partitions.add(new Partition(name, p, leaderEpoch, log));
            }
        } catch (IOException | RuntimeException e) {
            closeAll(partitions);
            throw e;
        }
        return new Topic(name, topicId, leaderEpoch, List.copyOf(partitions));
    }

    /** The directory of one partition's log: {@code <logDir>/<topic>-<partition>}. */
    public Path partitionDir(String topic, int partition) {
        return logDir.resolve(topic + "-" + partition);
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
        INVALID_PARTITIONS
    }

    /**
     * Result of {@link #create}.
     *
     * @param status what happened
     * @param topic the created or existing topic; null for invalid input
     */
    public record CreateResult(CreateStatus status, Topic topic) {}

    /**
     * Creates a topic with {@code partitionCount} partitions at leader epoch 0, or returns the
     * existing one. Durable when it returns {@code CREATED}: the logs exist and the metadata file is
     * fsynced.
     *
     * @throws IOException when the logs or the metadata file cannot be written (nothing is published)
     */
    public synchronized CreateResult create(String name, int partitionCount) throws IOException {
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
        if (closed) {
            throw new IOException("Topic registry for " + logDir + " is closed");
        }
        UUID topicId = UUID.randomUUID();
        deleteOrphanPartitionDirs(name, partitionCount);
        Topic topic;
        try {
            topic = openTopic(name, topicId, INITIAL_LEADER_EPOCH, partitionCount);
        } catch (IOException | RuntimeException e) {
            deleteOrphanPartitionDirs(name, partitionCount);
            throw e;
        }
        try {
            AtomicFiles.fsyncDirectory(logDir);
            Properties props = new Properties();
            props.setProperty("version", Integer.toString(FORMAT_VERSION));
            props.setProperty("topic", name);
            props.setProperty("topic.id", topicId.toString());
            props.setProperty("partition.count", Integer.toString(partitionCount));
            props.setProperty("leader.epoch", Integer.toString(INITIAL_LEADER_EPOCH));
            AtomicFiles.writeProperties(topicsDir.resolve(topicId + SUFFIX), props, "Stellflow topic metadata");
        } catch (IOException | RuntimeException e) {
            closeAll(topic.partitions());
            deleteOrphanPartitionDirs(name, partitionCount);
            throw e;
        }
        topics.put(name, topic);
        LOG.info("TOPIC_CREATED topic={} partitions={} topicId={}", name, partitionCount, topicId);
        return new CreateResult(CreateStatus.CREATED, topic);
    }

    /**
     * Deletes {@code <topic>-<p>} for p in [0, partitionCount): directories of a creation that never
     * committed its metadata file. Only called for a name that has no committed topic.
     */
    private void deleteOrphanPartitionDirs(String name, int partitionCount) throws IOException {
        for (int p = 0; p < partitionCount; p++) {
            Path dir = partitionDir(name, p);
            if (Files.exists(dir)) {
                LOG.warn("Deleting orphan partition directory {} (no committed topic metadata)", dir);
                try (var walk = Files.walk(dir)) {
                    for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(path);
                    }
                }
            }
        }
    }

    /** Closes every partition log cleanly. Idempotent. Lookups after close return closed logs. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Topic topic : topics.values()) {
            closeAll(topic.partitions());
        }
    }

    private static void closeAll(List<Partition> partitions) {
        for (Partition partition : partitions) {
            try {
                partition.log().close();
            } catch (IOException | RuntimeException e) {
                LOG.error("Failed to close the log of {}", partition, e);
            }
        }
    }
}
