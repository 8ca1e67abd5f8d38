package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceRequest.PartitionData;
import io.stellflow.protocol.message.ProduceRequest.TopicData;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Topic {@code max.message.bytes} (Kafka's per-topic {@code message.max.bytes}): a batch above the
 * topic's limit is answered {@code MESSAGE_TOO_LARGE} for its partition alone and nothing of it is
 * appended, one at the limit is taken; a limit above the broker's lets larger batches in (and Fetch
 * serves them); the limit binds the batch a topic's {@code compression.type} grew too; it is set
 * and removed with IncrementalAlterConfigs, a lowered limit keeps serving what is stored, and bad
 * values are refused at create and alter. With and without append agents.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class TopicMaxMessageBytesTest {
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private StellflowServer server;

    private RawClient start(int appendAgents, int messageMaxBytes) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.setProperty("num.append.agents", Integer.toString(appendAgents));
        props.setProperty("message.max.bytes", Integer.toString(messageMaxBytes));
        server = NODES.start(props);
        return new RawClient(server.port());
    }

    private void create(String topic, int partitions, Map<String, String> config) throws Exception {
        assertThat(TestBroker.createTopic(server, topic, partitions, config)).isEqualTo(ErrorCode.NONE);
    }

    private long logEnd(String topic, int partition) {
        return TestBroker.partition(server, topic, partition).logEndOffset();
    }

    /** One Produce (acks=1) of {@code parts}: topic, partition, records, topic, partition, ...; answers in order. */
    private static List<PartitionResponse> produce(RawClient client, Object... parts) throws Exception {
        List<TopicData> topics = new ArrayList<>();
        for (int i = 0; i < parts.length; i += 3) {
            String topic = (String) parts[i];
            PartitionData data =
                    new PartitionData((Integer) parts[i + 1], Unpooled.wrappedBuffer((byte[]) parts[i + 2]));
            if (!topics.isEmpty() && topics.getLast().topic().equals(topic)) {
                List<PartitionData> merged = new ArrayList<>(topics.getLast().partitions());
                merged.add(data);
                topics.set(topics.size() - 1, new TopicData(topic, merged));
            } else {
                topics.add(new TopicData(topic, List.of(data)));
            }
        }
        RawClient.Response r = client.call(
                ApiKeys.PRODUCE, Requests.nextCorrelationId(), new ProduceRequest(null, (short) 1, 30_000, topics));
        assertThat(r.errorCode()).isEqualTo(Errors.NONE);
        List<PartitionResponse> answers = new ArrayList<>();
        for (ProduceResponse.TopicResponse t : ProduceResponse.read(r.body()).responses()) {
            answers.addAll(t.partitions());
        }
        return answers;
    }

    @ParameterizedTest(name = "appendAgents={0}")
    @ValueSource(ints = {1, 0})
    void aBatchAboveTheTopicsLimitIsRefusedForItsPartitionAloneAndOneAtTheLimitIsTaken(int appendAgents)
            throws Exception {
        try (RawClient client = start(appendAgents, BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES)) {
            byte[] big = Requests.batchOfSize(1, 2000, 1);
            byte[] little = Requests.batch(3, 1);
            create("small", 2, Map.of("max.message.bytes", "1000"));
            create("plain", 1, Map.of());
            create("exact", 1, Map.of("max.message.bytes", Integer.toString(big.length)));
            create("below", 1, Map.of("max.message.bytes", Integer.toString(big.length - 1)));

            List<PartitionResponse> answers =
                    produce(client, "small", 0, big, "small", 1, little, "plain", 0, big, "exact", 0, big);
            assertThat(answers)
                    .extracting(PartitionResponse::errorCode)
                    .containsExactly(Errors.MESSAGE_TOO_LARGE, Errors.NONE, Errors.NONE, Errors.NONE);
            assertThat(answers.get(0).baseOffset()).isEqualTo(-1L);
            assertThat(logEnd("small", 0)).as("nothing of the refused batch").isZero();
            assertThat(logEnd("small", 1)).isEqualTo(3);
            assertThat(logEnd("plain", 0))
                    .as("the broker's message.max.bytes applies")
                    .isEqualTo(1);
            assertThat(logEnd("exact", 0)).isEqualTo(1);
            assertThat(produce(client, "below", 0, big).get(0).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(logEnd("below", 0)).isZero();

            PartitionResponse after = produce(client, "small", 0, little).get(0);
            assertThat(after.errorCode()).isEqualTo(Errors.NONE);
            assertThat(after.baseOffset()).isZero();
        }
    }

    @ParameterizedTest(name = "appendAgents={0}")
    @ValueSource(ints = {1, 0})
    void aTopicLimitAboveTheBrokersLetsLargerBatchesInAndFetchServesThem(int appendAgents) throws Exception {
        try (RawClient client = start(appendAgents, 4096)) {
            create("large", 1, Map.of("max.message.bytes", "65536"));
            create("plain", 1, Map.of());
            byte[] tenKb = Requests.batchOfSize(1, 10_000, 1);
            assertThat(produce(client, "large", 0, tenKb, "plain", 0, tenKb))
                    .extracting(PartitionResponse::errorCode)
                    .containsExactly(Errors.NONE, Errors.MESSAGE_TOO_LARGE);
            assertThat(logEnd("large", 0)).isEqualTo(1);
            assertThat(logEnd("plain", 0)).isZero();

            // Fetch knows nothing of either limit: the batch comes back whole.
            FetchResponse.PartitionData fetched = Requests.fetchOne(client, Requests.fetch("large", 0, 0, 0));
            assertThat(fetched.errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched.records().readableBytes()).isEqualTo(tenKb.length);
        }
    }

    @ParameterizedTest(name = "appendAgents={0}")
    @ValueSource(ints = {1, 0})
    void theTopicsLimitBindsTheBatchItsCompressionTypeGrew(int appendAgents) throws Exception {
        try (RawClient client = start(appendAgents, BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES)) {
            byte[] plain = CompressedProduceTest.plainBatch(100, 0);
            byte[] lz4 = CompressedProduceTest.compress(plain, CompressionType.LZ4);
            assertThat(lz4.length).as("premise").isLessThan(plain.length / 2);
            // Both topics store batches uncompressed; the first one's limit is below the plain batch.
            create(
                    "tight",
                    1,
                    Map.of("compression.type", "uncompressed", "max.message.bytes", "" + (plain.length - 1)));
            create("room", 1, Map.of("compression.type", "uncompressed", "max.message.bytes", "" + plain.length));
            assertThat(produce(client, "tight", 0, lz4, "room", 0, lz4))
                    .extracting(PartitionResponse::errorCode)
                    .containsExactly(Errors.MESSAGE_TOO_LARGE, Errors.NONE);
            assertThat(logEnd("tight", 0)).isZero();
            assertThat(logEnd("room", 0)).isEqualTo(100);
        }
    }

    @Test
    void alterSetsAndDeleteRemovesTheLimitALoweredLimitKeepsServingStoredBatchesBadValuesAreRefused() throws Exception {
        try (RawClient client = start(1, BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES);
                ControllerClient controller = ControllerClient.builder(
                                server.controller().rpcEndpoint())
                        .build()) {
            for (String bad : List.of("77", "67043329", "1MB", "-1")) {
                assertThat(TestBroker.createTopic(server, "bad", 1, Map.of("max.message.bytes", bad)))
                        .as(bad)
                        .isEqualTo(ErrorCode.INVALID_CONFIG);
            }
            assertThat(server.controller().image().topic("bad")).isNull();

            create("t", 1, Map.of());
            byte[] big = Requests.batchOfSize(1, 2000, 1);
            assertThat(produce(client, "t", 0, big).get(0).errorCode()).isEqualTo(Errors.NONE);

            assertThat(alter(controller, ConfigOpType.SET, "0")).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(alter(controller, ConfigOpType.SET, "1000")).isEqualTo(ErrorCode.NONE);
            awaitLimit(1000);
            assertThat(produce(client, "t", 0, big).get(0).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(logEnd("t", 0)).isEqualTo(1);
            // The batch stored before the limit was lowered is still served as it is.
            FetchResponse.PartitionData fetched = Requests.fetchOne(client, Requests.fetch("t", 0, 0, 0));
            assertThat(fetched.errorCode()).isEqualTo(Errors.NONE);
            assertThat(fetched.records().readableBytes()).isEqualTo(big.length);

            assertThat(alter(controller, ConfigOpType.DELETE, "")).isEqualTo(ErrorCode.NONE);
            awaitLimit(BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES);
            assertThat(produce(client, "t", 0, big).get(0).errorCode()).isEqualTo(Errors.NONE);
            assertThat(logEnd("t", 0)).isEqualTo(2);
        }
    }

    private void awaitLimit(int bytes) throws InterruptedException {
        Wait.until(
                Duration.ofSeconds(10),
                () -> TestBroker.partition(server, "t", 0).maxMessageBytes(BrokerConfig.DEFAULT_MESSAGE_MAX_BYTES)
                        == bytes,
                "max.message.bytes " + bytes + " reaches the partition");
    }

    private static ErrorCode alter(ControllerClient controller, ConfigOpType op, String value) throws Exception {
        return controller
                .incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                        .setTopic("t")
                        .addConfigs(AlterableConfig.newBuilder()
                                .setKey("max.message.bytes")
                                .setValue(value)
                                .setOp(op)
                                .build())
                        .build())
                .getError();
    }
}
