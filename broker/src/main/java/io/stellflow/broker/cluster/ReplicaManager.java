package io.stellflow.broker.cluster;

import io.stellflow.broker.telemetry.ReplicaTelemetry;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.telemetry.TopicThroughput;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailure;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.controller.MetadataListener;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.file.AtomicFiles;
import io.stellflow.server.common.topic.TopicConfigRules;
import io.stellflow.server.common.topic.TopicNames;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.TopicConfig;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions a broker of a cluster hosts, driven by the controller's committed metadata: every
 * image or delta the {@code MetadataFollower} delivers is reconciled against the local logs (create
 * the logs of partitions assigned to this broker, delete those of deleted topics or of partitions no
 * longer assigned here) and each hosted partition is made leader or follower as the image says, with
 * its leader epoch. Only then is the image published, so a client that sees this broker as a leader
 * in Metadata finds the partition ready.
 *
 * <p>Topic configs: each hosted log runs with the broker's log defaults ({@code log.*} keys) overridden
 * by the topic's config in the image ({@link TopicConfig} keys; other keys such as
 * {@code min.insync.replicas} and {@code max.message.bytes} are not log settings); a config change
 * record updates every hosted log of the topic in place ({@link UnifiedLog#updateConfig}), and logs
 * found on disk at start get their topic's config with the first image. An override the storage refuses (the controller validates, so
 * only a newer controller's key could) is logged as {@code TOPIC_CONFIG_INVALID} and the defaults apply.
 *
 * <p>Local layout: the logs live in {@code log.dirs} through the storage {@link LogManager}; each
 * partition directory also holds {@code partition.metadata} with the topic id, so a topic deleted and
 * re-created under the same name while this broker was down never inherits the old records.
 * Directories of topics the image does not know are deleted when the first image arrives.
 *
 * <p>Routing ({@link PartitionRouter}): Produce, Fetch and ListOffsets are served only by the leader;
 * a follower ({@link ReplicaStateListener} starts its replica fetcher) answers
 * {@code NOT_LEADER_OR_FOLLOWER}, a partition without a leader {@code LEADER_NOT_AVAILABLE}, a
 * topic or partition the image does not know {@code UNKNOWN_TOPIC_OR_PARTITION}.
 *
 * <p>Replication (leader side): every applied image hands each hosted partition its committed
 * assignment ({@link Partition#updateAssignment}: replicas, ISR, partition epoch) before its role
 * ({@link ReplicaRoles}), its {@code min.insync.replicas} (topic config, else the broker
 * default) and its {@code max.message.bytes} (topic config, else the Produce path's {@code
 * message.max.bytes}). An ISR change the leader proposed (the ISR manager's AlterPartition) takes
 * effect only here, when the committed metadata carries it; the leader then logs {@code
 * ISR_SHRUNK} / {@code ISR_EXPANDED} with the old and new ISR, leader epoch and partition epoch. Every leader or
 * leader-epoch change of a hosted partition logs {@code PARTITION_LEADER_CHANGED} with this
 * broker's new role. A partition opened at start gets its high watermark from the log dir's {@code
 * replication-offset-checkpoint} ({@link HighWatermarkCheckpoint}), 0 without one.
 *
 * <p>Storage failures (issue #23): a partition whose log cannot be created is not silently absent:
 * it is kept in {@link UnopenedPartitions}, answers {@code BROKER_NOT_AVAILABLE} while the image
 * names this broker its leader, is retried every second ({@link #retryUnopened}) and, with every
 * hosted partition whose writes failed, is listed in the heartbeats ({@link #addFailedReplicas}).
 *
 * <p>Thread-safety: the listener callbacks run on the follower's single thread (the only writer;
 * {@link #retryUnopened} takes the same lock);
 * lookups may run on any thread (immutable image, concurrent map, volatile partition roles).
 */
public final class ReplicaManager implements MetadataListener, PartitionRouter {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

    /** The per-partition file naming the topic id. */
    public static final String PARTITION_METADATA_FILE = "partition.metadata";

    /**
     * The partitions of one topic hosted here, indexed by partition id (null: not hosted), and the
     * topic config overrides their logs run with. Thread-safety: never mutated after it is put in the
     * map; a change puts a new one.
     */
    private record HostedTopic(UUID topicId, Partition[] partitions, Map<String, String> config) {}

    private final int brokerId;
    private final LogManager logs;
    private final LogConfig defaults;
    private final List<Consumer<MetadataImage>> imageListeners = new CopyOnWriteArrayList<>();
    private final Map<String, HostedTopic> hosted = new ConcurrentHashMap<>();
    private final Set<String> unclaimedAtStart;
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private volatile boolean firstImageApplied;

    /** Per-partition lines at DEBUG during a start, then one summary; under {@code reconcileLock}. */
    private final StartUpPartitionLog startUp = new StartUpPartitionLog(LOG);

    /** The partitions' role changes, the replica state listeners and the replication metrics. */
    private final ReplicaRoles replicaRoles;

    /** What the replication gauges read. */
    private final ReplicaGauges gauges = new ReplicaGauges(this);

    private final Map<String, Long> checkpointedHighWatermarks;
    private volatile int defaultMinInsyncReplicas = 1;
    /** The per-topic throughput diagnostic, or null (off: partitions get no counters). */
    private volatile TopicThroughput topicThroughput;

    private volatile Partition.IsrChangeTrigger isrTrigger = Partition.IsrChangeTrigger.NONE;
    /** Partitions assigned here whose log could not be created or opened; retried by {@link #retryUnopened}. */
    private final UnopenedPartitions unopened = new UnopenedPartitions();
    /** Serializes reconciliations: the metadata follower's and {@link #retryUnopened}'s. */
    private final Object reconcileLock = new Object();

    /**
     * @param brokerId this broker's id
     * @param logs the storage log manager over {@code log.dirs} (loaded; this class deletes logs the
     *     metadata does not assign here)
     * @param logDirs the same {@code log.dirs}, scanned once for the partition directories present at start
     * @param defaults the broker's log defaults ({@code log.*} keys), which topic configs override
     * @param roles told about every leader/follower transition
     */
    public ReplicaManager(
            int brokerId, LogManager logs, List<Path> logDirs, LogConfig defaults, ReplicaStateListener roles)
            throws IOException {
        this.brokerId = brokerId;
        this.logs = logs;
        this.defaults = defaults;
        this.replicaRoles = new ReplicaRoles(brokerId, startUp, roles);
        this.unclaimedAtStart = partitionDirNames(logDirs);
        this.checkpointedHighWatermarks = new ConcurrentHashMap<>(HighWatermarkCheckpoint.readAll(logDirs));
    }

    /**
     * Replication settings, set before the first metadata arrives.
     *
     * @param defaultMinInsyncReplicas the broker's {@code min.insync.replicas} (&gt;= 1), for topics
     *     without their own
     * @param metrics where HW advances, ISR changes and leader changes are counted
     * @param isrTrigger asked to look at a led partition's ISR when a follower caught up (the ISR
     *     manager)
     */
    public void configureReplication(
            int defaultMinInsyncReplicas, ReplicationMetrics metrics, Partition.IsrChangeTrigger isrTrigger) {
        if (defaultMinInsyncReplicas < 1) {
            throw new IllegalArgumentException("min.insync.replicas must be >= 1: " + defaultMinInsyncReplicas);
        }
        this.defaultMinInsyncReplicas = defaultMinInsyncReplicas;
        replicaRoles.metrics(metrics);
        this.isrTrigger = isrTrigger;
    }

    /**
     * Gives every partition opened from now on its topic's throughput counters ({@code
     * metrics.topic.diagnostic.enabled}); null leaves them without. Set before the first metadata
     * arrives.
     */
    public void topicThroughput(TopicThroughput topics) {
        this.topicThroughput = topics;
    }

    /**
     * Also tells {@code listener} about every transition, after the listeners already there (the
     * broker's append queues: {@code AppendService#remove} when a partition stops leading or leaves).
     * Set before the first metadata arrives.
     */
    public void addReplicaStateListener(ReplicaStateListener listener) {
        replicaRoles.addListener(listener);
    }

    /**
     * The high watermark of the hosted partition whose log is {@code log} (retention and compaction
     * never go at or above it); the log start offset (nothing to clean) when it is not hosted.
     */
    public long highWatermarkOf(UnifiedLog log) {
        String name = log.dir().getFileName().toString();
        int dash = name.lastIndexOf('-');
        if (dash > 0 && dash < name.length() - 1 && isDigits(name.substring(dash + 1))) {
            Partition p = hostedPartition(name.substring(0, dash), Integer.parseInt(name.substring(dash + 1)));
            if (p != null && p.log() == log) {
                return p.highWatermark();
            }
        }
        return log.logStartOffset();
    }

    /**
     * What the replication gauges read ({@link ReplicaTelemetry#registerGauges}): under-replicated,
     * under-min-ISR and offline partitions, and the largest lag per role ({@link ReplicaGauges}).
     */
    public ReplicaTelemetry.Source gauges() {
        return gauges;
    }

    /** Led partitions whose ISR is smaller than their replica set (a gauge source; any thread). */
    public int underReplicatedCount() {
        return gauges.underReplicatedCount();
    }

    /** Led partitions whose ISR is smaller than their {@code min.insync.replicas} (a gauge source; any thread). */
    public int underMinIsrCount() {
        return gauges.underMinIsrCount();
    }

    /** The latest image whose changes are applied to the local logs. */
    public MetadataImage image() {
        return image;
    }

    /** This broker's id. */
    public int brokerId() {
        return brokerId;
    }

    /** Whether this broker hosts a partition (leader or follower) of {@code topic}; one hash lookup. */
    public boolean hostsTopic(String topic) {
        return hosted.containsKey(topic);
    }

    /** The hosted partition (leader or follower), or null. */
    public Partition hostedPartition(String topic, int partition) {
        HostedTopic h = hosted.get(topic);
        if (h == null || partition < 0 || partition >= h.partitions().length) {
            return null;
        }
        return h.partitions()[partition];
    }

    /**
     * Calls {@code action} for every partition hosted here (leader or follower). Thread-safety: any
     * thread; sees each topic's partitions as of some recent metadata change.
     */
    public void forEachHostedPartition(java.util.function.Consumer<Partition> action) {
        for (HostedTopic h : hosted.values()) {
            for (Partition p : h.partitions()) {
                if (p != null) {
                    action.accept(p);
                }
            }
        }
    }

    @Override
    public Partition leaderPartition(String topic, int partition) {
        Partition p = hostedPartition(topic, partition);
        return p != null && p.isLeader() ? p : null;
    }

    /** Always: without auto-creation, preparing a topic for Produce never waits. */
    @Override
    public boolean producibleWithoutWaiting(String topic) {
        return !TopicNames.isInternal(topic);
    }

    /** {@code INVALID_TOPIC} for an internal topic: only its coordinator writes it; else {@code NONE}. */
    @Override
    public short prepareForProduce(String topic) {
        return TopicNames.isInternal(topic) ? Errors.INVALID_TOPIC : Errors.NONE;
    }

    @Override
    public short errorFor(String topic, int partition) {
        TopicImage t = image.topic(topic);
        PartitionImage p = t == null ? null : t.partition(partition);
        if (p == null) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        if (p.leader() == brokerId) {
            // Led here by the metadata, but not served: its log could not be created (a full or failed
            // log dir). The heartbeats report it failed, so the controller moves or drops leadership.
            return Errors.BROKER_NOT_AVAILABLE;
        }
        return p.leader() == PartitionImage.NO_LEADER ? Errors.LEADER_NOT_AVAILABLE : Errors.NOT_LEADER_OR_FOLLOWER;
    }

    /**
     * Adds every replica hosted here that cannot be served to {@code heartbeat}: partitions whose write
     * failed (a full disk included) or whose log dir is offline, and partitions assigned here whose
     * log could not be created. The controller takes them out of the ISR and leadership until a later
     * heartbeat no longer lists them. Called by the heartbeat thread; any thread.
     */
    public void addFailedReplicas(BrokerHeartbeatRequest.Builder heartbeat) {
        for (HostedTopic h : hosted.values()) {
            for (Partition p : h.partitions()) {
                PartitionFailure f = p == null ? null : p.failure();
                if (f != null) {
                    // A full disk still serves reads: it stays leader while no other replica can lead.
                    heartbeat.addFailedReplicas(UnopenedPartitions.failedReplica(h.topicId(), p.partition()).toBuilder()
                            .setReadable(f.noSpace())
                            .build());
                }
            }
        }
        unopened.addTo(heartbeat);
    }

    /**
     * Tries again to create the logs of partitions assigned here whose creation failed (the disk was
     * full, no log dir could take them), against the last applied image. A no-op while there are none.
     * Called periodically by the log dir check thread; serialized with the metadata follower.
     */
    public void retryUnopened() {
        if (unopened.isEmpty()) {
            return;
        }
        synchronized (reconcileLock) {
            if (firstImageApplied && !unopened.isEmpty()) {
                reconcile(image);
            }
        }
    }

    @Override
    public void onImage(MetadataImage newImage) {
        synchronized (reconcileLock) {
            reconcile(newImage);
        }
    }

    @Override
    public void onDelta(MetadataDelta delta, MetadataImage newImage) {
        if (delta.records().isEmpty()) {
            publish(newImage);
            return;
        }
        synchronized (reconcileLock) {
            reconcile(newImage);
        }
    }

    private void reconcile(MetadataImage next) {
        // Start-up: a restart opens every hosted partition at once, then learns their leaders over the
        // next images (56 partitions on the trial node of #22: 112 INFO lines), so until each partition
        // opened by the first image has a leader its lines go to DEBUG and one summary line follows;
        // after that a new partition or leader is a rare event and stays at INFO.
        if (!firstImageApplied) {
            startUp.begin();
        }
        for (TopicImage t : next.topicsByName().values()) {
            try {
                reconcileTopic(t);
            } catch (IOException | RuntimeException e) {
                // The image stays authoritative; a partition whose log could not be created is
                // handled per partition (openOrRecord), so this is a fault of the topic as a whole.
                LOG.error("PARTITION_APPLY_FAILED topic={} topicId={}", t.name(), t.id(), e);
            }
        }
        for (Map.Entry<String, HostedTopic> e : hosted.entrySet()) {
            TopicImage t = next.topic(e.getKey());
            if (t == null || !t.id().equals(e.getValue().topicId())) {
                removeTopic(e.getKey(), e.getValue());
            }
        }
        unopened.retainAssigned(next, brokerId);
        if (!firstImageApplied) {
            firstImageApplied = true;
            for (String dirName : unclaimedAtStart) {
                int dash = dirName.lastIndexOf('-');
                String topic = dirName.substring(0, dash);
                int partition = Integer.parseInt(dirName.substring(dash + 1));
                if (hostedPartition(topic, partition) == null) {
                    LOG.info(
                            "Deleting local log {}: the metadata assigns it no longer to broker {}", dirName, brokerId);
                    deleteLog(topic, partition);
                }
            }
            unclaimedAtStart.clear();
        }
        startUp.imageApplied();
        // A follower that registered again (a restart) is judged from its new process's fetches
        // only: what its earlier process reached is forgotten (docs/replication.md).
        forEachHostedPartition(p -> p.onBrokerRegistrations(id -> {
            BrokerRegistration b = next.broker(id);
            return b == null ? -1L : b.brokerEpoch();
        }));
        publish(next);
    }

    private void publish(MetadataImage next) {
        synchronized (this) {
            image = next;
            notifyAll();
        }
        for (Consumer<MetadataImage> l : imageListeners) {
            try {
                l.accept(next);
            } catch (RuntimeException e) {
                LOG.error("Metadata image listener {} failed", l, e); // a bug; the image stays applied
            }
        }
    }

    /**
     * Also tells {@code listener} every image once it is applied and published (after the replica
     * state listeners), on the metadata thread: it must return quickly (hand work to its own thread).
     * The group coordinator learns of deleted topics and partition count changes this way.
     */
    public void addImageListener(Consumer<MetadataImage> listener) {
        imageListeners.add(listener);
    }

    /**
     * Waits until the applied image satisfies {@code condition} (checked after every applied entry).
     *
     * @return the first image that satisfies it, or null when {@code timeoutMs} passed first
     */
    public MetadataImage awaitImage(java.util.function.Predicate<MetadataImage> condition, long timeoutMs)
            throws InterruptedException {
        long deadlineNs = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (this) {
            while (true) {
                MetadataImage current = image;
                if (condition.test(current)) {
                    return current;
                }
                long leftNs = deadlineNs - System.nanoTime();
                if (leftNs <= 0) {
                    return null;
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, leftNs);
            }
        }
    }

    private void reconcileTopic(TopicImage t) throws IOException {
        HostedTopic current = hosted.get(t.name());
        if (current != null && !current.topicId().equals(t.id())) {
            removeTopic(t.name(), current); // deleted and re-created under the same name
            current = null;
        }
        int count = t.partitions().size();
        Partition[] next = new Partition[count];
        boolean changed = current == null || current.partitions().length != count;
        boolean configChanged = current != null && !current.config().equals(t.config());
        LogConfig config = null; // computed once per topic when a log needs it
        int minInsync = intOverride(t, "min.insync.replicas", 1, Integer.MAX_VALUE, defaultMinInsyncReplicas);
        int maxMessageBytes = intOverride(
                t,
                "max.message.bytes",
                TopicConfigRules.MIN_MESSAGE_BYTES,
                TopicConfigRules.MAX_MESSAGE_BYTES,
                Partition.NO_TOPIC_MAX_MESSAGE_BYTES);
        // The new replicas' logs first, their partition.metadata written but not yet fsynced; then
        // all those files at once (PartitionMetadataSync); only then a role for any of them.
        Map<Integer, UnifiedLog> newLogs = new TreeMap<>();
        List<Path> written = new ArrayList<>();
        for (PartitionImage p : t.partitions()) {
            int id = p.partition();
            boolean hostedHere =
                    current != null && id < current.partitions().length && current.partitions()[id] != null;
            if (!hostedHere && p.replicas().contains(brokerId)) {
                config = config != null ? config : logConfig(t);
                UnifiedLog log = openLogOrRecord(t, p, config, maxMessageBytes, written);
                if (log != null) {
                    newLogs.put(id, log);
                }
            }
        }
        Map<Integer, Partition> opened = syncAndCreatePartitions(t, newLogs, written);
        boolean any = false;
        for (PartitionImage p : t.partitions()) {
            int id = p.partition();
            Partition cur = current != null && id < current.partitions().length ? current.partitions()[id] : null;
            if (p.replicas().contains(brokerId)) {
                if (cur == null || configChanged) {
                    config = config != null ? config : logConfig(t);
                }
                if (cur == null) {
                    cur = opened.get(id);
                    if (cur == null) {
                        continue; // reported failed in heartbeats, retried by retryUnopened
                    }
                    changed = true;
                } else if (configChanged) {
                    updateConfig(cur.log(), config);
                }
                cur.minInsyncReplicas(minInsync);
                cur.topicMaxMessageBytes(maxMessageBytes);
                replicaRoles.apply(t, cur, p);
                next[id] = cur;
                any = true;
            } else if (cur != null) {
                replicaRoles.stop(cur);
                deleteLog(t.name(), id);
                changed = true;
            }
        }
        if (!any) {
            if (current != null) {
                hosted.remove(t.name(), current);
            }
        } else if (changed || configChanged) {
            hosted.put(t.name(), new HostedTopic(t.id(), next, t.config()));
        }
        if (configChanged && any) {
            LOG.info("TOPIC_CONFIG_APPLIED topic={} topicId={} config={}", t.name(), t.id(), t.config());
        }
    }

    /**
     * The topic's int replication setting {@code key} ({@code min.insync.replicas}, {@code
     * max.message.bytes}) in [{@code min}, {@code max}], or {@code fallback} (the broker default)
     * when absent or unusable.
     */
    private static int intOverride(TopicImage t, String key, int min, int max, int fallback) {
        String v = t.config().get(key);
        if (v != null) {
            try {
                int n = Integer.parseInt(v.trim());
                if (n >= min && n <= max) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // falls through: the controller validates, so only a newer controller's value gets here
            }
            LOG.error("TOPIC_CONFIG_INVALID topic={} {}={}; the broker default applies", t.name(), key, v);
        }
        return fallback;
    }

    /** The broker defaults with the topic's log overrides, or the defaults when the storage refuses them. */
    private LogConfig logConfig(TopicImage t) {
        Map<String, String> logKeys = new TreeMap<>();
        for (Map.Entry<String, String> e : t.config().entrySet()) {
            if (TopicConfig.KEYS.contains(e.getKey())) {
                logKeys.put(e.getKey(), e.getValue());
            }
        }
        try {
            return TopicConfig.apply(defaults, logKeys);
        } catch (IllegalArgumentException e) {
            LOG.error(
                    "TOPIC_CONFIG_INVALID topic={} config={}: {}; the broker defaults apply",
                    t.name(),
                    t.config(),
                    e.getMessage());
            return defaults;
        }
    }

    private static void updateConfig(UnifiedLog log, LogConfig config) {
        if (!log.config().equals(config)) {
            log.updateConfig(config);
        }
    }

    /** {@link #openLog}, or null when it failed: then the partition is remembered as {@link #unopened}. */
    private UnifiedLog openLogOrRecord(
            TopicImage t, PartitionImage p, LogConfig config, int maxMessageBytes, List<Path> written) {
        try {
            return openLog(t, p, config, maxMessageBytes, written);
        } catch (IOException | RuntimeException e) {
            unopened.failed(t, p, e);
            return null;
        }
    }

    /**
     * Makes the partition.metadata files just {@code written} for the new logs of {@code t} durable
     * ({@link PartitionMetadataSync}), then creates their partitions (followers without a leader until {@link
     * ReplicaRoles#apply}). A log whose file cannot be made durable gets no partition: it is remembered as
     * {@link #unopened} and its file is removed, so the retry writes it again.
     */
    private Map<Integer, Partition> syncAndCreatePartitions(
            TopicImage t, Map<Integer, UnifiedLog> newLogs, List<Path> written) {
        Map<Integer, Partition> out = new TreeMap<>();
        if (newLogs.isEmpty()) {
            return out;
        }
        Map<Path, IOException> failed = PartitionMetadataSync.sync(written);
        for (Map.Entry<Integer, UnifiedLog> e : newLogs.entrySet()) {
            PartitionImage p = t.partitions().get(e.getKey());
            UnifiedLog log = e.getValue();
            IOException error = failed.get(log.dir().resolve(PARTITION_METADATA_FILE));
            if (error != null) {
                try {
                    Files.deleteIfExists(log.dir().resolve(PARTITION_METADATA_FILE));
                } catch (IOException ignored) {
                    // the retry compares the topic id and rewrites the file when it differs
                }
                unopened.failed(t, p, error);
                continue;
            }
            out.put(e.getKey(), newPartition(t, p, log));
            unopened.opened(t, p);
        }
        return out;
    }

    /**
     * The partition's log (created when missing), its partition.metadata written (not fsynced: {@link
     * #syncAndCreatePartitions} does that before any role) when it does not name this topic id yet. A
     * new log goes to a dir with room for its indexes and one batch of {@code maxMessageBytes} (the
     * topic's {@code max.message.bytes}, or {@link Partition#NO_TOPIC_MAX_MESSAGE_BYTES}: the
     * broker's {@code message.max.bytes}).
     */
    private UnifiedLog openLog(
            TopicImage t, PartitionImage p, LogConfig config, int maxMessageBytes, List<Path> written)
            throws IOException {
        UnifiedLog existing = logs.get(t.name(), p.partition());
        UUID storedId = existing == null ? null : storedTopicId(existing.dir());
        if (existing != null && storedId == null && existing.logEndOffset() == 0 && existing.sizeInBytes() == 0) {
            // An empty log without partition.metadata: its creation failed before the file was
            // written (a full disk). Nothing in it can belong to another topic: adopt it.
            LOG.info("Log {} has no topic id yet and no records; adopting it for topic id {}", existing.dir(), t.id());
        } else if (existing != null && !t.id().equals(storedId)) {
            LOG.warn(
                    "Log {} belongs to another topic id than {} (a deleted topic of the same name); deleting it",
                    existing.dir(),
                    t.id());
            logs.delete(t.name(), p.partition());
        }
        UnifiedLog log = logs.getOrCreate(
                t.name(),
                p.partition(),
                config,
                maxMessageBytes == Partition.NO_TOPIC_MAX_MESSAGE_BYTES
                        ? LogManager.DEFAULT_MAX_BATCH_BYTES
                        : maxMessageBytes);
        updateConfig(log, config); // a log found at start was opened with the broker defaults
        if (!t.id().equals(storedTopicId(log.dir()))) {
            Properties props = new Properties();
            props.setProperty("version", "0");
            props.setProperty("topic_id", t.id().toString());
            Path file = log.dir().resolve(PARTITION_METADATA_FILE);
            PartitionMetadataSync.writeUnsynced(file, props, "Stellflow partition");
            written.add(file);
        }
        unclaimedAtStart.remove(LogManager.dirName(t.name(), p.partition()));
        return log;
    }

    private Partition newPartition(TopicImage t, PartitionImage p, UnifiedLog log) {
        // Starts as a follower without a leader: nothing is served before ReplicaRoles.apply decides. The HW
        // starts from the checkpoint (0 without one), never from the log end offset: records above the
        // checkpointed HW may not be on the other replicas.
        Long checkpointed = checkpointedHighWatermarks.remove(LogManager.dirName(t.name(), p.partition()));
        Partition partition = new Partition(
                t.name(), p.partition(), p.leaderEpoch(), log, brokerId, checkpointed == null ? 0L : checkpointed);
        partition.metrics(replicaRoles.metrics());
        TopicThroughput topics = topicThroughput;
        if (topics != null) {
            partition.topicCounters(topics.forTopic(t.name()));
        }
        partition.isrChangeTrigger(isrTrigger);
        partition.becomeFollower(PartitionImage.NO_LEADER, p.leaderEpoch());
        startUp.opened(partition);
        LOG.atLevel(startUp.level())
                .log(
                        "PARTITION_OPENED partition={}-{} topicId={} logEndOffset={} highWatermark={}",
                        t.name(),
                        p.partition(),
                        t.id(),
                        log.logEndOffset(),
                        partition.highWatermark());
        return partition;
    }

    private void removeTopic(String name, HostedTopic topic) {
        hosted.remove(name, topic);
        for (Partition p : topic.partitions()) {
            if (p != null) {
                replicaRoles.stop(p);
                deleteLog(name, p.partition());
            }
        }
        LOG.info("TOPIC_DELETED_LOCALLY topic={} topicId={}", name, topic.topicId());
    }

    private void deleteLog(String topic, int partition) {
        try {
            logs.delete(topic, partition);
        } catch (IOException | RuntimeException e) {
            LOG.error("Deleting the log of {}-{} failed", topic, partition, e);
        }
    }

    private static UUID storedTopicId(Path partitionDir) {
        Path file = partitionDir.resolve(PARTITION_METADATA_FILE);
        if (!Files.exists(file)) {
            return null;
        }
        try {
            return UUID.fromString(AtomicFiles.readProperties(file).getProperty("topic_id", ""));
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("Unreadable {}: {}", file, e.toString());
            return null;
        }
    }

    private static Set<String> partitionDirNames(List<Path> logDirs) throws IOException {
        Set<String> names = ConcurrentHashMap.newKeySet();
        Set<String> seen = new HashSet<>();
        for (Path dir : logDirs) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
                for (Path e : entries) {
                    String name = e.getFileName().toString();
                    int dash = name.lastIndexOf('-');
                    if (dash > 0 && dash < name.length() - 1 && isDigits(name.substring(dash + 1)) && seen.add(name)) {
                        names.add(name);
                    }
                }
            }
        }
        return names;
    }

    private static boolean isDigits(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (!Character.isDigit(s.charAt(i))) {
                return false;
            }
        }
        return !s.isEmpty();
    }
}
