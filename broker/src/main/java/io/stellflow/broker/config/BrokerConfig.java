package io.stellflow.broker.config;

import static io.stellflow.server.common.config.ConfigValues.bool;
import static io.stellflow.server.common.config.ConfigValues.intValue;
import static io.stellflow.server.common.config.ConfigValues.longValue;
import static io.stellflow.server.common.config.ConfigValues.string;

import io.stellflow.broker.append.IdleStrategy;
import io.stellflow.broker.network.TransportType;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.server.common.telemetry.TelemetryConfig;
import io.stellflow.server.common.topic.TopicConfigRules;
import io.stellflow.storage.LogCompression;
import io.stellflow.storage.LogConfig;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.ProducerStateConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The validated broker configuration, read from Kafka-style properties.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>broker.id</td><td>node.id, else 0</td><td>&gt;= 0</td></tr>
 *   <tr><td>process.roles, node.id, controller.*, metadata.*, broker.heartbeat.interval.ms, broker.rack,
 *       default.replication.factor</td><td colspan="2">see {@link ClusterConfig}</td></tr>
 *   <tr><td>listeners</td><td>PLAINTEXT://127.0.0.1:9092</td><td>one PLAINTEXT listener; port 0 = ephemeral</td></tr>
 *   <tr><td>advertised.listeners</td><td>the listener</td><td>host and port given to clients in Metadata</td></tr>
 *   <tr><td>log.dirs (or log.dir)</td><td>/tmp/stellflow-data</td><td>comma separated; new partitions go to the
 *       dir holding the fewest; broker metadata ({@code meta.properties}, {@code .topics}) lives in the first</td></tr>
 *   <tr><td>num.partitions</td><td>1</td><td>1..{@value #MAX_PARTITIONS_PER_TOPIC}, for auto-created topics</td></tr>
 *   <tr><td>log.segment.bytes</td><td>1073741824</td><td>&gt;= 1024</td></tr>
 *   <tr><td>log.index.interval.bytes</td><td>4096</td><td>&gt;= 0</td></tr>
 *   <tr><td>log.index.size.max.bytes</td><td>10485760</td><td>&gt;= 8</td></tr>
 *   <tr><td>log.flush.interval.messages</td><td>9223372036854775807 (never)</td><td>&gt;= 1</td></tr>
 *   <tr><td>log.flush.interval.ms</td><td>9223372036854775807 (never)</td><td>&gt;= 0</td></tr>
 *   <tr><td>log.retention.ms</td><td>604800000 (7 days)</td><td>&gt;= -1 (-1 = no time limit); or
 *       log.retention.minutes, log.retention.hours (Kafka's aliases; ms wins over minutes over hours)</td></tr>
 *   <tr><td>log.retention.bytes</td><td>-1 (no limit)</td><td>&gt;= -1, per partition</td></tr>
 *   <tr><td>log.roll.ms</td><td>604800000 (7 days)</td><td>&gt;= 1; or log.roll.hours (ms wins)</td></tr>
 *   <tr><td>log.cleanup.policy</td><td>delete</td><td>delete, compact or compact,delete</td></tr>
 *   <tr><td>log.segment.delete.delay.ms</td><td>60000</td><td>&gt;= 0</td></tr>
 *   <tr><td>log.cleaner.delete.retention.ms</td><td>86400000 (1 day)</td><td>&gt;= 0</td></tr>
 *   <tr><td>log.cleaner.min.cleanable.ratio</td><td>0.5</td><td>0..1</td></tr>
 *   <tr><td>log.preallocate</td><td>true</td><td>true or false; the active segment reserves its disk
 *       blocks ahead of its end (1 to 16 MiB), keeping its size (Kafka's default is false)</td></tr>
 *   <tr><td>log.retention.check.interval.ms</td><td>300000</td><td>&gt;= 0; retention and compaction run this
 *       often (0 = never)</td></tr>
 *   <tr><td>log.flush.offset.checkpoint.interval.ms</td><td>60000</td><td>&gt;= 0; recovery-point and
 *       log-start-offset checkpoints (0 = only at shutdown)</td></tr>
 *   <tr><td>num.recovery.threads.per.data.dir</td><td>1</td><td>1..64, threads loading logs at start</td></tr>
 *   <tr><td>message.max.bytes</td><td>1048588</td><td>{@value #MIN_MESSAGE_MAX_BYTES}..{@value #MAX_MESSAGE_MAX_BYTES};
 *       the largest batch a topic without its own {@code max.message.bytes} accepts</td></tr>
 *   <tr><td>compression.max.decompressed.bytes</td><td>67108864 (64 MiB)</td><td>{@value
 *       #MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES}..2^31-1; hard cap on the decompressed records of one
 *       compressed batch on Produce (above it: INVALID_RECORD)</td></tr>
 *   <tr><td>compression.type</td><td>producer</td><td>producer, uncompressed, gzip, snappy, lz4 or zstd (lower case, as Kafka): the
 *       codec stored batches get (producer: as produced); topic override of the same name</td></tr>
 *   <tr><td>compression.gzip.level / lz4.level / zstd.level</td><td>-1 / 9 / 3</td><td>1..9 or -1 / 1..17 /
 *       -131072..22: levels of the broker's recompression (topic overrides of the same names)</td></tr>
 *   <tr><td>producer.id.expiration.ms</td><td>86400000 (1 day)</td><td>&gt;= 1; a partition forgets an
 *       idempotent producer id with no append for this long</td></tr>
 *   <tr><td>producer.id.max.per.partition</td><td>10000</td><td>&gt;= 1; producer ids one partition keeps
 *       (a new one beyond it is refused until ids expire)</td></tr>
 *   <tr><td>producer.id.max.per.broker</td><td>400000</td><td>&gt;= 1; producer ids all partitions of
 *       the broker keep together, leader and follower replicas (a leader refuses a new one beyond it
 *       until ids expire; {@link ProducerStateConfig#DEFAULT_MAX_PRODUCER_IDS_PER_BROKER})</td></tr>
 *   <tr><td>compression.produce.policy</td><td>accept</td><td>accept or refuse: refuse answers a Produce
 *       holding a compressed batch FEATURE_NOT_ENABLED (topic override of the same name)</td></tr>
 *   <tr><td>cluster.id</td><td>generated at first start, persisted</td><td>non-empty; in a cluster the
 *       controllers' (metadata log) id, which a broker adopts when its log dir has none and which must
 *       equal its {@code meta.properties}</td></tr>
 *   <tr><td>auto.create.topics.enable</td><td>false</td><td>true or false</td></tr>
 *   <tr><td>transport</td><td>auto</td><td>auto, io_uring, epoll or nio</td></tr>
 *   <tr><td>num.network.threads</td><td>3</td><td>1..256, Netty event loop threads</td></tr>
 *   <tr><td>num.io.threads</td><td>8</td><td>1..1024, request handler threads (file I/O)</td></tr>
 *   <tr><td>fetch.zero.copy</td><td>true</td><td>send log bytes of Fetch responses as file regions
 *       (sendfile/splice); false copies them into the response buffer</td></tr>
 *   <tr><td>socket.send.buffer.bytes</td><td>-1</td><td>SO_SNDBUF per connection; -1 = OS default (autotuned)</td></tr>
 *   <tr><td>socket.receive.buffer.bytes</td><td>-1</td><td>SO_RCVBUF per connection; -1 = OS default (autotuned)</td></tr>
 *   <tr><td>socket.write.buffer.low.water.mark.bytes</td><td>524288</td><td>&gt;= 1; writable again below this</td></tr>
 *   <tr><td>socket.write.buffer.high.water.mark.bytes</td><td>4194304</td><td>&gt;= low mark; above it the
 *       connection is unwritable and the broker stops reading from it</td></tr>
 *   <tr><td>socket.flush.consolidation.flushes</td><td>256</td><td>0..1048576; flushes merged into one
 *       syscall while responses queue up; 0 = no consolidation</td></tr>
 *   <tr><td>num.append.agents</td><td>1</td><td>0..64 append agent threads (single writer per
 *       partition); 0 = append on the request threads</td></tr>
 *   <tr><td>append.queue.capacity</td><td>1024</td><td>2..1048576 queued Produce requests per partition</td></tr>
 *   <tr><td>append.idle.strategy</td><td>park</td><td>park, backoff, or the class name of an
 *       {@link io.stellflow.broker.append.IdleStrategy} with a public no-argument constructor</td></tr>
 *   <tr><td>produce.event.loop.handoff</td><td>true</td><td>true: a Produce that cannot wait (known
 *       topics, append queues at most half full) is decoded and handed to the append queues on the event
 *       loop; false: every request goes through the request handler pool</td></tr>
 *   <tr><td>queued.max.request.bytes</td><td>104857600</td><td>&gt;= 1; queued record bytes above which
 *       the broker stops reading from producing connections</td></tr>
 *   <tr><td>replica.lag.time.max.ms</td><td>30000</td><td>&gt;= 1; a follower not caught up to the
 *       leader's log end offset for this long leaves the ISR (checked every half of it)</td></tr>
 *   <tr><td>min.insync.replicas</td><td>1</td><td>&gt;= 1; default for topics without their own: an
 *       acks=-1 Produce to a partition with a smaller ISR gets NOT_ENOUGH_REPLICAS</td></tr>
 *   <tr><td>replica.high.watermark.checkpoint.interval.ms</td><td>5000</td><td>&gt;= 1; how often
 *       each log dir's {@code replication-offset-checkpoint} is written</td></tr>
 *   <tr><td>log.dir.failure.retry.ms</td><td>10000</td><td>&gt;= 0; a partition whose write failed
 *       on a full file system is recovered in place once its dir has room, checked this long after the
 *       failure and then this often (0 = never: it stays failed until a restart)</td></tr>
 *   <tr><td>broker.thread.stall.timeout.ms</td><td>30000</td><td>&gt;= 1000; a watched broker thread
 *       (append agent, replica fetcher, timer, ...) whose heartbeat is older than this is stuck: its
 *       partitions refuse appends and the broker asks the controller to fence it until it moves again
 *       ({@code io.stellflow.broker.watchdog.ThreadWatchdog})</td></tr>
 * </table>
 *
 * <p>Telemetry keys ({@code metrics.*}, {@code tracing.*}) are read by {@link TelemetryConfig}; the
 * replica fetcher keys ({@code replica.fetch.*}, {@code replica.socket.timeout.ms}) by {@link
 * ReplicaFetcherConfig}; the group coordinator's ({@code offsets.*}, {@code group.coordinator.threads})
 * by {@link GroupCoordinatorConfig}.
 *
 * <p>Thread-safety: immutable after {@link #fromProperties}.
 *
 * <p>Errors: {@link ConfigException} with the bad key and value for anything malformed or out of range.
 */
public final class BrokerConfig {

    /** Upper bound on partitions in one topic; keeps one CreateTopic from opening thousands of files. */
    public static final int MAX_PARTITIONS_PER_TOPIC = 10_000;

    /**
     * One 78-byte minimal batch ({@code docs/spec/wire-protocol.md} §7.7 step 2) must fit; the same
     * bound as the topic's {@code max.message.bytes} ({@link TopicConfigRules#MIN_MESSAGE_BYTES}).
     */
    public static final int MIN_MESSAGE_MAX_BYTES = TopicConfigRules.MIN_MESSAGE_BYTES;

    /**
     * 64 MiB minus 64 KiB: a batch of this size plus any Fetch response envelope stays below the
     * 67108860-byte frame limit; the same bound as the topic's {@code max.message.bytes} ({@link
     * TopicConfigRules#MAX_MESSAGE_BYTES}).
     */
    public static final int MAX_MESSAGE_MAX_BYTES = TopicConfigRules.MAX_MESSAGE_BYTES;

    /** Smallest {@code compression.max.decompressed.bytes}: one 64 KiB decompression chunk. */
    public static final long MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES = 64 * 1024;

    /** Kafka's default: 1 MiB plus a 12-byte log overhead. */
    public static final int DEFAULT_MESSAGE_MAX_BYTES = 1_048_588;

    private static final Set<String> BROKER_KEYS = Set.of(
            "broker.id",
            "listeners",
            "advertised.listeners",
            "log.dirs",
            "log.dir",
            "num.partitions",
            "log.segment.bytes",
            "log.index.interval.bytes",
            "log.index.size.max.bytes",
            "log.flush.interval.messages",
            "log.flush.interval.ms",
            "log.retention.ms",
            "log.retention.minutes",
            "log.retention.hours",
            "log.retention.bytes",
            "log.roll.ms",
            "log.roll.hours",
            "log.cleanup.policy",
            "log.segment.delete.delay.ms",
            "log.cleaner.delete.retention.ms",
            "log.cleaner.min.cleanable.ratio",
            "log.preallocate",
            "log.retention.check.interval.ms",
            "log.flush.offset.checkpoint.interval.ms",
            "num.recovery.threads.per.data.dir",
            "message.max.bytes",
            "compression.max.decompressed.bytes",
            "compression.type",
            "compression.produce.policy",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "producer.id.expiration.ms",
            "producer.id.max.per.partition",
            "producer.id.max.per.broker",
            "cluster.id",
            "auto.create.topics.enable",
            "transport",
            "num.network.threads",
            "num.io.threads",
            "fetch.zero.copy",
            "socket.send.buffer.bytes",
            "socket.receive.buffer.bytes",
            "socket.write.buffer.low.water.mark.bytes",
            "socket.write.buffer.high.water.mark.bytes",
            "socket.flush.consolidation.flushes",
            "num.append.agents",
            "append.queue.capacity",
            "append.idle.strategy",
            "produce.event.loop.handoff",
            "queued.max.request.bytes",
            "replica.lag.time.max.ms",
            "min.insync.replicas",
            "replica.high.watermark.checkpoint.interval.ms",
            "log.dir.failure.retry.ms",
            "broker.thread.stall.timeout.ms");

    private static final Set<String> KNOWN_KEYS = union(
            union(union(BROKER_KEYS, TelemetryConfig.KEYS), ReplicaFetcherConfig.KEYS),
            union(GroupCoordinatorConfig.KEYS, TransactionCoordinatorConfig.KEYS));
    private static final Set<String> ALL_KEYS = union(KNOWN_KEYS, ClusterConfig.KEYS);

    private final int brokerId;
    private final Listener listener;
    private final Listener advertisedListener;
    private final List<Path> logDirs;
    private final int numPartitions;
    private final LogConfig logConfig;
    private final LogManager.Config logManagerConfig;
    private final int messageMaxBytes;
    private final ProducerStateConfig producerState;
    private final String clusterId;
    private final boolean autoCreateTopicsEnable;
    private final TransportType transport;
    private final int numNetworkThreads;
    private final int numIoThreads;
    private final boolean fetchZeroCopy;
    private final boolean produceEventLoopHandoff;
    private final int socketSendBufferBytes;
    private final int socketReceiveBufferBytes;
    private final int writeBufferLowWaterMarkBytes;
    private final int writeBufferHighWaterMarkBytes;
    private final int flushConsolidationFlushes;
    private final int numAppendAgents;
    private final int appendQueueCapacity;
    private final String appendIdleStrategy;
    private final long queuedMaxRequestBytes;
    private final long compressionMaxDecompressedBytes;
    private final long replicaLagTimeMaxMs;
    private final int minInsyncReplicas;
    private final long highWatermarkCheckpointIntervalMs;
    private final long logDirFailureRetryMs;
    private final long threadStallTimeoutMs;
    private final ClusterConfig cluster;
    private final TelemetryConfig telemetry;
    private final ReplicaFetcherConfig replicaFetcher;
    private final GroupCoordinatorConfig groupCoordinator;
    private final TransactionCoordinatorConfig transactionCoordinator;
    private final Set<String> unknownKeys;
    private final Map<String, String> staticValues;

    private BrokerConfig(Properties props) {
        Integer configuredBrokerId =
                props.getProperty("broker.id") == null ? null : intValue(props, "broker.id", 0, 0, Integer.MAX_VALUE);
        listener = Listener.parse("listeners", string(props, "listeners", "PLAINTEXT://127.0.0.1:9092"));
        String advertised = props.getProperty("advertised.listeners");
        advertisedListener = advertised == null ? null : Listener.parse("advertised.listeners", advertised);
        logDirs = logDirs(props);
        numPartitions = intValue(props, "num.partitions", 1, 1, MAX_PARTITIONS_PER_TOPIC);
        int segmentBytes =
                intValue(props, "log.segment.bytes", LogConfig.DEFAULT_SEGMENT_BYTES, 1024, Integer.MAX_VALUE);
        int indexInterval = intValue(
                props, "log.index.interval.bytes", LogConfig.DEFAULT_INDEX_INTERVAL_BYTES, 0, Integer.MAX_VALUE);
        int indexMax =
                intValue(props, "log.index.size.max.bytes", LogConfig.DEFAULT_INDEX_MAX_BYTES, 8, Integer.MAX_VALUE);
        long flushMessages = longValue(props, "log.flush.interval.messages", Long.MAX_VALUE, 1, Long.MAX_VALUE);
        long flushMs = longValue(props, "log.flush.interval.ms", Long.MAX_VALUE, 0, Long.MAX_VALUE);
        logConfig = logConfig(props, new LogConfig(segmentBytes, indexInterval, indexMax, flushMessages, flushMs));
        long checkpointMs = longValue(props, "log.flush.offset.checkpoint.interval.ms", 60_000, 0, Long.MAX_VALUE);
        long retentionCheckMs = longValue(props, "log.retention.check.interval.ms", 300_000, 0, Long.MAX_VALUE);
        int recoveryThreads = intValue(props, "num.recovery.threads.per.data.dir", 1, 1, 64);
        logManagerConfig =
                new LogManager.Config(logDirs, checkpointMs, retentionCheckMs, recoveryThreads * logDirs.size());
        messageMaxBytes = intValue(
                props, "message.max.bytes", DEFAULT_MESSAGE_MAX_BYTES, MIN_MESSAGE_MAX_BYTES, MAX_MESSAGE_MAX_BYTES);
        producerState = new ProducerStateConfig(
                longValue(
                        props,
                        "producer.id.expiration.ms",
                        ProducerStateConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS,
                        1,
                        Long.MAX_VALUE / 2),
                intValue(
                        props,
                        "producer.id.max.per.partition",
                        ProducerStateConfig.DEFAULT_MAX_PRODUCER_IDS_PER_PARTITION,
                        1,
                        Integer.MAX_VALUE),
                longValue(
                        props,
                        "producer.id.max.per.broker",
                        ProducerStateConfig.DEFAULT_MAX_PRODUCER_IDS_PER_BROKER,
                        1,
                        Long.MAX_VALUE));
        String clusterIdValue = props.getProperty("cluster.id");
        if (clusterIdValue != null && clusterIdValue.isBlank()) {
            throw new ConfigException("cluster.id", clusterIdValue, "must not be blank");
        }
        clusterId = clusterIdValue == null ? null : clusterIdValue.trim();
        autoCreateTopicsEnable = bool(props, "auto.create.topics.enable", false);
        transport = TransportType.parse("transport", string(props, "transport", "auto"));
        numNetworkThreads = intValue(props, "num.network.threads", 3, 1, 256);
        numIoThreads = intValue(props, "num.io.threads", 8, 1, 1024);
        fetchZeroCopy = bool(props, "fetch.zero.copy", true);
        produceEventLoopHandoff = bool(props, "produce.event.loop.handoff", true);
        socketSendBufferBytes = socketBuffer(props, "socket.send.buffer.bytes");
        socketReceiveBufferBytes = socketBuffer(props, "socket.receive.buffer.bytes");
        // 512 KiB / 4 MiB: a 1 MiB fetch response (the SDKs' maxBytes) fits below the high mark, so
        // only a client that stops reading makes a connection unwritable.
        writeBufferLowWaterMarkBytes =
                intValue(props, "socket.write.buffer.low.water.mark.bytes", 512 * 1024, 1, Integer.MAX_VALUE);
        writeBufferHighWaterMarkBytes = intValue(
                props,
                "socket.write.buffer.high.water.mark.bytes",
                Math.max(4 * 1024 * 1024, writeBufferLowWaterMarkBytes),
                writeBufferLowWaterMarkBytes,
                Integer.MAX_VALUE);
        flushConsolidationFlushes = intValue(props, "socket.flush.consolidation.flushes", 256, 0, 1 << 20);
        numAppendAgents = intValue(props, "num.append.agents", 1, 0, 64);
        appendQueueCapacity = intValue(props, "append.queue.capacity", 1024, 2, 1 << 20);
        String idle = string(props, "append.idle.strategy", "park");
        appendIdleStrategy = idle.contains(".") ? idle : idle.toLowerCase(Locale.ROOT); // class names keep their case
        try {
            IdleStrategy.named(appendIdleStrategy); // a class that cannot be created fails at start, not in an agent
        } catch (IllegalArgumentException e) {
            throw new ConfigException(
                    "append.idle.strategy",
                    appendIdleStrategy,
                    "must be park, backoff or an IdleStrategy class: " + e.getMessage());
        }
        // 100 MiB, Kafka's queued.max.request.bytes is unbounded by default; 100 one-MiB batches in
        // flight is far more than a 2-core machine appends in the time a producer waits.
        queuedMaxRequestBytes = longValue(props, "queued.max.request.bytes", 100L << 20, 1, Long.MAX_VALUE);
        compressionMaxDecompressedBytes = longValue(
                props,
                "compression.max.decompressed.bytes",
                CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES,
                MIN_COMPRESSION_MAX_DECOMPRESSED_BYTES,
                Integer.MAX_VALUE);
        replicaLagTimeMaxMs = longValue(props, "replica.lag.time.max.ms", 30_000, 1, Long.MAX_VALUE / 2);
        minInsyncReplicas = intValue(props, "min.insync.replicas", 1, 1, Short.MAX_VALUE);
        highWatermarkCheckpointIntervalMs =
                longValue(props, "replica.high.watermark.checkpoint.interval.ms", 5_000, 1, Long.MAX_VALUE / 2);
        logDirFailureRetryMs = longValue(props, "log.dir.failure.retry.ms", 10_000, 0, Long.MAX_VALUE / 2);
        // At least 1 s: the watchdog checks once a second, and an idle append agent beats at least
        // every IdleStrategy.MAX_PARK_MS (100 ms), so a shorter timeout would only add false alarms.
        threadStallTimeoutMs = longValue(props, "broker.thread.stall.timeout.ms", 30_000, 1_000, Long.MAX_VALUE / 2);
        this.cluster = ClusterConfig.parse(props, configuredBrokerId, listener.port(), logDirs.get(0));
        brokerId = this.cluster.nodeId();
        telemetry = TelemetryConfig.from(props);
        replicaFetcher = ReplicaFetcherConfig.parse(props);
        groupCoordinator = GroupCoordinatorConfig.parse(props);
        transactionCoordinator = TransactionCoordinatorConfig.parse(props);
        Set<String> unknown = new TreeSet<>();
        Map<String, String> given = new TreeMap<>();
        for (String key : props.stringPropertyNames()) {
            if (!ALL_KEYS.contains(key)) {
                unknown.add(key);
            } else {
                given.put(key, props.getProperty(key));
            }
        }
        unknownKeys = Set.copyOf(unknown);
        staticValues = Collections.unmodifiableMap(given);
    }

    /**
     * Reads and validates every key.
     *
     * @throws ConfigException naming the first bad key and its value
     */
    public static BrokerConfig fromProperties(Properties props) {
        return new BrokerConfig(props);
    }

    /** {@code broker.id} (or {@code node.id}; they must agree when both are set). */
    public int brokerId() {
        return brokerId;
    }

    /** {@code process.roles}, the node id, the controllers and (for a controller) its settings. */
    public ClusterConfig cluster() {
        return cluster;
    }

    /** {@code listeners}: where the broker binds. */
    public Listener listener() {
        return listener;
    }

    /** {@code advertised.listeners}, or null when unset (then the bound listener is advertised). */
    public Listener advertisedListener() {
        return advertisedListener;
    }

    /** {@code log.dirs}, never empty; the first also holds the broker and topic metadata. */
    public List<Path> logDirs() {
        return logDirs;
    }

    /** {@code num.partitions}: partition count of auto-created topics. */
    public int numPartitions() {
        return numPartitions;
    }

    /**
     * The per-partition log defaults ({@code log.segment.bytes}, {@code log.index.*}, {@code
     * log.flush.*}, {@code log.retention.*}, {@code log.cleanup.policy}, ...); topics override them.
     */
    public LogConfig logConfig() {
        return logConfig;
    }

    /** {@code log.dirs} and the log manager's intervals and load threads. */
    public LogManager.Config logManagerConfig() {
        return logManagerConfig;
    }

    /**
     * {@code producer.id.expiration.ms}, {@code producer.id.max.per.partition} and {@code
     * producer.id.max.per.broker}: idempotent-producer state.
     */
    public ProducerStateConfig producerState() {
        return producerState;
    }

    /**
     * {@code message.max.bytes}: the largest accepted RecordBatch in bytes (whole batch, 8-byte prefix
     * included) on topics without their own {@code max.message.bytes}.
     */
    public int messageMaxBytes() {
        return messageMaxBytes;
    }

    /**
     * {@code cluster.id}, or null to use the persisted id, or for a new node the controllers' one
     * (a new combined node's controller generates it).
     */
    public String clusterId() {
        return clusterId;
    }

    /** {@code auto.create.topics.enable}. */
    public boolean autoCreateTopicsEnable() {
        return autoCreateTopicsEnable;
    }

    /** {@code transport}. */
    public TransportType transport() {
        return transport;
    }

    /** {@code num.network.threads}: Netty event loop threads for client connections. */
    public int numNetworkThreads() {
        return numNetworkThreads;
    }

    /** {@code num.io.threads}: request handler threads that do the file I/O. */
    public int numIoThreads() {
        return numIoThreads;
    }

    /**
     * {@code produce.event.loop.handoff}: a Produce that cannot wait is handed to the append queues
     * on the event loop, without the request handler pool (only with append agents).
     */
    public boolean produceEventLoopHandoff() {
        return produceEventLoopHandoff;
    }

    /** {@code fetch.zero.copy}: Fetch sends log bytes as file regions (sendfile/splice), else copies them. */
    public boolean fetchZeroCopy() {
        return fetchZeroCopy;
    }

    /** {@code socket.send.buffer.bytes}: SO_SNDBUF, or -1 for the OS default. */
    public int socketSendBufferBytes() {
        return socketSendBufferBytes;
    }

    /** {@code socket.receive.buffer.bytes}: SO_RCVBUF, or -1 for the OS default. */
    public int socketReceiveBufferBytes() {
        return socketReceiveBufferBytes;
    }

    /** {@code socket.write.buffer.low.water.mark.bytes}. */
    public int writeBufferLowWaterMarkBytes() {
        return writeBufferLowWaterMarkBytes;
    }

    /** {@code socket.write.buffer.high.water.mark.bytes}. */
    public int writeBufferHighWaterMarkBytes() {
        return writeBufferHighWaterMarkBytes;
    }

    /** {@code socket.flush.consolidation.flushes}: 0 = no flush consolidation. */
    public int flushConsolidationFlushes() {
        return flushConsolidationFlushes;
    }

    /** {@code num.append.agents}: append agent threads; 0 = append on the request threads. */
    public int numAppendAgents() {
        return numAppendAgents;
    }

    /** {@code append.queue.capacity}: requests per partition append queue. */
    public int appendQueueCapacity() {
        return appendQueueCapacity;
    }

    /** {@code append.idle.strategy}: park, backoff or an {@code IdleStrategy} class name. */
    public String appendIdleStrategy() {
        return appendIdleStrategy;
    }

    /** {@code replica.lag.time.max.ms}: how long a follower may stay behind the leader's LEO in the ISR. */
    public long replicaLagTimeMaxMs() {
        return replicaLagTimeMaxMs;
    }

    /** {@code min.insync.replicas}: the broker default for acks=-1 Produces (topics may override it). */
    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    /** {@code replica.high.watermark.checkpoint.interval.ms}: how often the HW checkpoints are written. */
    public long highWatermarkCheckpointIntervalMs() {
        return highWatermarkCheckpointIntervalMs;
    }

    /**
     * {@code log.dir.failure.retry.ms}: how long after a no-space failure, and then how often, a
     * failed partition's dir is checked for room to recover it in place, ms; 0 = never.
     */
    public long logDirFailureRetryMs() {
        return logDirFailureRetryMs;
    }

    /**
     * {@code broker.thread.stall.timeout.ms}: how old a watched thread's heartbeat may get before the
     * thread counts as stuck, ms (&gt;= 1000).
     */
    public long threadStallTimeoutMs() {
        return threadStallTimeoutMs;
    }

    /**
     * {@code compression.max.decompressed.bytes}: the most bytes the records of one compressed batch
     * may decompress to on Produce (decision 9.o; a bomb stops here with INVALID_RECORD).
     */
    public long compressionMaxDecompressedBytes() {
        return compressionMaxDecompressedBytes;
    }

    /** {@code queued.max.request.bytes}: queued record bytes before reads pause. */
    public long queuedMaxRequestBytes() {
        return queuedMaxRequestBytes;
    }

    /** The telemetry settings ({@code metrics.*}, {@code tracing.*}). */
    public TelemetryConfig telemetry() {
        return telemetry;
    }

    /** The replica fetcher settings ({@code replica.fetch.*}, {@code replica.socket.timeout.ms}). */
    public ReplicaFetcherConfig replicaFetcher() {
        return replicaFetcher;
    }

    /** The transaction coordinator's settings ({@code transaction.*}, {@code transactional.id.expiration.ms}). */
    public TransactionCoordinatorConfig transactionCoordinator() {
        return transactionCoordinator;
    }

    /** The group coordinator's settings ({@code offsets.*}, {@code group.coordinator.threads}). */
    public GroupCoordinatorConfig groupCoordinator() {
        return groupCoordinator;
    }

    /** Every key the broker reads (data plane, telemetry and cluster keys). */
    public static Set<String> knownKeys() {
        return ALL_KEYS;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }

    /**
     * The known keys given in the properties, with their values as given, sorted by key (what {@code
     * stellflow-configs.sh --entity-type brokers --describe} reports as STATIC; {@link
     * EffectiveBrokerConfig}).
     */
    public Map<String, String> staticValues() {
        return staticValues;
    }

    /** Keys present in the properties that the broker does not know (logged as a warning at start). */
    public Set<String> unknownKeys() {
        return unknownKeys;
    }

    /**
     * A duration Kafka lets a config give in several units ({@code log.retention.ms}, {@code
     * log.retention.minutes}, {@code log.retention.hours}): the first key present wins, in the order
     * given (finest unit first, Kafka's precedence), converted to milliseconds; -1 stays -1 (no limit)
     * where {@code minMs} allows it.
     *
     * @param keysAndUnitMs key, milliseconds per unit of that key, key, milliseconds per unit, ...
     * @throws ConfigException naming the key whose value is not a number, out of range or overflows
     */
    static long aliasedMs(Properties props, long defaultMs, long minMs, Object... keysAndUnitMs) {
        for (int i = 0; i < keysAndUnitMs.length; i += 2) {
            String key = (String) keysAndUnitMs[i];
            int unitMs = (Integer) keysAndUnitMs[i + 1];
            if (props.getProperty(key) == null) {
                continue;
            }
            long min = minMs < 0 ? -1 : Math.max(1, minMs / unitMs);
            long v = longValue(props, key, 0, min, Long.MAX_VALUE);
            if (v < 0) {
                return -1;
            }
            try {
                return Math.multiplyExact(v, (long) unitMs);
            } catch (ArithmeticException e) {
                throw new ConfigException(key, props.getProperty(key), "is too large for a duration in milliseconds");
            }
        }
        return defaultMs;
    }

    private static LogConfig logConfig(Properties props, LogConfig base) {
        LogConfig.Builder b = base.toBuilder()
                .retentionMs(aliasedMs(
                        props,
                        LogConfig.DEFAULT_RETENTION_MS,
                        -1,
                        "log.retention.ms",
                        1,
                        "log.retention.minutes",
                        60_000,
                        "log.retention.hours",
                        3_600_000))
                .retentionBytes(longValue(props, "log.retention.bytes", -1, -1, Long.MAX_VALUE))
                .segmentMs(aliasedMs(
                        props, LogConfig.DEFAULT_SEGMENT_MS, 1, "log.roll.ms", 1, "log.roll.hours", 3_600_000))
                .fileDeleteDelayMs(longValue(
                        props,
                        "log.segment.delete.delay.ms",
                        LogConfig.DEFAULT_FILE_DELETE_DELAY_MS,
                        0,
                        Long.MAX_VALUE))
                .deleteRetentionMs(longValue(
                        props,
                        "log.cleaner.delete.retention.ms",
                        LogConfig.DEFAULT_DELETE_RETENTION_MS,
                        0,
                        Long.MAX_VALUE))
                .preallocate(bool(props, "log.preallocate", true));
        String policy = string(props, "log.cleanup.policy", "delete");
        String ratio = string(props, "log.cleaner.min.cleanable.ratio", "0.5");
        try {
            b.cleanupPolicy(policy);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("log.cleanup.policy", policy, "must be delete, compact or compact,delete");
        }
        try {
            double r = Double.parseDouble(ratio);
            if (!(r >= 0 && r <= 1)) {
                throw new NumberFormatException();
            }
            b.minCleanableDirtyRatio(r);
        } catch (NumberFormatException e) {
            throw new ConfigException("log.cleaner.min.cleanable.ratio", ratio, "must be a number in 0..1");
        }
        String compressionType = string(props, "compression.type", LogCompression.PRODUCER);
        // Kafka's names exactly, as the topic key (TopicConfigRules): ZSTD or Gzip is refused at start.
        if (!TopicConfigRules.COMPRESSION_TYPES.contains(compressionType)) {
            throw new ConfigException(
                    "compression.type",
                    compressionType,
                    "must be producer, uncompressed, gzip, snappy, lz4 or zstd (lower case, as in Kafka)");
        }
        b.compressionType(compressionType);
        String producePolicy = string(props, "compression.produce.policy", LogCompression.ACCEPT);
        try {
            b.compressionProducePolicy(producePolicy);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("compression.produce.policy", producePolicy, "must be accept or refuse");
        }
        int gzipLevel = intValue(props, CompressionConfig.GZIP_LEVEL, CompressionConfig.GZIP_DEFAULT_LEVEL, -1, 9);
        try {
            b.compressionLevel(CompressionType.GZIP, gzipLevel);
        } catch (IllegalArgumentException e) { // 0: neither a level nor the default
            throw new ConfigException(CompressionConfig.GZIP_LEVEL, Integer.toString(gzipLevel), "must be 1..9 or -1");
        }
        b.compressionLevel(
                CompressionType.LZ4,
                intValue(
                        props,
                        CompressionConfig.LZ4_LEVEL,
                        CompressionConfig.LZ4_DEFAULT_LEVEL,
                        CompressionConfig.LZ4_MIN_LEVEL,
                        CompressionConfig.LZ4_MAX_LEVEL));
        b.compressionLevel(
                CompressionType.ZSTD,
                intValue(
                        props,
                        CompressionConfig.ZSTD_LEVEL,
                        CompressionConfig.ZSTD_DEFAULT_LEVEL,
                        CompressionConfig.ZSTD_MIN_LEVEL,
                        CompressionConfig.ZSTD_MAX_LEVEL));
        return b.build();
    }

    private static List<Path> logDirs(Properties props) {
        String key = props.getProperty("log.dirs") != null ? "log.dirs" : "log.dir";
        String raw = string(props, key, "/tmp/stellflow-data");
        List<Path> dirs = new ArrayList<>();
        for (String part : raw.split(",")) {
            String trimmed = part.trim();
            if (trimmed.isEmpty()) {
                throw new ConfigException(key, raw, "contains an empty directory");
            }
            Path dir = Path.of(trimmed).toAbsolutePath().normalize();
            if (dirs.contains(dir)) {
                throw new ConfigException(key, raw, "lists " + dir + " twice");
            }
            dirs.add(dir);
        }
        return List.copyOf(dirs);
    }

    private static int socketBuffer(Properties props, String key) {
        int value = intValue(props, key, -1, -1, Integer.MAX_VALUE);
        if (value == 0) {
            throw new ConfigException(key, "0", "must be -1 (OS default) or > 0");
        }
        return value;
    }
}
