package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.image.MetadataImage;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.CreateTopicResponse.CreateTopicPartition;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.MetadataResponse.Broker;
import io.stellflow.protocol.message.MetadataResponse.PartitionMetadata;
import io.stellflow.protocol.message.MetadataResponse.TopicMetadata;
import io.stellflow.testsupport.IntegrationTest;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Metadata and CreateTopic (v0) of a combined node: topics come from its controller. The tests
 * without broker settings of their own share one node per transport, each with topics named after
 * it; the others (config, restart, auto-creation) start their own.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class MetadataAndCreateTopicTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Shared BROKERS = new TestBroker.Shared();

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    StellflowServer server;
    private String t;

    @BeforeEach
    void name(TestInfo test) {
        t = test.getTestMethod().orElseThrow().getName();
    }

    private void shared() throws Exception {
        server = BROKERS.get(transport);
    }

    private void ownBroker(Properties props) throws Exception {
        server = NODES.start(props);
    }

    private static MetadataResponse metadata(RawClient client, String... topics) throws Exception {
        RawClient.Response r = client.call(
                ApiKeys.METADATA,
                Requests.nextCorrelationId(),
                new MetadataRequest(List.of(topics), false, false, false));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return MetadataResponse.read(r.body());
    }

    private static CreateTopicResponse create(RawClient client, String topic, int partitions) throws Exception {
        RawClient.Response r = client.call(
                ApiKeys.CREATE_TOPIC, Requests.nextCorrelationId(), CreateTopicRequest.of(topic, partitions));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        return CreateTopicResponse.read(r.body());
    }

    @Test
    void createTopicAnswersOneEntryPerPartitionAndIsIdempotent() throws Exception {
        shared();
        try (RawClient client = new RawClient(server.port())) {
            CreateTopicResponse created = create(client, t, 3);
            assertThat(created.topic()).isEqualTo(t);
            assertThat(created.partitions())
                    .containsExactly(
                            new CreateTopicPartition(0, Errors.NONE, 0),
                            new CreateTopicPartition(1, Errors.NONE, 0),
                            new CreateTopicPartition(2, Errors.NONE, 0));
            assertThat(create(client, t, 3).partitions()).isEqualTo(created.partitions());
            assertThat(create(client, t, 2).partitions())
                    .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
        }
    }

    @Test
    void createTopicRejectsBadNamesAndCounts() throws Exception {
        shared();
        List<String> badNames = List.of("", ".", "..", "a b", "x".repeat(250), "ü");
        try (RawClient client = new RawClient(server.port())) {
            for (String bad : badNames) {
                CreateTopicResponse r = create(client, bad, 1);
                assertThat(r.topic()).isEqualTo(bad);
                assertThat(r.partitions())
                        .as("name '%s'", bad)
                        .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
            }
            for (int count : new int[] {0, -1, 10_001}) {
                assertThat(create(client, t, count).partitions())
                        .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
            }
            assertThat(metadata(client).topics())
                    .extracting(TopicMetadata::topic)
                    .doesNotContain(t);
            assertThat(metadata(client).topics())
                    .extracting(TopicMetadata::topic)
                    .doesNotContainAnyElementsOf(badNames);
            // The longest legal name (249 characters) is created.
            String longest = "n".repeat(249);
            assertThat(create(client, longest, 1).partitions())
                    .containsExactly(new CreateTopicPartition(0, Errors.NONE, 0));
        }
    }

    @Test
    void metadataDescribesTheSingleNodeCluster() throws Exception {
        shared();
        String a = "a-" + t;
        String bName = "b-" + t;
        try (RawClient client = new RawClient(server.port())) {
            create(client, bName, 2);
            create(client, a, 1);
            MetadataResponse all = metadata(client);
            assertThat(all.clusterId()).hasSize(22);
            assertThat(all.controllerId()).isZero();
            assertThat(all.brokers()).containsExactly(new Broker(0, "127.0.0.1", server.port(), null));
            // Every topic by name (the other tests' topics of this shared node too).
            List<String> names = all.topics().stream().map(TopicMetadata::topic).toList();
            assertThat(names).isSorted().contains(a, bName);
            TopicMetadata b = all.topics().get(names.indexOf(bName));
            assertThat(b.errorCode()).isEqualTo(Errors.NONE);
            assertThat(b.isInternal()).isFalse();
            assertThat(b.partitions())
                    .containsExactly(
                            new PartitionMetadata(Errors.NONE, 0, 0, 0, List.of(0), List.of(0), List.of()),
                            new PartitionMetadata(Errors.NONE, 1, 0, 0, List.of(0), List.of(0), List.of()));

            MetadataResponse some = metadata(client, bName, "missing", bName, "");
            assertThat(some.topics()).hasSize(3);
            assertThat(some.topics().get(0).topic()).isEqualTo(bName);
            assertThat(some.topics().get(1))
                    .isEqualTo(new TopicMetadata(Errors.UNKNOWN_TOPIC_OR_PARTITION, "missing", false, List.of(), 0));
            assertThat(some.topics().get(2))
                    .isEqualTo(new TopicMetadata(Errors.INVALID_REQUEST, "", false, List.of(), 0));
        }
    }

    @Test
    void advertisedListenerAndClusterIdComeFromConfig() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("broker.id", "5");
        props.setProperty("advertised.listeners", "PLAINTEXT://broker5.local:19092");
        props.setProperty("cluster.id", "my-cluster");
        ownBroker(props);
        MetadataImage image = server.replicaManager().image();
        assertThat(image.broker(5).fenced())
                .as("start returns once this broker applied its own unfencing")
                .isFalse();
        assertThat(image.activeControllerId())
                .as("registered after the controller's activation")
                .isEqualTo(5);
        try (RawClient client = new RawClient(server.port())) {
            MetadataResponse r = metadata(client);
            assertThat(r.clusterId()).isEqualTo("my-cluster");
            assertThat(r.controllerId()).isEqualTo(5);
            assertThat(r.brokers()).containsExactly(new Broker(5, "broker5.local", 19092, null));
        }
    }

    @Test
    void topicsAndClusterIdSurviveARestart() throws Exception {
        ownBroker(TestBroker.props(NODES.dir(), transport));
        String clusterId;
        try (RawClient client = new RawClient(server.port())) {
            create(client, "kept", 4);
            clusterId = metadata(client).clusterId();
        }
        server.close();
        ownBroker(TestBroker.props(NODES.dir(), transport));
        try (RawClient client = new RawClient(server.port())) {
            MetadataResponse r = metadata(client, "kept");
            assertThat(r.clusterId()).isEqualTo(clusterId);
            assertThat(r.topics().get(0).partitions()).hasSize(4);
            assertThat(create(client, "kept", 4).partitions()).hasSize(4);
        }
    }

    @Test
    void autoCreateOnMetadataWhenEnabled() throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("auto.create.topics.enable", "true");
        props.setProperty("num.partitions", "2");
        ownBroker(props);
        try (RawClient client = new RawClient(server.port())) {
            TopicMetadata t = metadata(client, "auto").topics().get(0);
            assertThat(t.errorCode()).isEqualTo(Errors.NONE);
            assertThat(t.partitions()).hasSize(2);
            assertThat(metadata(client, "bad name").topics().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        }
    }

    @Test
    void metadataNeverCreatesTopicsByDefault() throws Exception {
        shared();
        try (RawClient client = new RawClient(server.port())) {
            MetadataRequest request = new MetadataRequest(List.of(t), false, false, true);
            RawClient.Response r = client.call(ApiKeys.METADATA, 9, request);
            assertThat(MetadataResponse.read(r.body()).topics().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(metadata(client).topics())
                    .extracting(TopicMetadata::topic)
                    .doesNotContain(t);
        }
    }
}
