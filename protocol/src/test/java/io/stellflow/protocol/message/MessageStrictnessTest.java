package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.ListOffsetsRequest.ListOffsetsPartition;
import io.stellflow.protocol.message.ListOffsetsRequest.ListOffsetsTopic;
import io.stellflow.protocol.message.ProduceRequest.PartitionData;
import io.stellflow.protocol.message.ProduceRequest.TopicData;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Strict body decoding ({@code docs/spec/wire-protocol.md} §2) and the request-level range checks
 * of §6.3-§6.5.
 */
class MessageStrictnessTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    private ByteBuf encode(ApiMessage m) {
        ByteBuf out = bufs.heap();
        m.write(out);
        return out;
    }

    private ByteBuf records() {
        return bufs.hex("cafe");
    }

    private ProduceRequest produce(short acks, int timeoutMs, List<TopicData> topics) {
        return new ProduceRequest(null, acks, timeoutMs, topics);
    }

    private List<TopicData> oneTopic() {
        return List.of(new TopicData("t", List.of(new PartitionData(0, records()))));
    }

    private FetchRequest fetch(int replicaId, int maxWaitMs, int minBytes, int maxBytes, int isolation, int pmb) {
        return new FetchRequest(
                replicaId,
                maxWaitMs,
                minBytes,
                maxBytes,
                (byte) isolation,
                0,
                List.of(new FetchTopic("t", List.of(new FetchPartition(0, -1, 0, -1, pmb)))));
    }

    @Test
    void produceAcceptsOnlyAcks0And1AndMinus1() {
        for (short acks : new short[] {0, 1, -1}) {
            assertThat(ProduceRequest.read(encode(produce(acks, 1, oneTopic()))).acks())
                    .isEqualTo(acks);
        }
        for (short acks : new short[] {2, -2, 100}) {
            ByteBuf body = encode(produce(acks, 1, oneTopic()));
            assertProtocolError(() -> ProduceRequest.read(body), Errors.INVALID_REQUEST);
        }
    }

    @Test
    void produceRejectsNonPositiveTimeoutAndEmptyArrays() {
        ByteBuf zeroTimeout = encode(produce((short) -1, 0, oneTopic()));
        assertProtocolError(() -> ProduceRequest.read(zeroTimeout), Errors.INVALID_REQUEST);
        ByteBuf noTopics = encode(produce((short) -1, 1, List.of()));
        assertProtocolError(() -> ProduceRequest.read(noTopics), Errors.INVALID_REQUEST);
        ByteBuf noPartitions = encode(produce((short) -1, 1, List.of(new TopicData("t", List.of()))));
        assertProtocolError(() -> ProduceRequest.read(noPartitions), Errors.INVALID_REQUEST);
    }

    @Test
    void produceRejectsTheSameTopicPartitionTwiceEvenAcrossTopicEntries() {
        ByteBuf sameEntry = encode(produce(
                (short) 1,
                1,
                List.of(new TopicData(
                        "t", List.of(new PartitionData(0, records()), new PartitionData(0, records()))))));
        assertProtocolError(() -> ProduceRequest.read(sameEntry), Errors.INVALID_REQUEST);
        ByteBuf twoEntries = encode(produce(
                (short) 1,
                1,
                List.of(
                        new TopicData("t", List.of(new PartitionData(0, records()))),
                        new TopicData("t", List.of(new PartitionData(0, records()))))));
        assertProtocolError(() -> ProduceRequest.read(twoEntries), Errors.INVALID_REQUEST);
        ByteBuf disjoint = encode(produce(
                (short) 1,
                1,
                List.of(
                        new TopicData("t", List.of(new PartitionData(0, records()))),
                        new TopicData("t", List.of(new PartitionData(1, records()))),
                        new TopicData("u", List.of(new PartitionData(0, records()))))));
        assertThat(ProduceRequest.read(disjoint).topicData()).hasSize(3);
    }

    @Test
    void produceRecordsAreSlicesAndMayBeNull() {
        ByteBuf body = encode(new ProduceRequest(
                "txn", (short) 1, 5, List.of(new TopicData("t", List.of(new PartitionData(3, null))))));
        ProduceRequest read = ProduceRequest.read(body);
        assertThat(read.transactionalId()).isEqualTo("txn");
        assertThat(read.topicData().get(0).partitions().get(0).records()).isNull();

        ByteBuf withRecords = encode(produce((short) 1, 1, oneTopic()));
        ByteBuf slice = ProduceRequest.read(withRecords)
                .topicData()
                .get(0)
                .partitions()
                .get(0)
                .records();
        assertThat(Bufs.hexOf(slice)).isEqualTo("cafe");
        assertThat(slice.refCnt()).isEqualTo(withRecords.refCnt()).isEqualTo(1);
    }

    @Test
    void fetchEnforcesTheSection6_4Ranges() {
        assertThat(FetchRequest.read(encode(fetch(-1, 0, 0, 1, 0, 1))).replicaId())
                .isEqualTo(-1);
        assertThat(FetchRequest.read(encode(fetch(3, 500, 1, 10, 1, 10))).replicaId())
                .isEqualTo(3);
        List<FetchRequest> bad = List.of(
                fetch(-2, 0, 0, 1, 0, 1),
                fetch(-1, -1, 0, 1, 0, 1),
                fetch(-1, 0, -1, 1, 0, 1),
                fetch(-1, 0, 0, 0, 0, 1),
                fetch(-1, 0, 0, 1, 2, 1),
                fetch(-1, 0, 0, 1, -1, 1),
                fetch(-1, 0, 0, 1, 0, 0),
                new FetchRequest(-1, 0, 0, 1, (byte) 0, 0, List.of()),
                new FetchRequest(-1, 0, 0, 1, (byte) 0, 0, List.of(new FetchTopic("t", List.of()))));
        for (FetchRequest request : bad) {
            ByteBuf body = encode(request);
            assertProtocolError(() -> FetchRequest.read(body), Errors.INVALID_REQUEST);
        }
    }

    @Test
    void listOffsetsAcceptsIsolationLevels0And1Only() {
        for (int level = -1; level <= 2; level++) {
            ByteBuf body = encode(new ListOffsetsRequest(
                    -1,
                    (byte) level,
                    List.of(new ListOffsetsTopic(
                            "t", List.of(new ListOffsetsPartition(0, -1, ListOffsetsRequest.LATEST_TIMESTAMP, 1))))));
            if (level == 0 || level == 1) {
                assertThat(ListOffsetsRequest.read(body).isolationLevel()).isEqualTo((byte) level);
            } else {
                assertProtocolError(() -> ListOffsetsRequest.read(body), Errors.INVALID_REQUEST);
            }
        }
    }

    @Test
    void listOffsetsLeavesPartitionLevelErrorsToTheBroker() {
        ByteBuf body = encode(new ListOffsetsRequest(
                -1, (byte) 0, List.of(new ListOffsetsTopic("t", List.of(new ListOffsetsPartition(0, -1, -5, 0))))));
        assertThat(ListOffsetsRequest.read(body)
                        .topics()
                        .get(0)
                        .partitions()
                        .get(0)
                        .maxNumOffsets())
                .isZero();
    }

    @Test
    void metadataRejectsABadBoolAndANullTopic() {
        ByteBuf badBool = bufs.hex("00000000" + "00" + "02" + "00");
        assertProtocolError(() -> MetadataRequest.read(badBool), Errors.INVALID_REQUEST);
        ByteBuf nullTopic = bufs.hex("00000001ffff000000");
        assertProtocolError(() -> MetadataRequest.read(nullTopic), Errors.INVALID_REQUEST);
        assertThat(MetadataRequest.read(bufs.hex("00000001000161000100")))
                .isEqualTo(new MetadataRequest(List.of("a"), false, true, false));
    }

    @Test
    void invalidUtf8InATopicIsInvalidRequest() {
        ByteBuf body =
                bufs.hex("0002c328" + "00000000" + "ffffffff" + "00000000" + "00000000" + "00000000" + "00000000");
        assertProtocolError(() -> CreateTopicRequest.read(body), Errors.INVALID_REQUEST);
    }

    @Test
    void negativeArrayCountIsInvalidRequest() {
        ByteBuf body = bufs.hex("ffff" + "ffff" + "ffffffff");
        assertProtocolError(() -> ApiVersionsRequest.read(body), Errors.INVALID_REQUEST);
    }

    @Test
    void everyMessageRejectsATrailingByteAndAShortBody() {
        List<Case> cases = List.of(
                new Case(new ApiVersionsRequest("n", "v", List.of("f")), ApiVersionsRequest::read),
                new Case(
                        new ApiVersionsResponse(
                                List.of(new ApiVersionsResponse.ApiVersionRange((short) 0, (short) 0, (short) 0)),
                                "b",
                                null,
                                List.of()),
                        ApiVersionsResponse::read),
                new Case(new MetadataRequest(List.of(), false, false, false), MetadataRequest::read),
                new Case(new MetadataResponse(null, -1, List.of(), List.of(), 0), MetadataResponse::read),
                new Case(produce((short) 1, 1, oneTopic()), ProduceRequest::read),
                new Case(new ProduceResponse(List.of()), ProduceResponse::read),
                new Case(fetch(-1, 0, 0, 1, 0, 1), FetchRequest::read),
                new Case(new FetchResponse(0, List.of()), FetchResponse::read),
                new Case(new ListOffsetsRequest(-1, (byte) 0, List.of()), ListOffsetsRequest::read),
                new Case(new ListOffsetsResponse(List.of()), ListOffsetsResponse::read),
                new Case(CreateTopicRequest.of("t", 2), CreateTopicRequest::read),
                new Case(new CreateTopicResponse("t", List.of()), CreateTopicResponse::read));
        for (Case c : cases) {
            ByteBuf body = encode(c.message());
            assertThat(c.reader().apply(body.duplicate())).isEqualTo(c.message());
            ByteBuf longer =
                    bufs.heap().writeBytes(body, 0, body.readableBytes()).writeByte(0);
            assertProtocolError(() -> c.reader().apply(longer), Errors.INVALID_REQUEST);
            ByteBuf shorter = body.slice(0, body.readableBytes() - 1);
            assertProtocolError(() -> c.reader().apply(shorter), Errors.INVALID_REQUEST);
        }
    }

    @Test
    void fetchResponseWritesNullRecordsAsEmpty() {
        FetchResponse response = new FetchResponse(
                0,
                List.of(new FetchResponse.FetchableTopicResponse(
                        "t",
                        List.of(new FetchResponse.PartitionData(
                                0, Errors.OFFSET_OUT_OF_RANGE, -1, -1, -1, List.of(), null)))));
        ByteBuf body = encode(response);
        ByteBuf records =
                FetchResponse.read(body).responses().get(0).partitions().get(0).records();
        assertThat(records).isNotNull();
        assertThat(records.readableBytes()).isZero();
    }

    private record Case(ApiMessage message, Function<ByteBuf, ApiMessage> reader) {}
}
