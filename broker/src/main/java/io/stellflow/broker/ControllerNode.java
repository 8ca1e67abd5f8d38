package io.stellflow.broker;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.ClusterConfig;
import io.stellflow.broker.config.ConfigException;
import io.stellflow.broker.telemetry.ControllerTelemetry;
import io.stellflow.broker.telemetry.MetricsPipeline;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerServer;
import java.io.IOException;
import java.net.BindException;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A controller-only node ({@code process.roles=controller}): a {@link ControllerServer} (Ratis voter
 * and control plane) with its metrics exported the way a broker exports its own ({@code
 * metrics.exporter}, {@code metrics.host}, {@code metrics.port} through the same {@link
 * MetricsPipeline}, resource {@code service.name=stellflow-controller}). Started by {@code
 * bin/stellflow-server.sh} when the file says {@code process.roles=controller}, and by {@code
 * bin/stellflow-controller.sh}, where {@code process.roles} may be left out.
 *
 * <p>Thread-safety: {@link #close} is idempotent and may be called from any thread.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the metadata dir is unusable or a
 * controller port cannot be bound, {@link IllegalArgumentException} when the configuration does not
 * describe a controller-only node. A metrics port that cannot be bound only logs {@code
 * METRICS_ENDPOINT_FAILED}.
 */
public final class ControllerNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerNode.class);

    private final MetricsPipeline pipeline;
    private final ControllerTelemetry metrics;
    private final ControllerServer controller;

    private ControllerNode(MetricsPipeline pipeline, ControllerTelemetry metrics, ControllerServer controller) {
        this.pipeline = pipeline;
        this.metrics = metrics;
        this.controller = controller;
    }

    /** Start attempts of a controller whose Raft port was picked, not configured. */
    private static final int PICKED_PORT_ATTEMPTS = 5;

    /**
     * Starts the controller of {@code cluster} with settings {@code config}. When its Raft port was
     * picked ({@link ClusterConfig#raftPortPicked()}: a one-node quorum without configured voters
     * and without a data-plane listener port to derive it from, e.g. listener port 0) and
     * another process took it between the pick and Ratis's bind, another free port is picked, up to
     * {@value #PICKED_PORT_ATTEMPTS} attempts; a configured port is never replaced.
     *
     * @throws BindException when the Raft port is taken (configured, or still after every attempt, or
     *     no other free port found: then with that {@link ConfigException} suppressed)
     * @throws IOException when the controller cannot start for another reason
     */
    static ControllerServer startController(ClusterConfig cluster, ControllerConfig config, ControllerMetrics metrics)
            throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return ControllerServer.start(config, metrics);
            } catch (BindException e) {
                if (!cluster.raftPortPicked() || attempt >= PICKED_PORT_ATTEMPTS) {
                    throw e;
                }
                LOG.warn(
                        "CONTROLLER_RAFT_PORT_TAKEN attempt={} {}; picking another free port", attempt, e.getMessage());
                try {
                    config = cluster.withPickedRaftPort(config);
                } catch (ConfigException noPort) {
                    e.addSuppressed(noPort);
                    throw e;
                }
            }
        }
    }

    /**
     * Starts the metrics exporter, then the controller.
     *
     * @throws IllegalArgumentException when {@code config} has a broker role
     * @throws IOException when the controller cannot start
     */
    public static ControllerNode start(BrokerConfig config) throws IOException {
        ClusterConfig cluster = config.cluster();
        if (cluster.isBroker() || !cluster.isController()) {
            throw new IllegalArgumentException("a controller node needs process.roles=controller");
        }
        if (!config.unknownKeys().isEmpty()) {
            LOG.warn("Ignoring unknown configuration keys: {}", config.unknownKeys());
        }
        MetricsPipeline pipeline = MetricsPipeline.start(config.telemetry(), "stellflow-controller", cluster.nodeId());
        ControllerTelemetry metrics =
                new ControllerTelemetry(pipeline.meter(ControllerTelemetry.SCOPE), cluster.nodeId());
        ControllerServer controller;
        try {
            controller = startController(cluster, cluster.controller(), metrics);
        } catch (IOException | RuntimeException e) {
            metrics.close();
            pipeline.close();
            throw e;
        }
        LOG.info(
                "CONTROLLER_NODE_STARTED nodeId={} controlPlane={} metricsPort={}",
                cluster.nodeId(),
                controller.rpcEndpoint(),
                pipeline.port());
        return new ControllerNode(pipeline, metrics, controller);
    }

    /** The controller. */
    public ControllerServer controller() {
        return controller;
    }

    /** The bound Prometheus port, or -1 when there is no endpoint. */
    public int metricsPort() {
        return pipeline.port();
    }

    /** Stops the controller, then its instruments and exporter. Idempotent (each part is). */
    @Override
    public void close() {
        controller.close();
        metrics.close();
        pipeline.close();
    }

    /**
     * {@code bin/stellflow-controller.sh <file>}: runs a controller-only node until SIGTERM or SIGINT.
     * {@code process.roles} defaults to {@code controller} here and must not name another role. Exit
     * code 2 for a bad configuration, 1 when the controller cannot start.
     */
    public static void main(String[] args) throws InterruptedException {
        run(StellflowServer.configOrExit(
                args, "stellflow-controller.sh <controller.properties>", "CONTROLLER", ControllerNode::controllerRole));
    }

    private static void controllerRole(Properties props) {
        String roles = props.getProperty("process.roles");
        if (roles == null) {
            props.setProperty("process.roles", "controller");
        } else if (!roles.trim().equals("controller")) {
            throw new ConfigException(
                    "process.roles", roles, "stellflow-controller.sh runs controllers only; use stellflow-server.sh");
        }
    }

    /** Runs the node of {@code config} in the foreground until SIGTERM or SIGINT. */
    static void run(BrokerConfig config) throws InterruptedException {
        ControllerNode node;
        try {
            node = start(config);
        } catch (IOException | RuntimeException e) {
            LOG.error("CONTROLLER_START_FAILED {}", e.getMessage(), e);
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            node.close();
                            stopped.countDown();
                        },
                        "sf-shutdown"));
        stopped.await();
    }
}
