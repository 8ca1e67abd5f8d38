package io.stellflow.protocol.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes every body codec ({@link BodyCodec}, {@link BodyCodecTarget}): one Jazzer test and one
 * corpus directory per codec, so a soak run fuzzes one codec ({@code -Dtest=BodyCodecFuzzTest#produceRequest},
 * {@code docs/fuzzing.md}). CI: each corpus plus seeded mutants ({@link #shortRun}); the Jazzer
 * tests replay the corpora.
 */
class BodyCodecFuzzTest {
    @FuzzTest
    void apiVersionsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.API_VERSIONS_REQUEST, input);
    }

    @FuzzTest
    void apiVersionsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.API_VERSIONS_RESPONSE, input);
    }

    @FuzzTest
    void metadataRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.METADATA_REQUEST, input);
    }

    @FuzzTest
    void metadataResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.METADATA_RESPONSE, input);
    }

    @FuzzTest
    void produceRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.PRODUCE_REQUEST, input);
    }

    @FuzzTest
    void produceResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.PRODUCE_RESPONSE, input);
    }

    @FuzzTest
    void fetchRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FETCH_REQUEST, input);
    }

    @FuzzTest
    void fetchRequestV2(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FETCH_REQUEST_V2, input);
    }

    @FuzzTest
    void fetchResponseV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FETCH_RESPONSE_V0, input);
    }

    @FuzzTest
    void fetchResponseV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FETCH_RESPONSE_V1, input);
    }

    @FuzzTest
    void listOffsetsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_OFFSETS_REQUEST, input);
    }

    @FuzzTest
    void listOffsetsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_OFFSETS_RESPONSE, input);
    }

    @FuzzTest
    void createTopicRequestV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CREATE_TOPIC_REQUEST_V0, input);
    }

    @FuzzTest
    void createTopicRequestV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CREATE_TOPIC_REQUEST_V1, input);
    }

    @FuzzTest
    void createTopicResponseV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CREATE_TOPIC_RESPONSE_V0, input);
    }

    @FuzzTest
    void createTopicResponseV2(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CREATE_TOPIC_RESPONSE_V2, input);
    }

    @FuzzTest
    void offsetForLeaderEpochRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FOR_LEADER_EPOCH_REQUEST, input);
    }

    @FuzzTest
    void offsetForLeaderEpochResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FOR_LEADER_EPOCH_RESPONSE, input);
    }

    @FuzzTest
    void offsetCommitRequestV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_COMMIT_REQUEST_V0, input);
    }

    @FuzzTest
    void offsetCommitRequestV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_COMMIT_REQUEST_V1, input);
    }

    @FuzzTest
    void offsetCommitResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_COMMIT_RESPONSE, input);
    }

    @FuzzTest
    void offsetFetchRequestV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FETCH_REQUEST_V0, input);
    }

    @FuzzTest
    void offsetFetchRequestV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FETCH_REQUEST_V1, input);
    }

    @FuzzTest
    void offsetFetchResponseV0(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FETCH_RESPONSE_V0, input);
    }

    @FuzzTest
    void offsetFetchResponseV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_FETCH_RESPONSE_V1, input);
    }

    @FuzzTest
    void findCoordinatorRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FIND_COORDINATOR_REQUEST, input);
    }

    @FuzzTest
    void findCoordinatorResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FIND_COORDINATOR_RESPONSE, input);
    }

    @FuzzTest
    void heartbeatRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.HEARTBEAT_REQUEST, input);
    }

    @FuzzTest
    void heartbeatResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.HEARTBEAT_RESPONSE, input);
    }

    @FuzzTest
    void joinGroupRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.JOIN_GROUP_REQUEST, input);
    }

    @FuzzTest
    void joinGroupResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.JOIN_GROUP_RESPONSE, input);
    }

    @FuzzTest
    void syncGroupRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.SYNC_GROUP_REQUEST, input);
    }

    @FuzzTest
    void syncGroupResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.SYNC_GROUP_RESPONSE, input);
    }

    @FuzzTest
    void consumerGroupHeartbeatRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CONSUMER_GROUP_HEARTBEAT_REQUEST, input);
    }

    @FuzzTest
    void consumerGroupHeartbeatResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.CONSUMER_GROUP_HEARTBEAT_RESPONSE, input);
    }

    @FuzzTest
    void listGroupsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_GROUPS_REQUEST, input);
    }

    @FuzzTest
    void listGroupsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_GROUPS_RESPONSE, input);
    }

    @FuzzTest
    void describeGroupsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_GROUPS_REQUEST, input);
    }

    @FuzzTest
    void describeGroupsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_GROUPS_RESPONSE, input);
    }

    @FuzzTest
    void deleteGroupsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DELETE_GROUPS_REQUEST, input);
    }

    @FuzzTest
    void deleteGroupsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DELETE_GROUPS_RESPONSE, input);
    }

    @FuzzTest
    void offsetDeleteRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_DELETE_REQUEST, input);
    }

    @FuzzTest
    void offsetDeleteResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_DELETE_RESPONSE, input);
    }

    @FuzzTest
    void offsetHistoryRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_HISTORY_REQUEST, input);
    }

    @FuzzTest
    void offsetHistoryResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.OFFSET_HISTORY_RESPONSE, input);
    }

    @FuzzTest
    void describeLogDirsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_LOG_DIRS_REQUEST, input);
    }

    @FuzzTest
    void describeLogDirsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_LOG_DIRS_RESPONSE, input);
    }

    @FuzzTest
    void deleteRecordsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DELETE_RECORDS_REQUEST, input);
    }

    @FuzzTest
    void deleteRecordsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DELETE_RECORDS_RESPONSE, input);
    }

    @FuzzTest
    void describeBrokerConfigsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_BROKER_CONFIGS_REQUEST, input);
    }

    @FuzzTest
    void describeBrokerConfigsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_BROKER_CONFIGS_RESPONSE, input);
    }

    @FuzzTest
    void describeControllersRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_CONTROLLERS_REQUEST, input);
    }

    @FuzzTest
    void describeControllersResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_CONTROLLERS_RESPONSE, input);
    }

    @FuzzTest
    void initProducerIdRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.INIT_PRODUCER_ID_REQUEST, input);
    }

    @FuzzTest
    void initProducerIdResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.INIT_PRODUCER_ID_RESPONSE, input);
    }

    @FuzzTest
    void beginTransactionRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.BEGIN_TRANSACTION_REQUEST, input);
    }

    @FuzzTest
    void endTransactionRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.END_TRANSACTION_REQUEST, input);
    }

    @FuzzTest
    void transactionResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.TRANSACTION_RESPONSE, input);
    }

    @FuzzTest
    void registerTxnPartitionRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.REGISTER_TXN_PARTITION_REQUEST, input);
    }

    @FuzzTest
    void registerTxnPartitionResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.REGISTER_TXN_PARTITION_RESPONSE, input);
    }

    @FuzzTest
    void writeTxnMarkersRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.WRITE_TXN_MARKERS_REQUEST, input);
    }

    @FuzzTest
    void writeTxnMarkersResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.WRITE_TXN_MARKERS_RESPONSE, input);
    }

    @FuzzTest
    void listTransactionsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_TRANSACTIONS_REQUEST, input);
    }

    @FuzzTest
    void listTransactionsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.LIST_TRANSACTIONS_RESPONSE, input);
    }

    @FuzzTest
    void describeTransactionsRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_TRANSACTIONS_REQUEST, input);
    }

    @FuzzTest
    void describeTransactionsResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_TRANSACTIONS_RESPONSE, input);
    }

    @FuzzTest
    void describeProducersRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_PRODUCERS_REQUEST, input);
    }

    @FuzzTest
    void describeProducersResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.DESCRIBE_PRODUCERS_RESPONSE, input);
    }

    @FuzzTest
    void forwardStatusRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FORWARD_STATUS_REQUEST, input);
    }

    @FuzzTest
    void forwardStatusResponse(byte[] input) {
        BodyCodecTarget.run(BodyCodec.FORWARD_STATUS_RESPONSE, input);
    }

    @FuzzTest
    void produceRequestV2(byte[] input) {
        BodyCodecTarget.run(BodyCodec.PRODUCE_REQUEST_V2, input);
    }

    @FuzzTest
    void initProducerIdRequestV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.INIT_PRODUCER_ID_REQUEST_V1, input);
    }

    @FuzzTest
    void endTransactionRequestV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.END_TRANSACTION_REQUEST_V1, input);
    }

    @FuzzTest
    void beginTransactionResponseV1(byte[] input) {
        BodyCodecTarget.run(BodyCodec.BEGIN_TRANSACTION_RESPONSE_V1, input);
    }

    @FuzzTest
    void txnOffsetCommitRequest(byte[] input) {
        BodyCodecTarget.run(BodyCodec.TXN_OFFSET_COMMIT_REQUEST, input);
    }

    @Test
    void shortRun() throws Exception {
        for (BodyCodec codec : BodyCodec.values()) {
            ShortRun.run(
                    codec.methodName(), BodyCodecTarget.of(codec), Corpus.load(getClass(), codec.methodName()), 3_000);
        }
    }

    @Test
    void everyCodecHasAFuzzTest() {
        for (BodyCodec codec : BodyCodec.values()) {
            assertThat(Arrays.stream(getClass().getDeclaredMethods())
                            .filter(m -> m.isAnnotationPresent(FuzzTest.class))
                            .map(Method::getName))
                    .as("a @FuzzTest for %s", codec)
                    .contains(codec.methodName());
        }
    }

    /**
     * Every {@code ApiMessage} class of {@code protocol/message} (found in the sources) is the
     * decoded type of some codec here, so a new body codec cannot be left out of the fuzzing.
     */
    @Test
    void everyApiMessageClassHasACodec() throws IOException {
        Set<String> covered = new HashSet<>();
        for (BodyCodec codec : BodyCodec.values()) {
            List<byte[]> seeds = SeedFiles.bodies(codec);
            assertThat(seeds).as("seeds of %s", codec).isNotEmpty();
            covered.add(codec.reader
                    .apply(Unpooled.wrappedBuffer(seeds.getFirst()))
                    .getClass()
                    .getSimpleName());
        }
        Set<String> messages = new HashSet<>();
        try (Stream<Path> files = Files.list(Path.of("src/main/java/io/stellflow/protocol/message"))) {
            for (Path f : files.toList()) {
                if (Files.readString(f).contains("implements ApiMessage")) {
                    messages.add(f.getFileName().toString().replace(".java", ""));
                }
            }
        }
        assertThat(messages).hasSizeGreaterThan(30);
        assertThat(covered).containsAll(messages);
    }
}
