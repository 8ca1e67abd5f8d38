package io.stellflow.controller;

import io.stellflow.controller.image.MetadataImage;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * One controller: a voter of the Ratis metadata quorum ({@code controller.quorum.voters}) plus the
 * gRPC control plane ({@code controller.listener}). Hosted by its own process
 * ({@code process.roles=controller}) or beside a broker ({@code process.roles=broker,controller}).
 *
 * <p>Storage: {@code metadata.log.dir} holds the Ratis log and snapshots of this controller only.
 *
 * <p>Thread-safety: all methods may be called from any thread; {@link #close} is idempotent.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the storage directory is unusable or a
 * port cannot be bound.
 */
public final class ControllerServer implements AutoCloseable {
    private final ControllerConfig config;

    private ControllerServer(ControllerConfig config) {
        this.config = config;
    }

    /** Starts a controller that reports no metrics. */
    public static ControllerServer start(ControllerConfig config) throws IOException {
        return start(config, ControllerMetrics.NOOP);
    }

    /** Starts the Ratis server (joins the quorum) and the control-plane gRPC server. */
    public static ControllerServer start(ControllerConfig config, ControllerMetrics metrics) throws IOException {
        throw new UnsupportedOperationException("ControllerServer lands in the next commit");
    }

    /** This controller's {@code node.id}. */
    public int nodeId() {
        return config.nodeId();
    }

    /** The bound control-plane address (the real port when {@code controller.listener} used port 0). */
    public InetSocketAddress rpcAddress() {
        throw new UnsupportedOperationException();
    }

    /** {@code host:port} of {@link #rpcAddress()}, for {@code controller.quorum.bootstrap.servers}. */
    public String rpcEndpoint() {
        throw new UnsupportedOperationException();
    }

    /** Whether this node is the active controller (Raft leader, ready to commit). */
    public boolean isActive() {
        throw new UnsupportedOperationException();
    }

    /** The latest image this controller applied (committed entries only). */
    public MetadataImage image() {
        throw new UnsupportedOperationException();
    }

    /** Stops the control plane and the Ratis server (the storage stays for a restart). */
    @Override
    public void close() {}
}
