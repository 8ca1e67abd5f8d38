package io.stellflow.controller.server;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ActiveControllerRecord;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RegisterControllerRecord;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftPeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One controller: a voter of the Ratis metadata quorum ({@code controller.quorum.voters}) plus the
 * gRPC control plane ({@code controller.listener}). Hosted by its own process
 * ({@code process.roles=controller}) or beside a broker ({@code process.roles=broker,controller}).
 *
 * <p>Storage: {@code metadata.log.dir} holds the Ratis log and snapshots of this controller only.
 *
 * <p>Threads: Ratis's own threads (transport, log worker, state-machine updater), the gRPC server's
 * executor, one virtual thread per FollowMetadata stream, and one {@code controller-liveness} thread
 * that fences brokers whose session expired (only while active), gives leaderless partitions a leader
 * when one became eligible, rebalances leaders to preferred replicas every
 * {@code leader.imbalance.check.interval.seconds} (when {@code auto.leader.rebalance.enable}), and announces this controller when
 * it becomes leader: one entry with the cluster id (the first time: {@code cluster.id}, or a generated
 * one), its control-plane endpoint (when new) and an {@code ActiveControllerRecord}.
 *
 * <p>Thread-safety: all methods may be called from any thread; {@link #close} is idempotent.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the storage directory is unusable or a
 * port cannot be bound.
 */
public final class ControllerServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerServer.class);

    private final ControllerConfig config;
    private final ControllerMetrics metrics;
    private final RaftQuorum quorum;
    private final ControlPlane controlPlane;
    private final ScheduledExecutorService timer;
    private final String proposedClusterId;
    private Server grpc;
    private InetSocketAddress rpcAddress;
    private volatile boolean closed;

    private ControllerServer(ControllerConfig config, ControllerMetrics metrics) throws IOException {
        this.config = config;
        this.metrics = metrics;
        this.quorum = new RaftQuorum(config, metrics);
        this.proposedClusterId = config.clusterId() != null ? config.clusterId() : MetadataRecords.randomClusterId();
        this.controlPlane = new ControlPlane(config, quorum, metrics);
        this.controlPlane.leadershipChanged(); // nothing is served before this node's first announcement
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform()
                .name("controller-liveness-" + config.nodeId())
                .daemon()
                .unstarted(r));
    }

    /** Starts a controller that reports no metrics. */
    public static ControllerServer start(ControllerConfig config) throws IOException {
        return start(config, ControllerMetrics.NOOP);
    }

    /** Starts the control-plane gRPC server and the Ratis server (joins the quorum). */
    public static ControllerServer start(ControllerConfig config, ControllerMetrics metrics) throws IOException {
        ControllerServer s = new ControllerServer(config, metrics);
        try {
            s.startInternal();
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void startInternal() throws IOException {
        GrpcTransportLogs.install();
        grpc = NettyServerBuilder.forAddress(new InetSocketAddress(config.listenerHost(), config.listenerPort()))
                .addService(controlPlane.definition())
                .build()
                .start();
        rpcAddress = new InetSocketAddress(config.listenerHost(), grpc.getPort());
        quorum.start(new MetadataStateMachine.RoleListener() {
            @Override
            public void leaderChanged(RaftPeerId newLeader) {
                long term = quorum.currentTerm();
                metrics.epoch(term);
                metrics.active(false); // until leaderReady: a new leader first commits an entry of its term
                controlPlane.leadershipChanged();
                if (newLeader != null) {
                    boolean self = RaftQuorum.peerId(config.nodeId()).equals(newLeader);
                    if (self) {
                        metrics.electionWon(); // counted once per election, by the winner
                    }
                    // One line per leader change on every voter: who leads, in which term.
                    LOG.info(
                            "CONTROLLER_ELECTED node={} leader={} term={} self={}",
                            config.nodeId(),
                            RaftQuorum.nodeId(newLeader),
                            term,
                            self);
                }
            }

            @Override
            public void leaderReady() {
                controlPlane.becameActive();
                metrics.active(true);
                timer.execute(ControllerServer.this::announce);
            }
        });
        long checkMs = Math.max(50, Math.min(500, config.brokerSessionTimeoutMs() / 4));
        timer.scheduleWithFixedDelay(this::tick, checkMs, checkMs, TimeUnit.MILLISECONDS);
        if (config.autoLeaderRebalanceEnable()) {
            long everyS = config.leaderImbalanceCheckIntervalSeconds();
            timer.scheduleWithFixedDelay(this::rebalance, everyS, everyS, TimeUnit.SECONDS);
        }
        LOG.info(
                "CONTROLLER_STARTED node={} raft={} rpc={} voters={} dir={}",
                config.nodeId(),
                config.self().raftAddress(),
                rpcEndpoint(),
                config.voters(),
                config.metadataLogDir());
    }

    private void tick() {
        try {
            boolean active = quorum.isActive();
            // Ratis reports leader changes and readiness as events; a leader that steps down (cut off
            // from the majority) is also caught here within one tick.
            metrics.active(active && !closed);
            if (active && controlPlane.activationPending()) {
                announce();
            }
            controlPlane.checkLiveness();
            controlPlane.electOfflinePartitions();
        } catch (RuntimeException e) {
            LOG.warn("controller timer task failed", e);
        }
    }

    private void rebalance() {
        try {
            controlPlane.rebalanceLeaders();
        } catch (RuntimeException e) {
            LOG.warn("leader rebalance failed", e);
        }
    }

    /**
     * This controller's first command as leader, one entry: the cluster id when the image has none,
     * its control-plane endpoint when the image does not have it yet, and that it is the active
     * controller when the image names another. Nothing when the image already says all of it.
     */
    private void announce() {
        if (closed || !quorum.isActive()) {
            return;
        }
        long term = quorum.currentTerm();
        MetadataImage img = quorum.image();
        List<MetadataRecord> records = new ArrayList<>();
        if (img.clusterId() == null) {
            records.add(MetadataRecords.of(
                    ClusterIdRecord.newBuilder().setClusterId(proposedClusterId).build()));
        } else if (config.clusterId() != null && !config.clusterId().equals(img.clusterId())) {
            LOG.error(
                    "CLUSTER_ID_MISMATCH node={} configured cluster.id={} but the metadata log belongs to cluster {}",
                    config.nodeId(),
                    config.clusterId(),
                    img.clusterId());
        }
        BrokerEndpoint self = new BrokerEndpoint("CONTROLLER", rpcAddress.getHostString(), rpcAddress.getPort());
        if (!self.equals(img.controllers().get(config.nodeId()))) {
            records.add(MetadataRecords.of(RegisterControllerRecord.newBuilder()
                    .setControllerId(config.nodeId())
                    .setEndpoint(self.toProto())
                    .build()));
        }
        if (img.activeControllerId() != config.nodeId()) {
            records.add(MetadataRecords.of(ActiveControllerRecord.newBuilder()
                    .setControllerId(config.nodeId())
                    .build()));
        }
        if (records.isEmpty()) {
            activated(term);
            return;
        }
        RaftQuorum.Submitted s = quorum.submit(records, config.requestTimeoutMs());
        if (s.error() == ErrorCode.NONE) {
            activated(term);
            LOG.info(
                    "CONTROLLER_ACTIVE node={} term={} clusterId={} metadataOffset={}",
                    config.nodeId(),
                    quorum.currentTerm(),
                    quorum.image().clusterId(),
                    s.index());
        }
    }

    /**
     * The announcement made in {@code term} is committed (or had nothing to say): requests are served
     * from now on, unless leadership moved on meanwhile (a later term announces again).
     */
    private void activated(long term) {
        if (quorum.currentTerm() == term && quorum.isActive()) {
            controlPlane.activated();
        }
    }

    /** This controller's {@code node.id}. */
    public int nodeId() {
        return config.nodeId();
    }

    /** The bound control-plane address (the real port when {@code controller.listener} used port 0). */
    public InetSocketAddress rpcAddress() {
        return rpcAddress;
    }

    /** {@code host:port} this controller's Raft server listens on (its entry in the voters). */
    public String raftAddress() {
        return config.self().raftAddress();
    }

    /** {@code host:port} of {@link #rpcAddress()}, for {@code controller.quorum.bootstrap.servers}. */
    public String rpcEndpoint() {
        String host = rpcAddress.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + rpcAddress.getPort();
    }

    /**
     * The cluster id: the metadata log's once written, before that the one this controller would
     * write ({@code cluster.id}, or generated at start).
     */
    public String clusterId() {
        String id = quorum.image().clusterId();
        return id != null ? id : proposedClusterId;
    }

    /** Whether this node is the active controller (Raft leader, ready to commit). */
    public boolean isActive() {
        return quorum.isActive();
    }

    /** This controller's metadata state machine (for tests and diagnostics: snapshot load and apply counts). */
    public MetadataStateMachine stateMachine() {
        return quorum.stateMachine();
    }

    /** The latest image this controller applied (committed entries only). */
    public MetadataImage image() {
        return quorum.image();
    }

    /** Stops the control plane and the Ratis server (the storage stays for a restart). */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        controlPlane.close();
        timer.shutdownNow();
        if (grpc != null) {
            grpc.shutdownNow();
        }
        try {
            quorum.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("closing the Ratis server of controller {} failed", config.nodeId(), e);
        }
        if (grpc != null) {
            try {
                grpc.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        metrics.active(false);
        LOG.info("CONTROLLER_STOPPED node={}", config.nodeId());
    }
}
