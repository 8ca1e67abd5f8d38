package io.stellflow.perf;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

/** The load generator's tests' broker (the tools module's tests have the same): one broker in-process on 127.0.0.1:0 without a controller (the data plane only). */
final class InProcessBroker {
    private InProcessBroker() {}

    /** Starts a broker whose log dir is {@code dataDir}; the caller closes it. */
    static StellflowServer start(Path dataDir) throws IOException {
        Properties p = new Properties();
        p.setProperty("broker.id", "0");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("process.roles", "broker");
        p.setProperty("metadata.local", "true");
        p.setProperty("log.dirs", dataDir.toString());
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }
}
