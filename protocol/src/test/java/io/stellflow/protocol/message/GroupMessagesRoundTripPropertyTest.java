package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.ints;
import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.lists;
import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.longs;
import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.nullableStrings;
import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.shorts;
import static io.stellflow.protocol.message.MessageRoundTripPropertyTest.strings;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.OffsetHistoryResponse.OffsetHistoryEntry;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Round trips of every group message (keys 5-10 at each version, 20-25): read(write(m)) == m at the
 * same version, the body is consumed exactly, a direct-buffer copy decodes the same, and a strict
 * prefix of the encoding is INVALID_REQUEST. Nulls, empty arrays, null nullable arrays and
 * non-ASCII strings included.
 */
class GroupMessagesRoundTripPropertyTest {

    private static <T> void roundTrip(
            T m, BiConsumer<T, ByteBuf> writer, Function<ByteBuf, T> reader, int cutPermille) {
        try (Bufs bufs = new Bufs()) {
            ByteBuf body = bufs.heap();
            writer.accept(m, body);
            int size = body.readableBytes();
            ByteBuf heapCopy = body.duplicate();
            assertThat(reader.apply(heapCopy)).isEqualTo(m);
            assertThat(heapCopy.isReadable()).isFalse();
            assertThat(reader.apply(bufs.directCopy(body))).isEqualTo(m);
            int cut = (int) ((long) size * cutPermille / 1000);
            if (cut < size) {
                ByteBuf prefix = body.slice(0, cut);
                assertProtocolError(() -> reader.apply(prefix), Errors.INVALID_REQUEST);
            }
        }
    }

    private static <T extends ApiMessage> void roundTrip(T m, Function<ByteBuf, T> reader, int cutPermille) {
        roundTrip(m, ApiMessage::write, reader, cutPermille);
    }

    private static <T> Arbitrary<List<T>> nullableLists(Arbitrary<T> a) {
        return lists(a).injectNull(0.2);
    }

    static Arbitrary<TopicPartitions> topicPartitions() {
        return Combinators.combine(strings(), lists(ints())).as(TopicPartitions::new);
    }

    // ---- OffsetCommit, OffsetFetch ------------------------------------------------------------

    @Provide
    Arbitrary<OffsetCommitRequest> commitRequests() {
        Arbitrary<OffsetCommitRequest.OffsetCommitPartition> partition = Combinators.combine(
                        ints(), longs(), nullableStrings())
                .as(OffsetCommitRequest.OffsetCommitPartition::new);
        Arbitrary<OffsetCommitRequest.OffsetCommitTopic> topic =
                Combinators.combine(strings(), lists(partition)).as(OffsetCommitRequest.OffsetCommitTopic::new);
        return Combinators.combine(nullableStrings(), nullableStrings(), ints(), lists(topic))
                .as(OffsetCommitRequest::new);
    }

    @Provide
    Arbitrary<OffsetCommitResponse> commitResponses() {
        Arbitrary<OffsetCommitResponse.OffsetCommitPartitionResponse> partition =
                Combinators.combine(ints(), shorts()).as(OffsetCommitResponse.OffsetCommitPartitionResponse::new);
        return lists(Combinators.combine(strings(), lists(partition))
                        .as(OffsetCommitResponse.OffsetCommitTopicResponse::new))
                .map(OffsetCommitResponse::new);
    }

    @Property(tries = 200)
    void offsetCommitRoundTripsAtBothVersions(
            @ForAll("commitRequests") OffsetCommitRequest request,
            @ForAll("commitResponses") OffsetCommitResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, (m, out) -> m.write(out, (short) 1), b -> OffsetCommitRequest.read(b, (short) 1), cut);
        // v0 carries neither memberId nor memberEpoch: they read as "outside the group".
        OffsetCommitRequest v0 = new OffsetCommitRequest(request.groupId(), request.topics());
        roundTrip(
                request,
                (m, out) -> m.write(out, (short) 0),
                b -> withMember(OffsetCommitRequest.read(b), request),
                cut);
        roundTrip(v0, OffsetCommitRequest::read, cut);
        roundTrip(response, OffsetCommitResponse::read, cut);
    }

    private static OffsetCommitRequest withMember(OffsetCommitRequest read, OffsetCommitRequest original) {
        assertThat(read.memberId()).isNull();
        assertThat(read.memberEpoch()).isEqualTo(OffsetCommitRequest.NO_MEMBER_EPOCH);
        return new OffsetCommitRequest(read.groupId(), original.memberId(), original.memberEpoch(), read.topics());
    }

    @Provide
    Arbitrary<OffsetFetchRequest> fetchRequests() {
        Arbitrary<OffsetFetchRequest.OffsetFetchTopic> topic =
                Combinators.combine(strings(), lists(ints())).as(OffsetFetchRequest.OffsetFetchTopic::new);
        return Combinators.combine(nullableStrings(), nullableLists(topic)).as(OffsetFetchRequest::new);
    }

    @Provide
    Arbitrary<OffsetFetchResponse> fetchResponses() {
        Arbitrary<OffsetFetchResponse.OffsetFetchPartitionResponse> partition = Combinators.combine(
                        ints(), longs(), nullableStrings(), shorts())
                .as(OffsetFetchResponse.OffsetFetchPartitionResponse::new);
        Arbitrary<OffsetFetchResponse.OffsetFetchTopicResponse> topic =
                Combinators.combine(strings(), lists(partition)).as(OffsetFetchResponse.OffsetFetchTopicResponse::new);
        return Combinators.combine(lists(topic), shorts()).as(OffsetFetchResponse::new);
    }

    @Property(tries = 200)
    void offsetFetchRoundTripsAtBothVersions(
            @ForAll("fetchRequests") OffsetFetchRequest request,
            @ForAll("fetchResponses") OffsetFetchResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, (m, out) -> m.write(out, (short) 1), b -> OffsetFetchRequest.read(b, (short) 1), cut);
        if (request.topics() != null) {
            roundTrip(request, OffsetFetchRequest::read, cut);
        }
        roundTrip(response, (m, out) -> m.write(out, (short) 1), b -> OffsetFetchResponse.read(b, (short) 1), cut);
        roundTrip(new OffsetFetchResponse(response.topics()), OffsetFetchResponse::read, cut);
    }

    // ---- FindCoordinator, Heartbeat, JoinGroup, SyncGroup ---------------------------------------

    @Property(tries = 200)
    void classicGroupMessagesRoundTrip(
            @ForAll("nullableStringsProvider") String a,
            @ForAll("nullableStringsProvider") String b,
            @ForAll("stringsProvider") String s,
            @ForAll byte keyType,
            @ForAll short errorCode,
            @ForAll int n,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(new FindCoordinatorRequest(a, keyType), FindCoordinatorRequest::read, cut);
        roundTrip(new FindCoordinatorResponse(errorCode, n, a, n), FindCoordinatorResponse::read, cut);
        roundTrip(new HeartbeatRequest(s, n, s), HeartbeatRequest::read, cut);
        roundTrip(new HeartbeatResponse(errorCode), HeartbeatResponse::read, cut);
        roundTrip(new JoinGroupRequest(a, b, n), JoinGroupRequest::read, cut);
        roundTrip(new JoinGroupResponse(errorCode, n, a, b), JoinGroupResponse::read, cut);
        roundTrip(new SyncGroupRequest(s, n, s), SyncGroupRequest::read, cut);
        roundTrip(new SyncGroupResponse(errorCode), SyncGroupResponse::read, cut);
    }

    @Provide
    Arbitrary<String> nullableStringsProvider() {
        return nullableStrings();
    }

    @Provide
    Arbitrary<String> stringsProvider() {
        return strings();
    }

    // ---- ConsumerGroupHeartbeat ----------------------------------------------------------------

    @Provide
    Arbitrary<ConsumerGroupHeartbeatRequest> heartbeatRequests() {
        return Combinators.combine(
                        strings(),
                        nullableStrings(),
                        ints(),
                        nullableStrings(),
                        nullableStrings(),
                        ints(),
                        nullableLists(strings()),
                        nullableStrings())
                .as(HeartbeatHead::new)
                .flatMap(h -> nullableLists(topicPartitions())
                        .map(owned -> new ConsumerGroupHeartbeatRequest(
                                h.groupId(),
                                h.memberId(),
                                h.memberEpoch(),
                                h.instanceId(),
                                h.rackId(),
                                h.rebalanceTimeoutMs(),
                                h.topics(),
                                h.assignor(),
                                owned)));
    }

    /** The first eight fields of a ConsumerGroupHeartbeat request (jqwik combines up to eight). */
    private record HeartbeatHead(
            String groupId,
            String memberId,
            int memberEpoch,
            String instanceId,
            String rackId,
            int rebalanceTimeoutMs,
            List<String> topics,
            String assignor) {}

    @Provide
    Arbitrary<ConsumerGroupHeartbeatResponse> heartbeatResponses() {
        return Combinators.combine(
                        shorts(),
                        nullableStrings(),
                        nullableStrings(),
                        ints(),
                        ints(),
                        ints(),
                        nullableLists(topicPartitions()))
                .as(ConsumerGroupHeartbeatResponse::new);
    }

    @Property(tries = 200)
    void consumerGroupHeartbeatRoundTrips(
            @ForAll("heartbeatRequests") ConsumerGroupHeartbeatRequest request,
            @ForAll("heartbeatResponses") ConsumerGroupHeartbeatResponse response,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(request, ConsumerGroupHeartbeatRequest::read, cut);
        roundTrip(response, ConsumerGroupHeartbeatResponse::read, cut);
    }

    // ---- ListGroups, DescribeGroups, DeleteGroups ----------------------------------------------

    @Provide
    Arbitrary<DescribeGroupsResponse> describeResponses() {
        Arbitrary<DescribedMember> member = Combinators.combine(
                        strings(),
                        nullableStrings(),
                        strings(),
                        strings(),
                        ints(),
                        lists(strings()),
                        lists(topicPartitions()),
                        lists(topicPartitions()))
                .as(DescribedMember::new);
        Arbitrary<DescribedGroup> group = Combinators.combine(
                        shorts(), strings(), strings(), strings(), ints(), ints(), nullableStrings(), lists(member))
                .as(DescribedGroup::new);
        return lists(group).map(DescribeGroupsResponse::new);
    }

    @Property(tries = 200)
    void groupAdminMessagesRoundTrip(
            @ForAll("stringLists") List<String> names,
            @ForAll("describeResponses") DescribeGroupsResponse described,
            @ForAll short errorCode,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(new ListGroupsRequest(names), ListGroupsRequest::read, cut);
        List<ListGroupsResponse.ListedGroup> listed = names.stream()
                .map(n -> new ListGroupsResponse.ListedGroup(n, "consumer", n))
                .toList();
        roundTrip(new ListGroupsResponse(errorCode, listed), ListGroupsResponse::read, cut);
        roundTrip(new DescribeGroupsRequest(names), DescribeGroupsRequest::read, cut);
        roundTrip(described, DescribeGroupsResponse::read, cut);
        roundTrip(new DeleteGroupsRequest(names), DeleteGroupsRequest::read, cut);
        List<DeleteGroupsResponse.GroupResult> results = names.stream()
                .map(n -> new DeleteGroupsResponse.GroupResult(n, errorCode))
                .toList();
        roundTrip(new DeleteGroupsResponse(results), DeleteGroupsResponse::read, cut);
    }

    @Provide
    Arbitrary<List<String>> stringLists() {
        return lists(strings());
    }

    // ---- OffsetDelete, OffsetHistory -----------------------------------------------------------

    @Provide
    Arbitrary<OffsetDeleteRequest> offsetDeleteRequests() {
        return Combinators.combine(strings(), lists(topicPartitions())).as(OffsetDeleteRequest::new);
    }

    @Provide
    Arbitrary<OffsetDeleteResponse> offsetDeleteResponses() {
        Arbitrary<OffsetDeleteResponse.OffsetDeletePartitionResponse> partition =
                Combinators.combine(ints(), shorts()).as(OffsetDeleteResponse.OffsetDeletePartitionResponse::new);
        Arbitrary<OffsetDeleteResponse.OffsetDeleteTopicResponse> topic = Combinators.combine(
                        strings(), lists(partition))
                .as(OffsetDeleteResponse.OffsetDeleteTopicResponse::new);
        return Combinators.combine(shorts(), lists(topic)).as(OffsetDeleteResponse::new);
    }

    @Provide
    Arbitrary<OffsetHistoryResponse> historyResponses() {
        Arbitrary<OffsetHistoryEntry> entry = Combinators.combine(
                        longs(), strings(), ints(), longs(), longs(), strings(), strings(), strings())
                .as(HistoryHead::new)
                .flatMap(h -> nullableStrings()
                        .map(member -> new OffsetHistoryEntry(
                                h.timestampMs(),
                                h.topic(),
                                h.partition(),
                                h.oldOffset(),
                                h.newOffset(),
                                h.source(),
                                h.principal(),
                                h.clientId(),
                                member)));
        return Combinators.combine(shorts(), lists(entry)).as(OffsetHistoryResponse::new);
    }

    /** The first eight fields of an OffsetHistory entry. */
    private record HistoryHead(
            long timestampMs,
            String topic,
            int partition,
            long oldOffset,
            long newOffset,
            String source,
            String principal,
            String clientId) {}

    @Property(tries = 200)
    void offsetDeleteAndHistoryRoundTrip(
            @ForAll("offsetDeleteRequests") OffsetDeleteRequest deleteRequest,
            @ForAll("offsetDeleteResponses") OffsetDeleteResponse deleteResponse,
            @ForAll("historyResponses") OffsetHistoryResponse history,
            @ForAll("stringsProvider") String groupId,
            @ForAll int maxEntries,
            @ForAll @IntRange(max = 999) int cut) {
        roundTrip(deleteRequest, OffsetDeleteRequest::read, cut);
        roundTrip(deleteResponse, OffsetDeleteResponse::read, cut);
        roundTrip(new OffsetHistoryRequest(groupId, maxEntries), OffsetHistoryRequest::read, cut);
        roundTrip(history, OffsetHistoryResponse::read, cut);
    }
}
