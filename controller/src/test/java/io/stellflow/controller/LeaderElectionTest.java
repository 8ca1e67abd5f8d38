package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.PartitionElectionResult;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leader elections through a running controller (one voter, test-driven brokers): fencing with clean
 * election from the live ISR, offline partitions, {@code unclean.leader.election.enable} switched on
 * per topic, an ISR member coming back, ElectLeaders PREFERRED and UNCLEAN, and automatic
 * rebalancing. Brokers are fenced by their clean-shutdown heartbeat ({@code want_fence}) so the
 * tests do not wait for session timeouts.
 */
@IntegrationTest
public class LeaderElectionTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    public static Properties props(String... kv) {
        Properties p = new Properties();
        p.setProperty("broker.session.timeout.ms", "600000");
        p.setProperty("controller.quorum.election.timeout.ms", "200");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** One controller and brokers 1..n, unfenced. */
    public static final class Setup implements AutoCloseable {
        public final TestCluster cluster;
        final ControllerClient client;
        final ControllerMetricsHooksTest.Recording metrics = new ControllerMetricsHooksTest.Recording();
        final Map<Integer, FakeBroker> brokers = new HashMap<>();

        public Setup(Path dir, int n, Properties p) throws Exception {
            cluster = new TestCluster(dir, 1, p);
            cluster.servers[0] = ControllerServer.start(cluster.configs.get(0), metrics);
            client = cluster.client(WAIT);
            cluster.awaitActive(WAIT);
            for (int id = 1; id <= n; id++) {
                FakeBroker b = new FakeBroker(id, "");
                b.registerAndUnfence(client);
                brokers.put(id, b);
            }
        }

        public MetadataImage image() {
            return cluster.servers[0].image();
        }

        public PartitionImage partition(String topic, int p) {
            return image().topic(topic).partition(p);
        }

        public void createTopic(String name, int partitions, int rf, Map<String, String> config) {
            var r = client.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(CreatableTopic.newBuilder()
                            .setName(name)
                            .setNumPartitions(partitions)
                            .setReplicationFactor(rf)
                            .putAllConfig(config))
                    .build());
            assertThat(r.getTopics(0).getError()).as(r.toString()).isEqualTo(ErrorCode.NONE);
        }

        /** A clean-shutdown heartbeat: the controller fences the broker. */
        public void fence(int id) {
            var r = client.brokerHeartbeat(BrokerHeartbeatRequest.newBuilder()
                    .setBrokerId(id)
                    .setBrokerEpoch(brokers.get(id).epoch)
                    .setMetadataOffset(Long.MAX_VALUE)
                    .setWantFence(true)
                    .build());
            assertThat(r.getFenced()).isTrue();
        }

        /** A caught-up heartbeat: the controller unfences the broker. */
        public void unfence(int id) {
            assertThat(brokers.get(id).heartbeat(client, Long.MAX_VALUE).getFenced())
                    .isFalse();
        }

        /** The partition's leader asks for a new ISR (what a broker leader does on shrink/expand). */
        public AlterPartitionResponse alterIsr(String topic, int part, List<Integer> isr) {
            TopicImage t = image().topic(topic);
            PartitionImage p = t.partition(part);
            return client.alterPartition(AlterPartitionRequest.newBuilder()
                    .setBrokerId(p.leader())
                    .setBrokerEpoch(brokers.get(p.leader()).epoch)
                    .setTopicId(MetadataRecords.uuid(t.id()))
                    .setPartition(part)
                    .setLeaderEpoch(p.leaderEpoch())
                    .setPartitionEpoch(p.partitionEpoch())
                    .addAllNewIsr(isr)
                    .build());
        }

        ElectLeadersResponse elect(ElectionType type, String topic, Integer... partitions) {
            return client.electLeaders(ElectLeadersRequest.newBuilder()
                    .setElectionType(type)
                    .addTopics(
                            ElectionTopicPartitions.newBuilder().setTopic(topic).addAllPartitions(List.of(partitions)))
                    .build());
        }

        @Override
        public void close() {
            client.close();
            cluster.close();
        }
    }

    @Test
    void fencingElectsFromTheLiveIsrOnlyAndAnOfflinePartitionWaitsForItsIsrMemberOrUncleanElection() throws Exception {
        try (Setup s = new Setup(dir, 3, props("auto.leader.rebalance.enable", "false"))) {
            s.createTopic("t", 3, 3, Map.of());
            // p0 keeps its full ISR; p1's and p2's leaders shrink their ISR to themselves.
            int l1 = s.partition("t", 1).leader();
            int l2 = s.partition("t", 2).leader();
            assertThat(s.alterIsr("t", 1, List.of(l1)).getError()).isEqualTo(ErrorCode.NONE);
            assertThat(s.alterIsr("t", 2, List.of(l2)).getError()).isEqualTo(ErrorCode.NONE);

            PartitionImage p0 = s.partition("t", 0);
            s.fence(p0.leader());
            PartitionImage p0After = s.partition("t", 0);
            int expected = p0.replicas().stream()
                    .filter(r -> r != p0.leader())
                    .findFirst()
                    .orElseThrow();
            assertThat(p0After.leader())
                    .as("first live ISR replica in assignment order")
                    .isEqualTo(expected);
            assertThat(p0After.leaderEpoch()).isEqualTo(p0.leaderEpoch() + 1);
            assertThat(p0After.partitionEpoch()).isEqualTo(p0.partitionEpoch() + 1);
            assertThat(p0After.isr()).doesNotContain(p0.leader()).hasSize(2);

            // p1's only ISR member is fenced: offline, ISR kept, though two replicas are live.
            s.unfence(p0.leader());
            PartitionImage p1 = s.partition("t", 1);
            s.fence(l1);
            PartitionImage p1After = s.partition("t", 1);
            assertThat(p1After.leader()).isEqualTo(PartitionImage.NO_LEADER);
            assertThat(p1After.isr()).containsExactly(l1);
            assertThat(p1After.leaderEpoch()).isEqualTo(p1.leaderEpoch() + 1);
            // The timer's re-evaluation of offline partitions does not elect outside the ISR either.
            Thread.sleep(1200);
            assertThat(s.partition("t", 1)).isEqualTo(p1After);

            // It comes back: as the ISR member it leads again, with a new leader epoch.
            s.unfence(l1);
            PartitionImage back = s.partition("t", 1);
            assertThat(back.leader()).isEqualTo(l1);
            assertThat(back.isr()).containsExactly(l1);
            assertThat(back.leaderEpoch()).isEqualTo(p1After.leaderEpoch() + 1);
            assertThat(back.partitionEpoch()).isEqualTo(p1After.partitionEpoch() + 1);

            // p0's ISR lost its first leader and l1 ({l1, l2} -> {l2}); with p2 it goes offline when
            // l2 is fenced. Switching unclean election on for the topic elects for both in the same entry.
            assertThat(s.partition("t", 0).isr()).containsExactly(l2);
            s.fence(l2);
            PartitionImage p2Off = s.partition("t", 2);
            assertThat(p2Off.leader()).isEqualTo(PartitionImage.NO_LEADER);
            assertThat(s.partition("t", 0).leader()).isEqualTo(PartitionImage.NO_LEADER);
            assertThat(s.metrics.uncleanElections.get()).isZero();
            IncrementalAlterConfigsResponse on =
                    s.client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                            .setTopic("t")
                            .addConfigs(AlterableConfig.newBuilder()
                                    .setKey("unclean.leader.election.enable")
                                    .setValue("true"))
                            .build());
            assertThat(on.getError()).as(on.getErrorMessage()).isEqualTo(ErrorCode.NONE);
            PartitionImage p2Unclean = s.partition("t", 2);
            int firstLive =
                    p2Off.replicas().stream().filter(r -> r != l2).findFirst().orElseThrow();
            assertThat(p2Unclean.leader()).isEqualTo(firstLive);
            assertThat(p2Unclean.isr()).containsExactly(firstLive);
            assertThat(p2Unclean.leaderEpoch()).isEqualTo(p2Off.leaderEpoch() + 1);
            assertThat(p2Unclean.partitionEpoch()).isEqualTo(p2Off.partitionEpoch() + 1);
            assertThat(s.partition("t", 0).isr())
                    .containsExactly(s.partition("t", 0).leader());
            assertThat(s.partition("t", 0).leader()).isNotEqualTo(l2).isNotEqualTo(PartitionImage.NO_LEADER);
            assertThat(s.metrics.uncleanElections.get()).isEqualTo(2);

            // A bad value is refused and writes nothing.
            long before = s.image().offset();
            var bad = s.client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                    .setTopic("t")
                    .addConfigs(AlterableConfig.newBuilder()
                            .setKey("unclean.leader.election.enable")
                            .setValue("maybe"))
                    .build());
            assertThat(bad.getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(bad.getErrorMessage()).contains("must be true or false");
            assertThat(s.image().offset()).isEqualTo(before);
            assertInvariants(s.image());
        }
    }

    @Test
    void theControllerDefaultAllowsUncleanElectionWhenTheTopicDoesNotOverrideIt() throws Exception {
        try (Setup s = new Setup(
                dir, 2, props("auto.leader.rebalance.enable", "false", "unclean.leader.election.enable", "true"))) {
            s.createTopic("dflt", 1, 2, Map.of());
            s.createTopic("strict", 1, 2, Map.of("unclean.leader.election.enable", "false"));
            for (String topic : List.of("dflt", "strict")) {
                PartitionImage p = s.partition(topic, 0);
                assertThat(s.alterIsr(topic, 0, List.of(p.leader())).getError()).isEqualTo(ErrorCode.NONE);
            }
            // dflt: its only ISR member is fenced, the other replica is elected (the default allows it).
            int leader = s.partition("dflt", 0).leader();
            PartitionImage before = s.partition("dflt", 0);
            s.fence(leader);
            PartitionImage after = s.partition("dflt", 0);
            assertThat(after.leader()).isEqualTo(3 - leader);
            assertThat(after.isr()).containsExactly(3 - leader);
            assertThat(after.leaderEpoch()).isEqualTo(before.leaderEpoch() + 1);
            assertThat(s.metrics.uncleanElections.get()).isEqualTo(1);
            s.unfence(leader);
            // dflt's leader takes the returning broker back into its ISR, so the next fence cannot
            // make dflt unclean again.
            assertThat(s.alterIsr("dflt", 0, List.of(3 - leader, leader)).getError())
                    .isEqualTo(ErrorCode.NONE);

            // strict: the same situation stays offline (the topic's false wins over the default).
            int strictLeader = s.partition("strict", 0).leader();
            assertThat(s.partition("strict", 0).isr()).containsExactly(strictLeader);
            s.fence(strictLeader);
            assertThat(s.partition("strict", 0).leader()).isEqualTo(PartitionImage.NO_LEADER);
            assertThat(s.partition("strict", 0).isr()).containsExactly(strictLeader);
            assertThat(s.metrics.uncleanElections.get()).isEqualTo(1);
            assertInvariants(s.image());
        }
    }

    @Test
    void electLeadersPreferredAndUncleanGiveResultsPerPartitionAndBumpTheLeaderEpoch() throws Exception {
        try (Setup s = new Setup(dir, 3, props("auto.leader.rebalance.enable", "false"))) {
            s.createTopic("e", 3, 3, Map.of());
            // Broker 1 restarts: it loses leadership and ISR membership, then is unfenced.
            s.fence(1);
            s.unfence(1);
            Map<Integer, PartitionImage> before = new HashMap<>();
            for (int p = 0; p < 3; p++) {
                before.put(p, s.partition("e", p));
                assertThat(s.partition("e", p).isr()).doesNotContain(1);
            }
            int preferredOne = -1;
            for (int p = 0; p < 3; p++) {
                if (before.get(p).replicas().get(0) == 1) {
                    preferredOne = p;
                }
            }
            assertThat(preferredOne)
                    .as("round-robin: broker 1 is preferred for one partition")
                    .isNotNegative();
            // Not in the ISR yet: PREFERRED_LEADER_NOT_AVAILABLE, nothing written.
            long offset = s.image().offset();
            ElectLeadersResponse early = s.elect(ElectionType.PREFERRED, "e", preferredOne);
            assertThat(early.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(early.getResults(0).getError()).isEqualTo(ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
            assertThat(early.getResults(0).getErrorMessage()).contains("not in the ISR");
            assertThat(s.image().offset()).isEqualTo(offset);

            // The leaders take it back into their ISRs; now all partitions are asked for.
            for (int p = 0; p < 3; p++) {
                List<Integer> isr =
                        new java.util.ArrayList<>(s.partition("e", p).isr());
                isr.add(1);
                assertThat(s.alterIsr("e", p, isr).getError()).isEqualTo(ErrorCode.NONE);
            }
            ElectLeadersResponse all = s.client.electLeaders(ElectLeadersRequest.newBuilder()
                    .setElectionType(ElectionType.PREFERRED)
                    .setAllTopicPartitions(true)
                    .build());
            assertThat(all.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(all.getResultsList()).hasSize(3);
            for (PartitionElectionResult r : all.getResultsList()) {
                PartitionImage now = s.partition("e", r.getPartition());
                assertThat(now.leader()).isEqualTo(now.replicas().get(0));
                assertThat(r.getLeader()).isEqualTo(now.leader());
                assertThat(r.getLeaderEpoch()).isEqualTo(now.leaderEpoch());
                PartitionImage was = before.get(r.getPartition());
                if (r.getPartition() == preferredOne) {
                    assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
                    assertThat(now.leaderEpoch()).isEqualTo(was.leaderEpoch() + 1);
                    assertThat(now.partitionEpoch())
                            .as("ISR expansion, then election")
                            .isEqualTo(was.partitionEpoch() + 2);
                } else {
                    assertThat(r.getError()).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
                    assertThat(now.leaderEpoch()).isEqualTo(was.leaderEpoch());
                }
            }
            // Unknown topic and partition, per partition; a request naming nothing is refused whole.
            ElectLeadersResponse unknown = s.client.electLeaders(ElectLeadersRequest.newBuilder()
                    .addTopics(ElectionTopicPartitions.newBuilder().setTopic("nope"))
                    .addTopics(
                            ElectionTopicPartitions.newBuilder().setTopic("e").addPartitions(7))
                    .build());
            assertThat(unknown.getResultsList())
                    .extracting(PartitionElectionResult::getError)
                    .containsExactly(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(s.client
                            .electLeaders(ElectLeadersRequest.getDefaultInstance())
                            .getError())
                    .isEqualTo(ErrorCode.INVALID_REQUEST);

            // UNCLEAN: partition 0's leader shrinks the ISR to itself and is fenced: offline (the
            // topic does not allow unclean election), until an operator asks for it.
            int l0 = s.partition("e", 0).leader();
            assertThat(s.alterIsr("e", 0, List.of(l0)).getError()).isEqualTo(ErrorCode.NONE);
            s.fence(l0);
            PartitionImage off = s.partition("e", 0);
            assertThat(off.leader()).isEqualTo(PartitionImage.NO_LEADER);
            ElectLeadersResponse u = s.elect(ElectionType.UNCLEAN, "e");
            assertThat(u.getResultsList()).hasSize(3);
            PartitionElectionResult r0 = u.getResults(0);
            assertThat(r0.getError()).isEqualTo(ErrorCode.NONE);
            int newLeader =
                    off.replicas().stream().filter(r -> r != l0).findFirst().orElseThrow();
            assertThat(r0.getLeader()).isEqualTo(newLeader);
            assertThat(r0.getLeaderEpoch()).isEqualTo(off.leaderEpoch() + 1);
            assertThat(s.partition("e", 0).isr()).containsExactly(newLeader);
            assertThat(u.getResults(1).getError()).isEqualTo(ErrorCode.ELECTION_NOT_NEEDED);
            assertThat(s.metrics.uncleanElections.get()).isEqualTo(1);
            assertInvariants(s.image());
        }
    }

    @Test
    void automaticRebalanceMovesLeadershipBackToThePreferredReplica() throws Exception {
        try (Setup s = new Setup(dir, 3, props("leader.imbalance.check.interval.seconds", "1"))) {
            s.createTopic("r", 6, 2, Map.of());
            s.fence(2);
            s.unfence(2);
            // Broker 2 was preferred for 2 of the 6 partitions and leads none now.
            List<Integer> preferredTwo = new java.util.ArrayList<>();
            for (PartitionImage p : s.image().topic("r").partitions()) {
                assertThat(p.leader()).isNotEqualTo(2);
                if (p.replicas().get(0) == 2) {
                    preferredTwo.add(p.partition());
                }
            }
            assertThat(preferredTwo).hasSize(2);
            // Not in the ISR: nothing moves. Once back in the ISRs, the next check moves them.
            for (int p : preferredTwo) {
                List<Integer> isr =
                        new java.util.ArrayList<>(s.partition("r", p).isr());
                isr.add(2);
                assertThat(s.alterIsr("r", p, isr).getError()).isEqualTo(ErrorCode.NONE);
            }
            TestCluster.awaitTrue(
                    () -> preferredTwo.stream()
                            .allMatch(p -> s.partition("r", p).leader() == 2),
                    Duration.ofSeconds(10),
                    "broker 2 leads its preferred partitions again");
            for (PartitionImage p : s.image().topic("r").partitions()) {
                assertThat(p.leader()).isEqualTo(p.replicas().get(0));
            }
            assertInvariants(s.image());
        }
    }

    @Test
    void withAutoRebalanceOffLeadershipStaysWhereFencingMovedIt() throws Exception {
        try (Setup s = new Setup(
                dir,
                2,
                props("leader.imbalance.check.interval.seconds", "1", "auto.leader.rebalance.enable", "false"))) {
            s.createTopic("n", 2, 2, Map.of());
            s.fence(1);
            s.unfence(1);
            int p = s.partition("n", 0).replicas().get(0) == 1 ? 0 : 1;
            assertThat(s.alterIsr("n", p, List.of(2, 1)).getError()).isEqualTo(ErrorCode.NONE);
            PartitionImage before = s.partition("n", p);
            Thread.sleep(2500);
            assertThat(s.partition("n", p)).isEqualTo(before);
            assertThat(before.leader()).isEqualTo(2);
        }
    }

    /** ISR within the assignment and non-empty; a leader is in the ISR and unfenced. */
    static void assertInvariants(MetadataImage img) {
        for (TopicImage t : img.topicsByName().values()) {
            for (PartitionImage p : t.partitions()) {
                assertThat(p.replicas()).containsAll(p.isr());
                assertThat(p.isr()).isNotEmpty();
                if (p.leader() != PartitionImage.NO_LEADER) {
                    assertThat(p.isr()).contains(p.leader());
                    assertThat(img.broker(p.leader()).fenced()).isFalse();
                }
            }
        }
    }
}
