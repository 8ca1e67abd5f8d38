package io.stellflow.protocol.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.reflect.Method;
import java.util.Arrays;
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
}
