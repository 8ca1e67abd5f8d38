package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.NULL_ARRAY;
import static io.stellflow.protocol.message.BodyGolden.NULL_STRING;
import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DeleteGroupsResponse.GroupResult;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.ListGroupsResponse.ListedGroup;
import io.stellflow.protocol.message.OffsetDeleteResponse.OffsetDeletePartitionResponse;
import io.stellflow.protocol.message.OffsetDeleteResponse.OffsetDeleteTopicResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse.OffsetHistoryEntry;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Our group APIs 20-25 (ConsumerGroupHeartbeat, ListGroups, DescribeGroups, DeleteGroups,
 * OffsetDelete, OffsetHistory; {@code docs/protocol-additions.md}) byte-exact against hand-built
 * bodies, field by field, in both directions (the worked examples of each codec's Javadoc and of the
 * additions page among them), then strict decoding: trailing bytes, every truncation, counts below
 * -1 for the nullable arrays and -1 for the others, null where a field is a string.
 */
class GroupApisTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final ConsumerGroupHeartbeatRequest JOIN =
            new ConsumerGroupHeartbeatRequest("g", null, 0, null, null, -1, List.of("t"), null, null);

    static final ConsumerGroupHeartbeatRequest FULL = new ConsumerGroupHeartbeatRequest(
            "g",
            "m",
            7,
            "i",
            "r",
            60_000,
            List.of("a", "b"),
            "range",
            List.of(new TopicPartitions("a", List.of(0, 2)), new TopicPartitions("b", List.of())));

    static final DescribedMember MEMBER = new DescribedMember(
            "m",
            null,
            "c",
            "/10.0.0.1",
            3,
            List.of("t"),
            List.of(new TopicPartitions("t", List.of(1))),
            List.of(new TopicPartitions("t", List.of(0))));

    private static List<BodyGolden> goldens() {
        return List.of(
                BodyGolden.of(
                        "ConsumerGroupHeartbeatRequest, join",
                        JOIN,
                        ConsumerGroupHeartbeatRequest::read,
                        str("g") // groupId
                                + NULL_STRING // memberId
                                + "00000000" // memberEpoch 0 = join
                                + NULL_STRING // instanceId
                                + NULL_STRING // rackId
                                + "ffffffff" // rebalanceTimeoutMs -1
                                + "00000001" + str("t") // subscribedTopicNames
                                + NULL_STRING // serverAssignor
                                + NULL_ARRAY), // ownedPartitions: unchanged
                BodyGolden.of(
                        "ConsumerGroupHeartbeatRequest, every field set",
                        FULL,
                        ConsumerGroupHeartbeatRequest::read,
                        str("g") + str("m") + "00000007" + str("i") + str("r") + "0000ea60"
                                + "00000002" + str("a") + str("b")
                                + str("range")
                                + "00000002" + str("a") + "00000002" + "00000000" + "00000002"
                                + str("b") + "00000000"),
                BodyGolden.of(
                        "ConsumerGroupHeartbeatResponse",
                        new ConsumerGroupHeartbeatResponse(
                                Errors.NONE,
                                null,
                                "m",
                                2,
                                3_000,
                                45_000,
                                List.of(new TopicPartitions("t", List.of(0)))),
                        ConsumerGroupHeartbeatResponse::read,
                        "0000" // errorCode
                                + NULL_STRING // errorMessage
                                + str("m") // memberId
                                + "00000002" // memberEpoch
                                + "00000bb8" // heartbeatIntervalMs 3000
                                + "0000afc8" // sessionTimeoutMs 45000
                                + "00000001" + str("t") + "00000001" + "00000000"), // assignment
                BodyGolden.of(
                        "ConsumerGroupHeartbeatResponse, error",
                        ConsumerGroupHeartbeatResponse.error(Errors.FENCED_MEMBER_EPOCH, "x"),
                        ConsumerGroupHeartbeatResponse::read,
                        "002b" + str("x") + NULL_STRING + "ffffffff" + "ffffffff" + "ffffffff" + NULL_ARRAY),
                BodyGolden.of(
                        "ListGroupsRequest",
                        new ListGroupsRequest(List.of("Stable")),
                        ListGroupsRequest::read,
                        "00000001" + str("Stable")),
                BodyGolden.of(
                        "ListGroupsRequest, all",
                        new ListGroupsRequest(List.of()),
                        ListGroupsRequest::read,
                        "00000000"),
                BodyGolden.of(
                        "ListGroupsResponse",
                        new ListGroupsResponse(Errors.NONE, List.of(new ListedGroup("g", "consumer", "Stable"))),
                        ListGroupsResponse::read,
                        "0000" + "00000001" + str("g") + str("consumer") + str("Stable")),
                BodyGolden.of(
                        "DescribeGroupsRequest",
                        new DescribeGroupsRequest(List.of("g", "h")),
                        DescribeGroupsRequest::read,
                        "00000002" + str("g") + str("h")),
                BodyGolden.of(
                        "DescribeGroupsResponse, one member",
                        new DescribeGroupsResponse(List.of(new DescribedGroup(
                                Errors.NONE, "g", "consumer", "Reconciling", 4, 3, "uniform", List.of(MEMBER)))),
                        DescribeGroupsResponse::read,
                        "00000001" // groups
                                + "0000" + str("g") + str("consumer") + str("Reconciling")
                                + "00000004" + "00000003" + str("uniform") // groupEpoch, assignmentEpoch, assignor
                                + "00000001" // members
                                + str("m") + NULL_STRING + str("c") + str("/10.0.0.1") + "00000003"
                                + "00000001" + str("t") // subscribedTopics
                                + "00000001" + str("t") + "00000001" + "00000001" // assignment t-1
                                + "00000001" + str("t") + "00000001" + "00000000"), // pendingRevocation t-0
                BodyGolden.of(
                        "DescribeGroupsResponse, not found",
                        new DescribeGroupsResponse(List.of(DescribedGroup.error("g", Errors.GROUP_ID_NOT_FOUND))),
                        DescribeGroupsResponse::read,
                        "00000001" + "002d" + str("g") + "0000" + str("Dead") + "ffffffff" + "ffffffff" + NULL_STRING
                                + "00000000"),
                BodyGolden.of(
                        "DeleteGroupsRequest",
                        new DeleteGroupsRequest(List.of("g")),
                        DeleteGroupsRequest::read,
                        "00000001" + str("g")),
                BodyGolden.of(
                        "DeleteGroupsResponse",
                        new DeleteGroupsResponse(List.of(
                                new GroupResult("g", Errors.NON_EMPTY_GROUP), new GroupResult("h", Errors.NONE))),
                        DeleteGroupsResponse::read,
                        "00000002" + str("g") + "002e" + str("h") + "0000"),
                BodyGolden.of(
                        "DeleteGroupsResponse, the additions page's example",
                        new DeleteGroupsResponse(List.of(new GroupResult("g", Errors.NON_EMPTY_GROUP))),
                        DeleteGroupsResponse::read,
                        "00000001 0001 67 002e".replace(" ", "")),
                BodyGolden.of(
                        "OffsetHistoryResponse, the additions page's example",
                        new OffsetHistoryResponse(
                                Errors.NONE,
                                List.of(new OffsetHistoryEntry(
                                        1_000L, "t", 0, 5L, 0L, "reset", "ANONYMOUS", "c", null))),
                        OffsetHistoryResponse::read,
                        ("0000 00000001 00000000000003e8 0001 74 00000000 0000000000000005 0000000000000000 0005"
                                        + " 7265736574 0009 414e4f4e594d4f5553 0001 63 ffff")
                                .replace(" ", "")),
                BodyGolden.of(
                        "OffsetDeleteRequest",
                        new OffsetDeleteRequest("g", List.of(new TopicPartitions("t", List.of(1)))),
                        OffsetDeleteRequest::read,
                        str("g") + "00000001" + str("t") + "00000001" + "00000001"),
                BodyGolden.of(
                        "OffsetDeleteResponse",
                        new OffsetDeleteResponse(
                                Errors.NONE,
                                List.of(new OffsetDeleteTopicResponse(
                                        "t",
                                        List.of(new OffsetDeletePartitionResponse(
                                                1, Errors.GROUP_SUBSCRIBED_TO_TOPIC))))),
                        OffsetDeleteResponse::read,
                        "0000" + "00000001" + str("t") + "00000001" + "00000001" + "0030"),
                BodyGolden.of(
                        "OffsetHistoryRequest",
                        new OffsetHistoryRequest("g", 100),
                        OffsetHistoryRequest::read,
                        str("g") + "00000064"),
                BodyGolden.of(
                        "OffsetHistoryResponse",
                        new OffsetHistoryResponse(
                                Errors.NONE,
                                List.of(
                                        new OffsetHistoryEntry(1_000L, "t", 0, 5L, 0L, "reset", "ANONYMOUS", "c", null),
                                        new OffsetHistoryEntry(
                                                2_000L, "t", 1, -1L, 9L, "commit", "ANONYMOUS", "c", "m"))),
                        OffsetHistoryResponse::read,
                        "0000" + "00000002"
                                + "00000000000003e8" + str("t") + "00000000" + "0000000000000005" + "0000000000000000"
                                + str("reset") + str("ANONYMOUS") + str("c") + NULL_STRING
                                + "00000000000007d0" + str("t") + "00000001" + "ffffffffffffffff" + "0000000000000009"
                                + str("commit") + str("ANONYMOUS") + str("c") + str("m")));
    }

    @Test
    void everyGoldenEncodesToTheHandBuiltBytesAndDecodesBack() {
        BodyGolden.assertEncodesAndDecodes(goldens(), bufs);
    }

    @Test
    void aTrailingByteOrAnyTruncationIsInvalidRequest() {
        BodyGolden.assertStrict(goldens(), bufs);
    }

    @Test
    void nullableArraysTakeMinusOneButNoCountBelowIt() {
        String prefix = str("g") + NULL_STRING + "00000000" + NULL_STRING + NULL_STRING + "ffffffff";
        ConsumerGroupHeartbeatRequest unchanged =
                ConsumerGroupHeartbeatRequest.read(bufs.hex(prefix + NULL_ARRAY + NULL_STRING + NULL_ARRAY));
        assertThat(unchanged.subscribedTopicNames()).isNull();
        assertThat(unchanged.ownedPartitions()).isNull();
        ConsumerGroupHeartbeatRequest empty =
                ConsumerGroupHeartbeatRequest.read(bufs.hex(prefix + "00000000" + NULL_STRING + "00000000"));
        assertThat(empty.subscribedTopicNames()).isEmpty();
        assertThat(empty.ownedPartitions()).isEmpty();
        ByteBuf belowMinusOne = bufs.hex(prefix + "fffffffe" + NULL_STRING + NULL_ARRAY);
        assertProtocolError(() -> ConsumerGroupHeartbeatRequest.read(belowMinusOne), Errors.INVALID_REQUEST);
        ByteBuf ownedBelowMinusOne = bufs.hex(prefix + NULL_ARRAY + NULL_STRING + "80000000");
        assertProtocolError(() -> ConsumerGroupHeartbeatRequest.read(ownedBelowMinusOne), Errors.INVALID_REQUEST);
        // Inside an entry the partitions array is not nullable.
        ByteBuf nullPartitions = bufs.hex(prefix + NULL_ARRAY + NULL_STRING + "00000001" + str("t") + NULL_ARRAY);
        assertProtocolError(() -> ConsumerGroupHeartbeatRequest.read(nullPartitions), Errors.INVALID_REQUEST);
    }

    @Test
    void arraysThatAreNotNullableRefuseMinusOne() {
        ByteBuf listGroups = bufs.hex(NULL_ARRAY);
        assertProtocolError(() -> ListGroupsRequest.read(listGroups), Errors.INVALID_REQUEST);
        ByteBuf describe = bufs.hex(NULL_ARRAY);
        assertProtocolError(() -> DescribeGroupsRequest.read(describe), Errors.INVALID_REQUEST);
        ByteBuf offsetDelete = bufs.hex(str("g") + NULL_ARRAY);
        assertProtocolError(() -> OffsetDeleteRequest.read(offsetDelete), Errors.INVALID_REQUEST);
        ByteBuf history = bufs.hex("0000" + NULL_ARRAY);
        assertProtocolError(() -> OffsetHistoryResponse.read(history), Errors.INVALID_REQUEST);
        ByteBuf members = bufs.hex("00000001" + "0000" + str("g") + str("consumer") + str("Empty") + "00000001"
                + "00000001" + NULL_STRING + NULL_ARRAY);
        assertProtocolError(() -> DescribeGroupsResponse.read(members), Errors.INVALID_REQUEST);
    }

    @Test
    void nullWhereAFieldIsAStringIsInvalidRequest() {
        ByteBuf heartbeatNullGroup = bufs.hex(NULL_STRING + NULL_STRING + "00000000" + NULL_STRING + NULL_STRING
                + "ffffffff" + NULL_ARRAY + NULL_STRING + NULL_ARRAY);
        assertProtocolError(() -> ConsumerGroupHeartbeatRequest.read(heartbeatNullGroup), Errors.INVALID_REQUEST);
        ByteBuf nullTopicName = bufs.hex(str("g") + NULL_STRING + "00000000" + NULL_STRING + NULL_STRING + "ffffffff"
                + "00000001" + NULL_STRING + NULL_STRING + NULL_ARRAY);
        assertProtocolError(() -> ConsumerGroupHeartbeatRequest.read(nullTopicName), Errors.INVALID_REQUEST);
        ByteBuf nullState = bufs.hex("0000" + "00000001" + str("g") + str("consumer") + NULL_STRING);
        assertProtocolError(() -> ListGroupsResponse.read(nullState), Errors.INVALID_REQUEST);
        ByteBuf historyNullGroup = bufs.hex(NULL_STRING + "00000001");
        assertProtocolError(() -> OffsetHistoryRequest.read(historyNullGroup), Errors.INVALID_REQUEST);
        ByteBuf deleteNullGroup = bufs.hex("00000001" + NULL_STRING + "0000");
        assertProtocolError(() -> DeleteGroupsResponse.read(deleteNullGroup), Errors.INVALID_REQUEST);
    }
}
