package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.stellflow.broker.append.CompressionRefusals;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.LogLines;
import io.stellflow.testsupport.Wait;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code compression.produce.policy=refuse} (issue #21, "SDK policy"): a Produce holding a compressed
 * batch is answered {@code FEATURE_NOT_ENABLED} for that partition and nothing is appended, one WARN
 * line names the topic-partition and codec; uncompressed Produce goes on as before; the topic key is
 * validated on create and alter and the broker key is the default of topics without their own. With
 * and without append agents.
 */
@ParameterizedClass
@ValueSource(strings = {"nio", "epoll", "io_uring"})
@IntegrationTest
class CompressedProducePolicyTest {
    @Parameter
    String transport;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    @RegisterExtension
    final LogLines refusals = LogLines.of(CompressionRefusals.class).atLevel(Level.DEBUG);

    private StellflowServer server;

    private RawClient start(Properties extra) throws Exception {
        Properties props = TestBroker.props(NODES.dir(), transport);
        props.putAll(extra);
        server = NODES.start(props);
        return new RawClient(server.port());
    }

    @Test
    void aRefusingTopicAnswersCompressedProduceFeatureNotEnabledAndKeepsItsLog() throws Exception {
        refusesAndKeepsTheLog(new Properties());
    }

    @Test
    void withoutAppendAgentsTheRequestThreadsRefuseTheSame() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("num.append.agents", "0");
        refusesAndKeepsTheLog(extra);
    }

    private void refusesAndKeepsTheLog(Properties extra) throws Exception {
        try (RawClient client = start(extra)) {
            assertThat(TestBroker.createTopic(server, "sdk", 1, Map.of("compression.produce.policy", "refuse")))
                    .isEqualTo(ErrorCode.NONE);
            byte[] plain = CompressedProduceTest.plainBatch(10, 0);
            assertThat(Requests.produceOne(client, "sdk", 0, plain).errorCode()).isEqualTo(Errors.NONE);

            for (CompressionType type :
                    List.of(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD)) {
                byte[] compressed = CompressedProduceTest.compress(CompressedProduceTest.plainBatch(20, 100), type);
                assertThat(Requests.produceOne(client, "sdk", 0, compressed).errorCode())
                        .as(type.name())
                        .isEqualTo(Errors.FEATURE_NOT_ENABLED);
            }
            // A plain batch in front of a compressed one: the partition's whole record set is refused.
            byte[] mixed = Requests.concat(
                    CompressedProduceTest.plainBatch(3, 200),
                    CompressedProduceTest.compress(CompressedProduceTest.plainBatch(3, 300), CompressionType.LZ4));
            assertThat(Requests.produceOne(client, "sdk", 0, mixed).errorCode()).isEqualTo(Errors.FEATURE_NOT_ENABLED);
            assertThat(TestBroker.partition(server, "sdk", 0).logEndOffset()).isEqualTo(10);

            PartitionResponse after = Requests.produceOne(client, "sdk", 0, CompressedProduceTest.plainBatch(5, 400));
            assertThat(after.errorCode()).isEqualTo(Errors.NONE);
            assertThat(after.baseOffset()).isEqualTo(10);
            assertThat(TestBroker.partition(server, "sdk", 0).logEndOffset()).isEqualTo(15);

            List<ILoggingEvent> warns = refusals.at(Level.WARN);
            assertThat(warns).hasSize(1);
            assertThat(warns.get(0).getFormattedMessage())
                    .contains("sdk-0", "FEATURE_NOT_ENABLED", "gzip", "compression.produce.policy");
            assertThat(refusals.at(Level.DEBUG)).hasSizeGreaterThanOrEqualTo(4);
        }
    }

    @Test
    void theBrokerDefaultAppliesBadValuesAreRefusedAndAlterSwitchesThePolicy() throws Exception {
        Properties extra = new Properties();
        extra.setProperty("compression.produce.policy", "refuse");
        try (RawClient client = start(extra)) {
            assertThat(TestBroker.createTopic(server, "byDefault", 1, Map.of())).isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(server, "own", 1, Map.of("compression.produce.policy", "ACCEPT")))
                    .isEqualTo(ErrorCode.NONE);
            assertThat(TestBroker.createTopic(server, "bad", 1, Map.of("compression.produce.policy", "reject")))
                    .isEqualTo(ErrorCode.INVALID_CONFIG);
            byte[] zstd = CompressedProduceTest.compress(CompressedProduceTest.plainBatch(20, 0), CompressionType.ZSTD);
            assertThat(Requests.produceOne(client, "byDefault", 0, zstd).errorCode())
                    .isEqualTo(Errors.FEATURE_NOT_ENABLED);
            assertThat(Requests.produceOne(client, "own", 0, zstd).errorCode()).isEqualTo(Errors.NONE);

            try (ControllerClient controller =
                    ControllerClient.builder(server.controller().rpcEndpoint()).build()) {
                assertThat(alter(controller, "own", "maybe")).isEqualTo(ErrorCode.INVALID_CONFIG);
                assertThat(alter(controller, "own", "refuse")).isEqualTo(ErrorCode.NONE);
            }
            Wait.until(
                    Duration.ofSeconds(10),
                    () -> TestBroker.partition(server, "own", 0)
                            .log()
                            .config()
                            .compression()
                            .refuseCompressedProduce(),
                    "the altered policy reaches the log");
            assertThat(Requests.produceOne(client, "own", 0, zstd).errorCode()).isEqualTo(Errors.FEATURE_NOT_ENABLED);
            assertThat(TestBroker.partition(server, "own", 0).logEndOffset()).isEqualTo(20);
            assertThat(TestBroker.partition(server, "byDefault", 0).logEndOffset())
                    .isZero();
        }
    }

    private static ErrorCode alter(ControllerClient controller, String topic, String policy) throws Exception {
        return controller
                .incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                        .setTopic(topic)
                        .addConfigs(AlterableConfig.newBuilder()
                                .setKey("compression.produce.policy")
                                .setValue(policy)
                                .setOp(ConfigOpType.SET)
                                .build())
                        .build())
                .getError();
    }
}
