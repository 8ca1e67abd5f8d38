package io.stellflow.protocol.message;

import static io.stellflow.protocol.message.BodyGolden.NULL_STRING;
import static io.stellflow.protocol.message.BodyGolden.str;
import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse.OffsetCommitPartitionResponse;
import io.stellflow.protocol.message.OffsetCommitResponse.OffsetCommitTopicResponse;
import io.stellflow.protocol.message.OffsetFetchRequest.OffsetFetchTopic;
import io.stellflow.protocol.message.OffsetFetchResponse.OffsetFetchPartitionResponse;
import io.stellflow.protocol.message.OffsetFetchResponse.OffsetFetchTopicResponse;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The six v0 group codecs (OffsetCommit, OffsetFetch, FindCoordinator, Heartbeat, JoinGroup,
 * SyncGroup) and the v1 OffsetCommit and OffsetFetch, byte-exact against the field tables of {@code
 * docs/spec/wire-protocol.md} §6.6-6.11 and {@code docs/protocol-additions.md}: every expected body
 * is built by hand, one hex piece per field, in both directions; then strict decoding of each
 * (trailing bytes, every truncation, negative counts, null where the spec forbids it).
 */
class GroupCodecsV0Test {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    static final OffsetCommitRequest COMMIT_V0 = new OffsetCommitRequest(
            "g",
            List.of(new OffsetCommitTopic(
                    "t", List.of(new OffsetCommitPartition(0, 5L, null), new OffsetCommitPartition(2, 7L, "m")))));

    static final OffsetCommitRequest COMMIT_V1 = new OffsetCommitRequest(
            "g", "m-1", 4, List.of(new OffsetCommitTopic("t", List.of(new OffsetCommitPartition(1, 9L, "")))));

    private static List<BodyGolden> goldens() {
        return List.of(
                BodyGolden.of(
                        "OffsetCommitRequest v0",
                        COMMIT_V0,
                        OffsetCommitRequest::read,
                        str("g") // groupId
                                + "00000001" // topics count
                                + str("t") // topic
                                + "00000002" // partitions count
                                + "00000000" + "0000000000000005" + NULL_STRING // partition 0, offset 5, metadata null
                                + "00000002" + "0000000000000007" + str("m")), // partition 2, offset 7, metadata "m"
                new BodyGolden(
                        "OffsetCommitRequest v1",
                        COMMIT_V1,
                        (out, m) -> ((OffsetCommitRequest) m).write(out, (short) 1),
                        b -> OffsetCommitRequest.read(b, (short) 1),
                        str("g") // groupId
                                + str("m-1") // memberId
                                + "00000004" // memberEpoch
                                + "00000001" + str("t") // topics
                                + "00000001" + "00000001" + "0000000000000009" + "0000"), // partition 1, offset 9, ""
                BodyGolden.of(
                        "OffsetCommitResponse",
                        new OffsetCommitResponse(List.of(new OffsetCommitTopicResponse(
                                "t",
                                List.of(
                                        new OffsetCommitPartitionResponse(0, Errors.NONE),
                                        new OffsetCommitPartitionResponse(2, Errors.NOT_COORDINATOR))))),
                        OffsetCommitResponse::read,
                        "00000001" + str("t") + "00000002" // topics, topic, partitions
                                + "00000000" + "0000" // partition 0, errorCode 0
                                + "00000002" + "0011"), // partition 2, errorCode 17
                BodyGolden.of(
                        "OffsetFetchRequest v0",
                        new OffsetFetchRequest("g", List.of(new OffsetFetchTopic("t", List.of(0, 1)))),
                        OffsetFetchRequest::read,
                        str("g") + "00000001" + str("t") + "00000002" + "00000000" + "00000001"),
                new BodyGolden(
                        "OffsetFetchRequest v1, every partition",
                        new OffsetFetchRequest("g", null),
                        (out, m) -> ((OffsetFetchRequest) m).write(out, (short) 1),
                        b -> OffsetFetchRequest.read(b, (short) 1),
                        str("g") + "ffffffff"),
                BodyGolden.of(
                        "OffsetFetchResponse v0",
                        new OffsetFetchResponse(List.of(new OffsetFetchTopicResponse(
                                "t",
                                List.of(
                                        new OffsetFetchPartitionResponse(0, -1L, "", Errors.NONE),
                                        new OffsetFetchPartitionResponse(
                                                1, 42L, "x", Errors.COORDINATOR_NOT_AVAILABLE))))),
                        OffsetFetchResponse::read,
                        "00000001" + str("t") + "00000002"
                                // partition, offset, metadata, then errorCode LAST (spec §6.7)
                                + "00000000" + "ffffffffffffffff" + "0000" + "0000"
                                + "00000001" + "000000000000002a" + str("x") + "0010"),
                new BodyGolden(
                        "OffsetFetchResponse v1, group-level error",
                        new OffsetFetchResponse(List.of(), Errors.COORDINATOR_NOT_AVAILABLE),
                        (out, m) -> ((OffsetFetchResponse) m).write(out, (short) 1),
                        b -> OffsetFetchResponse.read(b, (short) 1),
                        "00000000" + "0010"),
                BodyGolden.of(
                        "FindCoordinatorRequest",
                        FindCoordinatorRequest.forGroup("g"),
                        FindCoordinatorRequest::read,
                        str("g") + "00"), // key, keyType 0
                BodyGolden.of(
                        "FindCoordinatorResponse",
                        new FindCoordinatorResponse(Errors.NONE, 2, "h", 9092),
                        FindCoordinatorResponse::read,
                        "0000" + "00000002" + str("h") + "00002384"),
                BodyGolden.of(
                        "FindCoordinatorResponse, error",
                        FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE),
                        FindCoordinatorResponse::read,
                        "0010" + "ffffffff" + NULL_STRING + "ffffffff"),
                BodyGolden.of(
                        "HeartbeatRequest",
                        new HeartbeatRequest("g", 3, "m"),
                        HeartbeatRequest::read,
                        str("g") + "00000003" + str("m")),
                BodyGolden.of(
                        "HeartbeatResponse",
                        new HeartbeatResponse(Errors.UNKNOWN_SERVER_ERROR),
                        HeartbeatResponse::read,
                        "0001"),
                BodyGolden.of(
                        "JoinGroupRequest",
                        new JoinGroupRequest("g", "", 30_000),
                        JoinGroupRequest::read,
                        str("g") + "0000" + "00007530"), // memberId "" (Java default), 30000 ms
                BodyGolden.of(
                        "JoinGroupRequest, null memberId",
                        new JoinGroupRequest("g", null, 30_000),
                        JoinGroupRequest::read,
                        str("g") + NULL_STRING + "00007530"),
                BodyGolden.of(
                        "JoinGroupResponse",
                        new JoinGroupResponse(Errors.NONE, 1, "m", "m"),
                        JoinGroupResponse::read,
                        "0000" + "00000001" + str("m") + str("m")),
                BodyGolden.of(
                        "JoinGroupResponse, error",
                        JoinGroupResponse.error(Errors.INVALID_REQUEST),
                        JoinGroupResponse::read,
                        "0003" + "ffffffff" + NULL_STRING + NULL_STRING),
                BodyGolden.of(
                        "SyncGroupRequest",
                        new SyncGroupRequest("g", 3, "m"),
                        SyncGroupRequest::read,
                        str("g") + "00000003" + str("m")),
                BodyGolden.of(
                        "SyncGroupResponse", new SyncGroupResponse(Errors.NONE), SyncGroupResponse::read, "0000"));
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
    void heartbeatAndSyncGroupResponsesAreExactlyTwoBytes() {
        ByteBuf heartbeat = bufs.heap();
        new HeartbeatResponse(Errors.NONE).write(heartbeat);
        assertThat(heartbeat.readableBytes()).isEqualTo(2);
        ByteBuf sync = bufs.heap();
        new SyncGroupResponse(Errors.UNKNOWN_SERVER_ERROR).write(sync);
        assertThat(hexOf(sync)).isEqualTo("0001");
        // The service's trailing assignments array (footnote [^sync]), even empty, is refused.
        ByteBuf withAssignments = bufs.hex("0000" + "00000000");
        assertProtocolError(() -> SyncGroupResponse.read(withAssignments), Errors.INVALID_REQUEST);
    }

    @Test
    void negativeArrayCountsAreInvalidRequest() {
        ByteBuf commitTopics = bufs.hex(str("g") + "fffffffe");
        assertProtocolError(() -> OffsetCommitRequest.read(commitTopics), Errors.INVALID_REQUEST);
        ByteBuf commitPartitions = bufs.hex(str("g") + "00000001" + str("t") + "ffffffff");
        assertProtocolError(() -> OffsetCommitRequest.read(commitPartitions), Errors.INVALID_REQUEST);
        // Count -1 is "every partition" only in v1; v0 arrays are never null (spec §2).
        ByteBuf allTopics = bufs.hex(str("g") + "ffffffff");
        assertProtocolError(() -> OffsetFetchRequest.read(allTopics), Errors.INVALID_REQUEST);
        ByteBuf belowMinusOne = bufs.hex(str("g") + "fffffffe");
        assertProtocolError(() -> OffsetFetchRequest.read(belowMinusOne, (short) 1), Errors.INVALID_REQUEST);
        ByteBuf fetchPartitions = bufs.hex("00000001" + str("t") + "80000000");
        assertProtocolError(() -> OffsetFetchResponse.read(fetchPartitions), Errors.INVALID_REQUEST);
    }

    @Test
    void nullWhereTheSpecSaysStringIsInvalidRequestButGroupIdsTheBrokerChecksAreRead() {
        ByteBuf heartbeatNullMember = bufs.hex(str("g") + "00000003" + NULL_STRING);
        assertProtocolError(() -> HeartbeatRequest.read(heartbeatNullMember), Errors.INVALID_REQUEST);
        ByteBuf syncNullGroup = bufs.hex(NULL_STRING + "00000003" + str("m"));
        assertProtocolError(() -> SyncGroupRequest.read(syncNullGroup), Errors.INVALID_REQUEST);
        ByteBuf commitNullTopic = bufs.hex(str("g") + "00000001" + NULL_STRING + "00000000");
        assertProtocolError(() -> OffsetCommitRequest.read(commitNullTopic), Errors.INVALID_REQUEST);
        ByteBuf stringBelowMinusOne = bufs.hex("fffe" + "00");
        assertProtocolError(() -> FindCoordinatorRequest.read(stringBelowMinusOne), Errors.INVALID_REQUEST);
        // Null or empty groupId is answered by the broker (header-only for 6.6/6.7, in the body for
        // 6.8/6.10): the codec reads it.
        assertThat(OffsetCommitRequest.read(bufs.hex(NULL_STRING + "00000000")).groupId())
                .isNull();
        assertThat(OffsetFetchRequest.read(bufs.hex("0000" + "00000000")).groupId())
                .isEmpty();
        assertThat(JoinGroupRequest.read(bufs.hex(NULL_STRING + NULL_STRING + "00007530")))
                .isEqualTo(new JoinGroupRequest(null, null, 30_000));
        assertThat(FindCoordinatorRequest.read(bufs.hex(NULL_STRING + "01")))
                .isEqualTo(new FindCoordinatorRequest(null, (byte) 1));
    }

    @Test
    void v0OffsetCommitIsFromOutsideTheGroupAndDropsMemberFields() {
        OffsetCommitRequest read = OffsetCommitRequest.read(bufs.hex(str("g") + "00000000"));
        assertThat(read.memberId()).isNull();
        assertThat(read.memberEpoch()).isEqualTo(OffsetCommitRequest.NO_MEMBER_EPOCH);
        ByteBuf v0 = bufs.heap();
        COMMIT_V1.write(v0, (short) 0);
        assertThat(OffsetCommitRequest.read(v0)).isEqualTo(new OffsetCommitRequest("g", COMMIT_V1.topics()));
    }

    @Test
    void v0CannotCarryTheV1OnlyFieldsAndRefusesToWriteThem() {
        ByteBuf out = bufs.heap();
        assertThatThrownBy(() -> new OffsetFetchRequest("g", null).write(out))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OffsetFetchResponse(List.of(), Errors.COORDINATOR_NOT_AVAILABLE).write(out))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(out.readableBytes()).isZero();
        assertThatThrownBy(() -> new HeartbeatRequest("g", 1, null).write(out))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
