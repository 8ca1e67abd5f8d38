package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.Endpoint;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RecordType;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster id and the active controller in the metadata image (written by each new active
 * controller), the cluster-id check of broker registration, and topic config overrides: validated at
 * CreateTopics and IncrementalAlterConfigs, stored in the topic, nothing written on bad input.
 */
@IntegrationTest
class ClusterIdAndTopicConfigTest {
    @TempDir
    Path dir;

    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static int nodeId(int index) {
        return index + 1; // TestCluster's node ids
    }

    @Test
    void theClusterIdIsGeneratedOnceAndEachNewActiveControllerIsInTheImageOfEveryController() throws Exception {
        try (TestCluster cluster =
                        new TestCluster(dir, 3, props("controller.quorum.election.timeout.ms", "300")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            int first = cluster.awaitActive(Duration.ofSeconds(20));
            TestCluster.awaitTrue(
                    () -> Stream.of(cluster.servers).allMatch(s -> s.image().activeControllerId() == nodeId(first)),
                    Duration.ofSeconds(10),
                    "every controller names " + nodeId(first) + " active");
            String clusterId = cluster.servers[first].image().clusterId();
            assertThat(clusterId).as("generated: 22 characters of base64url").matches("[A-Za-z0-9_-]{22}");
            for (ControllerServer s : cluster.servers) {
                assertThat(s.image().clusterId()).isEqualTo(clusterId);
                assertThat(s.clusterId()).isEqualTo(clusterId);
            }
            assertThat(client.describeQuorum().getClusterId()).isEqualTo(clusterId);
            assertThat(client.describeCluster().getClusterId()).isEqualTo(clusterId);
            assertThat(client.describeCluster().getControllerId()).isEqualTo(nodeId(first));

            cluster.stop(first);
            int second = cluster.awaitActive(Duration.ofSeconds(20));
            assertThat(second).isNotEqualTo(first);
            TestCluster.awaitTrue(
                    () -> Stream.of(cluster.servers)
                            .filter(s -> s != null)
                            .allMatch(s -> s.image().activeControllerId() == nodeId(second)),
                    Duration.ofSeconds(10),
                    "the survivors name the new active controller " + nodeId(second));
            for (ControllerServer s : cluster.servers) {
                if (s != null) {
                    assertThat(s.image().clusterId()).as("never changes").isEqualTo(clusterId);
                }
            }

            cluster.start(first);
            long offset = cluster.servers[second].image().offset();
            TestCluster.awaitTrue(
                    () -> cluster.servers[first].image().offset() >= offset,
                    Duration.ofSeconds(20),
                    "the restarted controller catches up");
            assertThat(cluster.servers[first].image().clusterId()).isEqualTo(clusterId);
            // The restarted controller may even win the next election: it names whoever is active.
            TestCluster.awaitTrue(
                    () -> {
                        int active = cluster.activeIndex();
                        return active >= 0
                                && Stream.of(cluster.servers)
                                        .allMatch(s -> s.image().activeControllerId() == nodeId(active));
                    },
                    Duration.ofSeconds(20),
                    "every controller, the restarted one too, names the active controller");
        }
    }

    private static RegisterBrokerResponse register(ControllerClient c, int id, String clusterId) {
        return c.registerBroker(RegisterBrokerRequest.newBuilder()
                .setBrokerId(id)
                .setIncarnationId(MetadataRecords.uuid(UUID.randomUUID()))
                .addListeners(Endpoint.newBuilder()
                        .setName("PLAINTEXT")
                        .setHost("127.0.0.1")
                        .setPort(9000 + id))
                .setClusterId(clusterId)
                .build());
    }

    @Test
    void aConfiguredClusterIdIsUsedAndABrokerOfAnotherClusterIsRefusedWithNothingWritten() throws Exception {
        try (TestCluster cluster = new TestCluster(
                                dir, 1, props("cluster.id", "prod-7", "broker.session.timeout.ms", "600000"))
                        .startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            cluster.awaitActive(Duration.ofSeconds(20));
            RegisterBrokerResponse fresh = register(client, 1, "");
            assertThat(fresh.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(fresh.getClusterId()).as("a new broker learns the id").isEqualTo("prod-7");
            assertThat(register(client, 2, "prod-7").getError()).isEqualTo(ErrorCode.NONE);

            long before = cluster.servers[0].image().offset();
            RegisterBrokerResponse other = register(client, 3, "staging-1");
            assertThat(other.getError()).isEqualTo(ErrorCode.INCONSISTENT_CLUSTER_ID);
            assertThat(other.getErrorMessage()).contains("staging-1").contains("prod-7");
            MetadataImage after = cluster.servers[0].image();
            assertThat(after.broker(3)).isNull();
            assertThat(after.offset()).as("no entry").isEqualTo(before);
            assertThat(after.clusterId()).isEqualTo("prod-7");
        }
    }

    private static CreateTopicsRequest create(String name, Map<String, String> config) {
        return CreateTopicsRequest.newBuilder()
                .addTopics(CreatableTopic.newBuilder()
                        .setName(name)
                        .setNumPartitions(2)
                        .setReplicationFactor(1)
                        .putAllConfig(config))
                .build();
    }

    private static AlterableConfig set(String key, String value) {
        return AlterableConfig.newBuilder()
                .setKey(key)
                .setValue(value)
                .setOp(ConfigOpType.SET)
                .build();
    }

    private static AlterableConfig delete(String key) {
        return AlterableConfig.newBuilder()
                .setKey(key)
                .setOp(ConfigOpType.DELETE)
                .build();
    }

    /** Collects the deltas a follower delivers. */
    private final DeltaLog deltas = new DeltaLog();

    private static final class DeltaLog extends CopyOnWriteArrayList<MetadataDelta> implements MetadataListener {
        @Override
        public void onImage(MetadataImage image) {}

        @Override
        public void onDelta(MetadataDelta delta, MetadataImage image) {
            add(delta);
        }
    }

    @Test
    void brokersRegisteringWhileTheControllerStartsAreWrittenAfterItsActivation() throws Exception {
        TestCluster cluster = new TestCluster(dir, 1, props("broker.session.timeout.ms", "600000"));
        try (cluster;
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            // Registrations already knocking while the controller starts: the first one served must
            // come after the controller's activation in the metadata log, so that a broker that
            // applied its own registration knows the cluster id and the active controller.
            List<Thread> registering = new ArrayList<>();
            for (int id = 1; id <= 4; id++) {
                FakeBroker b = new FakeBroker(id, "");
                registering.add(Thread.ofPlatform().start(() -> b.register(client)));
            }
            cluster.startAll();
            for (Thread t : registering) {
                t.join(30_000);
            }
            ControllerServer controller = cluster.servers[0];
            assertThat(controller.image().brokers()).hasSize(4);
            List<RecordType> types = new ArrayList<>();
            for (MetadataDelta d : controller.stateMachine().awaitDeltasAfter(0, 0, Integer.MAX_VALUE)) {
                d.records().forEach(r -> types.add(r.getType()));
            }
            assertThat(types.indexOf(RecordType.ACTIVE_CONTROLLER))
                    .as("activation before the first registration in %s", types)
                    .isNotNegative()
                    .isLessThan(types.indexOf(RecordType.REGISTER_BROKER));
            assertThat(types.indexOf(RecordType.CLUSTER_ID)).isLessThan(types.indexOf(RecordType.REGISTER_BROKER));
        }
    }

    @Test
    void topicConfigsAreValidatedStoredAndAlteredAtomicallyWithNothingWrittenOnBadInput() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 1, props("broker.session.timeout.ms", "600000")).startAll();
                ControllerClient client = cluster.client(Duration.ofSeconds(30))) {
            cluster.awaitActive(Duration.ofSeconds(20));
            new FakeBroker(1, "").registerAndUnfence(client);
            ControllerServer controller = cluster.servers[0];

            CreateTopicsResponse ok = client.createTopics(
                    create("logs", Map.of("segment.bytes", " 2048 ", "cleanup.policy", "compact,delete")));
            assertThat(ok.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
            assertThat(controller.image().topic("logs").config())
                    .as("stored with blanks removed")
                    .containsExactlyInAnyOrderEntriesOf(
                            Map.of("segment.bytes", "2048", "cleanup.policy", "compact,delete"));

            long offset = controller.image().offset();
            CreateTopicsResponse unknown = client.createTopics(create("a", Map.of("retention.hours", "1")));
            assertThat(unknown.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(unknown.getTopics(0).getErrorMessage()).contains("unknown topic config 'retention.hours'");
            CreateTopicsResponse bad = client.createTopics(create("b", Map.of("segment.bytes", "100")));
            assertThat(bad.getTopics(0).getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(bad.getTopics(0).getErrorMessage()).contains("segment.bytes=100 must be >= 1024");
            assertThat(controller.image().topic("a")).isNull();
            assertThat(controller.image().topic("b")).isNull();
            assertThat(controller.image().offset()).as("nothing written").isEqualTo(offset);

            IncrementalAlterConfigsResponse altered =
                    client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                            .setTopic("logs")
                            .addConfigs(set("retention.ms", "60000"))
                            .addConfigs(delete("cleanup.policy"))
                            .build());
            assertThat(altered.getError()).as(altered.getErrorMessage()).isEqualTo(ErrorCode.NONE);
            Map<String, String> want = Map.of("segment.bytes", "2048", "retention.ms", "60000");
            assertThat(altered.getConfigMap()).containsExactlyInAnyOrderEntriesOf(want);
            assertThat(controller.image().topic("logs").config()).containsExactlyInAnyOrderEntriesOf(want);
            long altOffset = controller.image().offset();
            try (MetadataFollower follower = client.followMetadata(offset, deltas)) {
                assertThat(follower.awaitOffset(altOffset, Duration.ofSeconds(10)))
                        .isTrue();
            }
            assertThat(deltas.stream().filter(d -> !d.records().isEmpty()).toList())
                    .as("one entry for both changes")
                    .singleElement()
                    .satisfies(d -> assertThat(d.records())
                            .extracting(MetadataRecord::getType)
                            .containsExactly(RecordType.CONFIG_CHANGE, RecordType.CONFIG_CHANGE));

            offset = controller.image().offset();
            IncrementalAlterConfigsResponse dryRun =
                    client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                            .setTopic("logs")
                            .addConfigs(set("retention.ms", "1000"))
                            .setValidateOnly(true)
                            .build());
            assertThat(dryRun.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(dryRun.getConfigMap()).containsEntry("retention.ms", "1000");
            IncrementalAlterConfigsResponse partlyBad =
                    client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                            .setTopic("logs")
                            .addConfigs(set("retention.ms", "1000"))
                            .addConfigs(set("min.insync.replicas", "0"))
                            .build());
            assertThat(partlyBad.getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(partlyBad.getErrorMessage()).contains("min.insync.replicas=0");
            assertThat(client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                                    .setTopic("nope")
                                    .addConfigs(set("retention.ms", "1"))
                                    .build())
                            .getError())
                    .isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            IncrementalAlterConfigsResponse noChange =
                    client.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                            .setTopic("logs")
                            .addConfigs(set("retention.ms", "60000"))
                            .addConfigs(delete("flush.ms"))
                            .build());
            assertThat(noChange.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(controller.image().topic("logs").config()).containsExactlyInAnyOrderEntriesOf(want);
            assertThat(controller.image().offset())
                    .as("dry run, refused and no-op changes write nothing")
                    .isEqualTo(offset);

            DescribeConfigsResponse described = client.describeConfigs("logs");
            assertThat(described.getConfigMap()).containsExactlyInAnyOrderEntriesOf(want);
            assertThat(client.describeConfigs("nope").getError()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        }
    }
}
