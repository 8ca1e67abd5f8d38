package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowProducer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stellflow-topics.sh --describe} on a real node: the replication factor on the topic line and
 * the log start / end offsets on each partition line; the partition filters print nothing for a
 * healthy topic; {@code --under-min-isr-partitions} is refused in one line.
 */
@IntegrationTest
class TopicsDescribeTest {
    @TempDir
    Path dir;

    static ToolRun run(String... args) {
        return ToolRun.run(OneLineUsageErrors.commandLine(new TopicsCommand()), args);
    }

    @Test
    void describeShowsReplicationFactorAndLogOffsetsAndFiltersHealthyPartitionsOut() throws Exception {
        try (StellflowServer server = InProcessBroker.startNio(dir)) {
            String broker = "127.0.0.1:" + server.port();
            assertThat(run("--bootstrap-server", broker, "--create", "--topic", "desc", "--partitions", "2")
                            .exit())
                    .isZero();
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker);
            p.setProperty("acks", "1");
            try (StellflowProducer producer = new StellflowProducer(p)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord("desc", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(10, TimeUnit.SECONDS);
                }
            }

            ToolRun d = run("--bootstrap-server", broker, "--describe", "--topic", "desc");
            assertThat(d.exit()).as(d.err()).isZero();
            String[] lines = d.out().split("\n");
            assertThat(lines).hasSize(3);
            assertThat(lines[0]).isEqualTo("Topic: desc\tPartitionCount: 2\tReplicationFactor: 1");
            assertThat(lines[1])
                    .startsWith("\tTopic: desc\tPartition: 0\tLeader: ")
                    .endsWith("\tLogStartOffset: 0\tLogEndOffset: 3");
            assertThat(lines[2])
                    .startsWith("\tTopic: desc\tPartition: 1\tLeader: ")
                    .endsWith("\tLogStartOffset: 0\tLogEndOffset: 0");

            for (String filter : new String[] {"--under-replicated-partitions", "--unavailable-partitions"}) {
                ToolRun f = run("--bootstrap-server", broker, "--describe", filter);
                assertThat(f.exit()).as(f.err()).isZero();
                assertThat(f.out()).as(filter).isEmpty();
            }

            ToolRun minIsr = run("--bootstrap-server", broker, "--describe", "--under-min-isr-partitions");
            assertThat(minIsr.exit()).isEqualTo(2);
            assertThat(minIsr.err()).startsWith("error: --under-min-isr-partitions is not supported yet");
            assertThat(minIsr.err().strip().lines()).hasSize(1);

            ToolRun missing = run("--bootstrap-server", broker, "--describe", "--topic", "nosuch");
            assertThat(missing.exit()).isEqualTo(1);
            assertThat(missing.out()).isEqualTo("Topic: nosuch\tError: UNKNOWN_TOPIC_OR_PARTITION\n");
        }
    }
}
