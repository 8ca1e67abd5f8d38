package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * 3 controllers (in-process) + 3 brokers (child JVMs, {@code process.roles=broker}) on 127.0.0.1. The
 * tests share one cluster and run in order: topic with 6 partitions and replication factor 3 seen
 * alike by every broker and used through its leaders (and the metadata propagation delay, printed);
 * a minority of controllers commits nothing while brokers keep serving; a broker killed with
 * SIGKILL is fenced and its partitions move to ISR members with higher leader epochs while producers
 * follow; everything stopped and restarted keeps identical metadata.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class ClusterTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 6;

    private ClusterHarness cluster;
    private final Map<Integer, Integer> producedPerPartition = new HashMap<>();

    @BeforeAll
    void startCluster(@TempDir Path dir) throws Exception {
        cluster = new ClusterHarness(dir, 3, 3);
        cluster.startControllers();
        cluster.startBrokers();
        cluster.awaitBrokersUnfenced(60_000);
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private Properties clientProps(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", cluster.bootstrapBrokers());
        p.setProperty("request.timeout.ms", "5000");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    @Order(1)
    void everyBrokerAnswersMetadataAsTheControllerImageAndClientsUseTheLeadersOfAllPartitions() throws Exception {
        try (StellflowAdmin admin = new StellflowAdmin(clientProps())) {
            admin.createTopic(TOPIC, PARTITIONS, 3);
        }
        MetadataImage image = cluster.controllerImage();
        TopicImage topic = image.topic(TOPIC);
        assertThat(topic.partitions()).hasSize(PARTITIONS);
        for (PartitionImage p : topic.partitions()) {
            assertThat(p.replicas()).containsExactlyInAnyOrder(1, 2, 3);
        }
        assertThat(topic.partitions().stream().map(PartitionImage::leader).distinct())
                .as("leaders spread over the brokers")
                .hasSize(3);
        awaitBrokersMatchControllerImage();

        produce(20, true);
        assertThat(consumeAll()).hasSize(20 * PARTITIONS);

        measurePropagationDelay();
    }

    /** Every broker's Metadata answer equals the controller image (leaders, epochs, replicas, ISR). */
    private void awaitBrokersMatchControllerImage() throws InterruptedException {
        ClusterHarness.await(30_000, "every broker's Metadata matches the controller image", () -> {
            MetadataImage image = cluster.controllerImage();
            try {
                for (int i = 0; i < cluster.brokers.length; i++) {
                    if (cluster.brokers[i] == null) {
                        continue;
                    }
                    MetadataResponse got = cluster.metadata(i, List.of());
                    MetadataResponse want = ClusterMetadataHandler.answer(image, List.of(), "cluster-test");
                    if (!got.equals(want)) {
                        return false;
                    }
                }
                return true;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** Sends {@code perPartition} records to each partition with acks=-1 and {@code enable.idempotence}. */
    private void produce(int perPartition, boolean idempotent) throws Exception {
        try (StellflowProducer producer = new StellflowProducer(
                clientProps("acks", "-1", "linger.ms", "1", "enable.idempotence", Boolean.toString(idempotent)))) {
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < perPartition; i++) {
                for (int p = 0; p < PARTITIONS; p++) {
                    sent.add(producer.send(
                            new ProducerRecord(TOPIC, p, null, ("r" + i).getBytes(StandardCharsets.UTF_8))));
                }
            }
            for (CompletableFuture<RecordMetadata> f : sent) {
                RecordMetadata md = f.get(30, TimeUnit.SECONDS);
                producedPerPartition.merge(md.partition(), 1, Integer::sum);
            }
        }
    }

    private List<ConsumerRecord> consumeAll() {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            tps.add(new TopicPartition(TOPIC, p));
        }
        List<ConsumerRecord> out = new ArrayList<>();
        try (StellflowConsumer consumer = new StellflowConsumer(clientProps())) {
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

    /**
     * CreateTopics answered (committed) by the controller -> every broker's Metadata shows the topic
     * with a leader for each partition. Printed as METADATA_PROPAGATION_MS.
     */
    private void measurePropagationDelay() throws Exception {
        List<Double> delaysMs = new ArrayList<>();
        try (ControllerClient client =
                ControllerClient.builder(cluster.bootstrapControllers).build()) {
            for (int round = 0; round < 5; round++) {
                String name = "propagation-" + round;
                CreateTopicsResponse r = client.createTopics(CreateTopicsRequest.newBuilder()
                        .addTopics(CreatableTopic.newBuilder()
                                .setName(name)
                                .setNumPartitions(3)
                                .setReplicationFactor(3))
                        .build());
                long committedNs = System.nanoTime();
                assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
                assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
                boolean[] seen = new boolean[cluster.brokers.length];
                int remaining = seen.length;
                long[] seenNs = new long[seen.length];
                long deadline = committedNs + TimeUnit.SECONDS.toNanos(10);
                while (remaining > 0 && System.nanoTime() < deadline) {
                    for (int i = 0; i < seen.length; i++) {
                        if (!seen[i] && ledEverywhere(cluster.metadata(i, List.of(name)))) {
                            seen[i] = true;
                            seenNs[i] = System.nanoTime();
                            remaining--;
                        }
                    }
                }
                assertThat(remaining).as("brokers that never showed " + name).isZero();
                long last = 0;
                for (long ns : seenNs) {
                    last = Math.max(last, ns - committedNs);
                }
                delaysMs.add(last / 1e6);
            }
        }
        delaysMs.sort(Double::compare);
        System.out.printf(
                "METADATA_PROPAGATION_MS (CreateTopics answered -> all 3 brokers answer Metadata with every"
                        + " partition led), 5 topics: min %.1f median %.1f max %.1f%n",
                delaysMs.get(0), delaysMs.get(2), delaysMs.get(4));
    }

    private static boolean ledEverywhere(MetadataResponse r) {
        MetadataResponse.TopicMetadata t = r.topics().get(0);
        if (t.errorCode() != Errors.NONE || t.partitions().isEmpty()) {
            return false;
        }
        for (MetadataResponse.PartitionMetadata p : t.partitions()) {
            if (p.errorCode() != Errors.NONE || p.leaderId() < 0) {
                return false;
            }
        }
        return true;
    }

    @Test
    @Order(2)
    void withTwoOfThreeControllersDownNoMetadataChangeSucceedsAndBrokersKeepServing() throws Exception {
        MetadataImage before = cluster.controllerImage();
        cluster.stopController(1);
        cluster.stopController(2);
        try {
            try (StellflowAdmin admin = new StellflowAdmin(clientProps("retries", "0"))) {
                assertThatThrownBy(() -> admin.createTopic("during-minority", 1, 1))
                        .as("topic creation without a quorum")
                        .isNotNull();
            }
            try (ControllerClient client = ControllerClient.builder(cluster.bootstrapControllers)
                    .requestTimeout(Duration.ofSeconds(3))
                    .build()) {
                assertThatThrownBy(() -> client.createTopics(CreateTopicsRequest.newBuilder()
                                .addTopics(CreatableTopic.newBuilder()
                                        .setName("during-minority-2")
                                        .setNumPartitions(1)
                                        .setReplicationFactor(1))
                                .build()))
                        .isNotNull();
            }
            for (int i = 0; i < cluster.brokers.length; i++) {
                MetadataResponse r = cluster.metadata(i, List.of("during-minority", "during-minority-2"));
                for (MetadataResponse.TopicMetadata t : r.topics()) {
                    assertThat(t.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                }
            }
            // The data plane needs no controller: every leader still takes writes. A new idempotent
            // producer would also need a producer id, which a broker without ids left in its block
            // asks the controllers for (docs/exactly-once.md, "Producer ids"), so this one is plain.
            produce(5, false);
            assertThat(cluster.controllers[0].image().topicsByName().keySet())
                    .isEqualTo(before.topicsByName().keySet());
        } finally {
            cluster.startController(1);
            cluster.startController(2);
        }
        cluster.awaitBrokersUnfenced(30_000);
    }

    @Test
    @Order(3)
    void aBrokerKilledWithSigkillIsFencedAndItsPartitionsMoveToOtherIsrLeadersWhileProducersFollow() throws Exception {
        awaitBrokersMatchControllerImage();
        MetadataImage before = cluster.controllerImage();
        TopicImage t = before.topic(TOPIC);
        int victimIndex = 2;
        int victim = ClusterHarness.brokerId(victimIndex);
        List<PartitionImage> led =
                t.partitions().stream().filter(p -> p.leader() == victim).toList();
        assertThat(led).as("partitions led by broker " + victim).isNotEmpty();

        try (StellflowProducer producer = new StellflowProducer(clientProps("acks", "1", "linger.ms", "1"))) {
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord(TOPIC, p, null, "before".getBytes(StandardCharsets.UTF_8)))
                        .get(30, TimeUnit.SECONDS);
            }
            long killedNs = System.nanoTime();
            cluster.killBroker(victimIndex);
            // Sends while the leader is dead: they wait for the new leaders (retries with backoff).
            List<CompletableFuture<RecordMetadata>> during = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                during.add(
                        producer.send(new ProducerRecord(TOPIC, p, null, "during".getBytes(StandardCharsets.UTF_8))));
            }
            ClusterHarness.await(ClusterHarness.SESSION_TIMEOUT_MS + 10_000, "broker " + victim + " fenced", () -> {
                var b = cluster.controllerImage().broker(victim);
                return b != null && b.fenced();
            });
            long fencedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
            System.out.printf(
                    "BROKER_FENCED_AFTER_MS %d (kill -9 -> FenceBrokerRecord applied; broker.session.timeout.ms=%d)%n",
                    fencedMs, ClusterHarness.SESSION_TIMEOUT_MS);
            assertThat(fencedMs).isGreaterThanOrEqualTo(ClusterHarness.SESSION_TIMEOUT_MS - 500);
            for (CompletableFuture<RecordMetadata> f : during) {
                f.get(30, TimeUnit.SECONDS);
            }
            long followedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
            System.out.printf("PRODUCER_FOLLOWED_NEW_LEADERS_AFTER_MS %d%n", followedMs);
        }
        MetadataImage after = cluster.controllerImage();
        for (PartitionImage old : led) {
            PartitionImage now = after.topic(TOPIC).partition(old.partition());
            assertThat(now.leader()).isNotEqualTo(victim).isNotEqualTo(PartitionImage.NO_LEADER);
            assertThat(old.isr()).contains(now.leader());
            assertThat(now.leaderEpoch()).isGreaterThan(old.leaderEpoch());
            assertThat(now.isr()).doesNotContain(victim);
        }
        awaitBrokersMatchControllerImage();

        cluster.startBroker(victimIndex); // a new incarnation rejoins
        cluster.awaitBrokersUnfenced(60_000);
        assertThat(cluster.controllerImage().broker(victim).brokerEpoch())
                .isGreaterThan(before.broker(victim).brokerEpoch());
        awaitBrokersMatchControllerImage();
    }

    @Test
    @Order(4)
    void stoppingEverythingAndRestartingKeepsIdenticalMetadata() throws Exception {
        for (int i = 0; i < cluster.brokers.length; i++) {
            cluster.stopBroker(i);
        }
        MetadataImage stopped = cluster.controllerImage();
        for (int i = 0; i < cluster.controllers.length; i++) {
            cluster.stopController(i);
        }
        cluster.startControllers();
        ClusterHarness.await(30_000, "controllers caught up", () -> {
            MetadataImage img = cluster.controllerImage();
            return img != null && img.offset() >= stopped.offset();
        });
        MetadataImage restarted = cluster.controllerImage();
        assertThat(restarted.topicsByName())
                .as("topic ids, leader epochs, partition epochs, assignments, ISRs")
                .isEqualTo(stopped.topicsByName());
        assertThat(restarted.brokers()).isEqualTo(stopped.brokers());

        cluster.startBrokers();
        cluster.awaitBrokersUnfenced(60_000);
        awaitBrokersMatchControllerImage();
        MetadataImage serving = cluster.controllerImage();
        for (PartitionImage p : serving.topic(TOPIC).partitions()) {
            assertThat(p.leader()).isNotEqualTo(PartitionImage.NO_LEADER);
        }
        assertThat(serving.topic(TOPIC).id()).isEqualTo(stopped.topic(TOPIC).id());
        produce(1, true);
    }
}
