package io.stellflow.broker.topic;

import io.stellflow.protocol.Errors;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogEnvironment;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Partitions for unit tests that exercise the data-plane classes (append agents, Fetch reader,
 * Produce hand-off) without a broker: logs in one dir through a {@link LogManager}, each partition
 * led here with this node alone as replicas and ISR ({@link Partition}'s single-node constructor,
 * leader epoch 0), routed as a {@link PartitionRouter}. Nothing is persisted besides the logs: topics
 * of a broker come from the controller's metadata ({@code ReplicaManager}).
 *
 * <p>Thread-safety: thread-safe.
 */
public final class LocalPartitions implements PartitionRouter, AutoCloseable {
    private final LogManager logs;
    private final int autoCreatePartitions;
    /** Partitions by topic, index = partition id. */
    private final ConcurrentHashMap<String, Partition[]> topics = new ConcurrentHashMap<>();

    private LocalPartitions(LogManager logs, int autoCreatePartitions) {
        this.logs = logs;
        this.autoCreatePartitions = autoCreatePartitions;
    }

    /** Partitions with logs under {@code dir}; a Produce to a missing topic is refused. */
    public static LocalPartitions open(Path dir, LogConfig config) throws IOException {
        return open(dir, config, 0);
    }

    /**
     * Partitions with logs under {@code dir}; a Produce to a missing topic creates it first with
     * {@code autoCreatePartitions} partitions (as {@code auto.create.topics.enable} does), 0 refuses it.
     */
    public static LocalPartitions open(Path dir, LogConfig config, int autoCreatePartitions) throws IOException {
        LogManager logs = LogManager.start(
                LogManager.Config.of(List.of(dir)), config, LogEnvironment.system(), log -> log.logEndOffset());
        return new LocalPartitions(logs, autoCreatePartitions);
    }

    /** Creates {@code topic} with {@code partitionCount} partitions (no-op when it exists). */
    public synchronized void create(String topic, int partitionCount) throws IOException {
        if (topics.containsKey(topic)) {
            return;
        }
        Partition[] partitions = new Partition[partitionCount];
        for (int p = 0; p < partitionCount; p++) {
            UnifiedLog log = logs.getOrCreate(topic, p);
            partitions[p] = new Partition(topic, p, 0, log);
        }
        topics.put(topic, partitions);
    }

    /** Whether {@code topic} exists. */
    public boolean hasTopic(String topic) {
        return topics.containsKey(topic);
    }

    /** The partition, or null. */
    public Partition partition(String topic, int partition) {
        Partition[] partitions = topics.get(topic);
        return partitions == null || partition < 0 || partition >= partitions.length ? null : partitions[partition];
    }

    @Override
    public short prepareForProduce(String topic) {
        if (topics.containsKey(topic)) {
            return Errors.NONE;
        }
        if (autoCreatePartitions == 0) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        try {
            create(topic, autoCreatePartitions);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Errors.NONE;
    }

    @Override
    public boolean producibleWithoutWaiting(String topic) {
        return topics.containsKey(topic);
    }

    @Override
    public Partition leaderPartition(String topic, int partition) {
        return partition(topic, partition);
    }

    @Override
    public short errorFor(String topic, int partition) {
        return Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    @Override
    public void close() throws IOException {
        logs.close();
    }
}
