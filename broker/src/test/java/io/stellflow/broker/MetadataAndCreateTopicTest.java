package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
class MetadataAndCreateTopicTest {
    /** Every test of this class runs on each transport (skipped where one is unavailable). */
    @Parameter
    String transport;

    @TempDir
    Path dir;

    StellflowServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
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
        server = TestBroker.start(dir, transport);
        try (RawClient client = new RawClient(server.port())) {
            CreateTopicResponse created = create(client, "orders", 3);
            assertThat(created.topic()).isEqualTo("orders");
            assertThat(created.partitions())
                    .containsExactly(
                            new CreateTopicPartition(0, Errors.NONE, 0),
                            new CreateTopicPartition(1, Errors.NONE, 0),
                            new CreateTopicPartition(2, Errors.NONE, 0));
            assertThat(create(client, "orders", 3).partitions()).isEqualTo(created.partitions());
            assertThat(create(client, "orders", 2).partitions())
                    .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
        }
    }

    @Test
    void createTopicRejectsBadNamesAndCounts() throws Exception {
        server = TestBroker.start(dir, transport);
        try (RawClient client = new RawClient(server.port())) {
            for (String bad : List.of("", ".", "..", "a b", "x".repeat(250), "ü")) {
                CreateTopicResponse r = create(client, bad, 1);
                assertThat(r.topic()).isEqualTo(bad);
                assertThat(r.partitions())
                        .as("name '%s'", bad)
                        .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
            }
            for (int count : new int[] {0, -1, 10_001}) {
                assertThat(create(client, "t", count).partitions())
                        .containsExactly(new CreateTopicPartition(-1, Errors.INVALID_REQUEST, -1));
            }
            assertThat(metadata(client).topics()).isEmpty();
        }
    }

    @Test
    void metadataDescribesTheSingleNodeCluster() throws Exception {
        server = TestBroker.start(dir, transport);
        try (RawClient client = new RawClient(server.port())) {
            create(client, "b-topic", 2);
            create(client, "a-topic", 1);
            MetadataResponse all = metadata(client);
            assertThat(all.clusterId()).hasSize(22);
            assertThat(all.controllerId()).isZero();
            assertThat(all.brokers()).containsExactly(new Broker(0, "127.0.0.1", server.port(), null));
            assertThat(all.topics()).extracting(TopicMetadata::topic).containsExactly("a-topic", "b-topic");
            TopicMetadata b = all.topics().get(1);
            assertThat(b.errorCode()).isEqualTo(Errors.NONE);
            assertThat(b.isInternal()).isFalse();
            assertThat(b.partitions())
                    .containsExactly(
                            new PartitionMetadata(Errors.NONE, 0, 0, 0, List.of(0), List.of(0), List.of()),
                            new PartitionMetadata(Errors.NONE, 1, 0, 0, List.of(0), List.of(0), List.of()));

            MetadataResponse some = metadata(client, "b-topic", "missing", "b-topic", "");
            assertThat(some.topics()).hasSize(3);
            assertThat(some.topics().get(0).topic()).isEqualTo("b-topic");
            assertThat(some.topics().get(1))
                    .isEqualTo(new TopicMetadata(Errors.UNKNOWN_TOPIC_OR_PARTITION, "missing", false, List.of(), 0));
            assertThat(some.topics().get(2))
                    .isEqualTo(new TopicMetadata(Errors.INVALID_REQUEST, "", false, List.of(), 0));
        }
    }

    @Test
    void advertisedListenerAndClusterIdComeFromConfig() throws Exception {
        Properties props = TestBroker.props(dir, transport);
        props.setProperty("broker.id", "5");
        props.setProperty("advertised.listeners", "PLAINTEXT://broker5.local:19092");
        props.setProperty("cluster.id", "my-cluster");
        server = TestBroker.start(props);
        try (RawClient client = new RawClient(server.port())) {
            MetadataResponse r = metadata(client);
            assertThat(r.clusterId()).isEqualTo("my-cluster");
            assertThat(r.controllerId()).isEqualTo(5);
            assertThat(r.brokers()).containsExactly(new Broker(5, "broker5.local", 19092, null));
        }
    }

    @Test
    void topicsAndClusterIdSurviveARestart() throws Exception {
        server = TestBroker.start(dir, transport);
        String clusterId;
        try (RawClient client = new RawClient(server.port())) {
            create(client, "kept", 4);
            clusterId = metadata(client).clusterId();
        }
        server.close();
        server = TestBroker.start(dir, transport);
        try (RawClient client = new RawClient(server.port())) {
            MetadataResponse r = metadata(client, "kept");
            assertThat(r.clusterId()).isEqualTo(clusterId);
            assertThat(r.topics().get(0).partitions()).hasSize(4);
            assertThat(create(client, "kept", 4).partitions()).hasSize(4);
        }
    }

    @Test
    void autoCreateOnMetadataWhenEnabled() throws Exception {
        Properties props = TestBroker.props(dir, transport);
        props.setProperty("auto.create.topics.enable", "true");
        props.setProperty("num.partitions", "2");
        server = TestBroker.start(props);
        try (RawClient client = new RawClient(server.port())) {
            TopicMetadata t = metadata(client, "auto").topics().get(0);
            assertThat(t.errorCode()).isEqualTo(Errors.NONE);
            assertThat(t.partitions()).hasSize(2);
            assertThat(metadata(client, "bad name").topics().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST);
        }
    }

    @Test
    void metadataNeverCreatesTopicsByDefault() throws Exception {
        server = TestBroker.start(dir, transport);
        try (RawClient client = new RawClient(server.port())) {
            MetadataRequest request = new MetadataRequest(List.of("x"), false, false, true);
            RawClient.Response r = client.call(ApiKeys.METADATA, 9, request);
            assertThat(MetadataResponse.read(r.body()).topics().get(0).errorCode())
                    .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            assertThat(metadata(client).topics()).isEmpty();
        }
    }
}
