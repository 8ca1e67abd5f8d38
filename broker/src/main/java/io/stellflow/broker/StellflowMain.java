package io.stellflow.broker;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.controller.node.ControllerNode;
import io.stellflow.server.common.config.ConfigFiles;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point of {@code bin/stellflow-server.sh}: runs one Stellflow node in the foreground until
 * SIGTERM or SIGINT, its role from {@code process.roles} of the properties file: a broker or a
 * combined node ({@link StellflowServer}), or a controller-only node ({@link ControllerNode#run}).
 *
 * <p>Exit codes: 2 for a bad command line or configuration ({@link ConfigFiles#parseOrExit}), 1 when
 * the broker cannot start (logged as {@code BROKER_START_FAILED}); a clean stop returns normally.
 *
 * <p>Thread-safety: {@link #main} runs once, on the JVM's main thread; the shutdown hook ({@code
 * sf-shutdown}) closes the broker.
 */
public final class StellflowMain {
    /** The server's logger: start failures and config errors keep the category they always had. */
    private static final Logger LOG = LoggerFactory.getLogger(StellflowServer.class);

    private StellflowMain() {}

    /** {@code args[0]} is the properties file. */
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
            server = StellflowServer.start(config);
        } catch (IOException | RuntimeException e) {
            LOG.error("BROKER_START_FAILED {}", e.getMessage(), e);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sf-shutdown"));
        server.awaitClosed();
    }
}
