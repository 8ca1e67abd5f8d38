package io.stellflow.tools;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The tools' tests' broker: one combined node (broker and its one-voter controller) in-process on
 * 127.0.0.1:0, its log in {@code <dir>/data} and its metadata log in {@code <dir>/data-metadata}.
 */
final class InProcessBroker {
    private InProcessBroker() {}

    /** Starts broker 0 whose data goes under {@code dir}, with a 100 ms election timeout; the caller closes it. */
    static StellflowServer start(Path dir) throws IOException {
        Properties p = base(dir);
        p.setProperty("broker.id", "0");
        p.setProperty("controller.quorum.election.timeout.ms", "100");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    /**
     * Starts a node for the topics commands' tests: its data under {@code dir}, the broker id left to
     * the combined-mode default, the NIO transport, no metrics exporter and a 200 ms election timeout;
     * the caller closes it.
     */
    static StellflowServer startNio(Path dir) throws IOException {
        Properties p = base(dir);
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties base(Path dir) {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        return p;
    }
}
