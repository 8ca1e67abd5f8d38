package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.Header;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idempotent producers end to end on three in-process brokers and one controller (spec §6.3 step 6,
 * §6.12): InitProducerId, sequence-checked Produce with acks=-1, retries after the ack, after a
 * leader failover and after a restart, and a reused sequence with another payload. Each broker runs
 * on its own transport ({@link TestTransports}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@IntegrationTest
class IdempotentProduceTest {
    private static final int N = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private ControllerServer controller;
    private String bootstrapControllers;
    private final StellflowServer[] brokers = new StellflowServer[N];
    private final BrokerConfig[] configs = new BrokerConfig[N];
    private int[] ports;

    @BeforeAll
    void startCluster(@TempDir Path dir) throws Exception {
        int[] raft = LoopbackPorts.pick(1);
        int[] rpc = LoopbackPorts.pick(1);
        bootstrapControllers = "127.0.0.1:" + rpc[0];
        Properties cp = new Properties();
        cp.setProperty("node.id", "100");
        cp.setProperty("controller.quorum.voters", "100@127.0.0.1:" + raft[0]);
        cp.setProperty("controller.listener", bootstrapControllers);
        cp.setProperty("metadata.log.dir", dir.resolve("controller").toString());
        cp.setProperty("broker.session.timeout.ms", "3000");
        cp.setProperty("cluster.id", "idempotent-test");
        controller = ControllerServer.start(ControllerConfig.fromProperties(cp));
        ports = LoopbackPorts.pick(N);
        String[] transports = TestTransports.forBrokers(N);
        for (int i = 0; i < N; i++) {
            Properties p = new Properties();
            p.setProperty("process.roles", "broker");
            p.setProperty("node.id", Integer.toString(i + 1));
            p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + ports[i]);
            p.setProperty("log.dirs", dir.resolve("broker-" + (i + 1)).toString());
            p.setProperty("cluster.id", "idempotent-test");
            p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
            p.setProperty("broker.heartbeat.interval.ms", "300");
            p.setProperty("transport", transports[i]);
            p.setProperty("metrics.exporter", "none");
            p.setProperty("num.io.threads", "2");
            p.setProperty("num.network.threads", "1");
            p.setProperty("replica.fetch.backoff.ms", "100");
            p.setProperty("replica.lag.time.max.ms", "2000");
            p.setProperty("replica.fetch.wait.max.ms", "200");
            configs[i] = BrokerConfig.fromProperties(p);
            brokers[i] = StellflowServer.start(configs[i]);
        }
    }

    @AfterAll
    void stopCluster() {
        for (StellflowServer b : brokers) {
            if (b != null) {
                b.close();
            }
        }
        if (controller != null) {
            controller.close();
        }
    }

    private void createTopic(String name, int replicationFactor) throws Exception {
        createTopic(name, replicationFactor, Map.of());
    }

    private void createTopic(String name, int replicationFactor, Map<String, String> configs) throws Exception {
        try (ControllerClient client =
                ControllerClient.builder(bootstrapControllers).build()) {
            var r = client.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(name)
                            .setNumPartitions(1)
                            .setReplicationFactor(replicationFactor)
                            .putAllConfig(configs))
                    .build());
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        }
        Wait.until(WAIT, () -> hostedWithLeader(name, replicationFactor), name + " hosted with its leader");
    }

    private boolean hostedWithLeader(String topic, int replicas) {
        PartitionImage img = image(topic);
        if (img == null || img.leader() < 0 || img.isr().size() < replicas) {
            return false;
        }
        for (int id : img.replicas()) {
            StellflowServer b = brokers[id - 1];
            Partition hosted = b == null ? null : b.replicaManager().hostedPartition(topic, 0);
            if (hosted == null
                    || hosted.leaderEpoch() != img.leaderEpoch()
                    || (id == img.leader()) != hosted.isLeader()) {
                return false;
            }
        }
        return true;
    }

    private PartitionImage image(String topic) {
        MetadataImage image = controller.image();
        return image.topic(topic) == null ? null : image.topic(topic).partition(0);
    }

    private int leaderIndex(String topic) {
        return image(topic).leader() - 1;
    }

    private RawClient client(int broker) throws IOException {
        return new RawClient(ports[broker]);
    }

    /** One idempotent batch: a record per value (key "k"+value, a header), at {@code timestampMs}. */
    static byte[] batch(long pid, int epoch, int baseSeq, long timestampMs, String... values) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampMs);
        for (String v : values) {
            b.append(
                    timestampMs,
                    ("k" + v).getBytes(StandardCharsets.UTF_8),
                    v.getBytes(StandardCharsets.UTF_8),
                    List.of(new Header("trace", new byte[] {7})));
        }
        b.close();
        out.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, pid);
        out.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, epoch);
        out.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, baseSeq);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    private static InitProducerIdResponse initProducerId(RawClient c, String transactionalId) throws IOException {
        RawClient.Response r = c.call(
                ApiKeys.INIT_PRODUCER_ID, Requests.nextCorrelationId(), new InitProducerIdRequest(transactionalId));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return InitProducerIdResponse.read(r.body());
    }

    private static ProduceResponse.PartitionResponse produce(RawClient c, String topic, byte[] records)
            throws IOException {
        return Requests.produceOne(c, topic, 0, records);
    }

    private long logEnd(int broker, String topic) {
        return brokers[broker].replicaManager().hostedPartition(topic, 0).logEndOffset();
    }

    @Test
    void initProducerIdGivesIdsUniqueAcrossBrokers() throws Exception {
        try (RawClient a = client(0);
                RawClient b = client(1)) {
            InitProducerIdResponse first = initProducerId(a, null);
            InitProducerIdResponse second = initProducerId(a, null);
            InitProducerIdResponse other = initProducerId(b, null);
            assertThat(first.errorCode()).isEqualTo(Errors.NONE);
            assertThat(first.producerEpoch()).isZero();
            assertThat(second.producerId()).isEqualTo(first.producerId() + 1);
            // Another broker's block: 1000 ids apart from broker 1's at least.
            assertThat(Math.abs(other.producerId() - first.producerId())).isGreaterThanOrEqualTo(998);
        }
    }

    @Test
    void aRetryAfterTheAckGetsTheSameOffsetAndBadSequencesAreRefused() throws Exception {
        createTopic("idem-retry", 3);
        int leader = leaderIndex("idem-retry");
        try (RawClient c = client(leader)) {
            long pid = initProducerId(c, null).producerId();
            assertThat(produce(c, "idem-retry", batch(pid, 0, 0, 1000, "a", "b", "c"))
                            .baseOffset())
                    .isZero();
            assertThat(produce(c, "idem-retry", batch(pid, 0, 3, 1000, "d")).baseOffset())
                    .isEqualTo(3);
            // The retry of the first batch, re-encoded with a new timestamp (as the Go SDK does).
            ProduceResponse.PartitionResponse retry = produce(c, "idem-retry", batch(pid, 0, 0, 9_000, "a", "b", "c"));
            assertThat(retry.errorCode()).isEqualTo(Errors.NONE);
            assertThat(retry.baseOffset()).isZero();
            assertThat(logEnd(leader, "idem-retry")).isEqualTo(4);

            assertThat(produce(c, "idem-retry", batch(pid, 0, 0, 1000, "a", "b", "X"))
                            .errorCode())
                    .as("reused sequence, other payload")
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(produce(c, "idem-retry", batch(pid, 0, 5, 1000, "gap")).errorCode())
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            byte[] two = Requests.concat(batch(pid, 0, 4, 1000, "e"), batch(pid, 0, 5, 1000, "f"));
            assertThat(produce(c, "idem-retry", two).errorCode()).isEqualTo(Errors.INVALID_RECORD);
            assertThat(produce(c, "idem-retry", batch(pid, 1, 0, 1000, "new-epoch"))
                            .baseOffset())
                    .isEqualTo(4);
            assertThat(produce(c, "idem-retry", batch(pid, 0, 4, 1000, "old-epoch"))
                            .errorCode())
                    .isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
            assertThat(logEnd(leader, "idem-retry")).isEqualTo(5);
        }
    }

    @Test
    void aRetryOnTheNewLeaderAfterAFailoverGetsTheOriginalOffset() throws Exception {
        createTopic("idem-failover", 3);
        int oldLeader = leaderIndex("idem-failover");
        int oldEpoch = image("idem-failover").leaderEpoch();
        long pid;
        try (RawClient c = client(oldLeader)) {
            pid = initProducerId(c, null).producerId();
            produce(c, "idem-failover", Requests.batch(2, 500)); // plain data before
            assertThat(produce(c, "idem-failover", batch(pid, 0, 0, 1000, "a", "b"))
                            .baseOffset())
                    .isEqualTo(2);
        }
        brokers[oldLeader].close();
        brokers[oldLeader] = null;
        Wait.until(
                WAIT,
                () -> {
                    PartitionImage img = image("idem-failover");
                    return img.leader() > 0
                            && img.leader() - 1 != oldLeader
                            && img.leaderEpoch() > oldEpoch
                            && brokers[img.leader() - 1]
                                    .replicaManager()
                                    .hostedPartition("idem-failover", 0)
                                    .isLeader();
                },
                "a new leader for idem-failover-0");
        int newLeader = leaderIndex("idem-failover");
        try (RawClient c = client(newLeader)) {
            ProduceResponse.PartitionResponse retry = produce(c, "idem-failover", batch(pid, 0, 0, 2000, "a", "b"));
            assertThat(retry.errorCode()).isEqualTo(Errors.NONE);
            assertThat(retry.baseOffset())
                    .as("the follower had the producer's state")
                    .isEqualTo(2);
            assertThat(logEnd(newLeader, "idem-failover")).isEqualTo(4);
            assertThat(produce(c, "idem-failover", batch(pid, 0, 2, 1000, "c")).baseOffset())
                    .isEqualTo(4);
        } finally {
            brokers[oldLeader] = StellflowServer.start(configs[oldLeader]);
        }
    }

    @Test
    void aRetryOnTheNewLeaderAfterCompactionAndARetentionMoveIsAnsweredByContent() throws Exception {
        String t = "idem-compacted";
        createTopic(
                t,
                3,
                Map.of("cleanup.policy", "compact,delete", "segment.bytes", "1024", "min.cleanable.dirty.ratio", "0"));
        int oldLeader = leaderIndex(t);
        int oldEpoch = image(t).leaderEpoch();
        long pid;
        try (RawClient c = client(oldLeader)) {
            pid = initProducerId(c, null).producerId();
            long other = initProducerId(c, null).producerId();
            assertThat(produce(c, t, batch(pid, 0, 0, 1000, "a", "b")).baseOffset())
                    .isZero();
            assertThat(produce(c, t, batch(pid, 0, 2, 1000, "c")).baseOffset()).isEqualTo(2);
            for (int i = 0; i < 20; i++) { // supersede the keys of pid's first batch; roll segments
                assertThat(produce(c, t, batch(other, 0, 2 * i, 1000, "a", "b")).errorCode())
                        .isEqualTo(Errors.NONE);
            }
        }
        long end = logEnd(oldLeader, t);
        Wait.until(WAIT, () -> everyReplica(t, p -> p.highWatermark() == end), "every replica at the high watermark");
        // Each replica cleans its own log, then delete-records and retention move its start past pid's batches.
        boolean moved = everyReplica(t, p -> {
            try {
                p.log().compact(p.highWatermark());
                p.log().maybeIncrementLogStartOffset(3, p.highWatermark());
                p.log().deleteOldSegments(p.highWatermark());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return p.log().logStartOffset() >= 3;
        });
        // Time retention goes further: the records' timestamps (1000 ms) are decades old.
        assertThat(moved).as("every replica's log start past pid's batches").isTrue();
        brokers[oldLeader].close();
        brokers[oldLeader] = null;
        Wait.until(
                WAIT,
                () -> {
                    PartitionImage img = image(t);
                    return img.leader() > 0
                            && img.leader() - 1 != oldLeader
                            && img.leaderEpoch() > oldEpoch
                            && brokers[img.leader() - 1]
                                    .replicaManager()
                                    .hostedPartition(t, 0)
                                    .isLeader();
                },
                "a new leader for " + t);
        int newLeader = leaderIndex(t);
        try (RawClient c = client(newLeader)) {
            assertThat(produce(c, t, batch(pid, 0, 0, 5000, "a", "X")).errorCode())
                    .as("another payload under the first batch's sequences")
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(produce(c, t, batch(pid, 0, 2, 5000, "Z")).errorCode())
                    .as("another payload under the second batch's sequence")
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            ProduceResponse.PartitionResponse first = produce(c, t, batch(pid, 0, 0, 5000, "a", "b"));
            assertThat(first.errorCode()).isEqualTo(Errors.NONE);
            assertThat(first.baseOffset())
                    .as("compacted and below the log start")
                    .isZero();
            assertThat(produce(c, t, batch(pid, 0, 2, 5000, "c")).baseOffset()).isEqualTo(2);
            assertThat(logEnd(newLeader, t)).as("no duplicate").isEqualTo(end);
            assertThat(produce(c, t, batch(pid, 0, 3, 1000, "d")).baseOffset()).isEqualTo(end);
        } finally {
            brokers[oldLeader] = StellflowServer.start(configs[oldLeader]);
        }
    }

    /** Whether {@code check} holds for the partition on every live replica (it runs on each). */
    private boolean everyReplica(String topic, java.util.function.Predicate<Partition> check) {
        boolean all = true;
        for (int id : image(topic).replicas()) {
            StellflowServer b = brokers[id - 1];
            Partition p = b == null ? null : b.replicaManager().hostedPartition(topic, 0);
            all &= p != null && check.test(p);
        }
        return all;
    }

    @Test
    void aRetryAfterTheLeaderRestartedGetsTheOriginalOffset() throws Exception {
        createTopic("idem-restart", 1);
        int leader = leaderIndex("idem-restart");
        long pid;
        try (RawClient c = client(leader)) {
            pid = initProducerId(c, null).producerId();
            for (int seq = 0; seq < 7; seq++) {
                assertThat(produce(c, "idem-restart", batch(pid, 0, seq, 1000, "v" + seq))
                                .baseOffset())
                        .isEqualTo(seq);
            }
        }
        brokers[leader].close();
        brokers[leader] = StellflowServer.start(configs[leader]);
        Wait.until(WAIT, () -> hostedWithLeader("idem-restart", 1), "idem-restart led again after the restart");
        try (RawClient c = client(leader)) {
            assertThat(produce(c, "idem-restart", batch(pid, 0, 6, 4242, "v6")).baseOffset())
                    .isEqualTo(6);
            assertThat(produce(c, "idem-restart", batch(pid, 0, 6, 1000, "other"))
                            .errorCode())
                    .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            assertThat(produce(c, "idem-restart", batch(pid, 0, 7, 1000, "v7")).baseOffset())
                    .isEqualTo(7);
        }
    }
}
