package io.stellflow.broker;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.cluster.AutoTopicCreation;
import io.stellflow.broker.cluster.ClusterMetadataHandler;
import io.stellflow.broker.cluster.ProducerIdBlocks;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.cluster.TopicForwardingHandler;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.GroupCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.group.GroupShard;
import io.stellflow.broker.handler.ApiVersionsHandler;
import io.stellflow.broker.handler.DeleteRecordsHandler;
import io.stellflow.broker.handler.DescribeBrokerConfigsHandler;
import io.stellflow.broker.handler.DescribeControllersHandler;
import io.stellflow.broker.handler.DescribeLogDirsHandler;
import io.stellflow.broker.handler.FetchHandler;
import io.stellflow.broker.handler.FindCoordinatorHandler;
import io.stellflow.broker.handler.GroupHandlers;
import io.stellflow.broker.handler.ListOffsetsHandler;
import io.stellflow.broker.handler.OffsetForLeaderEpochHandler;
import io.stellflow.broker.handler.ProduceHandler;
import io.stellflow.broker.handler.TransactionAdminHandlers;
import io.stellflow.broker.handler.TransactionHandlers;
import io.stellflow.broker.handler.WriteTxnMarkersHandler;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.QuietTimer;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.broker.transaction.BrokerMarkerWriter;
import io.stellflow.broker.transaction.ForwardGate;
import io.stellflow.broker.transaction.LeaderMarkers;
import io.stellflow.broker.transaction.TransactionCoordinator;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.broker.transaction.TxnForwarder;
import io.stellflow.broker.transaction.TxnRegistrations;
import io.stellflow.controller.ControllerClient;
import io.stellflow.protocol.ApiKeys;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Builds the broker's API handler table ({@link #build}: handler by API key, the data-plane, topic,
 * transaction, group and admin APIs, then ApiVersions over them) and holds the resources those
 * handlers share with the broker: automatic topic creation, the creation of {@code
 * __consumer_offsets}, the producer id blocks, the {@code __transaction_state} topic, the
 * broker-to-broker transaction requests and the {@code sf-txn-markers} retry thread.
 *
 * <p>Thread-safety: {@link #build} runs once, on the start-up thread ({@link StellflowServer}'s
 * bind). The producer ids and the {@code __transaction_state} topic are volatile, read by the
 * transaction coordinator's thread and the broker while it runs; the others only by close().
 *
 * <p>Ownership: {@link StellflowServer#close} releases each resource at its place in the shutdown
 * order. Each field is set as soon as its resource exists (null until then), so a build that fails
 * halfway leaves close() what it had created.
 */
final class BrokerApis {
    private final BrokerConfig config;
    private final BrokerAssembly parts;
    private final BrokerTelemetry telemetry;
    private final ExecutorService requestPool;
    private final QuietTimer timer;
    /** The append agents, or null with {@code num.append.agents=0}. */
    private final AppendService appends;

    /** Null until {@link #build}, and with {@code auto.create.topics.enable=false}. */
    private AutoTopicCreation autoCreate;
    /**
     * Creates {@code __consumer_offsets} on the first group request (whatever auto.create.topics.enable
     * says); null until {@link #build}.
     */
    private AutoTopicCreation offsetsTopicCreation;
    /** The topic of the transaction coordinator, created on first use; null until {@link #build}. */
    private volatile TransactionStateTopic txnStateTopic;
    /** The producer ids of this broker; null until {@link #build}. */
    private volatile ProducerIdBlocks producerIdBlocks;
    /** Broker-to-broker transaction requests; null until {@link #build}. */
    private BrokerRequests brokerRequests;
    /** Retries of marker writes ({@code sf-txn-markers}); null until {@link #build}. */
    private ScheduledExecutorService markerRetries;

    /** @param appends the append agents, or null with {@code num.append.agents=0} */
    BrokerApis(
            BrokerConfig config,
            BrokerAssembly parts,
            BrokerTelemetry telemetry,
            ExecutorService requestPool,
            AppendService appends,
            QuietTimer timer) {
        this.config = config;
        this.parts = parts;
        this.telemetry = telemetry;
        this.requestPool = requestPool;
        this.appends = appends;
        this.timer = timer;
    }

    /**
     * Creates the handlers and the resources they share, and returns the table in insertion order,
     * ApiVersions last. Once, on the start-up thread.
     *
     * @param offlineLogDir whether a log dir is offline (DescribeLogDirs)
     * @param joined completes when the broker has joined the cluster; gates CreateTopic
     * @param clusterId this broker's cluster id, read per Metadata request (null until known)
     * @param brokerEpoch this broker's epoch, -1 before it registered
     */
    Map<Short, ApiHandler> build(
            CoordinatorRuntime<GroupShard> groupRuntime,
            TransactionCoordinator txnCoordinator,
            Predicate<Path> offlineLogDir,
            CompletableFuture<Void> joined,
            Supplier<String> clusterId,
            LongSupplier brokerEpoch) {
        ReplicaManager replicas = parts.replicas();
        ControllerClient client = parts.client();
        autoCreate = config.autoCreateTopicsEnable()
                ? new AutoTopicCreation(
                        client,
                        replicas,
                        config.numPartitions(),
                        config.cluster().defaultReplicationFactor())
                : null;
        PartitionRouter router = autoCreate != null ? autoCreate : replicas;
        Map<Short, ApiHandler> handlers = new LinkedHashMap<>();
        handlers.put(ApiKeys.METADATA, new ClusterMetadataHandler(replicas, clusterId, autoCreate));
        handlers.put(
                ApiKeys.CREATE_TOPIC,
                TopicForwardingHandler.createTopic(
                        client, replicas, config.cluster().defaultReplicationFactor(), joined));
        handlers.put(ApiKeys.DELETE_TOPIC, TopicForwardingHandler.deleteTopic(client, replicas, joined));
        handlers.put(ApiKeys.DESCRIBE_CONTROLLERS, new DescribeControllersHandler(client.bootstrapEndpoints()));
        producerIdBlocks = new ProducerIdBlocks(config.brokerId(), brokerEpoch, client::allocateProducerIds);
        txnStateTopic = TransactionStateTopic.create(client, replicas, config.transactionCoordinator());
        // Broker-to-broker: answered for the partitions led here (never auto-creates a topic).
        handlers.put(ApiKeys.OFFSET_FOR_LEADER_EPOCH, new OffsetForLeaderEpochHandler(replicas));
        TxnRegistrations registrations = putTransactionApis(handlers, groupRuntime, txnCoordinator);
        putPartitionAndAdminApis(handlers, router, registrations, txnCoordinator, offlineLogDir);
        putGroupApis(handlers, groupRuntime, txnCoordinator, registrations);
        handlers.put(ApiKeys.API_VERSIONS, apiVersions(handlers));
        return handlers;
    }

    /**
     * InitProducerId, Begin/EndTransaction, RegisterTxnPartition, ForwardStatus and WriteTxnMarkers;
     * gives the coordinator its marker writer. Returns the registrations the Produce and
     * TxnOffsetCommit paths check.
     */
    private TxnRegistrations putTransactionApis(
            Map<Short, ApiHandler> handlers,
            CoordinatorRuntime<GroupShard> groupRuntime,
            TransactionCoordinator txnCoordinator) {
        ReplicaManager replicas = parts.replicas();
        // Transactions end to end: the Produce path registers partitions at the coordinator, the
        // coordinator's markers go to the leaders (here through the append agents, elsewhere over
        // WriteTxnMarkers), both over one broker-to-broker client.
        brokerRequests = parts.fetchers().newBrokerRequests();
        BrokerRequests requests = brokerRequests;
        TxnForwarder forwarder = TxnForwarder.over(config.brokerId(), replicas::image, () -> requests);
        // A forwarded control request runs only while its client is still connected to the
        // forwarding broker (asked within the broker-to-broker request timeout).
        ForwardGate forwardGate = new ForwardGate(
                ForwardGate.checker(config.brokerId(), forwarder, () -> requests),
                requestPool,
                config.replicaFetcher().socketTimeoutMs(),
                ForwardGate.DEFAULT_MAX_WAITING_PER_ID);
        handlers.putAll(new TransactionHandlers(txnCoordinator, producerIdBlocks, forwarder, forwardGate).handlers());
        TxnRegistrations registrations =
                new TxnRegistrations(config.brokerId(), txnCoordinator, replicas::image, () -> requests);
        LeaderMarkers leaderMarkers =
                new LeaderMarkers(replicas, appends, timer, registrations, new TxnOffsetMarkers(groupRuntime));
        handlers.put(ApiKeys.WRITE_TXN_MARKERS, new WriteTxnMarkersHandler(leaderMarkers));
        markerRetries = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sf-txn-markers", true));
        txnCoordinator.markerWriter(new BrokerMarkerWriter(
                config.brokerId(),
                replicas::image,
                leaderMarkers,
                () -> requests,
                markerRetries,
                System::currentTimeMillis));
        return registrations;
    }

    /**
     * Produce, Fetch, ListOffsets and DeleteRecords (over {@code router}), the transaction admin APIs,
     * DescribeBrokerConfigs and DescribeLogDirs.
     */
    private void putPartitionAndAdminApis(
            Map<Short, ApiHandler> handlers,
            PartitionRouter router,
            TxnRegistrations registrations,
            TransactionCoordinator txnCoordinator,
            Predicate<Path> offlineLogDir) {
        FetchHandler fetch = new FetchHandler(router, requestPool, config.fetchZeroCopy(), timer);
        ProduceHandler produce = new ProduceHandler(
                router,
                config.messageMaxBytes(),
                appends,
                telemetry.metrics(),
                timer,
                config.compressionMaxDecompressedBytes(),
                registrations);
        handlers.put(ApiKeys.PRODUCE, produce);
        handlers.put(ApiKeys.FETCH, fetch);
        handlers.put(ApiKeys.LIST_OFFSETS, new ListOffsetsHandler(router));
        handlers.put(ApiKeys.DELETE_RECORDS, new DeleteRecordsHandler(router));
        handlers.putAll(new TransactionAdminHandlers(txnCoordinator, parts.replicas()).handlers());
        handlers.put(ApiKeys.DESCRIBE_BROKER_CONFIGS, new DescribeBrokerConfigsHandler(config));
        handlers.put(ApiKeys.DESCRIBE_LOG_DIRS, new DescribeLogDirsHandler(parts.logs(), offlineLogDir));
    }

    /**
     * FindCoordinator (groups and transactions) and the group APIs, over {@code __consumer_offsets},
     * which is created on the first group request.
     */
    private void putGroupApis(
            Map<Short, ApiHandler> handlers,
            CoordinatorRuntime<GroupShard> groupRuntime,
            TransactionCoordinator txnCoordinator,
            TxnRegistrations registrations) {
        ReplicaManager replicas = parts.replicas();
        GroupCoordinatorConfig groups = config.groupCoordinator();
        offsetsTopicCreation = new AutoTopicCreation(
                parts.client(),
                replicas,
                topic -> OffsetsTopic.spec(
                        groups.numPartitions(),
                        groups.replicationFactor(),
                        groups.segmentBytes(),
                        replicas.image().unfencedBrokerIds().size()));
        OffsetsTopic offsetsTopic = new OffsetsTopic(replicas, offsetsTopicCreation);
        handlers.put(
                ApiKeys.FIND_COORDINATOR,
                new FindCoordinatorHandler(
                        replicas, offsetsTopic, groupRuntime::status, new FindCoordinatorHandler.TransactionSide() {
                            @Override
                            public int partitionOf(String transactionalId) {
                                return txnCoordinator.partitionOf(transactionalId);
                            }

                            @Override
                            public short status(int partition) {
                                return txnCoordinator.runtime().status(partition);
                            }
                        }));
        handlers.putAll(new GroupHandlers(groupRuntime, offsetsTopic, telemetry.metrics(), registrations).handlers());
    }

    /** ApiVersions over {@code handlers}: each API's max version where it has versions above 0. */
    private static ApiVersionsHandler apiVersions(Map<Short, ApiHandler> handlers) {
        Map<Short, Short> versions = new LinkedHashMap<>();
        for (Map.Entry<Short, ApiHandler> h : handlers.entrySet()) {
            if (h.getValue().maxVersion() > 0) {
                versions.put(h.getKey(), h.getValue().maxVersion()); // Produce, Fetch, CreateTopic, offsets
            }
        }
        return new ApiVersionsHandler(StellflowServer.IMPLEMENTED_APIS, versions);
    }

    /** Automatic topic creation; null before {@link #build} or with {@code auto.create.topics.enable=false}. */
    AutoTopicCreation autoCreate() {
        return autoCreate;
    }

    /** The creation of {@code __consumer_offsets}; null before {@link #build}. */
    AutoTopicCreation offsetsTopicCreation() {
        return offsetsTopicCreation;
    }

    /** The topic of the transaction coordinator; null before {@link #build}. */
    TransactionStateTopic txnStateTopic() {
        return txnStateTopic;
    }

    /** The producer ids of this broker; null before {@link #build}. */
    ProducerIdBlocks producerIdBlocks() {
        return producerIdBlocks;
    }

    /** Broker-to-broker transaction requests; null before {@link #build}. */
    BrokerRequests brokerRequests() {
        return brokerRequests;
    }

    /** The {@code sf-txn-markers} retry thread; null before {@link #build}. */
    ScheduledExecutorService markerRetries() {
        return markerRetries;
    }
}
