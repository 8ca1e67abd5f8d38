package io.stellflow.broker;

import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.ClusterConfig;
import io.stellflow.broker.network.Transport;
import io.stellflow.broker.replication.ReplicaFetcherManager;
import io.stellflow.broker.telemetry.BrokerTelemetry;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.node.ControllerNode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.storage.LogEnvironment;
import io.stellflow.storage.LogManager;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a broker process owns below its data plane, assembled for its process role: the log dir
 * locks, {@code meta.properties} of the first log dir, the embedded controller (combined mode only),
 * the partition logs ({@link LogManager}), the replica fetchers, the {@link ReplicaManager} and the
 * control-plane client. {@code process.roles=controller} alone runs no broker ({@code ControllerNode}).
 *
 * <ul>
 *   <li>{@link #brokerOnly} ({@code process.roles=broker}): the client talks to the cluster's
 *       controllers ({@code controller.quorum.bootstrap.servers}).
 *   <li>{@link #combined} ({@code process.roles=broker,controller}, the single-node default): first
 *       starts the one-voter (or voter of a combined quorum) {@link ControllerServer} of this
 *       process, with this node's cluster id when its data already belongs to a cluster, its
 *       instruments on the broker's metrics endpoint; the client talks to it unless {@code
 *       controller.quorum.bootstrap.servers} is set.
 * </ul>
 *
 * <p>Order: the parts start in the order above; {@link #close} closes the fetchers (a no-op when the
 * stopping broker closed them first, before its connections and appends), the logs, the client,
 * the locks, then the controller.
 *
 * <p>Thread-safety: built and closed by the server's starting and closing thread; the parts are
 * thread-safe themselves.
 *
 * <p>Errors: {@link #open} throws {@link IOException} when a log dir cannot be locked, read or
 * written, or the embedded controller cannot start (a {@link java.net.BindException} for a taken
 * Raft port); whatever it had started is closed again before it throws.
 */
final class BrokerAssembly implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BrokerAssembly.class);

    private final List<LogDirLock> locks;
    private final BrokerMetadata metaProperties;
    private final String clusterId;
    private final ControllerServer controller;
    private final LogManager logs;
    private final ReplicaFetcherManager fetchers;
    private final ReplicaManager replicas;
    private final ControllerClient client;

    /** Starts the embedded controller of a combined node, or none. */
    @FunctionalInterface
    private interface ControllerRole {
        /**
         * @param clusterId the cluster id of this node's {@code meta.properties} (or {@code
         *     cluster.id}), null when not known yet
         * @return the started controller, or null when this process runs none
         */
        ControllerServer start(String clusterId) throws IOException;
    }

    private BrokerAssembly(
            List<LogDirLock> locks,
            BrokerMetadata metaProperties,
            String clusterId,
            ControllerServer controller,
            LogManager logs,
            ReplicaFetcherManager fetchers,
            ReplicaManager replicas,
            ControllerClient client) {
        this.locks = locks;
        this.metaProperties = metaProperties;
        this.clusterId = clusterId;
        this.controller = controller;
        this.logs = logs;
        this.fetchers = fetchers;
        this.replicas = replicas;
        this.client = client;
    }

    /** The assembly of {@code config}'s process role: {@link #combined} or {@link #brokerOnly}. */
    static BrokerAssembly open(BrokerConfig config, Transport transport, BrokerTelemetry telemetry) throws IOException {
        return config.cluster().isController()
                ? combined(config, transport, telemetry)
                : brokerOnly(config, transport, telemetry);
    }

    /** A broker that joins the controllers of {@code controller.quorum.bootstrap.servers}. */
    static BrokerAssembly brokerOnly(BrokerConfig config, Transport transport, BrokerTelemetry telemetry)
            throws IOException {
        return assemble(config, transport, telemetry, clusterId -> null);
    }

    /** A broker with the controller of this process started first (combined mode). */
    static BrokerAssembly combined(BrokerConfig config, Transport transport, BrokerTelemetry telemetry)
            throws IOException {
        return assemble(config, transport, telemetry, clusterId -> {
            ControllerConfig cc = config.cluster().controller();
            if (cc.clusterId() == null && clusterId != null) {
                cc = cc.withClusterId(clusterId); // this node's data already belongs to a cluster
            }
            // Combined mode: the controller's instruments go through the broker's SDK and endpoint.
            return ControllerNode.startController(cc, telemetry.controllerMetrics());
        });
    }

    private static BrokerAssembly assemble(
            BrokerConfig config, Transport transport, BrokerTelemetry telemetry, ControllerRole role)
            throws IOException {
        ClusterConfig clusterConfig = config.cluster();
        List<LogDirLock> locks = null;
        ControllerServer controller = null;
        LogManager logs = null;
        ReplicaFetcherManager fetchers = null;
        ControllerClient client = null;
        try {
            LogEnvironment environment = LogEnvironment.system()
                    .withMetrics(telemetry.metrics().storage())
                    .withProducerState(config.producerState());
            locks = LogDirLock.acquireAll(config.logDirs());
            // The metadata log owns the cluster id (a new broker's meta.properties is written once the
            // controller told it the id).
            BrokerMetadata meta = BrokerMetadata.read(config.logDirs().get(0), config.brokerId(), config.clusterId());
            String clusterId = meta != null ? meta.clusterId() : config.clusterId();
            controller = role.start(clusterId);
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
            return new BrokerAssembly(locks, meta, clusterId, controller, logs, fetchers, replicas, client);
        } catch (IOException | RuntimeException e) {
            closeQuietly(fetchers);
            closeQuietly(logs);
            closeQuietly(client);
            if (locks != null) {
                LogDirLock.releaseAll(locks);
            }
            closeQuietly(controller);
            throw e;
        }
    }

    /** Whether the first log dir had no {@code meta.properties} at start (a new broker's dir). */
    boolean newMetaProperties() {
        return metaProperties == null;
    }

    /** The cluster id of {@code meta.properties} (or {@code cluster.id}); null in a new broker's dir until it joins. */
    String clusterId() {
        return clusterId;
    }

    /** The embedded controller (combined mode), or null. */
    ControllerServer controller() {
        return controller;
    }

    /** The partition logs over every log dir. */
    LogManager logs() {
        return logs;
    }

    /** The replica fetchers (follower side of replication). */
    ReplicaFetcherManager fetchers() {
        return fetchers;
    }

    /** The applied metadata and hosted partitions. */
    ReplicaManager replicas() {
        return replicas;
    }

    /** The control-plane client. */
    ControllerClient client() {
        return client;
    }

    /** Closes the fetchers (idempotent), the logs, the client, the locks and the controller, logging failures. */
    @Override
    public void close() {
        closeQuietly(fetchers);
        closeQuietly(logs);
        closeQuietly(client);
        LogDirLock.releaseAll(locks);
        closeQuietly(controller);
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("Closing {} failed", c, e);
        }
    }
}
