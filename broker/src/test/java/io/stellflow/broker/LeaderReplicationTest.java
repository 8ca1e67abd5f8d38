package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.cluster.BrokerLifecycle;
import io.stellflow.broker.cluster.HighWatermarkCheckpoint;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.topic.Partition;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.MetadataListener;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leader-side replication against a real combined node (broker 1 with its controller) and a second,
 * data-less broker 2 that only registers and heartbeats ({@link BrokerLifecycle} with no data
 * plane): the test plays follower 2 with raw Fetch requests ({@code replicaId = 2}), so nothing
 * fetches unless the test does. Covered: the HW waits for the follower; consumers read below it and
 * parked consumer Fetches wake when it advances; acks=-1 waits for it, times out with
 * REQUEST_TIMED_OUT (v1) or 7 (v0), is refused with NOT_ENOUGH_REPLICAS (v1) or 7 (v0) before the
 * append once the ISR shrank below min.insync.replicas; the ISR shrinks after
 * replica.lag.time.max.ms and grows back at the HW only through the controller's metadata; a Fetch
 * from a broker that is no replica gets NOT_LEADER_OR_FOLLOWER; the HW checkpoint is written on
 * shutdown and a restarted broker starts each partition's HW from it. The whole ordered sequence runs
 * on each transport (skipped where one is unavailable): a raw follower Fetch is served like a
 * broker's, with a {@code FileRegion} (sendfile on epoll, splice on io_uring).
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class LeaderReplicationTest {
    private static final int LAG_MS = 3000;
    private static final short PRODUCE_V1 = 1;

    /** The whole class runs once per transport, on one instance (field injection before each run). */
    @Parameter
    String transport;

    private Path dir;

    private StellflowServer server;
    private Properties props;
    private ControllerClient controller;
    private BrokerLifecycle fakeFollower;
    private RawClient follower;
    private RawClient producer;

    @BeforeParameterizedClassInvocation(injectArguments = false)
    void start(@TempDir Path tempDir) throws Exception {
        TestTransports.assumeSelected(transport);
        dir = tempDir.resolve(transport); // a fresh data dir per run, whatever the temp dir's scope
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:0");
        p.setProperty("log.dirs", dir.resolve("data").toString());
        p.setProperty("cluster.id", "leader-replication-test");
        p.setProperty("transport", transport);
        p.setProperty("metrics.port", "0");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        p.setProperty("broker.heartbeat.interval.ms", "200");
        p.setProperty("replica.lag.time.max.ms", Integer.toString(LAG_MS));
        props = p;
        server = StellflowServer.start(BrokerConfig.fromProperties(p));
        controller = ControllerClient.builder(server.controller().rpcEndpoint()).build();
        fakeFollower = new BrokerLifecycle(
                2,
                controller,
                new MetadataListener() {
                    @Override
                    public void onImage(MetadataImage image) {}

                    @Override
                    public void onDelta(MetadataDelta delta, MetadataImage image) {}
                },
                "127.0.0.1",
                1,
                "",
                200,
                null);
        assertThat(fakeFollower.start(Duration.ofSeconds(30)))
                .as("broker 2 registered and unfenced")
                .isTrue();
        follower = new RawClient(server.port());
        producer = new RawClient(server.port());
    }

    @AfterParameterizedClassInvocation(injectArguments = false)
    void stop() throws Exception {
        if (follower != null) {
            follower.close();
        }
        if (producer != null) {
            producer.close();
        }
        if (server != null) {
            server.close();
        }
        if (fakeFollower != null) {
            fakeFollower.close(Duration.ofSeconds(1));
        }
        if (controller != null) {
            controller.close();
        }
        // One instance serves every transport's run: a run skipped by its assumption closes nothing twice.
        follower = null;
        producer = null;
        server = null;
        fakeFollower = null;
        controller = null;
    }

    /** Creates a topic of 2 partitions on brokers 1 and 2 and returns a partition broker 1 leads. */
    private int createLedByOne(String topic, Map<String, String> config) throws Exception {
        CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                .addTopics(CreatableTopic.newBuilder()
                        .setName(topic)
                        .setNumPartitions(2)
                        .setReplicationFactor(2)
                        .putAllConfig(config))
                .build());
        assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        MetadataImage image = awaitImage(i -> i.topic(topic) != null, "topic " + topic);
        for (PartitionImage p : image.topic(topic).partitions()) {
            if (p.leader() == 1) {
                assertThat(p.replicas()).containsExactlyInAnyOrder(1, 2);
                assertThat(p.isr()).containsExactlyInAnyOrder(1, 2);
                return p.partition();
            }
        }
        throw new AssertionError("no partition of " + topic + " led by broker 1: " + image.topic(topic));
    }

    private MetadataImage awaitImage(Predicate<MetadataImage> condition, String what) throws InterruptedException {
        MetadataImage image = server.replicaManager().awaitImage(condition, 20_000);
        assertThat(image).as(what).isNotNull();
        return image;
    }

    private List<Integer> isr(String topic, int partition) {
        TopicImage t = server.replicaManager().image().topic(topic);
        return t.partition(partition).isr();
    }

    private Partition partition(String topic, int partition) {
        return server.replicaManager().leaderPartition(topic, partition);
    }

    private static FetchRequest fetchRequest(int replicaId, String topic, int partition, long offset, int maxWaitMs) {
        return new FetchRequest(
                replicaId,
                maxWaitMs,
                1,
                1 << 20,
                (byte) 0,
                0,
                List.of(new FetchTopic(topic, List.of(new FetchPartition(partition, -1, offset, -1L, 1 << 20)))));
    }

    /** Follower 2 fetches {@code topic-partition} at {@code offset} (its LEO), without waiting. */
    private FetchResponse.PartitionData followerFetch(int replicaId, String topic, int partition, long offset)
            throws Exception {
        return Requests.fetchOne(follower, fetchRequest(replicaId, topic, partition, offset, 0));
    }

    private static ProduceRequest produceRequest(String topic, int partition, short acks, int timeoutMs) {
        return new ProduceRequest(
                null,
                acks,
                timeoutMs,
                List.of(new ProduceRequest.TopicData(
                        topic,
                        List.of(new ProduceRequest.PartitionData(
                                partition, io.netty.buffer.Unpooled.wrappedBuffer(Requests.batch(1, 1_000L)))))));
    }

    private static ProduceResponse.PartitionResponse produce(
            RawClient client, short version, String topic, int partition, short acks, int timeoutMs) throws Exception {
        int correlationId = Requests.nextCorrelationId();
        client.send(
                RequestHeader.of(ApiKeys.PRODUCE, version, correlationId, "test"),
                produceRequest(topic, partition, acks, timeoutMs));
        RawClient.Response r = client.receive();
        assertThat(r.correlationId()).isEqualTo(correlationId);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return ProduceResponse.read(r.body()).responses().get(0).partitions().get(0);
    }

    @Test
    @Order(1)
    void acksAllWaitsForTheFollowerAndConsumersSeeOnlyWhatIsBelowTheHighWatermark() throws Exception {
        String topic = "wait";
        int p = createLedByOne(topic, Map.of());
        assertThat(followerFetch(2, topic, p, 0).errorCode()).isEqualTo(Errors.NONE);

        CompletableFuture<ProduceResponse.PartitionResponse> acked = CompletableFuture.supplyAsync(() -> {
            try {
                return produce(producer, PRODUCE_V1, topic, p, (short) -1, 20_000);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Wait.until(Duration.ofSeconds(10), () -> partition(topic, p).logEndOffset() >= 1, "the record appended");
        assertThat(partition(topic, p).logEndOffset()).isEqualTo(1);
        Thread.sleep(200);
        assertThat(acked)
                .as("acks=-1 is not answered before the follower has the record")
                .isNotDone();
        try (RawClient consumer = new RawClient(server.port())) {
            FetchResponse.PartitionData seen = Requests.fetchOne(consumer, fetchRequest(-1, topic, p, 0, 0));
            assertThat(seen.highWatermark()).isZero();
            assertThat(seen.records().readableBytes())
                    .as("nothing below the HW yet")
                    .isZero();

            FetchResponse.PartitionData asFollower = followerFetch(2, topic, p, 0);
            assertThat(asFollower.records().readableBytes())
                    .as("a follower reads up to the LEO")
                    .isPositive();

            assertThat(followerFetch(2, topic, p, 1).highWatermark())
                    .as("the response already counts this fetch")
                    .isEqualTo(1);
            ProduceResponse.PartitionResponse r = acked.get(10, TimeUnit.SECONDS);
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            assertThat(r.baseOffset()).isZero();
            seen = Requests.fetchOne(consumer, fetchRequest(-1, topic, p, 0, 0));
            assertThat(seen.highWatermark()).isEqualTo(1);
            assertThat(seen.records().readableBytes()).isPositive();
        }
    }

    @Test
    @Order(2)
    void aParkedConsumerFetchWakesWhenTheHighWatermarkAdvances() throws Exception {
        String topic = "poll";
        int p = createLedByOne(topic, Map.of());
        followerFetch(2, topic, p, 0);
        assertThat(produce(producer, PRODUCE_V1, topic, p, (short) 1, 5_000).errorCode())
                .isEqualTo(Errors.NONE);
        try (RawClient consumer = new RawClient(server.port())) {
            int correlationId = Requests.nextCorrelationId();
            consumer.send(ApiKeys.FETCH, correlationId, fetchRequest(-1, topic, p, 0, 8_000));
            Wait.until(Duration.ofSeconds(5), () -> partition(topic, p).listenerCount() != 0, "the Fetch parked");
            assertThat(partition(topic, p).listenerCount())
                    .as("the consumer Fetch is parked")
                    .isEqualTo(1);
            long startNs = System.nanoTime();
            followerFetch(2, topic, p, 1);
            RawClient.Response r = consumer.receive();
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertThat(r.correlationId()).isEqualTo(correlationId);
            FetchResponse.PartitionData data =
                    FetchResponse.read(r.body()).responses().get(0).partitions().get(0);
            assertThat(data.highWatermark()).isEqualTo(1);
            assertThat(data.records().readableBytes()).isPositive();
            assertThat(waitedMs).as("woken by the HW, not by maxWaitMs").isLessThan(6_000);
        }
    }

    @Test
    @Order(3)
    void acksAllTimesOutWithRequestTimedOutInV1AndBrokerNotAvailableInV0() throws Exception {
        String topic = "slow";
        int p = createLedByOne(topic, Map.of());
        followerFetch(2, topic, p, 0);
        ProduceResponse.PartitionResponse v1 = produce(producer, PRODUCE_V1, topic, p, (short) -1, 300);
        assertThat(v1.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT);
        assertThat(v1.baseOffset()).isEqualTo(-1L);
        ProduceResponse.PartitionResponse v0 = produce(producer, (short) 0, topic, p, (short) -1, 300);
        assertThat(v0.errorCode()).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(partition(topic, p).logEndOffset())
                .as("the records stay in the log")
                .isEqualTo(2);
        assertThat(partition(topic, p).highWatermark()).isZero();
    }

    @Test
    @Order(4)
    void theIsrShrinksAfterTheLagTimeRefusesAcksAllBelowMinIsrAndGrowsBackAtTheHighWatermark() throws Exception {
        String topic = "strict";
        int p = createLedByOne(topic, Map.of("min.insync.replicas", "2"));
        followerFetch(2, topic, p, 0);
        assertThat(produce(producer, PRODUCE_V1, topic, p, (short) 1, 5_000).errorCode())
                .isEqualTo(Errors.NONE);
        int epochBefore =
                server.replicaManager().image().topic(topic).partition(p).partitionEpoch();

        // Follower 2 stops fetching: after replica.lag.time.max.ms the leader proposes [1] and the
        // controller's metadata makes it so.
        awaitImage(i -> i.topic(topic).partition(p).isr().equals(List.of(1)), "ISR of " + topic + " shrunk to [1]");
        Partition leader = partition(topic, p);
        assertThat(leader.inSyncReplicas()).containsExactly(1);
        assertThat(server.replicaManager().image().topic(topic).partition(p).partitionEpoch())
                .isGreaterThan(epochBefore);
        assertThat(leader.highWatermark()).as("the leader alone is the ISR").isEqualTo(1);
        assertThat(server.replicaManager().underMinIsrCount()).isGreaterThanOrEqualTo(1);
        assertThat(server.replicaManager().underReplicatedCount()).isGreaterThanOrEqualTo(1);

        ProduceResponse.PartitionResponse refused = produce(producer, PRODUCE_V1, topic, p, (short) -1, 5_000);
        assertThat(refused.errorCode()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS);
        assertThat(produce(producer, (short) 0, topic, p, (short) -1, 5_000).errorCode())
                .isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(leader.logEndOffset()).as("refused before the append").isEqualTo(1);
        assertThat(produce(producer, PRODUCE_V1, topic, p, (short) 1, 5_000).errorCode())
                .as("acks=1 does not care")
                .isEqualTo(Errors.NONE);

        // Follower 2 catches up to the HW: the leader proposes [1, 2], effective once committed.
        followerFetch(2, topic, p, 2);
        awaitImage(
                i -> i.topic(topic).partition(p).isr().containsAll(List.of(1, 2)),
                "ISR of " + topic + " back to [1, 2]");
        assertThat(leader.inSyncReplicaCount()).isEqualTo(2);

        CompletableFuture<ProduceResponse.PartitionResponse> acked = CompletableFuture.supplyAsync(() -> {
            try {
                return produce(producer, PRODUCE_V1, topic, p, (short) -1, 20_000);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Wait.until(Duration.ofSeconds(10), () -> leader.logEndOffset() >= 3, "the third record appended");
        followerFetch(2, topic, p, 3);
        ProduceResponse.PartitionResponse r = acked.get(10, TimeUnit.SECONDS);
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        assertThat(r.baseOffset()).isEqualTo(2);
        assertThat(isr(topic, p)).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    @Order(5)
    void aFetchFromABrokerThatIsNoReplicaIsRefused() throws Exception {
        String topic = "wait";
        int p = server.replicaManager().image().topic(topic).partition(0).leader() == 1 ? 0 : 1;
        assertThat(followerFetch(3, topic, p, 0).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(followerFetch(1, topic, p, 0).errorCode())
                .as("the leader itself is no follower")
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(followerFetch(2, topic, 1 - p, 0).errorCode())
                .as("a partition broker 1 does not lead")
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    @Order(6)
    void theHighWatermarkCheckpointIsWrittenOnShutdownAndARestartStartsFromIt() throws Exception {
        String topic = "ckpt";
        int p = createLedByOne(topic, Map.of());
        followerFetch(2, topic, p, 0);
        for (int i = 0; i < 3; i++) {
            assertThat(produce(producer, PRODUCE_V1, topic, p, (short) 1, 5_000).errorCode())
                    .isEqualTo(Errors.NONE);
        }
        followerFetch(2, topic, p, 1);
        assertThat(partition(topic, p).highWatermark()).isEqualTo(1);
        assertThat(partition(topic, p).logEndOffset()).isEqualTo(3);
        server.close();
        Map<String, Long> checkpoint = HighWatermarkCheckpoint.readAll(List.of(dir.resolve("data")));
        assertThat(checkpoint).containsEntry(topic + "-" + p, 1L);

        // Restarted, the partition's HW is the checkpointed 1: neither its log end (3) nor 0.
        server = StellflowServer.start(BrokerConfig.fromProperties(props));
        awaitImage(i -> i.topic(topic) != null, "topic after the restart");
        Partition restarted = server.replicaManager().hostedPartition(topic, p);
        assertThat(restarted.logEndOffset()).isEqualTo(3);
        assertThat(restarted.highWatermark()).isEqualTo(1);
    }
}
