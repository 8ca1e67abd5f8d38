package io.stellflow.controller;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterControllerRecord;
import io.stellflow.controller.server.ControlPlane;
import io.stellflow.controller.server.MetadataStateMachine;
import io.stellflow.controller.server.RaftQuorum;
import java.io.IOException;
import java.net.InetSocketAddress;
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
 * that fences brokers whose session expired (only while active) and announces this controller's
 * endpoint when it becomes leader.
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
    private Server grpc;
    private InetSocketAddress rpcAddress;
    private volatile boolean announced;
    private volatile boolean closed;

    private ControllerServer(ControllerConfig config, ControllerMetrics metrics) throws IOException {
        this.config = config;
        this.metrics = metrics;
        this.quorum = new RaftQuorum(config, metrics);
        this.controlPlane = new ControlPlane(config, quorum, metrics);
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
        grpc = NettyServerBuilder.forAddress(new InetSocketAddress(config.listenerHost(), config.listenerPort()))
                .addService(controlPlane.definition())
                .build()
                .start();
        rpcAddress = new InetSocketAddress(config.listenerHost(), grpc.getPort());
        quorum.start(new MetadataStateMachine.RoleListener() {
            @Override
            public void leaderChanged(RaftPeerId newLeader) {
                metrics.electionObserved();
                metrics.epoch(quorum.currentTerm());
                metrics.active(false);
                announced = false;
                if (newLeader != null) {
                    LOG.info(
                            "CONTROLLER_ELECTED node={} leader={} term={}",
                            config.nodeId(),
                            newLeader,
                            quorum.currentTerm());
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
            if (!announced && quorum.isActive()) {
                announce();
            }
            controlPlane.checkLiveness();
        } catch (RuntimeException e) {
            LOG.warn("controller timer task failed", e);
        }
    }

    /** Writes this controller's control-plane endpoint when the image does not have it yet. */
    private void announce() {
        if (closed || !quorum.isActive()) {
            return;
        }
        BrokerEndpoint self = new BrokerEndpoint("CONTROLLER", rpcAddress.getHostString(), rpcAddress.getPort());
        if (self.equals(quorum.image().controllers().get(config.nodeId()))) {
            announced = true;
            return;
        }
        RaftQuorum.Submitted s = quorum.submit(
                List.of(MetadataRecords.of(RegisterControllerRecord.newBuilder()
                        .setControllerId(config.nodeId())
                        .setEndpoint(self.toProto())
                        .build())),
                config.requestTimeoutMs());
        announced = s.error() == ErrorCode.NONE;
    }

    /** This controller's {@code node.id}. */
    public int nodeId() {
        return config.nodeId();
    }

    /** The bound control-plane address (the real port when {@code controller.listener} used port 0). */
    public InetSocketAddress rpcAddress() {
        return rpcAddress;
    }

    /** {@code host:port} of {@link #rpcAddress()}, for {@code controller.quorum.bootstrap.servers}. */
    public String rpcEndpoint() {
        String host = rpcAddress.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + rpcAddress.getPort();
    }

    /** Whether this node is the active controller (Raft leader, ready to commit). */
    public boolean isActive() {
        return quorum.isActive();
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
