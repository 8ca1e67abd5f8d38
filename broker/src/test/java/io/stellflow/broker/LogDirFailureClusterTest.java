package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.telemetry.LogEvents;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.LoopbackPorts;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.server.common.file.SmallTmpfs;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #23, point 2, in a cluster: one controller and three brokers in this JVM, replication factor
 * 3. Broker 1's log dir is a small tmpfs that fills up: the partition it leads moves to another ISR
 * member and an acks=-1 producer keeps getting acknowledgements (min.insync.replicas=2), every record
 * acknowledged after the fill is read back from the new leader, and once space is freed broker 1
 * rejoins the ISR without a restart. Broker 2 has two log dirs and loses one while serving: the
 * partitions it led on that dir move to other brokers, those on its other dir stay led by it. The
 * tests share the cluster and run in order; without root (no tmpfs mount) the class is skipped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@IntegrationTest
class LogDirFailureClusterTest {
    private static final int N = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private Path dir;
    private SmallTmpfs fs;
    private ControllerServer controller;
    private String bootstrapControllers;
    private final StellflowServer[] brokers = new StellflowServer[N];

    /** Static: the class's tests share one cluster, its lines are captured from before it starts. */
    @RegisterExtension
    static final LogLines LINES = LogLines.root();

    @BeforeAll
    void startCluster(@TempDir Path tmp) throws Exception {
        dir = tmp;
        fs = SmallTmpfs.mountOrSkip(6 << 20);
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
        cp.setProperty("cluster.id", "log-dir-test");
        controller = ControllerServer.start(ControllerConfig.fromProperties(cp));
        int[] ports = LoopbackPorts.pick(N);
        String[] transports = TestTransports.forBrokers(N);
        System.out.println(TestTransports.describe("LogDirFailureClusterTest", transports, 1));
        String[] logDirs = {
            fs.dir().resolve("data").toString(),
            dir.resolve("b2-a") + "," + dir.resolve("b2-b"),
            dir.resolve("b3").toString()
        };
        for (int i = 0; i < N; i++) {
            Properties p = new Properties();
            p.setProperty("process.roles", "broker");
            p.setProperty("node.id", Integer.toString(i + 1));
            p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + ports[i]);
            p.setProperty("log.dirs", logDirs[i]);
            p.setProperty("cluster.id", "log-dir-test");
            p.setProperty("controller.quorum.bootstrap.servers", bootstrapControllers);
            p.setProperty("broker.heartbeat.interval.ms", "300");
            p.setProperty("transport", transports[i]);
            p.setProperty("metrics.exporter", "none");
            p.setProperty("num.io.threads", "2");
            p.setProperty("num.network.threads", "1");
            p.setProperty("replica.fetch.backoff.ms", "100");
            p.setProperty("replica.lag.time.max.ms", "2000");
            p.setProperty("replica.fetch.wait.max.ms", "200");
            p.setProperty("log.dir.failure.retry.ms", "200");
            // Small preallocated indexes and segments: many partitions fit the 6 MiB tmpfs.
            p.setProperty("log.index.size.max.bytes", "65536");
            p.setProperty("log.segment.bytes", "262144");
            brokers[i] = StellflowServer.start(BrokerConfig.fromProperties(p));
        }
    }

    @AfterAll
    void stopCluster() throws Exception {
        for (StellflowServer b : brokers) {
            if (b != null) {
                b.close();
            }
        }
        if (controller != null) {
            controller.close();
        }
        if (fs != null) {
            fs.close();
        }
    }

    private void createTopic(String name, int partitions) throws Exception {
        try (ControllerClient client =
                ControllerClient.builder(bootstrapControllers).build()) {
            assertThat(client.createTopics(CreateTopicsRequest.newBuilder()
                                    .addTopics(CreatableTopic.newBuilder()
                                            .setName(name)
                                            .setNumPartitions(partitions)
                                            .setReplicationFactor(N)
                                            .putConfig("min.insync.replicas", "2"))
                                    .build())
                            .getTopics(0)
                            .getError())
                    .isEqualTo(ErrorCode.NONE);
        }
        Wait.until(
                WAIT,
                () -> {
                    for (int p = 0; p < partitions; p++) {
                        PartitionImage img = partitionImage(name, p);
                        if (img == null || img.leader() < 0 || img.isr().size() != N) {
                            return false;
                        }
                        for (StellflowServer b : brokers) {
                            var hosted = b.replicaManager().hostedPartition(name, p);
                            if (hosted == null || hosted.leaderEpoch() != img.leaderEpoch()) {
                                return false;
                            }
                        }
                    }
                    return true;
                },
                "every replica of " + name + " hosted with its leader");
    }

    private PartitionImage partitionImage(String topic, int partition) {
        MetadataImage image = controller.image();
        return image.topic(topic) == null ? null : image.topic(topic).partition(partition);
    }

    /** One acks=-1 Produce to the broker the controller names leader; its answer. */
    private PartitionResponse produceToLeader(String topic, int partition, byte[] batch) {
        int leader = partitionImage(topic, partition).leader();
        if (leader < 0) {
            return new PartitionResponse(partition, Errors.LEADER_NOT_AVAILABLE, -1L, -1, -1L, -1L);
        }
        try (RawClient client = new RawClient(brokers[leader - 1].port())) {
            return Requests.produceOne(client, topic, partition, batch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<String> offlineEvents(Path logDir) {
        return LINES.messages(LogEvents.LOG_DIR_OFFLINE + " dir=" + logDir);
    }

    @Test
    @Order(1)
    void aLogDirLostWhileServingMovesLeadershipOfItsPartitionsOnly() throws Exception {
        createTopic("dirs", 6);
        Path lost = dir.resolve("b2-b");
        List<Integer> onLost = new ArrayList<>();
        List<Integer> ledElsewhere = new ArrayList<>();
        for (int p = 0; p < 6; p++) {
            boolean there = Files.isDirectory(lost.resolve("dirs-" + p));
            if (there) {
                onLost.add(p);
            } else if (partitionImage("dirs", p).leader() == 2) {
                ledElsewhere.add(p);
            }
        }
        assertThat(onLost).as("broker 2 spreads its replicas over both dirs").isNotEmpty();
        for (int p = 0; p < 6; p++) {
            assertThat(produceToLeader("dirs", p, Requests.batch(1, 100 + p)).errorCode())
                    .isEqualTo(Errors.NONE);
        }

        try (Stream<Path> walk = Files.walk(lost)) {
            for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }

        Wait.until(WAIT, () -> !offlineEvents(lost).isEmpty(), "LOG_DIR_OFFLINE for " + lost);
        Wait.until(
                WAIT,
                () -> onLost.stream().allMatch(p -> {
                    PartitionImage img = partitionImage("dirs", p);
                    return img.leader() != 2 && img.leader() >= 0 && !img.isr().contains(2);
                }),
                "broker 2's replicas on the lost dir out of leadership and ISR");
        for (int p : ledElsewhere) {
            assertThat(partitionImage("dirs", p).leader())
                    .as("dirs-%d on broker 2's other dir", p)
                    .isEqualTo(2);
        }
        for (int p = 0; p < 6; p++) {
            assertThat(produceToLeader("dirs", p, Requests.batch(1, 200 + p)).errorCode())
                    .as("dirs-%d after the loss", p)
                    .isEqualTo(Errors.NONE);
        }
        assertThat(offlineEvents(lost)).as("one event").hasSize(1);
        assertThat(offlineEvents(dir.resolve("b2-a"))).isEmpty();
    }

    @Test
    @Order(2)
    void aFullLogDirMovesLeadershipAwayAndAcksAllProducersContinue() throws Exception {
        createTopic("acks", 3);
        int partition = -1;
        for (int p = 0; p < 3; p++) {
            if (partitionImage("acks", p).leader() == 1) {
                partition = p;
            }
        }
        assertThat(partition).as("leaders rotate over the three brokers").isNotNegative();
        int acknowledgedBefore = 0;
        for (int i = 0; i < 10; i++) {
            assertThat(produceToLeader("acks", partition, Requests.batch(1, 1_000 + i))
                            .errorCode())
                    .isEqualTo(Errors.NONE);
            acknowledgedBefore++;
        }

        fs.fill(fs.dir().resolve("filler"));
        List<Long> acknowledgedAfter = new ArrayList<>();
        long[] next = {2_000};
        final int p = partition;
        Wait.until(
                WAIT,
                () -> {
                    long ts = next[0]++;
                    PartitionResponse r = produceToLeader("acks", p, Requests.batchOfSize(1, 2000, ts));
                    assertThat(r.errorCode())
                            .as("every answer is an acknowledgement or a retriable error")
                            .isIn(
                                    Errors.NONE,
                                    Errors.BROKER_NOT_AVAILABLE,
                                    Errors.NOT_LEADER_OR_FOLLOWER,
                                    Errors.LEADER_NOT_AVAILABLE,
                                    Errors.NOT_ENOUGH_REPLICAS);
                    if (r.errorCode() == Errors.NONE) {
                        acknowledgedAfter.add(ts);
                    }
                    return partitionImage("acks", p).leader() != 1 && acknowledgedAfter.size() >= 20;
                },
                "20 acks=-1 records acknowledged by a new leader after broker 1's disk filled");
        PartitionImage moved = partitionImage("acks", partition);
        assertThat(moved.leader()).isNotEqualTo(1);
        assertThat(moved.isr()).doesNotContain(1);

        // Everything acknowledged is on the new leader. The loop above may end right after the
        // controller moved leadership (broker 1 keeps acknowledging into its reserved log blocks
        // after the fill, log.preallocate), before the new leader applied it: until then it answers
        // a fetch NOT_LEADER_OR_FOLLOWER, which is retriable.
        List<Long> read = new ArrayList<>();
        try (RawClient client = new RawClient(brokers[moved.leader() - 1].port())) {
            Wait.until(
                    WAIT,
                    () -> {
                        short error;
                        try {
                            error = Requests.fetchOne(client, Requests.fetch("acks", p, 0, 0))
                                    .errorCode();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        assertThat(error).isIn(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER);
                        return error == Errors.NONE;
                    },
                    "broker " + moved.leader() + " serves fetches as the new leader");
            long offset = 0;
            while (true) {
                PartitionData data = Requests.fetchOne(client, Requests.fetch("acks", partition, offset, 0));
                assertThat(data.errorCode()).isEqualTo(Errors.NONE);
                List<DecodedRecord> records = RecordBatchReader.decode(data.records(), offset);
                if (records.isEmpty()) {
                    break;
                }
                for (DecodedRecord r : records) {
                    read.add(r.timestampMs());
                    offset = r.offset() + 1;
                }
            }
        }
        assertThat(read.subList(0, acknowledgedBefore)).hasSize(10).first().isEqualTo(1_000L);
        assertThat(read).containsAll(acknowledgedAfter);

        // Space freed: broker 1 recovers in place, fetches from the new leader and rejoins the ISR.
        Files.delete(fs.dir().resolve("filler"));
        final int q = partition;
        Wait.until(
                WAIT,
                () -> partitionImage("acks", q).isr().contains(1),
                "broker 1 back in the ISR of acks-" + partition + " without a restart");
    }
}
