package io.stellflow.broker.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.opentelemetry.context.Context;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.file.FileErrors;
import io.stellflow.server.common.telemetry.Instrument;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import io.stellflow.storage.LogManager;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The broker's OpenTelemetry instruments ({@link BrokerInstruments}) and the hot-path methods that
 * feed them.
 *
 * <p>Cost on the request path: counters are {@link LongAdder}s read by asynchronous (observable)
 * instruments at collection time, so counting is one striped add, no allocation, no lock. Latency
 * histograms are recorded once per request (never per record) with attribute sets built once at
 * construction ({@code Attributes[api][result]}), so recording allocates nothing either. Histograms
 * are recorded with {@link Context#root()}: the SDK would otherwise look the current context up (a
 * thread-local read) for exemplars, which the broker's meter providers turn off ({@link
 * MetricsEndpoint}). Gauges are callbacks evaluated at collection time only. Measured per Produce
 * request (three histogram records, four counter adds) by {@code RequestTelemetryBench}
 * (docs/observability.md, "Overhead").
 *
 * <p>Attributes: {@code node.id} on every instrument, {@code api} and {@code result} where the
 * dictionary allows them, {@code replica.role} on the append latency; {@code topic} and {@code
 * partition} only on the diagnostic offset gauges when {@code metrics.diagnostic.enabled=true}.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class BrokerMetrics {
    /** Index of {@code result="success"}. */
    public static final int SUCCESS = 0;
    /** Index of {@code result="error"}. */
    public static final int ERROR = 1;
    /** Index of {@code result="timeout"}. */
    public static final int TIMEOUT = 2;
    /** Index of {@code result="throttled"}. */
    public static final int THROTTLED = 3;

    static final String[] RESULTS = {"success", "error", "timeout", "throttled"};

    /** Task name of the high watermark checkpoint ({@code replication-offset-checkpoint}). */
    public static final String HW_CHECKPOINT_TASK = "hw-checkpoint";

    /**
     * The periodic tasks of {@code stellflow.log.background.error.count}, exported at 0 from the
     * start so that a rate or an alert sees the series before the first failure.
     */
    static final List<String> BACKGROUND_TASKS = List.of(
            LogManager.CHECKPOINT_TASK, LogManager.COMPACTION_TASK, LogManager.RETENTION_TASK, HW_CHECKPOINT_TASK);

    /**
     * The APIs with their own series: the data plane's, the groups' and the transactions' (what
     * applications call, and the broker-to-broker registrations and markers a commit waits for);
     * anything else (admin and tool APIs) is counted under {@code api="Unknown"}.
     */
    static final short[] APIS = {
        ApiKeys.API_VERSIONS,
        ApiKeys.METADATA,
        ApiKeys.PRODUCE,
        ApiKeys.FETCH,
        ApiKeys.LIST_OFFSETS,
        ApiKeys.CREATE_TOPIC,
        ApiKeys.OFFSET_COMMIT,
        ApiKeys.OFFSET_FETCH,
        ApiKeys.FIND_COORDINATOR,
        ApiKeys.HEARTBEAT,
        ApiKeys.JOIN_GROUP,
        ApiKeys.SYNC_GROUP,
        ApiKeys.CONSUMER_GROUP_HEARTBEAT,
        ApiKeys.INIT_PRODUCER_ID,
        ApiKeys.BEGIN_TRANSACTION,
        ApiKeys.END_TRANSACTION,
        ApiKeys.REGISTER_TXN_PARTITION,
        ApiKeys.WRITE_TXN_MARKERS,
        ApiKeys.TXN_OFFSET_COMMIT,
        ApiKeys.FORWARD_STATUS
    };

    private static final int UNKNOWN_API = APIS.length;
    private static final double NANOS_PER_MS = 1_000_000.0;

    static final AttributeKey<Long> NODE_ID = AttributeKey.longKey("node.id");
    static final AttributeKey<String> COORDINATOR_TYPE = AttributeKey.stringKey("coordinator.type");
    static final AttributeKey<String> API = AttributeKey.stringKey("api");
    static final AttributeKey<String> RESULT = AttributeKey.stringKey("result");
    static final AttributeKey<String> REPLICA_ROLE = AttributeKey.stringKey("replica.role");
    static final AttributeKey<String> TOPIC = AttributeKey.stringKey("topic");
    static final AttributeKey<Long> PARTITION = AttributeKey.longKey("partition");
    static final AttributeKey<String> THREAD = AttributeKey.stringKey("thread");
    static final AttributeKey<String> LOG_DIR = AttributeKey.stringKey("log.dir");
    static final AttributeKey<String> TASK = AttributeKey.stringKey("task");

    private final int nodeId;
    private final boolean diagnostic;
    private final Attributes node;
    private final Attributes[] apiAttrs = new Attributes[APIS.length + 1];
    private final Attributes[][] requestAttrs = new Attributes[APIS.length + 1][RESULTS.length];
    private final Attributes[] resultAttrs = new Attributes[RESULTS.length];
    private final Attributes leaderAttrs;
    private final Attributes followerAttrs;

    private final LongAdder[][] requests = new LongAdder[APIS.length + 1][RESULTS.length];
    private final LongAdder[] decodeErrors = new LongAdder[APIS.length + 1];
    private final LongAdder[] produceRequests = adders(RESULTS.length);
    private final LongAdder[] offsetCommits = adders(RESULTS.length);
    private final LongAdder produceBytes = new LongAdder();
    private final LongAdder produceRecords = new LongAdder();
    private final LongAdder[] fetchRequests = adders(RESULTS.length);
    private final LongAdder fetchBytes = new LongAdder();
    private final LongAdder fetchRecords = new LongAdder();
    private final LongAdder longPollHits = new LongAdder();
    private final LongAdder segmentRolls = new LongAdder();
    private final LongAdder indexRebuilds = new LongAdder();
    private final LongAdder segmentsDeleted = new LongAdder();
    private final LongAdder logWriteErrors = new LongAdder();
    private final LongAdder groupRebalances = new LongAdder();
    /** By task name; a handful of fixed names (the periodic tasks), so the map stays tiny. */
    private final Map<String, LongAdder> backgroundErrors = new ConcurrentHashMap<>();

    private final LongAdder segmentsQuarantined = new LongAdder();
    private final LongAdder bytesQuarantined = new LongAdder();

    private final DoubleHistogram requestLatency;
    private final DoubleHistogram produceLatency;
    private final DoubleHistogram fetchLatency;
    private final DoubleHistogram longPollWait;
    private final DoubleHistogram appendLatency;
    private final DoubleHistogram flushLatency;
    private final DoubleHistogram recoveryTime;
    private final DoubleHistogram coordinatorLoadTime;
    private final DoubleHistogram offsetCommitLatency;
    private final Attributes groupCoordinator;

    private final Meter meter;
    private final InstrumentCallbacks callbacks;
    private final ReplicaTelemetry replication;
    private final CompressionTelemetry compression;
    private final TopicThroughput topics;

    /**
     * Builds every instrument of {@link BrokerInstruments#REGISTERED} except the gauges, which need
     * the running broker ({@link #registerGauges}).
     *
     * @param meter where instruments are created (a no-op meter exports nothing)
     * @param nodeId {@code broker.id}, the {@code node.id} attribute
     * @param diagnostic {@code metrics.diagnostic.enabled}
     */
    public BrokerMetrics(Meter meter, int nodeId, boolean diagnostic) {
        this(meter, nodeId, diagnostic, false);
    }

    /**
     * As {@link #BrokerMetrics(Meter, int, boolean)}, with the per-topic throughput counters of
     * {@link TopicThroughput} when {@code topicDiagnostic} ({@code metrics.topic.diagnostic.enabled}).
     */
    public BrokerMetrics(Meter meter, int nodeId, boolean diagnostic, boolean topicDiagnostic) {
        this.meter = meter;
        this.callbacks = new InstrumentCallbacks(meter);
        this.nodeId = nodeId;
        this.diagnostic = diagnostic;
        this.node = Attributes.of(NODE_ID, (long) nodeId);
        for (int a = 0; a <= APIS.length; a++) {
            String api = a == UNKNOWN_API ? "Unknown" : ApiKeys.name(APIS[a]);
            apiAttrs[a] = Attributes.of(NODE_ID, (long) nodeId, API, api);
            decodeErrors[a] = new LongAdder();
            for (int r = 0; r < RESULTS.length; r++) {
                requestAttrs[a][r] = Attributes.of(NODE_ID, (long) nodeId, API, api, RESULT, RESULTS[r]);
                requests[a][r] = new LongAdder();
            }
        }
        for (int r = 0; r < RESULTS.length; r++) {
            resultAttrs[r] = Attributes.of(NODE_ID, (long) nodeId, RESULT, RESULTS[r]);
        }
        for (String task : BACKGROUND_TASKS) {
            backgroundErrors.put(task, new LongAdder());
        }
        leaderAttrs = Attributes.of(NODE_ID, (long) nodeId, REPLICA_ROLE, "leader");
        followerAttrs = Attributes.of(NODE_ID, (long) nodeId, REPLICA_ROLE, "follower");

        counter(BrokerInstruments.REQUEST_COUNT, m -> {
            for (int a = 0; a <= APIS.length; a++) {
                for (int r = 0; r < RESULTS.length; r++) {
                    long v = requests[a][r].sum();
                    // Implemented APIs always report every result (0 included), so rate() panels
                    // and alerts see a series from the first scrape; Unknown only once it happened.
                    if (a != UNKNOWN_API || v > 0) {
                        m.record(v, requestAttrs[a][r]);
                    }
                }
            }
        });
        counter(BrokerInstruments.DECODE_ERROR_COUNT, m -> {
            for (int a = 0; a <= APIS.length; a++) {
                long v = decodeErrors[a].sum();
                if (a != UNKNOWN_API || v > 0) {
                    m.record(v, apiAttrs[a]);
                }
            }
        });
        counter(BrokerInstruments.PRODUCE_REQUEST_COUNT, m -> byResult(m, produceRequests));
        counter(BrokerInstruments.OFFSET_COMMIT_COUNT, m -> byResult(m, offsetCommits));
        counter(BrokerInstruments.PRODUCE_BYTES, m -> m.record(produceBytes.sum(), node));
        counter(BrokerInstruments.PRODUCE_RECORDS, m -> m.record(produceRecords.sum(), node));
        counter(BrokerInstruments.FETCH_REQUEST_COUNT, m -> byResult(m, fetchRequests));
        counter(BrokerInstruments.FETCH_BYTES, m -> m.record(fetchBytes.sum(), node));
        counter(BrokerInstruments.FETCH_RECORDS, m -> m.record(fetchRecords.sum(), node));
        counter(BrokerInstruments.LONG_POLL_HIT_COUNT, m -> m.record(longPollHits.sum(), node));
        counter(BrokerInstruments.SEGMENT_ROLL_COUNT, m -> m.record(segmentRolls.sum(), node));
        counter(BrokerInstruments.REBUILD_INDEX_COUNT, m -> m.record(indexRebuilds.sum(), node));
        counter(BrokerInstruments.CLEANUP_SEGMENT_COUNT, m -> m.record(segmentsDeleted.sum(), node));
        counter(BrokerInstruments.LOG_WRITE_ERROR_COUNT, m -> m.record(logWriteErrors.sum(), node));
        counter(
                BrokerInstruments.BACKGROUND_ERROR_COUNT,
                m -> backgroundErrors.forEach(
                        (task, n) -> m.record(n.sum(), Attributes.of(NODE_ID, (long) nodeId, TASK, task))));
        counter(BrokerInstruments.QUARANTINE_SEGMENT_COUNT, m -> m.record(segmentsQuarantined.sum(), node));
        counter(BrokerInstruments.QUARANTINE_BYTES, m -> m.record(bytesQuarantined.sum(), node));
        counter(BrokerInstruments.GROUP_REBALANCE_COUNT, m -> m.record(groupRebalances.sum(), node));

        requestLatency = histogram(BrokerInstruments.REQUEST_LATENCY);
        produceLatency = histogram(BrokerInstruments.PRODUCE_LATENCY);
        fetchLatency = histogram(BrokerInstruments.FETCH_LATENCY);
        longPollWait = histogram(BrokerInstruments.LONG_POLL_WAIT);
        appendLatency = histogram(BrokerInstruments.LOG_APPEND_LATENCY);
        flushLatency = histogram(BrokerInstruments.LOG_FLUSH_LATENCY);
        recoveryTime = histogram(BrokerInstruments.LOG_RECOVERY_TIME);
        coordinatorLoadTime = histogram(BrokerInstruments.COORDINATOR_LOAD_TIME);
        offsetCommitLatency = histogram(BrokerInstruments.OFFSET_COMMIT_LATENCY);
        groupCoordinator = node.toBuilder().put(COORDINATOR_TYPE, "group").build();
        replication = new ReplicaTelemetry(meter, callbacks, nodeId, logWriteErrors);
        compression = new CompressionTelemetry(callbacks, nodeId);
        topics = topicDiagnostic ? new TopicThroughput(callbacks, nodeId) : null;
    }

    /**
     * The per-topic throughput counters, or null when {@code metrics.topic.diagnostic.enabled} is
     * off: then nothing per topic is counted anywhere.
     */
    public TopicThroughput topics() {
        return topics;
    }

    /**
     * Registers the capacity gauges of {@link CapacityGauges}: disk free and used per log dir,
     * partitions hosted and led. Once.
     */
    public void registerCapacityGauges(List<Path> logDirs, CapacityGauges.Source source) {
        new CapacityGauges(callbacks, nodeId, logDirs, source, FileErrors::freeBytes);
    }

    /**
     * What the gauges read at collection time (never on the request path).
     *
     * <p>Implementations are called on the exporter's thread and must be cheap and thread-safe.
     */
    public interface GaugeSource {
        /** Open client connections. */
        long connections();

        /** Requests read from sockets and not yet handled, over all connections. */
        long queuedRequests();

        /** Responses written and not yet flushed to the sockets, over all connections. */
        long queuedResponses();

        /** Calls {@code visitor} once per hosted partition. */
        void forEachPartition(PartitionVisitor visitor);
    }

    /** One partition's log state, as the storage gauges read it. */
    @FunctionalInterface
    public interface PartitionVisitor {
        void partition(String topic, int partition, long logStartOffset, long logEndOffset, long activeSegmentBytes);
    }

    /** The watched threads, as the thread gauges read them (the broker's thread watchdog). */
    public interface ThreadSource {
        /** Calls {@code visitor} once per watched thread. */
        void forEachThread(ThreadVisitor visitor);

        /** Watched threads restarted after they ended, since start. */
        long restarts();

        /** Times a watched thread was found stuck, since start. */
        long stucks();
    }

    /** One watched thread's liveness. */
    @FunctionalInterface
    public interface ThreadVisitor {
        /**
         * @param thread the thread's name
         * @param alive whether it has not ended
         * @param heartbeatAgeMs time since its last heartbeat, ms
         */
        void thread(String thread, boolean alive, long heartbeatAgeMs);
    }

    /**
     * Registers {@code stellflow.thread.alive} and {@code stellflow.thread.heartbeat.age} (one series
     * per watched thread, attribute {@code thread}), {@code stellflow.thread.restart.count} and {@code
     * stellflow.thread.stuck.count}. Once.
     */
    public void registerThreadGauges(ThreadSource source) {
        gauge(
                BrokerInstruments.THREAD_ALIVE,
                m -> source.forEachThread((t, alive, ageMs) ->
                        m.record(alive ? 1 : 0, Attributes.of(NODE_ID, (long) nodeId, THREAD, t))));
        gauge(
                BrokerInstruments.THREAD_HEARTBEAT_AGE,
                m -> source.forEachThread(
                        (t, alive, ageMs) -> m.record(ageMs, Attributes.of(NODE_ID, (long) nodeId, THREAD, t))));
        counter(BrokerInstruments.THREAD_RESTART_COUNT, m -> m.record(source.restarts(), node));
        counter(BrokerInstruments.THREAD_STUCK_COUNT, m -> m.record(source.stucks(), node));
    }

    /**
     * Registers {@code stellflow.coordinator.group.count} ({@code coordinator.type} "group"): {@code
     * groups} is read at collection time on the exporter's thread, so it must be thread-safe and cheap
     * (the group runtime's {@code loadedEntryCount}, which sums counts its threads published). Once.
     */
    public void registerGroupCoordinatorGauge(LongSupplier groups) {
        gauge(BrokerInstruments.COORDINATOR_GROUP_COUNT, m -> m.record(groups.getAsLong(), groupCoordinator));
    }

    /**
     * Registers {@code stellflow.log.producer_id.count} ({@code producerIds}: the producer-id entries
     * of every partition on this broker, bounded by {@code producer.id.max.per.broker}) and {@code
     * stellflow.coordinator.transactional_id.count} ({@code transactionalIds}: those of the
     * transaction coordinator, bounded by {@code transactional.id.max.per.broker}). Both are read at
     * collection time on the exporter's thread: thread-safe and cheap. Once.
     */
    public void registerProducerStateGauges(LongSupplier producerIds, LongSupplier transactionalIds) {
        gauge(BrokerInstruments.LOG_PRODUCER_ID_COUNT, m -> m.record(producerIds.getAsLong(), node));
        gauge(BrokerInstruments.COORDINATOR_TRANSACTIONAL_ID_COUNT, m -> m.record(transactionalIds.getAsLong(), node));
    }

    /** Registers the gauges (connection, queue depths, active segment size, log offsets). */
    public void registerGauges(GaugeSource source) {
        gauge(BrokerInstruments.CONNECTION_COUNT, m -> m.record(source.connections(), node));
        gauge(BrokerInstruments.REQUEST_QUEUE_DEPTH, m -> m.record(source.queuedRequests(), node));
        gauge(BrokerInstruments.RESPONSE_QUEUE_DEPTH, m -> m.record(source.queuedResponses(), node));
        gauge(BrokerInstruments.SEGMENT_ACTIVE_SIZE, m -> {
            long[] sum = new long[1];
            source.forEachPartition((t, p, start, end, active) -> sum[0] += active);
            m.record(sum[0], node);
        });
        gauge(BrokerInstruments.LOG_START_OFFSET, m -> offsets(source, m, true));
        gauge(BrokerInstruments.LOG_END_OFFSET, m -> offsets(source, m, false));
    }

    /**
     * Registers {@code stellflow.log.dir.offline}: per dir of {@code logDirs}, 1 while {@code offline}
     * says so, else 0. Read at collection time; {@code offline} must be safe on any thread.
     */
    public void registerLogDirGauge(List<Path> logDirs, Predicate<Path> offline) {
        List<Attributes> attrs = new ArrayList<>(logDirs.size());
        for (Path dir : logDirs) {
            attrs.add(Attributes.of(NODE_ID, (long) nodeId, LOG_DIR, dir.toString()));
        }
        gauge(BrokerInstruments.LOG_DIR_OFFLINE, m -> {
            for (int i = 0; i < logDirs.size(); i++) {
                m.record(offline.test(logDirs.get(i)) ? 1 : 0, attrs.get(i));
            }
        });
    }

    /**
     * Without {@code metrics.diagnostic.enabled}: one series per node, the sum over its partitions
     * (end minus start is the number of retained offsets); with it: one series per partition.
     */
    private void offsets(GaugeSource source, ObservableLongMeasurement m, boolean start) {
        if (diagnostic) {
            source.forEachPartition((t, p, s, e, active) ->
                    m.record(start ? s : e, Attributes.of(NODE_ID, (long) nodeId, TOPIC, t, PARTITION, (long) p)));
        } else {
            long[] sum = new long[1];
            source.forEachPartition((t, p, s, e, active) -> sum[0] += start ? s : e);
            m.record(sum[0], node);
        }
    }

    /** The {@code result} index of a response error code. */
    public static int result(short errorCode) {
        return switch (errorCode) {
            case Errors.NONE -> SUCCESS;
            case Errors.THROTTLED -> THROTTLED;
            default -> ERROR;
        };
    }

    static int apiIndex(short apiKey) {
        for (int i = 0; i < APIS.length; i++) {
            if (APIS[i] == apiKey) {
                return i;
            }
        }
        return UNKNOWN_API;
    }

    /** One answered request: {@code stellflow.request.count} and {@code stellflow.request.latency}. */
    public void request(short apiKey, int result, long latencyNanos) {
        int a = apiIndex(apiKey);
        requests[a][result].increment();
        requestLatency.record(latencyNanos / NANOS_PER_MS, requestAttrs[a][result], Context.root());
    }

    /** A request header or body that could not be decoded ({@code apiKey} -1 when unknown). */
    public void decodeError(short apiKey) {
        decodeErrors[apiIndex(apiKey)].increment();
    }

    /** One answered Produce request. */
    public void produceRequest(int result, long latencyNanos) {
        produceRequests[result].increment();
        produceLatency.record(latencyNanos / NANOS_PER_MS, resultAttrs[result], Context.root());
    }

    /** Bytes and records appended by Produce (counted once per appended partition batch set). */
    public void produced(long bytes, long records) {
        produceBytes.add(bytes);
        produceRecords.add(records);
    }

    /** One answered Fetch request with the records it returned. */
    public void fetchRequest(int result, long latencyNanos, long bytes, long records) {
        fetchRequests[result].increment();
        fetchBytes.add(bytes);
        fetchRecords.add(records);
        fetchLatency.record(latencyNanos / NANOS_PER_MS, resultAttrs[result], Context.root());
    }

    /** A parked Fetch answered after {@code waitNanos}; {@code hit} when an append satisfied it before maxWaitMs. */
    public void longPoll(boolean hit, long waitNanos) {
        if (hit) {
            longPollHits.increment();
        }
        longPollWait.record(waitNanos / NANOS_PER_MS, node, Context.root());
    }

    void append(long nanos, boolean leader) {
        appendLatency.record(nanos / NANOS_PER_MS, leader ? leaderAttrs : followerAttrs, Context.root());
    }

    void flush(long nanos) {
        flushLatency.record(nanos / NANOS_PER_MS, node, Context.root());
    }

    void segmentRolled() {
        segmentRolls.increment();
    }

    void logLoaded(long nanos) {
        recoveryTime.record(nanos / NANOS_PER_MS, node, Context.root());
    }

    /**
     * One answered OffsetCommit: {@code stellflow.offset.commit.count} and {@code
     * stellflow.offset.commit.latency} (from the request's arrival at its handler to the answer, the
     * wait for the HW included). {@code result} is {@link #result} of its first partition error.
     */
    public void offsetCommit(int result, long latencyNanos) {
        offsetCommits[result].increment();
        offsetCommitLatency.record(latencyNanos / NANOS_PER_MS, resultAttrs[result], Context.root());
    }

    /**
     * The group coordinator loaded a partition of {@code __consumer_offsets} in {@code durationMs}
     * (from becoming its leader to serving it). Once per load, on the runtime thread.
     */
    public void groupCoordinatorLoaded(long durationMs) {
        coordinatorLoadTime.record((double) durationMs, groupCoordinator, Context.root());
    }

    /**
     * A group moved to a new epoch (our protocol) or generation (classic) by a command or a timer,
     * never by a load ({@code stellflow.group.rebalance.count}). Any thread; no allocation.
     */
    public void groupRebalanced() {
        groupRebalances.increment();
    }

    void indexRebuilt() {
        indexRebuilds.increment();
    }

    /**
     * A leader append failed and its request was answered with an error ({@code
     * stellflow.log.write.error.count}; follower appends count there too, through {@link
     * ReplicationMetrics#logWriteFailed}). Any thread.
     */
    public void logWriteFailed() {
        logWriteErrors.increment();
    }

    /**
     * A periodic background task ({@code checkpoint}, {@code compaction}, {@code retention}, {@code
     * hw-checkpoint}) failed again after the first failure of its episode, which was logged ({@code
     * stellflow.log.background.error.count}, attribute {@code task}). Any thread; rare.
     */
    public void backgroundTaskFailedAgain(String task) {
        backgroundErrors.computeIfAbsent(task, t -> new LongAdder()).increment();
    }

    /** The count of {@link #backgroundTaskFailedAgain} for {@code task} (tests, diagnostics). */
    public long backgroundTaskErrors(String task) {
        LongAdder n = backgroundErrors.get(task);
        return n == null ? 0 : n.sum();
    }

    void segmentsDeleted(int count) {
        segmentsDeleted.add(count);
    }

    void quarantined(int segments, long bytes) {
        segmentsQuarantined.add(segments);
        bytesQuarantined.add(bytes);
    }

    /** The storage hooks of every log of this broker (shared instruments, no topic or partition). */
    public StorageMetrics storage() {
        return new StorageMetrics(this);
    }

    /**
     * The replication hooks and gauges of this broker (one instance, created with the other
     * instruments; its gauges need {@link ReplicaTelemetry#registerGauges}).
     */
    public ReplicaTelemetry replication() {
        return replication;
    }

    /** The compression counters of this broker (validation, recompression, Fetch v0). */
    public CompressionTelemetry compression() {
        return compression;
    }

    /** Stops the callbacks (the provider is closed by its owner). */
    void close() {
        callbacks.close();
    }

    private void byResult(ObservableLongMeasurement m, LongAdder[] byResult) {
        for (int r = 0; r < RESULTS.length; r++) {
            m.record(byResult[r].sum(), resultAttrs[r]);
        }
    }

    private void counter(Instrument i, Consumer<ObservableLongMeasurement> callback) {
        callbacks.counter(i, callback);
    }

    private void gauge(Instrument i, Consumer<ObservableLongMeasurement> callback) {
        callbacks.gauge(i, callback);
    }

    private DoubleHistogram histogram(Instrument i) {
        return i.latencyHistogram(meter);
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }
}
