package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.TopicPartition;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --describe} when the controllers are down: the brokers still describe
 * their partitions, so the tool does too, with {@code Configs: (unavailable: ...)} after a bounded wait
 * instead of failing the whole describe.
 */
@IntegrationTest
class TopicsDescribeWithoutControllerTest {
    @TempDir
    Path dir;

    @Test
    void describeGoesOnWithoutConfigsWhenNoControllerAnswers() throws Exception {
        try (TwoBrokerCluster cluster = new TwoBrokerCluster(dir)) {
            String bootstrap = cluster.broker(1);
            try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(bootstrap, null))) {
                admin.createTopic("nc", 1, 2);
                Wait.untilPasses(
                        Duration.ofSeconds(30),
                        () -> assertThat(admin.listOffsets(new TopicPartition("nc", 0), StellflowAdmin.LATEST))
                                .isZero(),
                        "nc led");
            }
            cluster.stopController();

            long startNs = System.nanoTime();
            ToolRun d = ToolRun.run(
                    Tools.commandLine(new TopicsCommand()),
                    "--bootstrap-server",
                    bootstrap,
                    "--describe",
                    "--topic",
                    "nc");
            long tookMs = Duration.ofNanos(System.nanoTime() - startNs).toMillis();
            assertThat(d.exit()).as(d.err()).isZero();
            String[] lines = d.out().split("\n");
            assertThat(lines[0])
                    .startsWith("Topic: nc\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: (unavailable: ");
            assertThat(lines[1]).startsWith("\tTopic: nc\tPartition: 0\tLeader: ");
            assertThat(tookMs).isLessThan(TopicDescriber.CONFIGS_WAIT_MS + 10_000);
        }
    }
}
