package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new broker's {@code BROKER_STARTED} line names the cluster it joined (issue #22: it said {@code
 * clusterId=null}, the id a new broker learns from the controllers only after the line was logged).
 */
@IntegrationTest
class BrokerStartedLineTest {
    @TempDir
    Path dir;

    @RegisterExtension
    final LogLines serverLog = LogLines.of(StellflowServer.class);

    @Test
    void aNewBrokersStartedLineCarriesTheClusterIdItWroteToMetaProperties() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("transport", "nio");
        p.setProperty("metrics.exporter", "none");
        p.setProperty("controller.quorum.election.timeout.ms", "100");
        BrokerConfig config = BrokerConfig.fromProperties(p);
        try (StellflowServer server = StellflowServer.start(config)) {
            String clusterId = BrokerMetadata.read(dir.resolve("data"), config.brokerId(), null)
                    .clusterId();
            assertThat(clusterId).isNotBlank();
            List<String> started = serverLog.messages(LogEvents.BROKER_STARTED);
            assertThat(started).hasSize(1);
            assertThat(started.get(0))
                    .contains("clusterId=" + clusterId + " ")
                    .contains("listener=PLAINTEXT://127.0.0.1:" + server.port());
        }
    }
}
