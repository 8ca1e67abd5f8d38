package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A restart with existing data logs one {@code PARTITIONS_OPENED} INFO line once the partitions of
 * the first metadata image have leaders, with their per-partition {@code PARTITION_OPENED} and {@code
 * PARTITION_LEADER_CHANGED} lines at DEBUG (issue #22: 171 INFO lines for 56 partitions); a
 * partition that appears after start-up is still logged at INFO, line by line.
 */
@IntegrationTest
class StartupPartitionLogTest {
    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines replicas = LogLines.of(ReplicaManager.class).atLevel(Level.DEBUG);

    private List<ILoggingEvent> since(int before, Level level, String eventName) {
        List<ILoggingEvent> all = replicas.events();
        return all.subList(before, all.size()).stream()
                .filter(e -> e.getLevel() == level)
                .filter(e -> e.getFormattedMessage().startsWith(eventName + " "))
                .toList();
    }

    @Test
    void aRestartLogsOneSummaryLineAndThePerPartitionLinesAtDebug() throws Exception {
        Path dir = NODES.dir().resolve("node");
        StellflowServer server = NODES.start(dir, "nio");
        int before = replicas.events().size();
        assertThat(TestBroker.createTopic(server, "many", 6, Map.of())).isEqualTo(ErrorCode.NONE);
        // After start-up a new partition is a rare event an operator wants to see: INFO, one by one.
        assertThat(since(before, Level.INFO, "PARTITION_OPENED")).hasSize(6);
        assertThat(since(before, Level.INFO, "PARTITION_LEADER_CHANGED")).hasSize(6);
        server.close();

        before = replicas.events().size();
        server = NODES.start(dir, "nio");
        assertThat(TestBroker.partition(server, "many", 5)).isNotNull();
        int restart = before;
        Wait.until(
                Duration.ofSeconds(30),
                () -> !since(restart, Level.INFO, "PARTITIONS_OPENED").isEmpty(),
                "the PARTITIONS_OPENED line");
        assertThat(since(before, Level.INFO, "PARTITION_OPENED")).isEmpty();
        assertThat(since(before, Level.INFO, "PARTITION_LEADER_CHANGED")).isEmpty();
        assertThat(since(before, Level.DEBUG, "PARTITION_OPENED")).hasSize(6);
        assertThat(since(before, Level.INFO, "PARTITIONS_OPENED").stream().map(ILoggingEvent::getFormattedMessage))
                .singleElement()
                .asString()
                .matches("PARTITIONS_OPENED count=6 leaders=6 leaderless=0 ms=\\d+");
    }
}
