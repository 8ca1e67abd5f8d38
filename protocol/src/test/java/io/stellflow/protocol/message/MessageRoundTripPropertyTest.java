package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.support.Bufs;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Round trips of every v0 message: read(write(m)) == m, the body is consumed exactly, a direct-buffer
 * copy decodes the same, and any strict prefix of the encoding is rejected with INVALID_REQUEST.
 */
class MessageRoundTripPropertyTest {

    private static void roundTrip(ApiMessage m, Function<ByteBuf, ApiMessage> reader, int cutPermille) {
        try (Bufs bufs = new Bufs()) {
            ByteBuf body = bufs.heap();
            m.write(body);
            int size = body.readableBytes();
            ByteBuf heapCopy = body.duplicate();
            assertThat(reader.apply(heapCopy)).isEqualTo(m);
            assertThat(heapCopy.isReadable()).isFalse();
            assertThat(reader.apply(bufs.directCopy(body))).isEqualTo(m);
            assertThat(body.readerIndex()).isZero();
            int cut = (int) ((long) size * cutPermille / 1000);
            if (cut < size) {
                ByteBuf prefix = body.slice(0, cut);
                assertProtocolError(() -> reader.apply(prefix), Errors.INVALID_REQUEST);
            }
        }
    }

    // ---- arbitraries -------------------------------------------------------------------------

    static Arbitrary<String> strings() {
        return Arbitraries.strings()
                .withCharRange(' ', '~')
                .withCharRange('\u00a0', '\u07ff')
                .withCharRange('\u0800', '\ud7ff')
                .ofMaxLength(12);
    }

    static Arbitrary<String> nullableStrings() {
        return strings().injectNull(0.2);
    }

    static Arbitrary<Short> shorts() {
        return Arbitraries.shorts();
    }

    static Arbitrary<Integer> ints() {
        return Arbitraries.integers();
    }

    static Arbitrary<Long> longs() {
        return Arbitraries.longs();
    }

    static Arbitrary<Boolean> bools() {
        return Arbitraries.of(true, false);
    }

    static <T> Arbitrary<List<T>> lists(Arbitrary<T> a) {
        return a.list().ofMaxSize(3);
    }

    // ---- ApiVersions -------------------------------------------------------------------------

    @Provide
    Arbitrary<ApiVersionsRequest> apiVersionsRequests() {
        return Combinators.combine(nullableStrings(), nullableStrings(), lists(strings()))
                .as(ApiVersionsRequest::new);
    }

    @Provide
    Arbitrary<ApiVersionsResponse> apiVersionsResponses() {
        Arbitrary<ApiVersionsResponse.ApiVersionRange> range =
                Combinators.combine(shorts(), shorts(), shorts()).as(ApiVersionsResponse.ApiVersionRange::new);
        return Combinators.combine(lists(range), nullableStrings(), nullableStrings(), lists(strings()))
                .as(ApiVersionsResponse::new);
    }

    @Property(tries = 300)
    void apiVersionsRoundTrips(
            @ForAll("apiVersionsRequests") ApiVersionsRequest request,
            @ForAll("apiVersionsResponses") ApiVersionsResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, ApiVersionsRequest::read, cut);
        roundTrip(response, ApiVersionsResponse::read, cut);
    }

    // ---- Metadata ----------------------------------------------------------------------------

    @Provide
    Arbitrary<MetadataRequest> metadataRequests() {
        return Combinators.combine(lists(strings()), bools(), bools(), bools()).as(MetadataRequest::new);
    }

    @Provide
    Arbitrary<MetadataResponse> metadataResponses() {
        Arbitrary<MetadataResponse.Broker> broker = Combinators.combine(ints(), strings(), ints(), nullableStrings())
                .as(MetadataResponse.Broker::new);
        Arbitrary<MetadataResponse.PartitionMetadata> partition = Combinators.combine(
                        shorts(), ints(), ints(), ints(), lists(ints()), lists(ints()), lists(ints()))
                .as(MetadataResponse.PartitionMetadata::new);
        Arbitrary<MetadataResponse.TopicMetadata> topic = Combinators.combine(
                        shorts(), strings(), bools(), lists(partition), ints())
                .as(MetadataResponse.TopicMetadata::new);
        return Combinators.combine(nullableStrings(), ints(), lists(broker), lists(topic), ints())
                .as(MetadataResponse::new);
    }

    @Property(tries = 300)
    void metadataRoundTrips(
            @ForAll("metadataRequests") MetadataRequest request,
            @ForAll("metadataResponses") MetadataResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, MetadataRequest::read, cut);
        roundTrip(response, MetadataResponse::read, cut);
    }

    // ---- Produce -----------------------------------------------------------------------------

    @Provide
    Arbitrary<List<byte[]>> recordPayloads() {
        return Arbitraries.bytes()
                .array(byte[].class)
                .ofMaxSize(40)
                .injectNull(0.1)
                .list()
                .ofMinSize(1)
                .ofMaxSize(4);
    }

    @Property(tries = 300)
    void produceRequestRoundTrips(
            @ForAll("nullableStringsProvider") String transactionalId,
            @ForAll("acks") short acks,
            @ForAll @IntRange(min = 1) int timeoutMs,
            @ForAll("recordPayloads") List<byte[]> payloads,
            @ForAll @IntRange(min = 1, max = 3) int topics,
            @ForAll @IntRange(max = 999) int cut) {
        List<ProduceRequest.TopicData> topicData = new ArrayList<>();
        for (int t = 0; t < topics; t++) {
            List<ProduceRequest.PartitionData> partitions = new ArrayList<>();
            for (int p = 0; p < payloads.size(); p++) {
                byte[] bytes = payloads.get(p);
                partitions.add(
                        new ProduceRequest.PartitionData(p, bytes == null ? null : Unpooled.wrappedBuffer(bytes)));
            }
            topicData.add(new ProduceRequest.TopicData("topic-" + t, partitions));
        }
        ProduceRequest request = new ProduceRequest(transactionalId, acks, timeoutMs, topicData);
        try {
            roundTrip(request, ProduceRequest::read, cut);
        } finally {
            for (ProduceRequest.TopicData t : topicData) {
                for (ProduceRequest.PartitionData p : t.partitions()) {
                    if (p.records() != null) {
                        p.records().release();
                    }
                }
            }
        }
    }

    @Provide
    Arbitrary<String> nullableStringsProvider() {
        return nullableStrings();
    }

    @Provide
    Arbitrary<Short> acks() {
        return Arbitraries.of((short) 0, (short) 1, (short) -1);
    }

    @Provide
    Arbitrary<ProduceResponse> produceResponses() {
        Arbitrary<ProduceResponse.PartitionResponse> partition = Combinators.combine(
                        ints(), shorts(), longs(), ints(), longs(), longs())
                .as(ProduceResponse.PartitionResponse::new);
        Arbitrary<ProduceResponse.TopicResponse> topic =
                Combinators.combine(strings(), lists(partition)).as(ProduceResponse.TopicResponse::new);
        return lists(topic).map(ProduceResponse::new);
    }

    @Property(tries = 300)
    void produceResponseRoundTrips(
            @ForAll("produceResponses") ProduceResponse response, @ForAll @IntRange(max = 999) int cut) {
        roundTrip(response, ProduceResponse::read, cut);
    }

    // ---- Fetch -------------------------------------------------------------------------------

    @Provide
    Arbitrary<FetchRequest> fetchRequests() {
        Arbitrary<FetchRequest.FetchPartition> partition = Combinators.combine(
                        ints(), ints(), longs(), longs(), Arbitraries.integers().greaterOrEqual(1))
                .as(FetchRequest.FetchPartition::new);
        Arbitrary<FetchRequest.FetchTopic> topic = Combinators.combine(
                        strings(), partition.list().ofMinSize(1).ofMaxSize(3))
                .as(FetchRequest.FetchTopic::new);
        return Combinators.combine(
                        Arbitraries.integers().greaterOrEqual(-1),
                        Arbitraries.integers().greaterOrEqual(0),
                        Arbitraries.integers().greaterOrEqual(0),
                        Arbitraries.integers().greaterOrEqual(1),
                        Arbitraries.of((byte) 0, (byte) 1),
                        ints(),
                        topic.list().ofMinSize(1).ofMaxSize(3))
                .as(FetchRequest::new);
    }

    @Property(tries = 300)
    void fetchRequestRoundTrips(@ForAll("fetchRequests") FetchRequest request, @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, FetchRequest::read, cut);
    }

    @Property(tries = 300)
    void fetchResponseRoundTrips(
            @ForAll int sessionId,
            @ForAll("recordPayloads") List<byte[]> payloads,
            @ForAll("abortedTransactions") List<FetchResponse.AbortedTransaction> aborted,
            @ForAll short errorCode,
            @ForAll long highWatermark,
            @ForAll @IntRange(max = 999) int cut) {
        List<FetchResponse.PartitionData> partitions = new ArrayList<>();
        for (int p = 0; p < payloads.size(); p++) {
            byte[] bytes = payloads.get(p) == null ? new byte[0] : payloads.get(p);
            partitions.add(new FetchResponse.PartitionData(
                    p, errorCode, highWatermark, p, highWatermark, aborted, Unpooled.wrappedBuffer(bytes)));
        }
        FetchResponse response =
                new FetchResponse(sessionId, List.of(new FetchResponse.FetchableTopicResponse("t", partitions)));
        try {
            roundTrip(response, FetchResponse::read, cut);
        } finally {
            partitions.forEach(p -> p.records().release());
        }
    }

    @Provide
    Arbitrary<List<FetchResponse.AbortedTransaction>> abortedTransactions() {
        return lists(Combinators.combine(longs(), longs()).as(FetchResponse.AbortedTransaction::new));
    }

    // ---- ListOffsets -------------------------------------------------------------------------

    @Provide
    Arbitrary<ListOffsetsRequest> listOffsetsRequests() {
        Arbitrary<ListOffsetsRequest.ListOffsetsPartition> partition =
                Combinators.combine(ints(), ints(), longs(), ints()).as(ListOffsetsRequest.ListOffsetsPartition::new);
        Arbitrary<ListOffsetsRequest.ListOffsetsTopic> topic =
                Combinators.combine(strings(), lists(partition)).as(ListOffsetsRequest.ListOffsetsTopic::new);
        return Combinators.combine(ints(), Arbitraries.of((byte) 0, (byte) 1), lists(topic))
                .as(ListOffsetsRequest::new);
    }

    @Provide
    Arbitrary<ListOffsetsResponse> listOffsetsResponses() {
        Arbitrary<ListOffsetsResponse.ListOffsetsPartitionResponse> partition = Combinators.combine(
                        ints(), shorts(), ints(), longs(), longs(), lists(longs()))
                .as(ListOffsetsResponse.ListOffsetsPartitionResponse::new);
        Arbitrary<ListOffsetsResponse.ListOffsetsTopicResponse> topic =
                Combinators.combine(strings(), lists(partition)).as(ListOffsetsResponse.ListOffsetsTopicResponse::new);
        return lists(topic).map(ListOffsetsResponse::new);
    }

    @Property(tries = 300)
    void listOffsetsRoundTrips(
            @ForAll("listOffsetsRequests") ListOffsetsRequest request,
            @ForAll("listOffsetsResponses") ListOffsetsResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, ListOffsetsRequest::read, cut);
        roundTrip(response, ListOffsetsResponse::read, cut);
    }

    // ---- CreateTopic -------------------------------------------------------------------------

    @Provide
    Arbitrary<CreateTopicRequest> createTopicRequests() {
        return Combinators.combine(strings(), ints(), ints(), ints(), ints(), lists(ints()), lists(ints()))
                .as(CreateTopicRequest::new);
    }

    @Provide
    Arbitrary<CreateTopicResponse> createTopicResponses() {
        Arbitrary<CreateTopicResponse.CreateTopicPartition> partition =
                Combinators.combine(ints(), shorts(), ints()).as(CreateTopicResponse.CreateTopicPartition::new);
        return Combinators.combine(strings(), lists(partition)).as(CreateTopicResponse::new);
    }

    @Property(tries = 300)
    void createTopicRoundTrips(
            @ForAll("createTopicRequests") CreateTopicRequest request,
            @ForAll("createTopicResponses") CreateTopicResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, CreateTopicRequest::read, cut);
        roundTrip(response, CreateTopicResponse::read, cut);
    }

    // ---- Request header ----------------------------------------------------------------------

    @Property(tries = 300)
    void requestHeaderRoundTrips(
            @ForAll short apiKey,
            @ForAll short apiVersion,
            @ForAll int correlationId,
            @ForAll("nullableStringsProvider") String clientId,
            @ForAll("nullableStringsProvider") String traceId,
            @ForAll byte traceFlags,
            @ForAll("nullableStringsProvider") String tenantId,
            @ForAll @IntRange(max = 3) int trafficClass,
            @ForAll("nullableStringsProvider") String trafficTag,
            @ForAll short flags) {
        RequestHeader header = new RequestHeader(
                apiKey,
                apiVersion,
                RequestHeader.HEADER_VERSION,
                correlationId,
                clientId,
                traceId,
                traceId,
                traceFlags,
                tenantId,
                trafficTag,
                clientId,
                (byte) trafficClass,
                trafficTag,
                flags);
        try (Bufs bufs = new Bufs()) {
            ByteBuf out = bufs.heap();
            header.write(out);
            assertThat(RequestHeader.peekCorrelationId(out)).isEqualTo(correlationId);
            assertThat(RequestHeader.read(out)).isEqualTo(header);
            assertThat(out.isReadable()).isFalse();
        }
    }
}
