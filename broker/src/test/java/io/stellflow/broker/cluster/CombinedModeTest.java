package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.PartitionInfo;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The single-node default: {@code process.roles} unset means combined mode, a broker with an embedded
 * one-voter controller; topics come from the controller, survive a restart with the same id, and the
 * data plane works as before.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class CombinedModeTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @TempDir
    Path dir;

    private StellflowServer start() throws Exception {
        Properties p = new Properties();
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("cluster.id", "combined-test");
        TestTransports.assumeSelected(transport);
        p.setProperty("transport", transport);
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        return StellflowServer.start(BrokerConfig.fromProperties(p));
    }

    private static Properties client(StellflowServer s) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + s.port());
        return p;
    }

    @Test
    void theDefaultIsACombinedNodeWhoseTopicsComeFromItsControllerAndSurviveARestart() throws Exception {
        UUID topicId;
        try (StellflowServer server = start()) {
            assertThat(server.controller()).as("embedded controller").isNotNull();
            assertThat(Files.isDirectory(dir.resolve("data-metadata")))
                    .as("metadata.log.dir default")
                    .isTrue();
            try (StellflowAdmin admin = new StellflowAdmin(client(server))) {
                admin.createTopic("orders", 3);
                admin.createTopic("orders", 3); // idempotent
                assertThatThrownBy(() -> admin.createTopic("orders", 4))
                        .isInstanceOf(StellflowException.class)
                        .hasMessageContaining("topic exists with 3 partition(s), not 4")
                        .extracting(e -> ((StellflowException) e).errorCode())
                        .isEqualTo(Errors.TOPIC_ALREADY_EXISTS);
                assertThatThrownBy(() -> admin.createTopic("wide", 1, 2))
                        .as("replication factor above the broker count")
                        .isInstanceOf(StellflowException.class)
                        .extracting(e -> ((StellflowException) e).errorCode())
                        .isEqualTo(Errors.INVALID_REPLICATION_FACTOR);
                TopicDescription d = admin.describeTopics(List.of("orders")).get("orders");
                TopicImage t = server.controller().image().topic("orders");
                topicId = t.id();
                assertThat(d.partitions()).hasSize(3);
                for (PartitionInfo p : d.partitions()) {
                    PartitionImage pi = t.partition(p.partition());
                    assertThat(p.leaderId()).isEqualTo(pi.leader()).isEqualTo(server.brokerId());
                    assertThat(p.leaderEpoch()).isEqualTo(pi.leaderEpoch());
                    assertThat(p.replicas()).isEqualTo(pi.replicas());
                    assertThat(p.isr()).isEqualTo(pi.isr());
                }
            }
            try (StellflowProducer producer = new StellflowProducer(client(server))) {
                for (int i = 0; i < 30; i++) {
                    producer.send(new ProducerRecord("orders", i % 3, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                            .get(30, TimeUnit.SECONDS);
                }
            }
        }
        try (StellflowServer server = start()) {
            assertThat(server.replicaManager().image().topic("orders").id()).isEqualTo(topicId);
            assertThat(consumeAll(server, "orders", 3)).hasSize(30);
            try (StellflowAdmin admin = new StellflowAdmin(client(server))) {
                admin.deleteTopic("orders");
                assertThat(admin.describeTopics(List.of("orders")).get("orders").errorCode())
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
            assertThat(Files.exists(dir.resolve("data").resolve("orders-0")))
                    .as("log deleted")
                    .isFalse();
        }
    }

    static List<ConsumerRecord> consumeAll(StellflowServer server, String topic, int partitions) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        List<ConsumerRecord> out = new ArrayList<>();
        try (StellflowConsumer consumer = new StellflowConsumer(client(server))) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long total = consumer.endOffsets(tps).values().stream()
                    .mapToLong(Long::longValue)
                    .sum();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out.size() < total && System.nanoTime() < deadline) {
                out.addAll(consumer.poll(Duration.ofMillis(200)));
            }
        }
        return out;
    }
}
