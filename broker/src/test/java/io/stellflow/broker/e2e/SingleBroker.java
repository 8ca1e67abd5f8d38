package io.stellflow.broker.e2e;

import io.stellflow.broker.StellflowServer;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Properties for the end-to-end tests: one combined node (the broker with its one-voter controller,
 * as users run a single node) on 127.0.0.1:0, and its clients.
 */
final class SingleBroker {
    private SingleBroker() {}

    /**
     * A node with its data under {@code dataDir} (log dir {@code data}, metadata log {@code
     * data-metadata}); tests add their own settings.
     */
    static Properties props(Path dataDir) {
        Properties p = new Properties();
        p.setProperty("broker.id", "0");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dataDir.resolve("data").toString());
        p.setProperty("controller.quorum.election.timeout.ms", "100");
        // An ephemeral metrics port: parallel test JVMs never fight over 9464.
        p.setProperty("metrics.port", "0");
        return p;
    }

    /** Client properties for {@code server}, then {@code kv} as key, value, key, value ... */
    static Properties clientProps(StellflowServer server, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }
}
