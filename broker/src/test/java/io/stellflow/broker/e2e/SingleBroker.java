package io.stellflow.broker.e2e;

import io.stellflow.broker.StellflowServer;
import java.nio.file.Path;
import java.util.Properties;

/** Properties for the end-to-end tests: one broker without a controller on 127.0.0.1:0, and its clients. */
final class SingleBroker {
    private SingleBroker() {}

    /** A broker with its log in {@code dataDir}; tests add their own settings. */
    static Properties props(Path dataDir) {
        Properties p = new Properties();
        p.setProperty("broker.id", "0");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        // a single broker without a controller: these tests are about the data plane
        p.setProperty("process.roles", "broker");
        p.setProperty("metadata.local", "true");
        p.setProperty("log.dirs", dataDir.toString());
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
