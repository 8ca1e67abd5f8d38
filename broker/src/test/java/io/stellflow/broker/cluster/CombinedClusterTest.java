package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.BrokerMetadata;
import io.stellflow.broker.topic.Partition;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowProducer;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three combined nodes (broker + controller, a 3-voter quorum) in this JVM on 127.0.0.1, no
 * {@code cluster.id} configured: the cluster id the first active controller generated reaches every
 * broker's Metadata and {@code meta.properties}, and a broker of another cluster is refused; topic
 * config overrides from the controller reach every broker's logs (created, altered, and after a
 * restart); auto-creation through the controller with three broker policies (node 1:
 * {@code auto.create.topics.enable} with 3 partitions of 3 replicas; node 2: enabled with
 * {@code default.replication.factor=4}, more than the brokers; node 3: disabled); a produce to a
 * follower replica is refused with NOT_LEADER_OR_FOLLOWER; last, the active controller's id in
 * Metadata follows a failover. Tests share the cluster and run in order. The nodes rotate over nio,
 * epoll and io_uring ({@link TestTransports}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class CombinedClusterTest {
    private static final int N = 3;

    private Path dir;
    private final StellflowServer[] nodes = new StellflowServer[N];
    private int[] dataPorts;
    private String voters;
    private String bootstrapControllers;
    private int[] rpcPorts;
    private String[] transports;
    private NetworkClient network;

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        dir = tmp;
        dataPorts = LoopbackPorts.pick(N);
        int[] raft = LoopbackPorts.pick(N);
        rpcPorts = LoopbackPorts.pick(N);
        transports = TestTransports.forBrokers(N);
        System.out.println(TestTransports.describe("CombinedClusterTest", transports, 1));
        StringBuilder v = new StringBuilder();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < N; i++) {
            v.append(i == 0 ? "" : ",").append(i + 1).append("@127.0.0.1:").append(raft[i]);
            b.append(i == 0 ? "" : ",").append("127.0.0.1:").append(rpcPorts[i]);
        }
        voters = v.toString();
        bootstrapControllers = b.toString();
        // A node waits for a quorum to register, so they start together, on threads of their own: a
        // start blocks, and Ratis runs its own async steps on the common fork-join pool.
        ExecutorService starters = Executors.newFixedThreadPool(N);
        try {
            List<Future<StellflowServer>> starting = new ArrayList<>();
            for (int i = 0; i < N; i++) {
                int index = i;
                starting.add(starters.submit(() -> start(index)));
            }
            for (int i = 0; i < N; i++) {
                nodes[i] = starting.get(i).get(60, TimeUnit.SECONDS);
            }
        } finally {
            starters.shutdownNow();
        }
        Properties cp = new Properties();
        cp.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[0]);
        cp.setProperty("request.timeout.ms", "10000");
        network = new NetworkClient(ClientConfig.from(cp, "combined-cluster-test"));
    }

    private Properties nodeProps(int i) {
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", Integer.toString(i + 1));
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + dataPorts[i]);
        p.setProperty("log.dirs", dir.resolve("node-" + (i + 1)).resolve("data").toString());
        p.setProperty(
                "metadata.log.dir",
                dir.resolve("node-" + (i + 1)).resolve("metadata").toString());
        p.setProperty("controller.quorum.voters", voters);
        p.setProperty("controller.listener", "127.0.0.1:" + rpcPorts[i]);
        p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
        p.setProperty("controller.quorum.election.timeout.ms", "300");
        p.setProperty("broker.session.timeout.ms", "3000");
        p.setProperty("broker.heartbeat.interval.ms", "300");
        p.setProperty("log.retention.check.interval.ms", "200");
        // acks=-1 waits for the ISR: a follower that does not fetch leaves it after 1 s, not 30 s.
        p.setProperty("replica.lag.time.max.ms", "1000");
        p.setProperty("transport", transports[i]);
        p.setProperty("metrics.exporter", "none");
        p.setProperty("num.io.threads", "2");
        p.setProperty("num.network.threads", "1");
        p.setProperty("default.replication.factor", "3");
        switch (i) {
            case 0 -> {
                p.setProperty("auto.create.topics.enable", "true");
                p.setProperty("num.partitions", "3");
            }
            case 1 -> {
                p.setProperty("auto.create.topics.enable", "true");
                p.setProperty("default.replication.factor", "4");
            }
            default -> {} // auto.create.topics.enable: the default, false
        }
        return p;
    }

    private StellflowServer start(int i) {
        try {
            return StellflowServer.start(BrokerConfig.fromProperties(nodeProps(i)));
        } catch (Exception e) {
            throw new IllegalStateException("node " + (i + 1) + " did not start", e);
        }
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (network != null) {
            network.close();
        }
        for (StellflowServer s : nodes) {
            if (s != null) {
                s.close();
            }
        }
    }

    private int activeIndex() {
        for (int i = 0; i < N; i++) {
            if (nodes[i] != null && nodes[i].controller().isActive()) {
                return i;
            }
        }
        return -1;
    }

    private MetadataImage controllerImage() throws InterruptedException {
        ClusterHarness.await(20_000, "an active controller", () -> activeIndex() >= 0);
        return nodes[activeIndex()].controller().image();
    }

    private MetadataResponse metadata(int i, List<String> topics) throws Exception {
        MetadataRequest req = new MetadataRequest(topics, false, false, false);
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[i]), ApiKeys.METADATA, req::write, MetadataResponse::read)
                .get(15, TimeUnit.SECONDS);
    }

    private boolean metadataMatches(int i, Predicate<MetadataResponse> condition) {
        try {
            return condition.test(metadata(i, List.of()));
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    @Order(1)
    void everyBrokerReportsTheGeneratedClusterIdAndTheActiveControllerAndRefusesAnotherClustersBroker()
            throws Exception {
        MetadataImage image = controllerImage();
        String clusterId = image.clusterId();
        int active = image.activeControllerId();
        assertThat(clusterId).as("generated").matches("[A-Za-z0-9_-]{22}");
        assertThat(active).isEqualTo(activeIndex() + 1);
        for (int i = 0; i < N; i++) {
            int index = i;
            ClusterHarness.await(
                    10_000,
                    "node " + (i + 1) + " reports cluster " + clusterId + " and controller " + active,
                    () -> metadataMatches(index, r -> clusterId.equals(r.clusterId()) && r.controllerId() == active));
            BrokerMetadata meta =
                    BrokerMetadata.read(dir.resolve("node-" + (i + 1)).resolve("data"), i + 1, null);
            assertThat(meta.clusterId()).as("meta.properties of node %d", i + 1).isEqualTo(clusterId);
        }

        Properties stranger = new Properties();
        stranger.setProperty("process.roles", "broker");
        stranger.setProperty("node.id", "4");
        stranger.setProperty("cluster.id", "another-cluster");
        stranger.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        stranger.setProperty("log.dirs", dir.resolve("node-4").toString());
        stranger.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
        stranger.setProperty("transport", "nio");
        stranger.setProperty("metrics.exporter", "none");
        assertThatThrownBy(() -> StellflowServer.start(BrokerConfig.fromProperties(stranger)))
                .hasMessageContaining("INCONSISTENT_CLUSTER_ID")
                .hasMessageContaining("another-cluster")
                .hasMessageContaining(clusterId);
        assertThat(controllerImage().broker(4)).as("nothing registered").isNull();
    }

    private static AlterableConfig set(String key, String value) {
        return AlterableConfig.newBuilder()
                .setKey(key)
                .setValue(value)
                .setOp(ConfigOpType.SET)
                .build();
    }

    /** Waits until every node hosts every partition of {@code topic} with a log satisfying {@code check}. */
    private void awaitEveryLog(String topic, int partitions, String what, Predicate<UnifiedLog> check)
            throws InterruptedException {
        ClusterHarness.await(15_000, what, () -> {
            for (StellflowServer node : nodes) {
                for (int p = 0; p < partitions; p++) {
                    Partition hosted = node.replicaManager().hostedPartition(topic, p);
                    if (hosted == null || !check.test(hosted.log())) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    private long segmentFiles(int node, String topic, int partition) throws Exception {
        Path partitionDir = dir.resolve("node-" + (node + 1)).resolve("data").resolve(topic + "-" + partition);
        try (Stream<Path> files = Files.list(partitionDir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log"))
                    .count();
        }
    }

    @Test
    @Order(2)
    void topicConfigsFromTheControllerReachEveryBrokersLogsWhenCreatedAlteredAndAfterARestart() throws Exception {
        String topic = "configured";
        try (ControllerClient controller =
                ControllerClient.builder(bootstrapControllers).build()) {
            CreateTopicsResponse bad = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName("badly-configured")
                            .setNumPartitions(1)
                            .setReplicationFactor(3)
                            .putConfig("segment.bytes", "10"))
                    .build());
            assertThat(bad.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(controllerImage().topic("badly-configured")).isNull();

            CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(topic)
                            .setNumPartitions(2)
                            .setReplicationFactor(3)
                            .putConfig("segment.bytes", "1024")
                            .putConfig("retention.ms", "3600000"))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
            awaitEveryLog(
                    topic,
                    2,
                    "every replica's log has segment.bytes=1024",
                    log -> log.config().segmentBytes() == 1024 && log.config().retentionMs() == 3_600_000L);

            // The leader of partition 0 rolls at 1 KiB: 30 batches of one ~100-byte record (each sent
            // after the previous one is acknowledged, ~170 bytes stored) make about 5 segments.
            Properties pp = new Properties();
            pp.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[0]);
            pp.setProperty("linger.ms", "0");
            try (StellflowProducer producer = new StellflowProducer(pp)) {
                for (int i = 0; i < 30; i++) {
                    producer.send(new ProducerRecord(topic, 0, null, new byte[100]))
                            .get(30, TimeUnit.SECONDS);
                }
            }
            int leader = controllerImage().topic(topic).partition(0).leader() - 1;
            UnifiedLog leaderLog =
                    nodes[leader].replicaManager().hostedPartition(topic, 0).log();
            assertThat(leaderLog.logEndOffset()).isEqualTo(30);
            assertThat(leaderLog.segmentCount()).isGreaterThanOrEqualTo(3);
            assertThat(segmentFiles(leader, topic, 0)).isEqualTo(leaderLog.segmentCount());

            // retention.ms=1 on every broker: the leader's sealed segments go at the next retention run.
            assertThat(controller
                            .incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                                    .setTopic(topic)
                                    .addConfigs(set("retention.ms", "1"))
                                    .build())
                            .getError())
                    .isEqualTo(ErrorCode.NONE);
            awaitEveryLog(
                    topic,
                    2,
                    "every replica's log has retention.ms=1",
                    log -> log.config().retentionMs() == 1 && log.config().segmentBytes() == 1024);
            ClusterHarness.await(10_000, "retention deleted the sealed segments", () -> leaderLog.segmentCount() == 1);
            assertThat(leaderLog.logStartOffset()).isPositive();
            assertThat(leaderLog.logEndOffset()).isEqualTo(30);
        }

        // A restarted node opens its logs with the broker defaults and applies the topic's config.
        int restart = (activeIndex() + 1) % N;
        nodes[restart].close();
        nodes[restart] = start(restart);
        awaitEveryLog(
                topic,
                2,
                "the restarted node's logs have the topic config again",
                log -> log.config().retentionMs() == 1 && log.config().segmentBytes() == 1024);
    }

    private static byte[] batch(String value) {
        var out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, System.currentTimeMillis());
        b.append(System.currentTimeMillis(), null, value.getBytes(StandardCharsets.UTF_8));
        b.close();
        return ByteBufUtil.getBytes(out);
    }

    private ProduceResponse.PartitionResponse produceRaw(int node, String topic) throws Exception {
        ProduceRequest req = new ProduceRequest(
                null,
                (short) 1,
                10_000,
                List.of(new ProduceRequest.TopicData(
                        topic, List.of(new ProduceRequest.PartitionData(0, Unpooled.wrappedBuffer(batch("x")))))));
        return network.send(
                        new HostPort("127.0.0.1", dataPorts[node]), ApiKeys.PRODUCE, req::write, ProduceResponse::read)
                .get(15, TimeUnit.SECONDS)
                .responses()
                .get(0)
                .partitions()
                .get(0);
    }

    @Test
    @Order(3)
    void unknownTopicsAreCreatedThroughTheControllerOnlyWhereEnabledWithLegalNamesAndAPossibleFactor()
            throws Exception {
        // Metadata on node 1: created with num.partitions=3, default.replication.factor=3, one round trip.
        MetadataResponse created = metadata(0, List.of("auto-by-metadata"));
        assertThat(created.topics().get(0).errorCode()).isEqualTo(Errors.NONE);
        assertThat(created.topics().get(0).partitions()).hasSize(3);
        TopicImage t = controllerImage().topic("auto-by-metadata");
        assertThat(t.partitions()).hasSize(3);
        for (PartitionImage p : t.partitions()) {
            assertThat(p.replicas()).containsExactlyInAnyOrder(1, 2, 3);
        }

        // A producer (through node 1) finds the topic created by its first Metadata and writes to it.
        Properties pp = new Properties();
        pp.setProperty("bootstrap.servers", "127.0.0.1:" + dataPorts[0]);
        pp.setProperty("linger.ms", "0");
        try (StellflowProducer producer = new StellflowProducer(pp)) {
            RecordMetadata md = producer.send(
                            new ProducerRecord("auto-by-producer", "v".getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            assertThat(md.offset()).isZero();
        }
        assertThat(controllerImage().topic("auto-by-producer").partitions()).hasSize(3);

        // Produce on node 1 for an unknown topic creates it too; the partition is answered by its
        // leader (or NOT_LEADER_OR_FOLLOWER here, which makes a client refresh and go there).
        ProduceResponse.PartitionResponse pr = produceRaw(0, "auto-by-produce");
        assertThat(pr.errorCode()).isIn(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(controllerImage().topic("auto-by-produce")).isNotNull();

        // Never created: an illegal name, a factor above the 3 brokers (node 2), auto-creation off (node 3).
        MetadataResponse illegal = metadata(0, List.of("no spaces!"));
        assertThat(illegal.topics().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(produceRaw(0, "no spaces!").errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        MetadataResponse tooWide = metadata(1, List.of("four-replicas"));
        assertThat(tooWide.topics().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        MetadataResponse off = metadata(2, List.of("not-auto-created"));
        assertThat(off.topics().get(0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(produceRaw(2, "not-auto-created").errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        MetadataImage image = controllerImage();
        assertThat(image.topic("no spaces!")).isNull();
        assertThat(image.topic("four-replicas")).isNull();
        assertThat(image.topic("not-auto-created")).isNull();
        assertThat(metadata(0, List.of()).topics())
                .extracting(MetadataResponse.TopicMetadata::topic)
                .containsExactlyInAnyOrder("auto-by-metadata", "auto-by-producer", "auto-by-produce", "configured");
    }

    @Test
    @Order(4)
    void aProduceToAFollowerReplicaGetsNotLeaderOrFollowerAndTheLeaderTakesIt() throws Exception {
        PartitionImage p0 = controllerImage().topic("auto-by-metadata").partition(0);
        int leader = p0.leader() - 1;
        int follower = p0.replicas().stream()
                        .filter(id -> id != p0.leader())
                        .findFirst()
                        .orElseThrow()
                - 1;
        ClusterHarness.await(20_000, "node " + (follower + 1) + " follows partition 0", () -> {
            Partition h = nodes[follower].replicaManager().hostedPartition("auto-by-metadata", 0);
            return h != null && !h.isLeader() && h.leaderId() == p0.leader();
        });
        Partition onLeader = nodes[leader].replicaManager().hostedPartition("auto-by-metadata", 0);
        long leaderLeo = onLeader.logEndOffset();

        ProduceResponse.PartitionResponse refused = produceRaw(follower, "auto-by-metadata");
        assertThat(refused.errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(onLeader.logEndOffset()).as("nothing appended").isEqualTo(leaderLeo);

        ProduceResponse.PartitionResponse accepted = produceRaw(leader, "auto-by-metadata");
        assertThat(accepted.errorCode()).isEqualTo(Errors.NONE);
        assertThat(onLeader.logEndOffset()).isEqualTo(leaderLeo + 1);
    }

    @Test
    @Order(5)
    void theControllerIdInMetadataFollowsAFailoverOfTheActiveController() throws Exception {
        int old = activeIndex();
        String clusterId = controllerImage().clusterId();
        nodes[old].close();
        nodes[old] = null;
        ClusterHarness.await(20_000, "a new active controller", () -> activeIndex() >= 0);
        int now = activeIndex();
        assertThat(now).isNotEqualTo(old);
        for (int i = 0; i < N; i++) {
            if (nodes[i] == null) {
                continue;
            }
            int index = i;
            ClusterHarness.await(
                    15_000,
                    "node " + (i + 1) + " reports the new active controller " + (now + 1),
                    () -> metadataMatches(index, r -> r.controllerId() == now + 1 && clusterId.equals(r.clusterId())));
        }
    }
}
