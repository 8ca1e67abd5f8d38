package io.stellflow.controller.node;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.QuorumVoter;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.controller.telemetry.ControllerTelemetry;
import io.stellflow.server.common.config.ConfigException;
import io.stellflow.server.common.config.ConfigFiles;
import io.stellflow.server.common.config.ConfigValues;
import io.stellflow.server.common.config.ListenPorts;
import io.stellflow.server.common.telemetry.MetricsPipeline;
import io.stellflow.server.common.telemetry.TelemetryConfig;
import java.io.IOException;
import java.net.BindException;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A controller-only node ({@code process.roles=controller}): a {@link ControllerServer} (Ratis voter
 * and control plane) with its metrics exported the way a broker exports its own ({@code
 * metrics.exporter}, {@code metrics.host}, {@code metrics.port} through the same {@link
 * MetricsPipeline}, resource {@code service.name=stellflow-controller}). Started by {@code
 * bin/stellflow-controller.sh} ({@link #main}, where {@code process.roles} may be left out), and by
 * {@code bin/stellflow-server.sh} when the file says {@code process.roles=controller} (the broker's
 * main parses the file as a broker configuration and hands over a {@link Config}).
 *
 * <p>Thread-safety: {@link #close} is idempotent and may be called from any thread.
 *
 * <p>Errors: {@link #start} throws {@link IOException} when the metadata dir is unusable or a
 * controller port cannot be bound. A metrics port that cannot be bound only logs {@code
 * METRICS_ENDPOINT_FAILED}.
 */
public final class ControllerNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerNode.class);

    /** Start attempts of a controller whose Raft port was picked, not configured. */
    private static final int PICKED_PORT_ATTEMPTS = 5;

    /**
     * The broker defaults of {@code listeners} (its port) and {@code log.dirs}: a node's controller
     * derives its default voter, control plane and {@code metadata.log.dir} from them ({@link
     * ControllerConfig#forNode}); a controller-only node has neither key, so it derives them from these.
     */
    static final int DEFAULT_DATA_PLANE_PORT = 9092;

    static final Path DEFAULT_FIRST_LOG_DIR = Path.of("/tmp/stellflow-data");

    /**
     * What a controller-only node runs with.
     *
     * @param controller the controller settings ({@code node.id}, voters, listener, storage, ...)
     * @param telemetry the metrics settings ({@code metrics.*})
     * @param unknownKeys keys of the file that the node does not read (logged as a warning at start)
     */
    public record Config(ControllerConfig controller, TelemetryConfig telemetry, Set<String> unknownKeys) {
        /** Every key {@link #fromProperties} reads. */
        public static final Set<String> KEYS = union(ControllerConfig.KEYS, TelemetryConfig.KEYS, "process.roles");

        public Config {
            unknownKeys = Set.copyOf(unknownKeys);
        }

        /**
         * Reads and validates a controller-only node's file: {@code process.roles} (must be {@code
         * controller}), the {@link ControllerConfig} keys with the defaults a node derives ({@link
         * ControllerConfig#forNode} from the broker defaults {@code listeners=PLAINTEXT://127.0.0.1:9092}
         * and {@code log.dirs=/tmp/stellflow-data}), and the {@link TelemetryConfig} keys.
         *
         * @throws ConfigException naming the first bad key and its value
         */
        public static Config fromProperties(Properties props) {
            String roles = props.getProperty("process.roles");
            if (roles == null || !roles.trim().equals("controller")) {
                throw new ConfigException("process.roles", roles, "a controller node needs process.roles=controller");
            }
            int nodeId = (int) ConfigValues.requiredLong(props, "node.id", 0, Integer.MAX_VALUE);
            ControllerConfig controller =
                    ControllerConfig.forNode(props, nodeId, DEFAULT_DATA_PLANE_PORT, DEFAULT_FIRST_LOG_DIR);
            TelemetryConfig telemetry = TelemetryConfig.from(props);
            Set<String> unknown = new TreeSet<>(props.stringPropertyNames());
            unknown.removeAll(KEYS);
            return new Config(controller, telemetry, unknown);
        }

        private static Set<String> union(Set<String> a, Set<String> b, String c) {
            Set<String> all = new TreeSet<>(a);
            all.addAll(b);
            all.add(c);
            return Set.copyOf(all);
        }
    }

    private final MetricsPipeline pipeline;
    private final ControllerTelemetry metrics;
    private final ControllerServer controller;

    private ControllerNode(MetricsPipeline pipeline, ControllerTelemetry metrics, ControllerServer controller) {
        this.pipeline = pipeline;
        this.metrics = metrics;
        this.controller = controller;
    }

    /**
     * Starts a controller with settings {@code config} (a controller-only node's, or a combined node's
     * embedded one). When its Raft port was picked ({@link ControllerConfig#raftPortPicked()}: a
     * one-node quorum without configured voters and without a data-plane listener port to derive it
     * from, e.g. listener port 0) and another process took it between the pick and Ratis's bind,
     * another free port is picked, up to {@value #PICKED_PORT_ATTEMPTS} attempts; a configured port is
     * never replaced.
     *
     * <p>A configured Raft port ({@code controller.quorum.voters}, this node's entry) and the {@code
     * controller.listener} port are checked first ({@link ListenPorts#checkFree}): taken, they fail the
     * start with one {@link ConfigException} naming the key, before Ratis or gRPC log stack traces.
     *
     * @throws ConfigException when a configured controller port is taken or cannot be bound
     * @throws BindException when the Raft port is taken (configured, or still after every attempt, or
     *     no other free port found: then with that {@link ConfigException} suppressed)
     * @throws IOException when the controller cannot start for another reason
     */
    public static ControllerServer startController(ControllerConfig config, ControllerMetrics metrics)
            throws IOException {
        checkPortsFree(config);
        for (int attempt = 1; ; attempt++) {
            try {
                return ControllerServer.start(config, metrics);
            } catch (BindException e) {
                if (!config.raftPortPicked() || attempt >= PICKED_PORT_ATTEMPTS) {
                    throw e;
                }
                LOG.warn(
                        "CONTROLLER_RAFT_PORT_TAKEN attempt={} {}; picking another free port", attempt, e.getMessage());
                try {
                    config = config.withPickedRaftPort();
                } catch (ConfigException noPort) {
                    e.addSuppressed(noPort);
                    throw e;
                }
            }
        }
    }

    /** The start-time check of the configured controller ports (not a picked Raft port, nor port 0). */
    static void checkPortsFree(ControllerConfig config) {
        if (!config.raftPortPicked()) {
            QuorumVoter self = config.self();
            String voters = config.voters().stream().map(QuorumVoter::toString).collect(Collectors.joining(","));
            ListenPorts.checkFree("controller.quorum.voters", voters, self.host(), self.raftPort());
        }
        ListenPorts.checkFree(
                "controller.listener",
                config.listenerHost() + ":" + config.listenerPort(),
                config.listenerHost(),
                config.listenerPort());
    }

    /**
     * Starts the metrics exporter, then the controller.
     *
     * @throws IOException when the controller cannot start
     */
    public static ControllerNode start(Config config) throws IOException {
        if (!config.unknownKeys().isEmpty()) {
            LOG.warn("Ignoring unknown configuration keys: {}", config.unknownKeys());
        }
        int nodeId = config.controller().nodeId();
        MetricsPipeline pipeline = MetricsPipeline.start(config.telemetry(), "stellflow-controller", nodeId);
        ControllerTelemetry metrics = new ControllerTelemetry(pipeline.meter(ControllerTelemetry.SCOPE), nodeId);
        ControllerServer controller;
        try {
            controller = startController(config.controller(), metrics);
        } catch (IOException | RuntimeException e) {
            metrics.close();
            pipeline.close();
            throw e;
        }
        LOG.info(
                "CONTROLLER_NODE_STARTED nodeId={} controlPlane={} metricsPort={}",
                nodeId,
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
        run(ConfigFiles.parseOrExit(
                args, "stellflow-controller.sh <controller.properties>", "CONTROLLER", LOG, props -> {
                    controllerRole(props);
                    return Config.fromProperties(props);
                }));
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

    /**
     * Runs the node of {@code config} in the foreground until SIGTERM or SIGINT; exits the JVM with
     * status 1 when it cannot start.
     */
    public static void run(Config config) throws InterruptedException {
        ControllerNode node;
        try {
            node = start(config);
        } catch (ConfigException e) {
            // A taken port or an unusable dir: the line says all; the trace only at DEBUG.
            LOG.error("CONTROLLER_START_FAILED {}", e.getMessage());
            LOG.debug("CONTROLLER_START_FAILED stack trace", e);
            System.exit(1);
            return;
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
