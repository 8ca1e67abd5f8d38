package io.stellflow.broker;

import io.stellflow.broker.config.BrokerConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Starts brokers for tests: 127.0.0.1, ephemeral port, a given log dir and transport; a single broker
 * without a controller ({@code metadata.local=true}), the cluster tests live in {@code io.stellflow.broker.cluster}.
 */
final class TestBroker {
    private TestBroker() {}

    /**
     * Properties for {@code transport}; skips the calling test when that transport is unavailable here
     * or not selected by {@code -Dstellflow.test.transports} ({@link TestTransports#assumeSelected}).
     */
    static Properties props(Path logDir, String transport) {
        TestTransports.assumeSelected(transport);
        Properties props = new Properties();
        props.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        // a single broker without a controller: these tests are about the data plane
        props.setProperty("process.roles", "broker");
        props.setProperty("metadata.local", "true");
        props.setProperty("log.dirs", logDir.toString());
        props.setProperty("transport", transport);
        props.setProperty("num.network.threads", "2");
        props.setProperty("num.io.threads", "4");
        // An ephemeral metrics port: parallel test JVMs never fight over 9464.
        props.setProperty("metrics.port", "0");
        return props;
    }

    static StellflowServer start(Path logDir, String transport) throws IOException {
        return start(props(logDir, transport));
    }

    static StellflowServer start(Properties props) throws IOException {
        return StellflowServer.start(BrokerConfig.fromProperties(props));
    }
}
