package io.stellflow.perf;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.StellflowAdmin;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The load generator's tests' broker (the tools module's tests have the same): one combined node (broker and its one-voter controller) in-process on
 * 127.0.0.1:0, its log in {@code <dir>/data} and its metadata log in {@code <dir>/data-metadata}.
 */
final class InProcessBroker {
    private InProcessBroker() {}

    /** Starts a broker whose data goes under {@code dir}; the caller closes it. */
    static StellflowServer start(Path dir) throws IOException {
        Properties p = new Properties();
        p.setProperty("broker.id", "0");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("controller.quorum.election.timeout.ms", "100");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    /** An admin client on {@code server}'s listener; the caller closes it. */
    static StellflowAdmin admin(StellflowServer server) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        return new StellflowAdmin(p);
    }
}
