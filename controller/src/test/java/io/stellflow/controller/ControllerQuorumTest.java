package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.Endpoint;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three in-process controllers on 127.0.0.1 with test-driven brokers. */
@IntegrationTest
class ControllerQuorumTest {
    @TempDir
    Path dir;

    static CreateTopicsRequest create(String name, int partitions, int rf) {
        return CreateTopicsRequest.newBuilder()
                .addTopics(CreatableTopic.newBuilder()
                        .setName(name)
                        .setNumPartitions(partitions)
                        .setReplicationFactor(rf))
                .build();
    }

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void topicWithSixPartitionsRf3IsPlacedRoundRobinAndEveryControllerAndFollowerAgree() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, props("broker.session.timeout.ms", "60000")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            cluster.awaitActive(Duration.ofSeconds(20));
            FakeBroker b1 = new FakeBroker(1, "");
            b1.register(client);
            assertThat(b1.heartbeat(client, 0).getFenced())
                    .as("not caught up to its registration: stays fenced")
                    .isTrue();
            b1.registerAndUnfence(client);
            new FakeBroker(2, "").registerAndUnfence(client);
            new FakeBroker(3, "").registerAndUnfence(client);

            List<MetadataImage> images = new CopyOnWriteArrayList<>();
            List<MetadataDelta> deltas = new CopyOnWriteArrayList<>();
            try (MetadataFollower follower = client.followMetadata(0, new MetadataListener() {
                @Override
                public void onImage(MetadataImage image) {
                    images.add(image);
                }

                @Override
                public void onDelta(MetadataDelta delta, MetadataImage image) {
                    deltas.add(delta);
                }
            })) {
                long start = cluster.servers[cluster.activeIndex()].image().offset();
                assertThat(follower.awaitOffset(start, Duration.ofSeconds(10))).isTrue();
                CreateTopicsResponse r = client.createTopics(create("orders", 6, 3));
                assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
                assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);

                MetadataImage leaderImage = cluster.servers[cluster.activeIndex()].image();
                TopicImage t = leaderImage.topic("orders");
                assertThat(t.partitions()).hasSize(6);
                Map<Integer, Integer> leaders = new HashMap<>();
                for (PartitionImage p : t.partitions()) {
                    assertThat(new HashSet<>(p.replicas())).containsExactlyInAnyOrder(1, 2, 3);
                    assertThat(p.isr()).isEqualTo(p.replicas());
                    assertThat(p.leader()).isEqualTo(p.replicas().get(0));
                    leaders.merge(p.leader(), 1, Integer::sum);
                }
                assertThat(leaders).containsOnly(Map.entry(1, 2), Map.entry(2, 2), Map.entry(3, 2));

                long offset = leaderImage.offset();
                TestCluster.awaitTrue(
                        () -> Stream.of(cluster.servers).allMatch(s -> s.image().offset() >= offset),
                        Duration.ofSeconds(10),
                        "all controllers applied " + offset);
                for (ControllerServer s : cluster.servers) {
                    assertThat(s.image().topicsByName()).isEqualTo(leaderImage.topicsByName());
                    assertThat(s.image().brokers()).isEqualTo(leaderImage.brokers());
                }
                assertThat(follower.awaitOffset(offset, Duration.ofSeconds(10))).isTrue();
                assertThat(images).isNotEmpty();
                assertThat(follower.image().topicsByName()).isEqualTo(leaderImage.topicsByName());
                assertThat(deltas).anyMatch(d -> !d.records().isEmpty());
            }

            DescribeQuorumResponse q = client.describeQuorum();
            assertThat(q.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(q.getVotersCount()).isEqualTo(3);
            assertThat(q.getLeaderId()).isEqualTo(cluster.activeIndex() + 1);
            assertThat(q.getCommittedIndex()).isGreaterThan(0);
            DescribeClusterResponse c = client.describeCluster();
            assertThat(c.getBrokersList()).extracting(b -> b.getFenced()).containsOnly(false);
            assertThat(c.getBrokersCount()).isEqualTo(3);
        }
    }

    @Test
    void badInputIsRejectedWithAClearErrorAndWritesNoRecord() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, props("broker.session.timeout.ms", "60000")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            cluster.awaitActive(Duration.ofSeconds(20));
            new FakeBroker(1, "").registerAndUnfence(client);
            new FakeBroker(2, "").registerAndUnfence(client);
            assertThat(client.createTopics(create("a.b", 1, 1)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);
            ControllerServer leader = cluster.servers[cluster.activeIndex()];
            long before = leader.image().offset();

            Map<String, ErrorCode> cases = new HashMap<>();
            cases.put("", ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put("x".repeat(250), ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put("bad/name", ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put("sp ace", ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put(".", ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put("..", ErrorCode.INVALID_TOPIC_EXCEPTION);
            cases.put("a_b", ErrorCode.TOPIC_ALREADY_EXISTS);
            cases.put("a.b", ErrorCode.TOPIC_ALREADY_EXISTS);
            for (Map.Entry<String, ErrorCode> e : cases.entrySet()) {
                CreateTopicsResponse r = client.createTopics(create(e.getKey(), 1, 1));
                assertThat(r.getTopics(0).getError())
                        .as("name '%s'", e.getKey())
                        .isEqualTo(e.getValue());
                assertThat(r.getTopics(0).getErrorMessage()).isNotEmpty();
            }
            CreateTopicsResponse zero = client.createTopics(create("ok", 0, 1));
            assertThat(zero.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_PARTITIONS);
            assertThat(client.createTopics(create("ok", -3, 1)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.INVALID_PARTITIONS);
            CreateTopicsResponse rf = client.createTopics(create("ok", 1, 3));
            assertThat(rf.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
            assertThat(rf.getTopics(0).getErrorMessage()).contains("unfenced brokers");
            assertThat(client.createTopics(create("ok", 1, 0)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);

            assertThat(leader.image().offset()).as("no record written").isEqualTo(before);
            assertThat(leader.image().topicsByName().keySet()).containsExactly("a.b");

            // AlterPartition with a stale partition epoch is rejected too.
            TopicImage t = leader.image().topic("a.b");
            PartitionImage p = t.partition(0);
            AlterPartitionResponse stale = client.alterPartition(AlterPartitionRequest.newBuilder()
                    .setBrokerId(p.leader())
                    .setBrokerEpoch(leader.image().broker(p.leader()).brokerEpoch())
                    .setTopicId(MetadataRecords.uuid(t.id()))
                    .setPartition(0)
                    .setLeaderEpoch(p.leaderEpoch())
                    .setPartitionEpoch(p.partitionEpoch() + 5)
                    .addNewIsr(p.leader())
                    .build());
            assertThat(stale.getError()).isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);
            assertThat(leader.image().offset()).isEqualTo(before);

            // A stale broker epoch: the same AlterPartition, right but for the broker epoch.
            long epoch = leader.image().broker(p.leader()).brokerEpoch();
            AlterPartitionResponse staleBroker = client.alterPartition(AlterPartitionRequest.newBuilder()
                    .setBrokerId(p.leader())
                    .setBrokerEpoch(epoch - 1)
                    .setTopicId(MetadataRecords.uuid(t.id()))
                    .setPartition(0)
                    .setLeaderEpoch(p.leaderEpoch())
                    .setPartitionEpoch(p.partitionEpoch())
                    .addNewIsr(p.leader())
                    .build());
            assertThat(staleBroker.getError()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
            assertThat(staleBroker.getErrorMessage()).contains("epoch " + (epoch - 1) + " is not current");
            assertThat(leader.image().offset()).isEqualTo(before);
            assertThat(leader.image().topic("a.b").partition(0)).isEqualTo(p);

            // Heartbeats of a broker's previous incarnation (its old epoch) are rejected too: they neither
            // unfence the new incarnation nor fence it, and write nothing.
            long oldEpoch = leader.image().broker(2).brokerEpoch();
            FakeBroker b2 = new FakeBroker(2, "");
            b2.register(client); // a new incarnation of broker 2: new epoch, fenced until caught up
            assertThat(b2.epoch).isGreaterThan(oldEpoch);
            assertThat(leader.image().broker(2).brokerEpoch()).isEqualTo(b2.epoch);
            long registered = leader.image().offset();
            BrokerRegistration incarnation = leader.image().broker(2);
            for (boolean wantFence : new boolean[] {false, true}) {
                BrokerHeartbeatResponse hb = client.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                        .setBrokerId(2)
                        .setBrokerEpoch(oldEpoch)
                        .setMetadataOffset(Long.MAX_VALUE)
                        .setWantFence(wantFence)
                        .build());
                assertThat(hb.getError()).as("wantFence=%s", wantFence).isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
                assertThat(hb.getErrorMessage()).contains("is not the current " + b2.epoch);
                assertThat(leader.image().offset()).isEqualTo(registered);
                assertThat(leader.image().broker(2)).isEqualTo(incarnation);
            }
            assertThat(incarnation.fenced()).isTrue();
            BrokerHeartbeatResponse unknown = client.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                    .setBrokerId(42)
                    .setBrokerEpoch(registered)
                    .setMetadataOffset(Long.MAX_VALUE)
                    .build());
            assertThat(unknown.getError()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED);
            assertThat(leader.image().offset()).isEqualTo(registered);
            assertThat(leader.image().broker(42)).isNull();
        }
    }

    @Test
    void killingTheLeaderElectsANewOneAndTopicCreationWorksAgainQuickly() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, props("broker.session.timeout.ms", "60000")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            int old = cluster.awaitActive(Duration.ofSeconds(20));
            new FakeBroker(1, "").registerAndUnfence(client);
            assertThat(client.createTopics(create("before", 2, 1)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);

            long killNs = System.nanoTime();
            cluster.stop(old);
            CreateTopicsResponse r = client.createTopics(create("after", 2, 1));
            long failoverMs = (System.nanoTime() - killNs) / 1_000_000;
            System.out.println("CONTROLLER_FAILOVER_MS " + failoverMs + " (leader c" + (old + 1)
                    + " closed; election.timeout.ms=1000 default)");
            assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
            assertThat(cluster.activeIndex()).isNotEqualTo(old).isGreaterThanOrEqualTo(0);
            assertThat(failoverMs).isLessThan(10_000);
        }
    }

    @Test
    void aSilentBrokerIsFencedAndItsPartitionsMoveToAnotherIsrMemberWithBumpedEpochs() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, props("broker.session.timeout.ms", "1500")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            cluster.awaitActive(Duration.ofSeconds(20));
            FakeBroker[] brokers = {new FakeBroker(1, "r1"), new FakeBroker(2, "r2"), new FakeBroker(3, "r3")};
            for (FakeBroker b : brokers) {
                b.registerAndUnfence(client);
            }
            assertThat(client.createTopics(create("t", 3, 3)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);
            MetadataImage before = cluster.servers[cluster.activeIndex()].image();
            TopicImage t0 = before.topic("t");
            // Brokers 1 and 2 keep heartbeating; broker 3 goes silent.
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (!cluster.servers[cluster.activeIndex()].image().broker(3).fenced()) {
                assertThat(System.nanoTime()).as("broker 3 fenced in time").isLessThan(deadline);
                brokers[0].heartbeat(client, Long.MAX_VALUE);
                brokers[1].heartbeat(client, Long.MAX_VALUE);
                Thread.sleep(200);
            }
            MetadataImage after = cluster.servers[cluster.activeIndex()].image();
            assertThat(after.broker(1).fenced()).isFalse();
            assertThat(after.broker(2).fenced()).isFalse();
            TopicImage t1 = after.topic("t");
            int moved = 0;
            for (PartitionImage p0 : t0.partitions()) {
                PartitionImage p1 = t1.partition(p0.partition());
                assertThat(p1.isr()).doesNotContain(3).containsExactlyInAnyOrder(1, 2);
                assertThat(p1.partitionEpoch()).isEqualTo(p0.partitionEpoch() + 1);
                if (p0.leader() == 3) {
                    moved++;
                    assertThat(p1.leader()).isIn(1, 2);
                    assertThat(p1.leaderEpoch()).isEqualTo(p0.leaderEpoch() + 1);
                } else {
                    assertThat(p1.leader()).isEqualTo(p0.leader());
                    assertThat(p1.leaderEpoch()).isEqualTo(p0.leaderEpoch());
                }
            }
            assertThat(moved).isEqualTo(1);
            // Rack-aware placement spread each partition over all three racks.
            for (PartitionImage p : t0.partitions()) {
                assertThat(new HashSet<>(p.replicas())).hasSize(3);
            }
            // A restarted broker registers with a new incarnation and is unfenced once caught up.
            brokers[2].register(client);
            assertThat(brokers[2].heartbeat(client, 0).getFenced()).isTrue();
            assertThat(brokers[2].heartbeat(client, brokers[2].epoch).getFenced())
                    .isFalse();
        }
    }

    @Test
    void restartOfAllControllersRecoversTheSameMetadataFromSnapshotAndLog() throws Exception {
        Properties p = props("broker.session.timeout.ms", "60000", "metadata.snapshot.interval.entries", "4");
        MetadataImage before;
        TestCluster cluster = new TestCluster(dir, 3, p).startAll();
        try {
            try (ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
                cluster.awaitActive(Duration.ofSeconds(20));
                new FakeBroker(1, "").registerAndUnfence(client);
                new FakeBroker(2, "").registerAndUnfence(client);
                for (int i = 0; i < 6; i++) {
                    assertThat(client.createTopics(create("topic-" + i, 3, 2))
                                    .getTopics(0)
                                    .getError())
                            .isEqualTo(ErrorCode.NONE);
                }
                ControllerServer leader = cluster.servers[cluster.activeIndex()];
                TopicImage t = leader.image().topic("topic-0");
                PartitionImage p0 = t.partition(0);
                AlterPartitionResponse ap = client.alterPartition(AlterPartitionRequest.newBuilder()
                        .setBrokerId(p0.leader())
                        .setBrokerEpoch(leader.image().broker(p0.leader()).brokerEpoch())
                        .setTopicId(MetadataRecords.uuid(t.id()))
                        .setPartition(0)
                        .setLeaderEpoch(p0.leaderEpoch())
                        .setPartitionEpoch(p0.partitionEpoch())
                        .addNewIsr(p0.leader())
                        .build());
                assertThat(ap.getError()).isEqualTo(ErrorCode.NONE);
                assertThat(ap.getPartition().getPartitionEpoch()).isEqualTo(1);
                // A snapshot exists by now (interval 4); a few more changes make a log tail after it.
                TestCluster.awaitTrue(
                        () -> Stream.of(cluster.servers)
                                .allMatch(s -> s.stateMachine().getLatestSnapshot() != null),
                        Duration.ofSeconds(10),
                        "a snapshot on every controller");
                for (int i = 6; i < 8; i++) {
                    assertThat(client.createTopics(create("topic-" + i, 2, 2))
                                    .getTopics(0)
                                    .getError())
                            .isEqualTo(ErrorCode.NONE);
                }
                before = leader.image();
                long offset = before.offset();
                TestCluster.awaitTrue(
                        () -> Stream.of(cluster.servers).allMatch(s -> s.image().offset() >= offset),
                        Duration.ofSeconds(10),
                        "all applied");
            }
            long appliedBefore = Stream.of(cluster.servers)
                    .mapToLong(s -> s.stateMachine().appliedEntries())
                    .min()
                    .orElseThrow();
            assertThat(appliedBefore).as("entries applied from an empty log").isGreaterThan(12);
            cluster.close();
            Set<Path> snapshots = new HashSet<>();
            try (Stream<Path> files = Files.walk(dir)) {
                files.filter(f -> f.getFileName().toString().matches("snapshot\\.\\d+_\\d+"))
                        .forEach(snapshots::add);
            }
            assertThat(snapshots).as("snapshots were taken").isNotEmpty();

            cluster.startAll();
            cluster.awaitActive(Duration.ofSeconds(20));
            long offset = before.offset();
            TestCluster.awaitTrue(
                    () -> Stream.of(cluster.servers).allMatch(s -> s.image().offset() >= offset),
                    Duration.ofSeconds(20),
                    "all replayed");
            for (ControllerServer s : cluster.servers) {
                // Same topic ids, leader/partition epochs, assignments and ISRs, same brokers.
                assertThat(s.image().topicsByName()).isEqualTo(before.topicsByName());
                assertThat(s.image().brokers()).isEqualTo(before.brokers());
                long loaded = s.stateMachine().loadedSnapshotIndex();
                long applied = s.stateMachine().appliedEntries();
                System.out.println("controller " + s.nodeId() + " loaded snapshot at index " + loaded
                        + ", then applied " + applied + " entries (" + appliedBefore + " applied before the restart)");
                assertThat(loaded).as("snapshot loaded at start").isGreaterThan(0);
                // Only the tail after the snapshot was applied: fewer than the interval (4) entries, none
                // when Ratis snapshotted at stop; never the whole log again.
                assertThat(applied).isLessThan(appliedBefore).isLessThanOrEqualTo(3);
            }
        } finally {
            cluster.close();
        }
    }

    /**
     * What a change request got while the quorum had no majority: the server's REQUEST_TIMED_OUT answer
     * (the isolated leader could not commit) or "unavailable" from the client (the leader stepped down,
     * nobody active). Anything else (success, another error) fails the test.
     */
    private static String minorityOutcome(java.util.function.Supplier<ErrorCode> call) {
        try {
            ErrorCode e = call.get();
            assertThat(e).as("answer without a majority").isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
            return e.name();
        } catch (ControllerUnavailableException e) {
            return "unavailable: " + e.getMessage();
        }
    }

    @Test
    void withTwoOfThreeControllersDownChangesTimeOutAndNeverAppearOnceTheMajorityMovesOn() throws Exception {
        Properties p = props("broker.session.timeout.ms", "60000", "controller.request.timeout.ms", "2000");
        try (TestCluster cluster = new TestCluster(dir, 3, p).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(6));
                // The minority's calls: past the 2 s controller.request.timeout.ms (REQUEST_TIMED_OUT
                // can come back), not much more, since a leader that stepped down leaves the client
                // waiting out its whole timeout (both outcomes are accepted; 6 s waited 12 s of it).
                ControllerClient minority = cluster.client(Duration.ofSeconds(3))) {
            int leader = cluster.awaitActive(Duration.ofSeconds(20));
            new FakeBroker(1, "").registerAndUnfence(client);
            new FakeBroker(2, "").registerAndUnfence(client);
            assertThat(client.createTopics(create("kept", 1, 2)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);
            MetadataImage before = cluster.servers[leader].image();
            TopicImage kept = before.topic("kept");
            PartitionImage p0 = kept.partition(0);
            // Stop both followers: the leader alone cannot commit.
            for (int i = 0; i < 3; i++) {
                if (i != leader) {
                    cluster.stop(i);
                }
            }
            String create = minorityOutcome(() -> {
                CreateTopicsResponse r = minority.createTopics(create("lost", 1, 1));
                return r.getError() != ErrorCode.NONE
                        ? r.getError()
                        : r.getTopics(0).getError();
            });
            String alter = minorityOutcome(() -> minority.alterPartition(AlterPartitionRequest.newBuilder()
                            .setBrokerId(p0.leader())
                            .setBrokerEpoch(before.broker(p0.leader()).brokerEpoch())
                            .setTopicId(MetadataRecords.uuid(kept.id()))
                            .setPartition(0)
                            .setLeaderEpoch(p0.leaderEpoch())
                            .setPartitionEpoch(p0.partitionEpoch())
                            .addNewIsr(p0.leader())
                            .build())
                    .getError());
            String register = minorityOutcome(() -> minority.registerBroker(RegisterBrokerRequest.newBuilder()
                            .setBrokerId(3)
                            .setIncarnationId(MetadataRecords.uuid(UUID.randomUUID()))
                            .addListeners(Endpoint.newBuilder()
                                    .setName("PLAINTEXT")
                                    .setHost("127.0.0.1")
                                    .setPort(9003))
                            .build())
                    .getError());
            System.out.println(
                    "minority: CreateTopics " + create + "; AlterPartition " + alter + "; RegisterBroker " + register);

            // The isolated leader dies too; the two others form the majority and move on without its
            // uncommitted tail, which Raft then truncates when it rejoins.
            cluster.stop(leader);
            for (int i = 0; i < 3; i++) {
                if (i != leader) {
                    cluster.start(i);
                }
            }
            cluster.awaitActive(Duration.ofSeconds(20));
            assertThat(client.createTopics(create("after", 1, 2)).getTopics(0).getError())
                    .isEqualTo(ErrorCode.NONE);
            cluster.start(leader);
            long offset = cluster.servers[cluster.activeIndex()].image().offset();
            TestCluster.awaitTrue(
                    () -> Stream.of(cluster.servers).allMatch(s -> s.image().offset() >= offset),
                    Duration.ofSeconds(20),
                    "all three caught up");
            for (ControllerServer s : cluster.servers) {
                MetadataImage img = s.image();
                assertThat(img.topic("lost")).as("controller %d", s.nodeId()).isNull();
                assertThat(img.topic("after")).as("controller %d", s.nodeId()).isNotNull();
                assertThat(img.topic("kept").partition(0)).isEqualTo(p0);
                assertThat(img.brokers().keySet()).containsExactlyInAnyOrder(1, 2);
            }
        }
    }
}
