package io.stellflow.broker;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.controller.node.ControllerNode;
import io.stellflow.server.common.config.ConfigException;
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
 * the broker cannot start (one {@code BROKER_START_FAILED} line naming the key, value and what to do,
 * {@link #startOrExplain}); a clean stop returns normally.
 *
 * <p>Thread-safety: {@link #main} runs once, on the JVM's main thread; the shutdown hook ({@code
 * sf-shutdown}) closes the broker.
 */
public final class StellflowMain {
    /** The server's logger: start failures and config errors keep the category they always had. */
    private static final Logger LOG = LoggerFactory.getLogger(StellflowServer.class);

    private StellflowMain() {}

    /**
     * Starts the broker, or logs why it cannot start as one {@code BROKER_START_FAILED} ERROR line and
     * returns null ({@link #main} then exits 1). A bad setting found only at start (a taken port, a log
     * dir that is a file or cannot be written) is a {@link ConfigException} naming the key, the value
     * and what to do; the line carries no stack trace unless the logger is at DEBUG, or {@code
     * STELLFLOW_STACKTRACE=1} (or {@code -Dstellflow.stacktrace=true}) asks for it; an unexpected
     * failure (not a config or I/O error) always logs its stack trace.
     */
    static StellflowServer startOrExplain(BrokerConfig config) {
        try {
            return StellflowServer.start(config);
        } catch (ConfigException e) {
            logStartFailure(e.getMessage(), e);
        } catch (IOException e) {
            logStartFailure(e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            LOG.error("BROKER_START_FAILED {}", e.getMessage(), e);
        }
        return null;
    }

    private static void logStartFailure(String line, Throwable e) {
        if (stackTraceWanted()) {
            LOG.error("BROKER_START_FAILED {}", line, e);
        } else {
            LOG.error("BROKER_START_FAILED {}", line);
            LOG.debug("BROKER_START_FAILED stack trace", e);
        }
    }

    private static boolean stackTraceWanted() {
        return LOG.isDebugEnabled()
                || "1".equals(System.getenv("STELLFLOW_STACKTRACE"))
                || Boolean.getBoolean("stellflow.stacktrace");
    }

    /** {@code args[0]} is the properties file. */
    public static void main(String[] args) throws InterruptedException {
        BrokerConfig config = ConfigFiles.parseOrExit(
                args, "stellflow-server.sh <server.properties>", "BROKER", LOG, BrokerConfig::fromProperties);
        if (!config.cluster().isBroker()) {
            ControllerNode.run(
                    new ControllerNode.Config(config.cluster().controller(), config.telemetry(), config.unknownKeys()));
            return;
        }
        StellflowServer server = startOrExplain(config);
        if (server == null) {
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "sf-shutdown"));
        server.awaitClosed();
    }
}
