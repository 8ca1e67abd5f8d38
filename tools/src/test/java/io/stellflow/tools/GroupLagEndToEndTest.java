package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.StellflowServer;
import io.stellflow.client.GroupLag;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link io.stellflow.client.AdminGroups#describeLag} and {@code stellflow-consumer-groups.sh
 * --describe} against a real broker in-process: a member's committed offsets, the high watermarks,
 * the lag, the owner, and the same numbers in the tool's table.
 */
@IntegrationTest
class GroupLagEndToEndTest {
    private static final TopicPartition P0 = new TopicPartition("lagged", 0);
    private static final TopicPartition P1 = new TopicPartition("lagged", 1);

    @TempDir
    Path dataDir;

    private StellflowServer server;
    private String bootstrap;

    @BeforeEach
    void startBroker() throws Exception {
        server = InProcessBroker.start(dataDir);
        bootstrap = "127.0.0.1:" + server.port();
    }

    @AfterEach
    void stopBroker() {
        server.close();
    }

    private Properties props(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void lagIsTheHighWatermarkMinusTheCommittedOffsetPerPartition() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("lagged", 2);
        }
        try (StellflowProducer producer = new StellflowProducer(props("linger.ms", "0"))) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord("lagged", i % 2, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        try (StellflowAdmin admin = new StellflowAdmin(props());
                StellflowConsumer consumer = new StellflowConsumer(props(
                        "group.id", "lag-group", "enable.auto.commit", "false", "auto.offset.reset", "earliest"))) {
            consumer.subscribe(List.of("lagged"));
            Wait.until(
                    Duration.ofSeconds(60),
                    () -> {
                        consumer.poll(Duration.ofMillis(100));
                        return consumer.assignment().size() == 2;
                    },
                    "the member owns both partitions");
            consumer.commitSync(Map.of(P0, 4L, P1, 10L));
            String memberId = consumer.groupMemberId();

            GroupLag lag = admin.groups().describeLag("lag-group");
            assertThat(lag.partitions())
                    .extracting(p -> List.of(
                            p.partition(),
                            p.committedOffset(),
                            p.logEndOffset(),
                            p.lag(),
                            p.owner() == null ? "-" : p.owner().memberId()))
                    .containsExactly(List.of(P0, 4L, 10L, 6L, memberId), List.of(P1, 10L, 10L, 0L, memberId));
            assertThat(lag.totalLag()).isEqualTo(6);
            assertThat(lag.lagComplete()).isTrue();
            assertThat(lag.idleMembers()).isEmpty();

            ToolRun r = ToolRun.run(
                    Tools.commandLine(new ConsumerGroupsCommand()),
                    "--bootstrap-server",
                    bootstrap,
                    "--describe",
                    "--group",
                    "lag-group");
            assertThat(r.exit()).as(r.err()).isZero();
            List<List<String>> rows = new ArrayList<>();
            for (String line : r.out().split("\n")) {
                rows.add(List.of(line.trim().split("\\s+")));
            }
            assertThat(rows)
                    .anySatisfy(row -> assertThat(row.subList(0, 7))
                            .containsExactly("lag-group", "lagged", "0", "4", "10", "6", memberId))
                    .anySatisfy(row -> assertThat(row.subList(0, 7))
                            .containsExactly("lag-group", "lagged", "1", "10", "10", "0", memberId));

            // --list with a port nobody listens on in the bootstrap list, first or last: each run is a
            // fresh client whose random first pick may be that port; it is passed over.
            for (int i = 0; i < 6; i++) {
                String withDead = i % 2 == 0 ? "127.0.0.1:1," + bootstrap : bootstrap + ",127.0.0.1:1";
                ToolRun list = ToolRun.run(
                        Tools.commandLine(new ConsumerGroupsCommand()), "--bootstrap-server", withDead, "--list");
                assertThat(list.exit()).as(withDead + ": " + list.err()).isZero();
                assertThat(list.out()).contains("lag-group");
            }
        }
        // The member left: its offsets stay, with no owner.
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            GroupLag lag = admin.groups().describeLag("lag-group");
            assertThat(lag.group().members()).isEmpty();
            assertThat(lag.partitions())
                    .extracting(GroupLag.PartitionLag::owner)
                    .containsOnlyNulls();
            assertThat(lag.totalLag()).isEqualTo(6);
        }
    }

    @Test
    void offsetsOfATopicJustDeletedAnswerAtOnceWithoutAGuessedLag() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(props())) {
            admin.createTopic("lagged", 2);
            admin.createTopic("doomed", 2);
            TopicPartition doomed0 = new TopicPartition("doomed", 0);
            TopicPartition doomed1 = new TopicPartition("doomed", 1);
            // The broker refuses offsets of partitions that do not exist ...
            TopicPartition beyond = new TopicPartition("lagged", 7);
            assertThat(admin.groups().commitOffsets("outside", Map.of(beyond, 2L)))
                    .containsEntry(beyond, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(admin.groups().commitOffsets("outside", Map.of(P0, 0L, doomed0, 0L, doomed1, 0L)))
                    .containsOnly(
                            Map.entry(P0, (short) 0), Map.entry(doomed0, (short) 0), Map.entry(doomed1, (short) 0));
            // ... and drops a deleted topic's offsets soon after the deletion; until then its rows must
            // come back at once with no log end (not after the lookups' retries, not with a guess).
            admin.deleteTopic("doomed");
            Wait.until(
                    Duration.ofSeconds(30), () -> admin.partitionCount("doomed") == -1, "doomed is gone from Metadata");
            long t0 = System.nanoTime();
            GroupLag lag = admin.groups().describeLag("outside");
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertThat(lag.partitions()).first().isEqualTo(new GroupLag.PartitionLag(P0, 0, 0, null));
            assertThat(lag.partitions().subList(1, lag.partitions().size())).allSatisfy(p -> {
                assertThat(p.partition().topic()).isEqualTo("doomed");
                assertThat(p.logEndOffset()).isEqualTo(GroupLag.UNKNOWN);
                assertThat(p.lag()).isEqualTo(GroupLag.UNKNOWN);
            });
            assertThat(lag.totalLag()).isZero();
            assertThat(took).as("no lookup retried until the retries ran out").isLessThan(Duration.ofSeconds(5));
        }
    }
}
