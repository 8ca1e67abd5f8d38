package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.StellflowServer;
import io.stellflow.broker.TestTransports;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.client.ClientConfig;
import io.stellflow.client.HostPort;
import io.stellflow.client.NetworkClient;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowProducer;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest.PartitionEpoch;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse.EpochEndOffset;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.storage.UnifiedLog;
import io.stellflow.testsupport.IntegrationTest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Future;
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
 * Follower-side replication end to end in this JVM: one controller and three brokers
 * ({@code process.roles=broker}) on 127.0.0.1, topics with replication factor 3. Records produced to
 * each leader reach both followers' logs byte for byte (offsets, leader epochs, CRCs) with the
 * follower HW following the leader's; the leader answers OffsetForLeaderEpoch over the wire (and a
 * follower refuses it); a follower that was down while the leader's log start moved past its log
 * end restarts its log at the leader's log start. Tests share the cluster and run in order. The
 * brokers rotate over nio, epoll and io_uring ({@link TestTransports}): followers fetch across
 * transports.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class ReplicationClusterTest {
    private static final int N = 3;
    private static final long WAIT_MS = 30_000;

    private Path dir;
    private ControllerServer controller;
    private String bootstrapControllers;
    private final StellflowServer[] brokers = new StellflowServer[N];
    private final BrokerConfig[] configs = new BrokerConfig[N];
    private int[] ports;
    private String[] transports;
    private NetworkClient network;

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        dir = tmp;
        int[] raft = LoopbackPorts.pick(1);
        int[] rpc = LoopbackPorts.pick(1);
        bootstrapControllers = "127.0.0.1:" + rpc[0];
        Properties cp = new Properties();
        cp.setProperty("node.id", "100");
        cp.setProperty("controller.quorum.voters", "100@127.0.0.1:" + raft[0]);
        cp.setProperty("controller.listener", bootstrapControllers);
        cp.setProperty("metadata.log.dir", dir.resolve("controller").toString());
        cp.setProperty("broker.session.timeout.ms", "3000");
        cp.setProperty("controller.quorum.election.timeout.ms", "300");
        cp.setProperty("cluster.id", "replication-test");
        controller = ControllerServer.start(ControllerConfig.fromProperties(cp));
        ports = LoopbackPorts.pick(N);
        transports = TestTransports.forBrokers(N);
        System.out.println(TestTransports.describe("ReplicationClusterTest", transports, 1));
        for (int i = 0; i < N; i++) {
            Properties p = new Properties();
            p.setProperty("process.roles", "broker");
            p.setProperty("node.id", Integer.toString(i + 1));
            p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + ports[i]);
            p.setProperty("log.dirs", dir.resolve("broker-" + (i + 1)).toString());
            p.setProperty("cluster.id", "replication-test");
            p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
            p.setProperty("broker.heartbeat.interval.ms", "300");
            p.setProperty("transport", transports[i]);
            p.setProperty("metrics.exporter", "none");
            p.setProperty("num.io.threads", "2");
            p.setProperty("num.network.threads", "1");
            p.setProperty("replica.fetch.backoff.ms", "100");
            // A stopped follower leaves the ISR (and the HW moves on without it) after 2 s, not 30 s.
            p.setProperty("replica.lag.time.max.ms", "2000");
            p.setProperty("replica.fetch.wait.max.ms", "200");
            p.setProperty("replica.fetch.max.bytes", "65536"); // many round trips per test
            configs[i] = BrokerConfig.fromProperties(p);
            brokers[i] = StellflowServer.start(configs[i]);
        }
        Properties np = new Properties();
        np.setProperty("bootstrap.servers", "127.0.0.1:" + ports[0]);
        np.setProperty("request.timeout.ms", "10000");
        network = new NetworkClient(ClientConfig.from(np, "replication-test"));
    }

    @AfterAll
    void stopCluster() {
        if (network != null) {
            network.close();
        }
        for (StellflowServer b : brokers) {
            if (b != null) {
                b.close();
            }
        }
        if (controller != null) {
            controller.close();
        }
    }

    private void createTopic(String name, int partitions) throws Exception {
        createTopic(name, partitions, Map.of());
    }

    private void createTopic(String name, int partitions, Map<String, String> config) throws Exception {
        try (ControllerClient client =
                ControllerClient.builder(bootstrapControllers).build()) {
            CreateTopicsResponse r = client.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(name)
                            .setNumPartitions(partitions)
                            .setReplicationFactor(N)
                            .putAllConfig(config))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        }
        ClusterHarness.await(WAIT_MS, "every replica of " + name + " hosted with its leader", () -> {
            for (int p = 0; p < partitions; p++) {
                PartitionImage img = partitionImage(name, p);
                if (img == null || img.leader() < 0) {
                    return false;
                }
                for (StellflowServer b : brokers) {
                    Partition hosted = b.replicaManager().hostedPartition(name, p);
                    if (hosted == null || hosted.leaderEpoch() != img.leaderEpoch()) {
                        return false;
                    }
                }
            }
            return true;
        });
    }

    private PartitionImage partitionImage(String topic, int partition) {
        MetadataImage image = controller.image();
        return image.topic(topic) == null ? null : image.topic(topic).partition(partition);
    }

    private int leaderIndex(String topic, int partition) {
        return partitionImage(topic, partition).leader() - 1;
    }

    private Partition replica(int broker, String topic, int partition) {
        return brokers[broker].replicaManager().hostedPartition(topic, partition);
    }

    private void produce(String topic, int partition, int records, long seed) throws Exception {
        Properties pp = new Properties();
        pp.setProperty("bootstrap.servers", "127.0.0.1:" + ports[leaderIndex(topic, partition)]);
        pp.setProperty("acks", "1");
        pp.setProperty("linger.ms", "2");
        Random random = new Random(seed);
        try (StellflowProducer producer = new StellflowProducer(pp)) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                byte[] value = new byte[1 + random.nextInt(3000)];
                random.nextBytes(value);
                sent.add(producer.send(new ProducerRecord(topic, partition, ("k" + i).getBytes(), value)));
            }
            for (Future<?> f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Every stored batch from {@code from} as hex (bytes 0-3 relative to {@code from}). */
    private static String bytesFrom(UnifiedLog log, long from) throws IOException {
        ByteBuf out = Unpooled.buffer();
        try {
            log.readInto(from, Integer.MAX_VALUE, Long.MAX_VALUE, true, out);
            return ByteBufUtil.hexDump(out);
        } finally {
            out.release();
        }
    }

    /** Waits until every replica has the leader's log end, HW and bytes from {@code from}. */
    private void awaitReplicasIdentical(String topic, int partition, long from) throws Exception {
        int leader = leaderIndex(topic, partition);
        ClusterHarness.await(WAIT_MS, "followers of " + topic + "-" + partition + " at the leader's end", () -> {
            Partition l = replica(leader, topic, partition);
            for (int i = 0; i < N; i++) {
                Partition f = replica(i, topic, partition);
                if (f.logEndOffset() != l.logEndOffset() || f.highWatermark() != l.highWatermark()) {
                    return false;
                }
            }
            return true;
        });
        String expected = bytesFrom(replica(leader, topic, partition).log(), from);
        assertThat(expected).isNotEmpty();
        for (int i = 0; i < N; i++) {
            Partition f = replica(i, topic, partition);
            assertThat(f.isLeader()).isEqualTo(i == leader);
            assertThat(bytesFrom(f.log(), from))
                    .as("broker %d's copy of %s-%d", i + 1, topic, partition)
                    .isEqualTo(expected);
        }
    }

    @Test
    @Order(1)
    void followersHoldTheLeadersBatchesByteForByte() throws Exception {
        createTopic("replicated", 2);
        for (int p = 0; p < 2; p++) {
            produce("replicated", p, 400, p);
        }
        for (int p = 0; p < 2; p++) {
            awaitReplicasIdentical("replicated", p, 0);
            int leader = leaderIndex("replicated", p);
            assertThat(replica(leader, "replicated", p).logEndOffset()).isEqualTo(400);
            // Leader epochs are kept: the follower's epoch history ends where the leader's does.
            for (int i = 0; i < N; i++) {
                assertThat(replica(i, "replicated", p)
                                .log()
                                .endOffsetForEpoch(
                                        partitionImage("replicated", p).leaderEpoch())
                                .endOffset())
                        .isEqualTo(400);
            }
        }
        // More data after the followers caught up arrives through parked (long-poll) fetches.
        produce("replicated", 0, 50, 7);
        awaitReplicasIdentical("replicated", 0, 0);
        // The followers learn HW 450 from the fetch responses after the leader's HW got there (the
        // copies can be identical one round earlier, at the leader's previous HW).
        int leader = leaderIndex("replicated", 0);
        ClusterHarness.await(WAIT_MS, "every follower's HW at 450", () -> {
            for (int i = 0; i < N; i++) {
                if (i != leader
                        && brokers[i]
                                        .replicaManager()
                                        .hostedPartition("replicated", 0)
                                        .highWatermark()
                                != 450) {
                    return false;
                }
            }
            return true;
        });
        assertThat(replica(leader, "replicated", 0).highWatermark()).isEqualTo(450);
    }

    private EpochEndOffset askEpoch(int broker, String topic, int currentLeaderEpoch, int leaderEpoch)
            throws Exception {
        OffsetForLeaderEpochRequest request = new OffsetForLeaderEpochRequest(
                -1,
                List.of(new OffsetForLeaderEpochRequest.Topic(
                        topic, List.of(new PartitionEpoch(0, currentLeaderEpoch, leaderEpoch)))));
        OffsetForLeaderEpochResponse response = network.send(
                        new HostPort("127.0.0.1", ports[broker]),
                        ApiKeys.OFFSET_FOR_LEADER_EPOCH,
                        request::write,
                        OffsetForLeaderEpochResponse::read)
                .get(10, TimeUnit.SECONDS);
        return response.topics().get(0).partitions().get(0);
    }

    @Test
    @Order(2)
    void theLeaderAnswersOffsetForLeaderEpochAndFollowersRefuseIt() throws Exception {
        int leader = leaderIndex("replicated", 0);
        int epoch = partitionImage("replicated", 0).leaderEpoch();
        long leo = replica(leader, "replicated", 0).logEndOffset();
        assertThat(askEpoch(leader, "replicated", epoch, epoch))
                .isEqualTo(new EpochEndOffset(0, Errors.NONE, epoch, leo));
        assertThat(askEpoch(leader, "replicated", epoch + 1, epoch).errorCode()).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
        int follower = (leader + 1) % N;
        assertThat(askEpoch(follower, "replicated", epoch, epoch).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(askEpoch(leader, "no-such-topic", -1, 0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
    }

    @Test
    @Order(3)
    void aFollowerBelowTheLeadersLogStartRestartsItsLogThere() throws Exception {
        createTopic("behind", 1);
        produce("behind", 0, 100, 11);
        awaitReplicasIdentical("behind", 0, 0);
        int leader = leaderIndex("behind", 0);
        int follower = (leader + 1) % N;
        brokers[follower].close();
        brokers[follower] = null;

        produce("behind", 0, 100, 12);
        Partition l = replica(leader, "behind", 0);
        long newStart = l.logEndOffset();
        assertThat(newStart).isEqualTo(200);
        // The log start may not pass the HW: wait until the stopped follower left the ISR (after
        // replica.lag.time.max.ms) and the remaining ISR has all 200 records.
        ClusterHarness.await(WAIT_MS, "the leader's HW at 200", () -> l.highWatermark() == newStart);
        l.log().maybeIncrementLogStartOffset(newStart, l.highWatermark());
        assertThat(l.logStartOffset()).isEqualTo(newStart);
        produce("behind", 0, 30, 13);

        brokers[follower] = StellflowServer.start(configs[follower]);
        ClusterHarness.await(WAIT_MS, "the restarted follower at the leader's end", () -> {
            Partition f = replica(follower, "behind", 0);
            return f != null && f.logEndOffset() == 230;
        });
        Partition f = replica(follower, "behind", 0);
        assertThat(f.logStartOffset()).isEqualTo(newStart);
        assertThat(f.highWatermark()).isGreaterThanOrEqualTo(f.logStartOffset());
        assertThat(bytesFrom(f.log(), newStart)).isEqualTo(bytesFrom(l.log(), newStart));
        awaitReplicasIdentical("behind", 0, newStart);
    }

    /**
     * A leader is stopped with records that never reached its followers (appended to its log on disk
     * while it is down, as a crash right after a local append would leave them); the controller moves
     * leadership to a follower at a higher epoch, which takes new writes; the old leader restarts as
     * a follower, truncates its divergent tail by epoch and ends byte-identical to the new leader.
     */
    @Test
    @Order(4)
    void anOldLeaderTruncatesItsDivergentTailAndFollowsTheNewLeader() throws Exception {
        createTopic("diverge", 1);
        produce("diverge", 0, 60, 21);
        awaitReplicasIdentical("diverge", 0, 0);
        int oldLeader = leaderIndex("diverge", 0);
        int oldEpoch = partitionImage("diverge", 0).leaderEpoch();
        Path logDir = replica(oldLeader, "diverge", 0).log().dir();
        brokers[oldLeader].close();
        brokers[oldLeader] = null;
        ClusterHarness.await(WAIT_MS, "a new leader for diverge-0", () -> {
            PartitionImage img = partitionImage("diverge", 0);
            return img.leader() >= 1 && img.leader() - 1 != oldLeader && img.leaderEpoch() > oldEpoch;
        });
        try (UnifiedLog stale = UnifiedLog.open(logDir, io.stellflow.storage.LogConfig.defaults())) {
            ByteBuf batch = Unpooled.buffer();
            try {
                io.stellflow.protocol.record.RecordBatchBuilder b =
                        new io.stellflow.protocol.record.RecordBatchBuilder(batch, 5_000);
                for (int i = 0; i < 7; i++) {
                    b.append(5_000, null, ("never-replicated-" + i).getBytes());
                }
                b.close();
                stale.appendAsLeader(batch, oldEpoch);
            } finally {
                batch.release();
            }
            assertThat(stale.logEndOffset()).isEqualTo(67);
        }
        int newLeader = leaderIndex("diverge", 0);
        produce("diverge", 0, 25, 22);
        Partition l = replica(newLeader, "diverge", 0);
        assertThat(l.logEndOffset()).isEqualTo(85);

        brokers[oldLeader] = StellflowServer.start(configs[oldLeader]);
        ClusterHarness.await(WAIT_MS, "the old leader following at the new leader's end", () -> {
            Partition f = replica(oldLeader, "diverge", 0);
            return f != null && !f.isLeader() && f.logEndOffset() == 85;
        });
        Partition f = replica(oldLeader, "diverge", 0);
        assertThat(f.log().endOffsetForEpoch(oldEpoch).endOffset()).isEqualTo(60);
        assertThat(bytesFrom(f.log(), 0)).doesNotContain(ByteBufUtil.hexDump("never-replicated".getBytes()));
        awaitReplicasIdentical("diverge", 0, 0);
    }

    /** One Produce (acks=1) of a one-record batch with a {@code valueBytes} value to the leader of {@code topic}-0. */
    private short produceOneRecord(String topic, int valueBytes) throws Exception {
        ByteBuf batch = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(batch, 9_000);
        byte[] value = new byte[valueBytes];
        new Random(valueBytes).nextBytes(value);
        b.append(9_000, null, value);
        b.close();
        ProduceRequest request = new ProduceRequest(
                null,
                (short) 1,
                10_000,
                List.of(new ProduceRequest.TopicData(topic, List.of(new ProduceRequest.PartitionData(0, batch)))));
        try {
            ProduceResponse response = network.send(
                            new HostPort("127.0.0.1", ports[leaderIndex(topic, 0)]),
                            ApiKeys.PRODUCE,
                            request::write,
                            ProduceResponse::read)
                    .get(10, TimeUnit.SECONDS);
            return response.responses().get(0).partitions().get(0).errorCode();
        } finally {
            batch.release();
        }
    }

    /**
     * {@code max.message.bytes} is the leader's Produce check alone (as in Kafka): a follower that was
     * down while its leader took a batch above every broker's {@code message.max.bytes} (1 MiB, the
     * topic allowing 4 MiB) copies it after the topic's limit was lowered to 1 KiB, which the leader
     * now applies to new batches, and ends byte-identical to the leader.
     */
    @Test
    @Order(5)
    void followersCopyWhatTheLeaderWroteWhateverTheTopicsMaxMessageBytes() throws Exception {
        createTopic("large", 1, Map.of("max.message.bytes", Integer.toString(4 << 20)));
        int leader = leaderIndex("large", 0);
        int follower = (leader + 1) % N;
        brokers[follower].close();
        brokers[follower] = null;

        assertThat(produceOneRecord("large", 1_500_000)).isEqualTo(Errors.NONE);
        try (ControllerClient client =
                ControllerClient.builder(bootstrapControllers).build()) {
            assertThat(client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                                    .setTopic("large")
                                    .addConfigs(AlterableConfig.newBuilder()
                                            .setKey("max.message.bytes")
                                            .setValue("1024")
                                            .setOp(ConfigOpType.SET))
                                    .build())
                            .getError())
                    .isEqualTo(ErrorCode.NONE);
        }
        Partition l = replica(leader, "large", 0);
        ClusterHarness.await(WAIT_MS, "the lowered limit at the leader", () -> l.maxMessageBytes(0) == 1024);
        assertThat(produceOneRecord("large", 2000)).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        assertThat(produceOneRecord("large", 100)).isEqualTo(Errors.NONE);

        brokers[follower] = StellflowServer.start(configs[follower]);
        awaitReplicasIdentical("large", 0, 0);
        assertThat(replica(follower, "large", 0).logEndOffset()).isEqualTo(2);
        assertThat(replica(follower, "large", 0).maxMessageBytes(0)).isEqualTo(1024);
    }
}
