package io.stellflow.broker;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.BrokerLifecycle;
import io.stellflow.broker.cluster.ProducerIdBlocks;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.cluster.ReplicaStateListener;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.ClusterConfig;
import io.stellflow.broker.config.GroupCoordinatorConfig;
import io.stellflow.broker.config.Listener;
import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.CoordinatorRuntimeConfig;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.group.GroupShard;
import io.stellflow.broker.group.TopicPartitionCounts;
import io.stellflow.broker.handler.BrokerEndpoint;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.QuietTimer;
import io.stellflow.broker.network.RequestDispatcher;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.replication.IsrManager;
import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.broker.topic.DiskFullRecovery;
import io.stellflow.broker.topic.LogDirFailures;
import io.stellflow.broker.transaction.BrokerMarkerWriter;
import io.stellflow.broker.transaction.TransactionCoordinator;
import io.stellflow.broker.transaction.TransactionMarkerWriter;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.server.common.config.ListenPorts;
import io.stellflow.storage.LogManager;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Stellflow broker, the handle tests and tools hold: {@link #start} assembles and starts it, then
 * it serves the data-plane APIs (ApiVersions, Metadata, Produce, Fetch, ListOffsets, CreateTopic,
 * DeleteTopic; OffsetForLeaderEpoch between brokers) and the group APIs (FindCoordinator,
 * OffsetCommit, OffsetFetch, JoinGroup, SyncGroup, Heartbeat, ConsumerGroupHeartbeat and the group
 * admin APIs, served by the group coordinator's runtime on {@code __consumer_offsets}) until {@link
 * #close}. {@link StellflowMain} runs
 * one in the foreground.
 *
 * <p>Parts: the process role's {@link BrokerAssembly} (log dir locks, {@code meta.properties}, the
 * embedded controller in combined mode, the logs, replica fetchers, {@link ReplicaManager} and
 * control-plane client), the {@link BrokerListener} (Netty bootstrap and connections), the request
 * pool, the append agents, the timer wheel, the API handlers ({@link BrokerApis}), {@link
 * LeaderReplicationTasks} (ISR manager, HW checkpoints), the cluster membership ({@link
 * BrokerLifecycle}) and the gauges ({@link BrokerGauges}).
 *
 * <p>Roles ({@link ClusterConfig}): {@code process.roles=broker,controller}, the single-node default,
 * first starts an embedded one-voter {@link ControllerServer} (combined mode); {@code
 * process.roles=broker} joins the controllers of a cluster. Either way the broker registers with the
 * controllers, follows their committed metadata into a {@link ReplicaManager} (the source of truth
 * for topics, leaders and local logs), forwards CreateTopic/DeleteTopic to the active controller and
 * serves Produce/Fetch/ListOffsets only for the partitions it leads.
 *
 * <p>Storage: partitions over every {@code log.dirs} entry (a {@link LogManager}: the least loaded dir
 * gets a new partition; retention, compaction and checkpoints run periodically); the first dir holds
 * {@code meta.properties} (broker and cluster id).
 *
 * <p>Threads: one acceptor and {@code num.network.threads} Netty event loops (framing and socket I/O
 * only), {@code num.io.threads} request handler threads (decoding, file I/O of Fetch and metadata),
 * {@code num.append.agents} append agents (single writer per partition: validation and appends,
 * {@link AppendService}), one timer-wheel thread for parked Fetches, one {@code
 * sf-disk-full-recovery} thread ({@link DiskFullRecovery}), one {@code sf-log-dir-check} thread ({@link
 * LogDirFailures}: offline log dirs, retried partition creations), {@code group.coordinator.threads}
 * group coordinator threads ({@code sf-coordinator-__consumer_offsets-<i>}, {@link
 * CoordinatorRuntime}: the shards of the {@code __consumer_offsets} partitions led here), one
 * transaction coordinator thread and its sweeper ({@code sf-coordinator-__transaction_state-0}, {@code
 * sf-txn-sweeper}, {@link TransactionCoordinator}), one {@code sf-txn-markers} thread scheduling the
 * retries of marker writes ({@link BrokerMarkerWriter}; its broker-to-broker requests run on the
 * replica fetchers' event loop), and no thread per parked Fetch. The {@link ThreadWatchdog} ({@code sf-watchdog}) watches the append
 * agents, replica fetchers, timer, disk-full recovery, log dir check, HW checkpoint, group
 * coordinator and controller heartbeat threads ({@code
 * broker.thread.stall.timeout.ms}): a thread that ended is restarted, and while one is stuck the
 * broker asks the controller to fence it.
 *
 * <p>Telemetry ({@link BrokerTelemetry}): metrics of {@code docs/spec/metrics.md} on a Prometheus
 * endpoint (default 127.0.0.1:9464), over OTLP or not at all ({@code metrics.exporter}), with the
 * embedded controller's metrics on the same endpoint in combined mode; server spans
 * for traced requests with {@code tracing.enabled=true}; lifecycle log events {@code BROKER_STARTED}
 * and {@code BROKER_STOPPING}.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} may be called from any thread; {@link #close}
 * is idempotent.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the log dir is unusable (for example
 * already locked by another broker), the embedded controller cannot start or the listener's port
 * cannot be bound (a {@link java.net.BindException}), {@link IllegalStateException} when the
 * requested transport is unavailable, and {@link IllegalArgumentException} for {@code
 * process.roles=controller}.
 */
public final class StellflowServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StellflowServer.class);

    /** Tick of the timer wheel for parked Fetches and acks=-1 Produces, ms: their timeouts' precision. */
    static final long TIMER_TICK_MS = 10;

    /** The implemented APIs, in the order ApiVersions lists them. */
    public static final List<Short> IMPLEMENTED_APIS = List.of(
            ApiKeys.API_VERSIONS,
            ApiKeys.METADATA,
            ApiKeys.PRODUCE,
            ApiKeys.FETCH,
            ApiKeys.LIST_OFFSETS,
            ApiKeys.OFFSET_COMMIT,
            ApiKeys.OFFSET_FETCH,
            ApiKeys.FIND_COORDINATOR,
            ApiKeys.HEARTBEAT,
            ApiKeys.JOIN_GROUP,
            ApiKeys.SYNC_GROUP,
            ApiKeys.INIT_PRODUCER_ID,
            ApiKeys.BEGIN_TRANSACTION,
            ApiKeys.END_TRANSACTION,
            ApiKeys.CONSUMER_GROUP_HEARTBEAT,
            ApiKeys.LIST_GROUPS,
            ApiKeys.DESCRIBE_GROUPS,
            ApiKeys.DELETE_GROUPS,
            ApiKeys.OFFSET_DELETE,
            ApiKeys.OFFSET_HISTORY,
            ApiKeys.DESCRIBE_LOG_DIRS,
            ApiKeys.DELETE_RECORDS,
            ApiKeys.DESCRIBE_BROKER_CONFIGS,
            ApiKeys.REGISTER_TXN_PARTITION,
            ApiKeys.WRITE_TXN_MARKERS,
            ApiKeys.TXN_OFFSET_COMMIT,
            ApiKeys.LIST_TRANSACTIONS,
            ApiKeys.DESCRIBE_TRANSACTIONS,
            ApiKeys.DESCRIBE_PRODUCERS,
            ApiKeys.FORWARD_STATUS,
            ApiKeys.CREATE_TOPIC,
            ApiKeys.DELETE_TOPIC,
            ApiKeys.DESCRIBE_CONTROLLERS,
            ApiKeys.OFFSET_FOR_LEADER_EPOCH);

    private final BrokerConfig config;
    private final BrokerAssembly parts;
    private final ExecutorService requestPool;
    private final BrokerListener listener;
    private final AppendService appends;
    private final QuietTimer timer;
    private final BrokerTelemetry telemetry;
    private final ThreadWatchdog watchdog;
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile BrokerEndpoint endpoint;
    /** The cluster id of {@code meta.properties} (or {@code cluster.id}); null until known in a new broker's dir. */
    private volatile String clusterId;

    /** The API handlers' shared resources (topic creation, producer ids, marker retries); built in {@link #bind}. */
    private final BrokerApis apis;
    /** The group coordinator's runtime ({@code __consumer_offsets}); null until {@link #startReplication}. */
    private CoordinatorRuntime<GroupShard> groupRuntime;
    /** The transaction coordinator ({@code __transaction_state}); null until {@link #startReplication}. */
    private TransactionCoordinator txnCoordinator;

    private volatile boolean closing;

    private volatile BrokerLifecycle lifecycle;
    /** Completes when {@link #joinCluster} returns (joined or gave up waiting); gates CreateTopic. */
    private final CompletableFuture<Void> joined = new CompletableFuture<>();
    /** ISR shrink/expand and HW checkpoints of the led partitions; null until {@link #startReplication}. */
    private LeaderReplicationTasks replication;
    /** Recovers partitions failed by a full disk in place; null until started, or when disabled. */
    private DiskFullRecovery diskFullRecovery;
    /** Takes failed log dirs offline and keeps new partitions off them; null until started. */
    private LogDirFailures logDirFailures;

    private StellflowServer(BrokerConfig config, BrokerAssembly parts, Transport transport, BrokerTelemetry telemetry) {
        this.config = config;
        this.telemetry = telemetry;
        this.parts = parts;
        this.clusterId = parts.clusterId();
        this.requestPool =
                Executors.newFixedThreadPool(config.numIoThreads(), new DefaultThreadFactory("sf-request", false));
        this.listener = new BrokerListener(config, transport);
        this.appends = config.numAppendAgents() == 0
                ? null
                : new AppendService(
                        config.numAppendAgents(),
                        config.appendIdleStrategy(),
                        config.appendQueueCapacity(),
                        config.queuedMaxRequestBytes(),
                        config.messageMaxBytes(),
                        telemetry.metrics(),
                        config.compressionMaxDecompressedBytes());
        // Deadlines rounded up to 10 ms: long-poll and acks=-1 timeouts (SDKs: 500 ms and 30 s) fire
        // at most one tick late. The timer's thread sleeps until the earliest deadline, and while
        // nothing is pending it sleeps: Netty's HashedWheelTimer woke every tick (1 ms ticks were 6.7%
        // of the broker's CPU samples in the 1 KiB produce profile, commit a5e0b2c; 10 ms ticks still
        // 1.2% of a core idle and about a tenth of a compressed produce's broker CPU, issue #21).
        // Completions (appends, HW moves) never wait for a tick.
        this.timer = new QuietTimer(new DefaultThreadFactory("sf-timer", true), TIMER_TICK_MS);
        this.apis = new BrokerApis(config, parts, telemetry, requestPool, appends, timer);
        this.watchdog = new ThreadWatchdog(config.threadStallTimeoutMs(), System::nanoTime);
        if (appends != null) {
            appends.start();
            appends.watch(watchdog);
        }
        // A probe on the wheel's thread: a timer task that blocks (a completion that waits) stalls
        // every parked Fetch and acks=-1 Produce. The timer cannot replace a dead thread.
        watchdog.watchExecutor(
                "sf-timer",
                "QuietTimer",
                task -> timer.newTimeout(t -> task.run(), 0, TimeUnit.MILLISECONDS),
                false,
                () -> closing);
        parts.fetchers().watch(watchdog);
        telemetry.metrics().registerThreadGauges(watchdog);
        watchdog.start();
    }

    /**
     * Locks and opens the log dirs, starts the embedded controller in combined mode, binds the
     * listener, joins the cluster and starts serving.
     *
     * @throws IOException when the log dir cannot be locked, read or written
     */
    public static StellflowServer start(BrokerConfig config) throws IOException {
        return start(config, null);
    }

    /**
     * As {@link #start(BrokerConfig)}; with {@code tracing.enabled=true} spans go to {@code
     * spanExporter} instead of OTLP (tests pass an in-memory exporter). Null = configured exporter.
     *
     * @throws IOException when the log dir cannot be locked, read or written
     */
    public static StellflowServer start(BrokerConfig config, SpanExporter spanExporter) throws IOException {
        if (!config.unknownKeys().isEmpty()) {
            LOG.warn("Ignoring unknown configuration keys: {}", config.unknownKeys());
        }
        if (!config.cluster().isBroker()) {
            throw new IllegalArgumentException("process.roles=controller runs no broker: start a ControllerNode");
        }
        Transport transport = Transport.select(config.transport());
        BrokerTelemetry telemetry = null;
        BrokerAssembly parts = null;
        StellflowServer server = null;
        try {
            telemetry = BrokerTelemetry.create(config.telemetry(), config.brokerId(), spanExporter);
            parts = BrokerAssembly.open(config, transport, telemetry);
            server = new StellflowServer(config, parts, transport, telemetry);
            server.startReplication();
            server.bind();
            server.joinCluster(config.logDirs().get(0), parts.newMetaProperties());
            server.logStarted();
            return server;
        } catch (IOException | RuntimeException e) {
            if (server != null) {
                server.close();
            } else {
                if (parts != null) {
                    parts.close();
                }
                if (telemetry != null) {
                    telemetry.close();
                }
            }
            throw e;
        }
    }

    /**
     * The start error of a data listener that cannot be bound: the key, its value, the system's reason
     * and what to do. Netty's epoll and io_uring say only {@code bind(..) failed: Address already in
     * use}, without the address.
     */
    static ConfigException listenerUnusable(Listener listener, IOException e) {
        return ListenPorts.unusable("listeners", listener.toString(), listener.host(), listener.port(), e);
    }

    /**
     * Leader-side replication of a cluster broker, before the first metadata arrives: the replica
     * manager's settings ({@code min.insync.replicas}), the ISR manager ({@code
     * replica.lag.time.max.ms}) and the periodic HW checkpoint ({@code
     * replica.high.watermark.checkpoint.interval.ms}); and the in-place recovery of partitions
     * failed by a full disk ({@code log.dir.failure.retry.ms}, {@link DiskFullRecovery}).
     */
    private void startReplication() {
        ReplicaManager replicas = parts.replicas();
        ControllerClient client = parts.client();
        LongSupplier brokerEpoch = () -> {
            BrokerLifecycle l = lifecycle;
            return l == null ? -1L : l.brokerEpoch();
        };
        parts.fetchers().brokerEpoch(brokerEpoch);
        IsrManager isrManager = new IsrManager(
                config.brokerId(),
                client::alterPartition,
                brokerEpoch,
                replicas::forEachHostedPartition,
                config.replicaLagTimeMaxMs(),
                System::currentTimeMillis);
        replicas.configureReplication(
                config.minInsyncReplicas(), telemetry.metrics().replication(), isrManager);
        replicas.topicThroughput(telemetry.metrics().topics());
        if (appends != null) {
            // A partition's append queue goes with its leadership (it became a follower or left).
            replicas.addReplicaStateListener(ReplicaStateListener.whenNotLeading(appends::remove));
        }
        // The group coordinator: a shard per __consumer_offsets partition led here, loaded when
        // leadership arrives (registered before the first metadata, so no transition is missed).
        GroupCoordinatorConfig groups = config.groupCoordinator();
        TopicPartitionCounts counts = topic -> {
            TopicImage t = replicas.image().topic(topic);
            return t == null ? -1 : t.partitions().size();
        };
        groupRuntime = new CoordinatorRuntime<>(
                OffsetsTopic.NAME,
                partition -> new GroupShard(groups.group(), counts, telemetry.metrics()::groupRebalanced),
                new CoordinatorRuntimeConfig(groups.threads(), groups.commitTimeoutMs(), groups.loadBufferBytes()),
                InstantSource.system(),
                (partition, records, durationMs) -> telemetry.metrics().groupCoordinatorLoaded(durationMs));
        telemetry.metrics().registerGroupCoordinatorGauge(groupRuntime::loadedEntryCount);
        groupRuntime.start();
        groupRuntime.watch(watchdog);
        replicas.addReplicaStateListener(groupRuntime);
        replicas.addImageListener(new GroupTopicChanges(groupRuntime));
        // The transaction coordinator, built the same way on __transaction_state (one runtime thread).
        txnCoordinator = new TransactionCoordinator(
                config.transactionCoordinator(),
                new CoordinatorRuntimeConfig(1, groups.commitTimeoutMs(), groups.loadBufferBytes()),
                InstantSource.system(),
                () -> {
                    TransactionStateTopic t = apis.txnStateTopic();
                    return t == null ? -1 : t.partitionCountCreating();
                },
                TransactionMarkerWriter.NOT_READY, // BrokerMarkerWriter from bind() (BrokerApis)
                () -> {
                    ProducerIdBlocks b = apis.producerIdBlocks();
                    return b == null ? ProducerIdBlocks.NONE : b.nextProducerId();
                });
        txnCoordinator.start();
        telemetry
                .metrics()
                .registerProducerStateGauges(parts.logs().producerIds()::count, txnCoordinator::transactionalIds);
        txnCoordinator.runtime().watch(watchdog);
        replicas.addReplicaStateListener(txnCoordinator.runtime());
        replication = new LeaderReplicationTasks(
                isrManager,
                config.logDirs(),
                replicas::forEachHostedPartition,
                config.highWatermarkCheckpointIntervalMs(),
                InstantSource.system(),
                telemetry.metrics()::backgroundTaskFailedAgain);
        replication.start();
        replication.watch(watchdog);
        logDirFailures = new LogDirFailures(
                config.logDirs(),
                replicas::forEachHostedPartition,
                config.logConfig(),
                config.messageMaxBytes(),
                DiskFullRecovery.FreeSpace.SYSTEM,
                System::currentTimeMillis,
                replicas::retryUnopened,
                p -> parts.logs().get(p.topic(), p.partition()) == p.log());
        parts.logs().placementFilter(logDirFailures::canPlace);
        logDirFailures.start();
        logDirFailures.watch(watchdog);
        if (config.logDirFailureRetryMs() > 0) {
            diskFullRecovery = new DiskFullRecovery(
                    replicas::forEachHostedPartition,
                    config.logDirFailureRetryMs(),
                    config.messageMaxBytes(),
                    DiskFullRecovery.FreeSpace.SYSTEM,
                    System::currentTimeMillis);
            diskFullRecovery.start();
            diskFullRecovery.watch(watchdog);
        }
    }

    /**
     * Registers with the controllers (with this broker's cluster id, if it has one: the controller
     * refuses another cluster's broker with INCONSISTENT_CLUSTER_ID) and waits (up to 30 s) to catch up
     * on metadata. A new broker writes {@code meta.properties} with the cluster's id.
     */
    private void joinCluster(Path logDir, boolean newMetaProperties) throws IOException {
        BrokerLifecycle l = new BrokerLifecycle(
                config.brokerId(),
                parts.client(),
                parts.replicas(),
                endpoint.host(),
                endpoint.port(),
                config.cluster().rack(),
                config.cluster().heartbeatIntervalMs(),
                clusterId);
        LogDirFailures dirs = logDirFailures;
        ReplicaManager replicas = parts.replicas();
        l.storageReport(hb -> {
            replicas.addFailedReplicas(hb);
            hb.setNoWritableLogDir(!dirs.hasWritableLogDir());
        });
        lifecycle = l;
        l.fenceWhile(watchdog::fenceWanted);
        try {
            if (!l.start(Duration.ofSeconds(30))) {
                LOG.warn("Broker {} has not caught up on metadata after 30 s; it keeps following", config.brokerId());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while joining the cluster", e);
        } finally {
            joined.complete(null);
        }
        l.watch(watchdog);
        ProducerIdBlocks ids = apis.producerIdBlocks();
        if (ids != null) {
            ids.fetchAhead(); // the first block, before the first InitProducerId needs it
        }
        if (newMetaProperties && l.clusterId() != null) {
            BrokerMetadata.create(logDir, config.brokerId(), l.clusterId());
            clusterId = l.clusterId();
            LOG.info("Broker {} joined cluster {} (meta.properties written)", config.brokerId(), clusterId);
        }
    }

    /** Builds the API handlers ({@link BrokerApis}), binds the listener and registers the gauges. */
    private void bind() throws IOException {
        ReplicaManager replicas = parts.replicas();
        Map<Short, ApiHandler> handlers = apis.build(
                groupRuntime,
                txnCoordinator,
                dir -> logDirFailures != null && logDirFailures.isOffline(dir),
                joined,
                () -> this.clusterId,
                () -> {
                    BrokerLifecycle l = lifecycle;
                    return l == null ? -1L : l.brokerEpoch();
                });
        RequestDispatcher dispatcher = new RequestDispatcher(handlers, telemetry.requests());

        int boundPort;
        try {
            boundPort = listener.bind(dispatcher, requestPool, appends != null && config.produceEventLoopHandoff());
        } catch (IOException e) {
            throw listenerUnusable(config.listener(), e);
        }
        endpoint = advertisedEndpoint(boundPort, clusterId);
        BrokerGauges.register(telemetry.metrics(), listener, replicas);
        telemetry.metrics().registerLogDirGauge(logDirFailures.logDirs(), logDirFailures::isOffline);
        telemetry.metrics().registerCapacityGauges(logDirFailures.logDirs(), BrokerGauges.capacity(replicas));
        LOG.info("Fetch log bytes: {}", listener.fetchPath());
    }

    /**
     * Logs {@code BROKER_STARTED} once the broker has joined the cluster, so the line carries the
     * cluster id a new broker only learns from the controllers (it said {@code clusterId=null} when
     * logged at bind time).
     */
    private void logStarted() {
        Listener configured = config.listener();
        LOG.info(
                "{} brokerId={} clusterId={} listener={} advertised={}:{} transport={} logDirs={} metricsPort={}",
                LogEvents.BROKER_STARTED,
                config.brokerId(),
                clusterId,
                new Listener(configured.securityProtocol(), configured.host(), listener.port()),
                endpoint.host(),
                endpoint.port(),
                listener.transport().type().configName(),
                config.logDirs(),
                telemetry.metricsPort());
    }

    private BrokerEndpoint advertisedEndpoint(int boundPort, String clusterId) {
        Listener advertised = config.advertisedListener();
        String host = advertised != null && !advertised.host().isEmpty()
                ? advertised.host()
                : config.listener().host();
        if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::")) {
            try {
                host = InetAddress.getLocalHost().getCanonicalHostName();
            } catch (UnknownHostException e) {
                host = "localhost";
            }
        }
        int port = advertised != null && advertised.port() > 0 ? advertised.port() : boundPort;
        return new BrokerEndpoint(config.brokerId(), host, port, clusterId);
    }

    /**
     * Payload bytes the open connections' frame decoders copied from read buffers ({@code [0]}) and
     * received straight into frame buffers ({@code [1]}), summed. Tests.
     */
    long[] framePayloadBytes() {
        return listener.framePayloadBytes();
    }

    /** The back-pressure state of the connection whose client end is {@code clientAddress}, or null. Tests. */
    BrokerListener.ConnectionState connectionState(InetSocketAddress clientAddress) {
        return listener.connectionState(clientAddress);
    }

    /** The partition logs over every log dir. Tests (placement). */
    LogManager logManager() {
        return parts.logs();
    }

    /** Produce record bytes queued for the append agents and not yet appended (0 without agents). Tests. */
    long queuedRequestBytes() {
        return appends == null ? 0 : appends.queuedBytes();
    }

    /** The append agents' service, or null with {@code num.append.agents=0}. Tests and diagnostics. */
    public AppendService appendService() {
        return appends;
    }

    /** The watchdog of the broker's worker threads. Tests and diagnostics. */
    public ThreadWatchdog watchdog() {
        return watchdog;
    }

    /**
     * Whether the broker holds producer ids (the block fetched at join has arrived, or a later one);
     * false before the broker joined. For tests that count the controller's commands: that fetch is
     * one, and it runs on its own thread after the join.
     */
    boolean holdsProducerIds() {
        ProducerIdBlocks ids = apis.producerIdBlocks();
        return ids != null && ids.holdsIds();
    }

    /** The bound Prometheus metrics port, or -1 when metrics are not served over HTTP. */
    public int metricsPort() {
        return telemetry.metricsPort();
    }

    /** The broker's telemetry (tests flush spans through it). */
    public BrokerTelemetry telemetry() {
        return telemetry;
    }

    /** The bound port (the ephemeral one when the listener asked for port 0). */
    public int port() {
        return listener.port();
    }

    /** The transport actually in use. */
    public Transport transport() {
        return listener.transport();
    }

    /** The transaction coordinator (null before the broker started replication). */
    public TransactionCoordinator transactionCoordinator() {
        return txnCoordinator;
    }

    /** The applied metadata and hosted partitions. */
    public ReplicaManager replicaManager() {
        return parts.replicas();
    }

    /** The embedded controller (combined mode), or null. */
    public ControllerServer controller() {
        return parts.controller();
    }

    /** The cluster membership (registration, heartbeats); null until {@link #start} joined. */
    public BrokerLifecycle lifecycle() {
        return lifecycle;
    }

    /** This broker's id. */
    public int brokerId() {
        return config.brokerId();
    }

    /** Blocks until {@link #close} has finished. */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    /**
     * Runs here the drains {@code shutdownNow} took off the request pool's queue: each is a
     * connection's {@link io.stellflow.broker.network.SerialExecutor} turn, whose requests own their
     * frames and would otherwise never run (nor release them).
     */
    private static void runDropped(List<Runnable> dropped) {
        for (Runnable r : dropped) {
            try {
                r.run();
            } catch (RuntimeException | Error e) {
                LOG.error("A request drain failed while the broker closed", e);
            }
        }
    }

    /**
     * Stops accepting, closes every connection, lets running requests finish (up to 10 s), stops the
     * event loops and closes every log cleanly. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        LOG.info("{} brokerId={}", LogEvents.BROKER_STOPPING, config.brokerId());
        try {
            BrokerLifecycle l = lifecycle;
            if (l != null) {
                l.close(); // want-fence first: the controller moves leadership away at once
            }
            watchdog.close(); // closing owners stop their threads on purpose from here on
            listener.stopAccepting();
            BrokerAssembly.closeQuietly(apis.brokerRequests()); // on the fetchers' event loop: closed first
            BrokerAssembly.closeQuietly(parts.fetchers()); // no follower append after this, before the logs close
            listener.closeConnections();
            requestPool.shutdown();
            try {
                if (!requestPool.awaitTermination(10, TimeUnit.SECONDS)) {
                    LOG.warn("Request handlers still busy after 10 s; closing the logs anyway");
                    runDropped(requestPool.shutdownNow());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                runDropped(requestPool.shutdownNow());
            }
            BrokerAssembly.closeQuietly(diskFullRecovery); // no reopen while the logs close
            BrokerAssembly.closeQuietly(logDirFailures); // no log creation retried while they close
            if (appends != null) {
                appends.close();
            }
            if (replication != null) {
                replication.close(); // after the appends: the last HW of every partition
            }
            AutoTopicCreation autoCreate = apis.autoCreate();
            if (autoCreate != null) {
                autoCreate.close();
            }
            AutoTopicCreation offsetsTopicCreation = apis.offsetsTopicCreation();
            if (offsetsTopicCreation != null) {
                offsetsTopicCreation.close();
            }
            if (groupRuntime != null) {
                groupRuntime.close(); // after the request pool: no command is submitted any more
            }
            BrokerAssembly.closeQuietly(apis.txnStateTopic());
            if (txnCoordinator != null) {
                txnCoordinator.close();
            }
            ScheduledExecutorService markerRetries = apis.markerRetries();
            if (markerRetries != null) {
                markerRetries.shutdownNow();
            }
            timer.stop();
            listener.close();
            telemetry.close();
            parts.close();
            LOG.info("BROKER_STOPPED brokerId={}", config.brokerId());
        } finally {
            closed.countDown();
        }
    }
}
