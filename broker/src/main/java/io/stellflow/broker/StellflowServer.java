package io.stellflow.broker;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.uring.IoUring;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.BrokerLifecycle;
import io.stellflow.broker.cluster.ClusterMetadataHandler;
import io.stellflow.broker.cluster.HighWatermarkCheckpoint;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.cluster.ReplicaStateListener;
import io.stellflow.broker.cluster.TopicForwardingHandler;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.ClusterConfig;
import io.stellflow.broker.config.Listener;
import io.stellflow.broker.fetch.OutboundSizeEstimator;
import io.stellflow.broker.handler.ApiVersionsHandler;
import io.stellflow.broker.handler.BrokerEndpoint;
import io.stellflow.broker.handler.FetchHandler;
import io.stellflow.broker.handler.ListOffsetsHandler;
import io.stellflow.broker.handler.OffsetForLeaderEpochHandler;
import io.stellflow.broker.handler.ProduceHandler;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.ConnectionHandler;
import io.stellflow.broker.network.FetchResponseWriter;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestDispatcher;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.replication.IsrManager;
import io.stellflow.broker.replication.ReplicaFetcherManager;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.telemetry.ReplicaTelemetry;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.node.ControllerNode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.FrameDecoder;
import io.stellflow.protocol.FrameReadAllocator;
import io.stellflow.server.common.config.ConfigFiles;
import io.stellflow.storage.LogEnvironment;
import io.stellflow.storage.LogManager;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Stellflow broker: binds the listener and serves the data-plane APIs (ApiVersions, Metadata,
 * Produce, Fetch, ListOffsets, CreateTopic, DeleteTopic; OffsetForLeaderEpoch between brokers).
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
 * {@link AppendService}), one timer-wheel thread for parked Fetches, and no thread per parked Fetch.
 *
 * <p>Telemetry ({@link BrokerTelemetry}): metrics of {@code spec/metrics.md} on a Prometheus
 * endpoint (default 127.0.0.1:9464), over OTLP or not at all ({@code metrics.exporter}), with the
 * embedded controller's metrics on the same endpoint in combined mode; server spans
 * for traced requests with {@code tracing.enabled=true}; lifecycle log events {@code BROKER_STARTED}
 * and {@code BROKER_STOPPING}.
 *
 * <p>Thread-safety: {@link #start} and {@link #close} may be called from any thread; {@link #close}
 * is idempotent.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the log dir is unusable (for example
 * already locked by another broker) and {@link IllegalStateException} when the requested transport
 * is unavailable or the port cannot be bound.
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
            ApiKeys.CREATE_TOPIC,
            ApiKeys.DELETE_TOPIC,
            ApiKeys.OFFSET_FOR_LEADER_EPOCH);

    private final BrokerConfig config;
    private final List<LogDirLock> locks;
    private final ClusterParts cluster;
    private final ExecutorService requestPool;
    private final EventLoopGroup acceptorGroup;
    private final EventLoopGroup workerGroup;
    private final ChannelGroup channels =
            new DefaultChannelGroup("stellflow-connections", GlobalEventExecutor.INSTANCE);
    private final Transport transport;
    private final AppendService appends;
    private final HashedWheelTimer timer;
    private final BrokerTelemetry telemetry;
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile BrokerEndpoint endpoint;
    /** The cluster id of {@code meta.properties} (or {@code cluster.id}); null until known in a new broker's dir. */
    private volatile String clusterId;

    private AutoTopicCreation autoCreate;
    private Channel serverChannel;
    private boolean closing;

    /**
     * What a broker owns besides the data plane.
     *
     * @param controller the embedded controller (combined mode), or null
     * @param logs the partition logs
     * @param replicas the applied metadata and hosted partitions
     * @param client the control-plane client
     * @param fetchers the replica fetchers (follower side of replication)
     */
    private record ClusterParts(
            ControllerServer controller,
            LogManager logs,
            ReplicaManager replicas,
            ControllerClient client,
            ReplicaFetcherManager fetchers) {}

    private volatile BrokerLifecycle lifecycle;
    /** Completes when {@link #joinCluster} returns (joined or gave up waiting); gates CreateTopic. */
    private final CompletableFuture<Void> joined = new CompletableFuture<>();
    /** ISR shrink/expand of the led partitions; null until {@link #startReplication}. */
    private IsrManager isrManager;
    /** Writes the HW checkpoints periodically; null until {@link #startReplication}. */
    private ScheduledExecutorService highWatermarkCheckpointer;

    private StellflowServer(
            BrokerConfig config,
            List<LogDirLock> locks,
            ClusterParts cluster,
            Transport transport,
            BrokerTelemetry telemetry) {
        this.config = config;
        this.telemetry = telemetry;
        this.locks = locks;
        this.cluster = cluster;
        this.transport = transport;
        this.requestPool =
                Executors.newFixedThreadPool(config.numIoThreads(), new DefaultThreadFactory("sf-request", false));
        this.acceptorGroup = transport.newEventLoopGroup(1, new DefaultThreadFactory("sf-acceptor", false));
        this.workerGroup =
                transport.newEventLoopGroup(config.numNetworkThreads(), new DefaultThreadFactory("sf-network", false));
        this.appends = config.numAppendAgents() == 0
                ? null
                : new AppendService(
                        config.numAppendAgents(),
                        config.appendIdleStrategy(),
                        config.appendQueueCapacity(),
                        config.queuedMaxRequestBytes(),
                        config.messageMaxBytes(),
                        telemetry.metrics());
        // 10 ms ticks, 512 buckets: long-poll and acks=-1 timeouts (SDKs: 500 ms and 30 s) fire at most
        // one tick late. The wheel's thread wakes every tick whether or not anything is due; with 1 ms
        // ticks that was 6.7% of the broker's CPU samples in the 1 KiB produce profile
        // (profiles/20261201T134125Z-stellflow-produce-1KiB-cpu.html). Completions (appends, HW moves)
        // never wait for a tick.
        this.timer = new HashedWheelTimer(
                new DefaultThreadFactory("sf-timer", true), TIMER_TICK_MS, TimeUnit.MILLISECONDS, 512);
        if (appends != null) {
            appends.start();
        }
    }

    /**
     * Opens the log dir, reloads the topics, binds the listener and starts serving.
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
        ClusterConfig clusterConfig = config.cluster();
        if (!clusterConfig.isBroker()) {
            throw new IllegalArgumentException("process.roles=controller runs no broker: start a ControllerNode");
        }
        Path logDir = config.logDirs().get(0);
        Transport transport = Transport.select(config.transport());
        ControllerServer controller = null;
        List<LogDirLock> locks = null;
        LogManager logs = null;
        ControllerClient client = null;
        ReplicaFetcherManager fetchers = null;
        StellflowServer server = null;
        BrokerTelemetry telemetry = null;
        try {
            telemetry = BrokerTelemetry.create(config.telemetry(), config.brokerId(), spanExporter);
            LogEnvironment environment =
                    LogEnvironment.system().withMetrics(telemetry.metrics().storage());
            locks = LogDirLock.acquireAll(config.logDirs());
            // The metadata log owns the cluster id (a new broker's meta.properties is written once the
            // controller told it the id).
            BrokerMetadata meta = BrokerMetadata.read(logDir, config.brokerId(), config.clusterId());
            String clusterId = meta != null ? meta.clusterId() : config.clusterId();
            if (clusterConfig.isController()) {
                ControllerConfig cc = clusterConfig.controller();
                if (cc.clusterId() == null && clusterId != null) {
                    cc = cc.withClusterId(clusterId); // this node's data already belongs to a cluster
                }
                // Combined mode: the controller's instruments go through the broker's SDK and endpoint.
                controller = ControllerNode.startController(cc, telemetry.controllerMetrics());
            }
            // Retention and compaction stop below each partition's high watermark.
            AtomicReference<ReplicaManager> hosted = new AtomicReference<>();
            logs = LogManager.start(config.logManagerConfig(), config.logConfig(), environment, log -> {
                ReplicaManager r = hosted.get();
                return r == null ? log.logStartOffset() : r.highWatermarkOf(log);
            });
            // The fetchers look leader addresses up in the replica manager's latest image at
            // each connection attempt, so they may exist before it does.
            AtomicReference<ReplicaManager> replicasRef = new AtomicReference<>();
            fetchers = new ReplicaFetcherManager(
                    config.brokerId(),
                    config.replicaFetcher(),
                    transport,
                    ReplicaFetcherManager.addressesFrom(() -> replicasRef.get().image()),
                    telemetry.metrics().replication());
            ReplicaManager replicas =
                    new ReplicaManager(config.brokerId(), logs, config.logDirs(), config.logConfig(), fetchers);
            replicasRef.set(replicas);
            String bootstrap = clusterConfig.controllerBootstrapServers() != null
                    ? clusterConfig.controllerBootstrapServers()
                    : controller.rpcEndpoint();
            client = ControllerClient.builder(bootstrap).build();
            hosted.set(replicas);
            ClusterParts parts = new ClusterParts(controller, logs, replicas, client, fetchers);
            server = new StellflowServer(config, locks, parts, transport, telemetry);
            server.clusterId = clusterId;
            server.startReplication();
            server.bind(clusterId);
            server.joinCluster(logDir, meta == null);
            return server;
        } catch (IOException | RuntimeException e) {
            if (server != null) {
                server.close();
            } else {
                closeQuietly(fetchers);
                closeQuietly(logs);
                closeQuietly(client);
                if (locks != null) {
                    LogDirLock.releaseAll(locks);
                }
                closeQuietly(controller);
                if (telemetry != null) {
                    telemetry.close();
                }
            }
            throw e;
        }
    }

    /**
     * Leader-side replication of a cluster broker, before the first metadata arrives: the replica
     * manager's settings ({@code min.insync.replicas}), the ISR manager ({@code
     * replica.lag.time.max.ms}) and the periodic HW checkpoint ({@code
     * replica.high.watermark.checkpoint.interval.ms}).
     */
    private void startReplication() {
        ReplicaManager replicas = cluster.replicas();
        ControllerClient client = cluster.client();
        isrManager = new IsrManager(
                config.brokerId(),
                client::alterPartition,
                () -> {
                    BrokerLifecycle l = lifecycle;
                    return l == null ? -1L : l.brokerEpoch();
                },
                replicas::forEachHostedPartition,
                config.replicaLagTimeMaxMs(),
                System::currentTimeMillis);
        replicas.configureReplication(config.minInsyncReplicas(), replicationMetrics(), isrManager);
        if (appends != null) {
            // A partition's append queue goes with its leadership (it became a follower or left).
            replicas.addReplicaStateListener(ReplicaStateListener.whenNotLeading(appends::remove));
        }
        isrManager.start();
        highWatermarkCheckpointer =
                Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-hw-checkpoint", true));
        long intervalMs = config.highWatermarkCheckpointIntervalMs();
        highWatermarkCheckpointer.scheduleWithFixedDelay(
                this::writeHighWatermarkCheckpoints, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** The replication instruments ({@link ReplicaTelemetry} of the broker's metrics). */
    private ReplicationMetrics replicationMetrics() {
        return telemetry.metrics().replication();
    }

    private void writeHighWatermarkCheckpoints() {
        try {
            HighWatermarkCheckpoint.write(config.logDirs(), cluster.replicas()::forEachHostedPartition);
        } catch (RuntimeException e) {
            LOG.error("Writing the high watermark checkpoints failed", e);
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
                cluster.client(),
                cluster.replicas(),
                endpoint.host(),
                endpoint.port(),
                config.cluster().rack(),
                config.cluster().heartbeatIntervalMs(),
                clusterId);
        lifecycle = l;
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
        if (newMetaProperties && l.clusterId() != null) {
            BrokerMetadata.create(logDir, config.brokerId(), l.clusterId());
            clusterId = l.clusterId();
            LOG.info("Broker {} joined cluster {} (meta.properties written)", config.brokerId(), clusterId);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("Closing {} failed", c, e);
        }
    }

    private void bind(String clusterId) {
        Map<Short, ApiHandler> handlers = new LinkedHashMap<>();
        autoCreate = config.autoCreateTopicsEnable()
                ? new AutoTopicCreation(
                        cluster.client(),
                        cluster.replicas(),
                        config.numPartitions(),
                        config.cluster().defaultReplicationFactor())
                : null;
        PartitionRouter router = autoCreate != null ? autoCreate : cluster.replicas();
        handlers.put(
                ApiKeys.METADATA, new ClusterMetadataHandler(cluster.replicas(), () -> this.clusterId, autoCreate));
        handlers.put(
                ApiKeys.CREATE_TOPIC,
                TopicForwardingHandler.createTopic(
                        cluster.client(), cluster.replicas(), config.cluster().defaultReplicationFactor(), joined));
        handlers.put(
                ApiKeys.DELETE_TOPIC, TopicForwardingHandler.deleteTopic(cluster.client(), cluster.replicas(), joined));
        // Broker-to-broker: answered for the partitions led here (never auto-creates a topic).
        handlers.put(ApiKeys.OFFSET_FOR_LEADER_EPOCH, new OffsetForLeaderEpochHandler(cluster.replicas()));
        FetchHandler fetch = new FetchHandler(router, requestPool, config.fetchZeroCopy(), timer);
        ProduceHandler produce =
                new ProduceHandler(router, config.messageMaxBytes(), appends, telemetry.metrics(), timer);
        handlers.put(ApiKeys.PRODUCE, produce);
        handlers.put(ApiKeys.FETCH, fetch);
        handlers.put(ApiKeys.LIST_OFFSETS, new ListOffsetsHandler(router));
        Map<Short, Short> versions = Map.of(
                ApiKeys.PRODUCE,
                produce.maxVersion(),
                ApiKeys.FETCH,
                fetch.maxVersion(),
                ApiKeys.CREATE_TOPIC,
                handlers.get(ApiKeys.CREATE_TOPIC).maxVersion());
        handlers.put(ApiKeys.API_VERSIONS, new ApiVersionsHandler(IMPLEMENTED_APIS, versions));
        RequestDispatcher dispatcher = new RequestDispatcher(handlers, telemetry.requests());

        Listener listener = config.listener();
        InetSocketAddress bindAddress = listener.host().isEmpty()
                ? new InetSocketAddress(listener.port())
                : new InetSocketAddress(listener.host(), listener.port());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptorGroup, workerGroup)
                .channel(transport.serverChannelClass())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                // File regions count with their bytes toward the water marks (Netty counts them as 0).
                .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, OutboundSizeEstimator.INSTANCE)
                .childOption(
                        ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(
                                config.writeBufferLowWaterMarkBytes(), config.writeBufferHighWaterMarkBytes()))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        if (config.flushConsolidationFlushes() > 0) {
                            ch.pipeline()
                                    .addLast(
                                            "flushes",
                                            new FlushConsolidationHandler(config.flushConsolidationFlushes(), true));
                        }
                        // Reads of a frame spanning many reads go straight into its buffer (no copy).
                        FrameDecoder frames = FrameReadAllocator.readInto(ch, FrameDecoder.forRequests());
                        ch.pipeline()
                                .addLast("fetch-writer", FetchResponseWriter.INSTANCE)
                                .addLast("frames", frames)
                                .addLast(
                                        "requests",
                                        new ConnectionHandler(
                                                dispatcher,
                                                requestPool,
                                                appends != null && config.produceEventLoopHandoff()));
                    }
                });
        if (config.socketSendBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_SNDBUF, config.socketSendBufferBytes());
        }
        if (config.socketReceiveBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_RCVBUF, config.socketReceiveBufferBytes());
        }
        serverChannel = bootstrap.bind(bindAddress).syncUninterruptibly().channel();
        int boundPort = ((InetSocketAddress) serverChannel.localAddress()).getPort();
        endpoint = advertisedEndpoint(boundPort, clusterId);
        telemetry.metrics().registerGauges(new Gauges());
        telemetry.metrics().replication().registerGauges(cluster.replicas().gauges());
        LOG.info(
                "{} brokerId={} clusterId={} listener={} advertised={}:{} transport={} logDirs={} metricsPort={}",
                LogEvents.BROKER_STARTED,
                config.brokerId(),
                clusterId,
                new Listener(listener.securityProtocol(), listener.host(), boundPort),
                endpoint.host(),
                endpoint.port(),
                transport.type().configName(),
                config.logDirs(),
                telemetry.metricsPort());
        LOG.info("Fetch log bytes: {}", fetchPath());
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

    /** How Fetch sends log bytes with this configuration and transport (logged at start). */
    private String fetchPath() {
        if (!config.fetchZeroCopy()) {
            return "copied into the response buffer (fetch.zero.copy=false)";
        }
        return switch (transport.type()) {
            case NIO -> "zero-copy file regions (FileChannel.transferTo, sendfile)";
            case EPOLL -> "zero-copy file regions (sendfile)";
            case IO_URING ->
                IoUring.isSpliceSupported()
                        ? "zero-copy file regions (io_uring splice)"
                        : "file regions copied by Netty through a direct chunk buffer (no io_uring splice on this kernel)";
            case AUTO -> throw new IllegalStateException("unresolved transport");
        };
    }

    /**
     * Payload bytes the open connections' frame decoders copied from read buffers ({@code [0]}) and
     * received straight into frame buffers ({@code [1]}), summed; each read on its event loop. Tests.
     */
    long[] framePayloadBytes() {
        long[] sum = new long[2];
        for (Channel ch : channels) {
            FrameDecoder d = ch.pipeline().get(FrameDecoder.class);
            if (d != null) {
                long[] one = ch.eventLoop()
                        .submit(() -> new long[] {d.copiedPayloadBytes(), d.inPlacePayloadBytes()})
                        .syncUninterruptibly()
                        .getNow();
                sum[0] += one[0];
                sum[1] += one[1];
            }
        }
        return sum;
    }

    /**
     * One connection's back pressure as its event loop sees it: the {@link ReadGate} reasons holding
     * reads paused (0 = reading), whether the channel reads, its requests waiting for the pool, and
     * its unsent response bytes (as counted against the write-buffer water marks). Tests.
     */
    record ConnectionState(int pauseReasons, boolean autoRead, int pendingRequests, long unsentBytes) {}

    /** The state of the connection whose client end is {@code clientAddress}, or null when there is none. Tests. */
    ConnectionState connectionState(InetSocketAddress clientAddress) {
        for (Channel ch : channels) {
            // By port: the native transports' remote addresses need not equal the client's own.
            if (ch.remoteAddress() instanceof InetSocketAddress remote && remote.getPort() == clientAddress.getPort()) {
                return ch.eventLoop()
                        .submit(() -> {
                            ConnectionHandler h = ch.pipeline().get(ConnectionHandler.class);
                            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
                            return new ConnectionState(
                                    h == null ? 0 : h.gate().reasons(),
                                    ch.config().isAutoRead(),
                                    h == null ? 0 : h.pendingRequests(),
                                    out == null ? 0 : out.totalPendingWriteBytes());
                        })
                        .syncUninterruptibly()
                        .getNow();
            }
        }
        return null;
    }

    /** The partition logs over every log dir. Tests (placement). */
    LogManager logManager() {
        return cluster.logs();
    }

    /** Produce record bytes queued for the append agents and not yet appended (0 without agents). Tests. */
    long queuedRequestBytes() {
        return appends == null ? 0 : appends.queuedBytes();
    }

    /** The append agents' service, or null with {@code num.append.agents=0}. Tests and diagnostics. */
    public AppendService appendService() {
        return appends;
    }

    /** What the gauges read at collection time: connections, queues and partition logs. */
    private final class Gauges implements BrokerMetrics.GaugeSource {
        @Override
        public long connections() {
            return channels.size();
        }

        @Override
        public long queuedRequests() {
            long n = 0;
            for (Channel ch : channels) {
                ConnectionHandler h = ch.pipeline().get(ConnectionHandler.class);
                if (h != null) {
                    n += h.pendingRequests();
                }
            }
            return n;
        }

        @Override
        public long queuedResponses() {
            long n = 0;
            for (Channel ch : channels) {
                // A racy read of the flushed-entry count from the exporter's thread: a gauge only.
                ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
                if (out != null) {
                    n += out.size();
                }
            }
            return n;
        }

        @Override
        public void forEachPartition(BrokerMetrics.PartitionVisitor visitor) {
            cluster.replicas().forEachHostedPartition(p -> visit(visitor, p));
        }

        private static void visit(BrokerMetrics.PartitionVisitor visitor, Partition p) {
            visitor.partition(
                    p.topic(),
                    p.partition(),
                    p.logStartOffset(),
                    p.logEndOffset(),
                    p.log().activeSegmentSizeBytes());
        }
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
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** The transport actually in use. */
    public Transport transport() {
        return transport;
    }

    /** The applied metadata and hosted partitions. */
    public ReplicaManager replicaManager() {
        return cluster.replicas();
    }

    /** The embedded controller (combined mode), or null. */
    public ControllerServer controller() {
        return cluster.controller();
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
            if (serverChannel != null) {
                serverChannel.close().syncUninterruptibly();
            }
            closeQuietly(cluster.fetchers()); // no follower append after this, before the logs close
            channels.close().awaitUninterruptibly();
            requestPool.shutdown();
            try {
                if (!requestPool.awaitTermination(10, TimeUnit.SECONDS)) {
                    LOG.warn("Request handlers still busy after 10 s; closing the logs anyway");
                    requestPool.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                requestPool.shutdownNow();
            }
            if (appends != null) {
                appends.close();
            }
            if (isrManager != null) {
                isrManager.close();
            }
            if (highWatermarkCheckpointer != null) {
                highWatermarkCheckpointer.shutdownNow();
                try {
                    highWatermarkCheckpointer.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                writeHighWatermarkCheckpoints(); // clean shutdown: the last HW of every partition
            }
            if (autoCreate != null) {
                autoCreate.close();
            }
            timer.stop();
            acceptorGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            telemetry.close();
            closeQuietly(cluster.logs());
            closeQuietly(cluster.client());
            LogDirLock.releaseAll(locks);
            closeQuietly(cluster.controller());
            LOG.info("BROKER_STOPPED brokerId={}", config.brokerId());
        } finally {
            closed.countDown();
        }
    }

    /**
     * Runs the broker in the foreground until SIGTERM or SIGINT. {@code args[0]} is the properties
     * file. Exit code 2 for a bad configuration, 1 when the broker cannot start.
     */
    public static void main(String[] args) throws InterruptedException {
        BrokerConfig config = ConfigFiles.parseOrExit(
                args, "stellflow-server.sh <server.properties>", "BROKER", LOG, BrokerConfig::fromProperties);
        if (!config.cluster().isBroker()) {
            ControllerNode.run(
                    new ControllerNode.Config(config.cluster().controller(), config.telemetry(), config.unknownKeys()));
            return;
        }
        StellflowServer server;
        try {
            server = start(config);
        } catch (IOException | RuntimeException e) {
            LOG.error("BROKER_START_FAILED {}", e.getMessage(), e);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sf-shutdown"));
        server.awaitClosed();
    }
}
