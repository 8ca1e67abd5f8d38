package io.stellflow.protocol.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.DeleteGroupsRequest;
import io.stellflow.protocol.message.DeleteGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsRequest;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedGroup;
import io.stellflow.protocol.message.DescribeGroupsResponse.DescribedMember;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.HeartbeatResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.ListGroupsRequest;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchRequest.OffsetFetchTopic;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetFetchResponse.OffsetFetchPartitionResponse;
import io.stellflow.protocol.message.OffsetFetchResponse.OffsetFetchTopicResponse;
import io.stellflow.protocol.message.OffsetHistoryRequest;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.OffsetHistoryResponse.OffsetHistoryEntry;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.SyncGroupResponse;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Seed bodies of the group codecs (keys 5-10 and 20-25) for {@link SeedFiles}: valid encodings as
 * the SDKs and our client send them (Java's "" memberId, Go's named member, nulls, empty and null
 * arrays, several topics and partitions, non-ASCII names), including the worked examples of {@code
 * docs/protocol-additions.md}.
 */
final class GroupSeedFiles {
    private GroupSeedFiles() {}

    static byte[] bytes(Consumer<ByteBuf> writer) {
        ByteBuf out = Unpooled.buffer();
        try {
            writer.accept(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static final OffsetCommitRequest COMMIT = new OffsetCommitRequest(
            "orders-app",
            "member-é",
            7,
            List.of(
                    new OffsetCommitTopic(
                            "orders",
                            List.of(new OffsetCommitPartition(0, 120L, ""), new OffsetCommitPartition(3, 0L, null))),
                    new OffsetCommitTopic("pay-中", List.of(new OffsetCommitPartition(1, 5L, "checkpoint")))));

    private static final OffsetFetchResponse FETCHED = new OffsetFetchResponse(List.of(
            new OffsetFetchTopicResponse(
                    "orders",
                    List.of(
                            new OffsetFetchPartitionResponse(0, 120L, "", Errors.NONE),
                            new OffsetFetchPartitionResponse(1, -1L, "", Errors.NONE))),
            new OffsetFetchTopicResponse(
                    "pay", List.of(new OffsetFetchPartitionResponse(0, -1L, "", Errors.NOT_COORDINATOR)))));

    private static final List<TopicPartitions> ASSIGNMENT =
            List.of(new TopicPartitions("orders", List.of(0, 2, 4)), new TopicPartitions("pay-é", List.of(1)));

    /** The seed bodies of {@code codec}; empty for a codec that is not a group codec. */
    static List<byte[]> bodies(BodyCodec codec) {
        List<byte[]> b = new ArrayList<>();
        switch (codec) {
            case OFFSET_COMMIT_REQUEST_V0 -> {
                b.add(bytes(new OffsetCommitRequest("g", COMMIT.topics())::write));
                b.add(bytes(new OffsetCommitRequest("", List.of())::write));
            }
            case OFFSET_COMMIT_REQUEST_V1 -> {
                b.add(bytes(out -> COMMIT.write(out, (short) 1)));
                b.add(bytes(out -> new OffsetCommitRequest("tools", null, -1, List.of()).write(out, (short) 1)));
            }
            case OFFSET_COMMIT_RESPONSE ->
                b.add(bytes(new OffsetCommitResponse(List.of(
                        new OffsetCommitResponse.OffsetCommitTopicResponse(
                                "orders",
                                List.of(
                                        new OffsetCommitResponse.OffsetCommitPartitionResponse(0, Errors.NONE),
                                        new OffsetCommitResponse.OffsetCommitPartitionResponse(
                                                3, Errors.STALE_MEMBER_EPOCH))),
                        new OffsetCommitResponse.OffsetCommitTopicResponse("pay", List.of())))::write));
            case OFFSET_FETCH_REQUEST_V0 -> {
                b.add(bytes(new OffsetFetchRequest(
                        "orders-app",
                        List.of(
                                new OffsetFetchTopic("orders", List.of(0, 1, 2)),
                                new OffsetFetchTopic("pay-中", List.of())))::write));
                b.add(bytes(new OffsetFetchRequest("g", List.of())::write));
            }
            case OFFSET_FETCH_REQUEST_V1 -> {
                b.add(bytes(out -> new OffsetFetchRequest("g", null).write(out, (short) 1)));
                b.add(bytes(out -> new OffsetFetchRequest("g", List.of(new OffsetFetchTopic("orders", List.of(0))))
                        .write(out, (short) 1)));
            }
            case OFFSET_FETCH_RESPONSE_V0 -> {
                b.add(bytes(FETCHED::write));
                b.add(bytes(new OffsetFetchResponse(List.of())::write));
            }
            case OFFSET_FETCH_RESPONSE_V1 -> {
                b.add(bytes(out -> FETCHED.write(out, (short) 1)));
                b.add(bytes(out ->
                        new OffsetFetchResponse(List.of(), Errors.COORDINATOR_NOT_AVAILABLE).write(out, (short) 1)));
            }
            case FIND_COORDINATOR_REQUEST -> {
                b.add(bytes(FindCoordinatorRequest.forGroup("orders-app")::write));
                b.add(bytes(new FindCoordinatorRequest(null, (byte) 1)::write));
            }
            case FIND_COORDINATOR_RESPONSE -> {
                b.add(bytes(new FindCoordinatorResponse(Errors.NONE, 2, "broker-2.example", 9093)::write));
                b.add(bytes(FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE)::write));
            }
            case HEARTBEAT_REQUEST ->
                b.add(bytes(new HeartbeatRequest("orders-app", 3, "stellflow-go-consumer")::write));
            case HEARTBEAT_RESPONSE -> b.add(bytes(new HeartbeatResponse(Errors.UNKNOWN_SERVER_ERROR)::write));
            case JOIN_GROUP_REQUEST -> {
                b.add(bytes(new JoinGroupRequest("orders-app", "", 30_000)::write));
                b.add(bytes(new JoinGroupRequest("g-é", "stellflow-go-consumer", 10_000)::write));
            }
            case JOIN_GROUP_RESPONSE -> {
                b.add(bytes(new JoinGroupResponse(Errors.NONE, 4, "member-1", "member-0")::write));
                b.add(bytes(JoinGroupResponse.error(Errors.INVALID_REQUEST)::write));
            }
            case SYNC_GROUP_REQUEST -> b.add(bytes(new SyncGroupRequest("orders-app", 4, "member-1")::write));
            case SYNC_GROUP_RESPONSE -> b.add(bytes(new SyncGroupResponse(Errors.NONE)::write));
            case CONSUMER_GROUP_HEARTBEAT_REQUEST -> {
                b.add(bytes(
                        new ConsumerGroupHeartbeatRequest(
                                        "orders-app",
                                        null,
                                        0,
                                        null,
                                        null,
                                        60_000,
                                        List.of("orders", "pay-é"),
                                        "uniform",
                                        null)::write));
                b.add(bytes(new ConsumerGroupHeartbeatRequest(
                        "orders-app", "m-1", 5, "host-a", "rack-1", -1, null, null, ASSIGNMENT)::write));
                b.add(bytes(new ConsumerGroupHeartbeatRequest(
                        "g", "m-1", -1, null, null, -1, List.of(), null, List.of())::write));
            }
            case CONSUMER_GROUP_HEARTBEAT_RESPONSE -> {
                b.add(bytes(
                        new ConsumerGroupHeartbeatResponse(Errors.NONE, null, "m-1", 5, 3_000, 45_000, ASSIGNMENT)
                                ::write));
                b.add(bytes(
                        new ConsumerGroupHeartbeatResponse(Errors.NONE, null, "m-1", 5, 3_000, 45_000, null)::write));
                b.add(bytes(
                        ConsumerGroupHeartbeatResponse.error(Errors.FENCED_MEMBER_EPOCH, "epoch 3 is fenced")::write));
            }
            case LIST_GROUPS_REQUEST -> {
                b.add(bytes(new ListGroupsRequest(List.of())::write));
                b.add(bytes(new ListGroupsRequest(List.of("Stable", "Empty"))::write));
            }
            case LIST_GROUPS_RESPONSE ->
                b.add(bytes(new ListGroupsResponse(
                        Errors.NONE,
                        List.of(
                                new ListGroupsResponse.ListedGroup("orders-app", "consumer", "Stable"),
                                new ListGroupsResponse.ListedGroup("g-é", "classic", "Empty")))::write));
            case DESCRIBE_GROUPS_REQUEST ->
                b.add(bytes(new DescribeGroupsRequest(List.of("orders-app", "g-é"))::write));
            case DESCRIBE_GROUPS_RESPONSE ->
                b.add(bytes(new DescribeGroupsResponse(List.of(
                        new DescribedGroup(
                                Errors.NONE,
                                "orders-app",
                                "consumer",
                                "Reconciling",
                                6,
                                6,
                                "range",
                                List.of(
                                        new DescribedMember(
                                                "m-1",
                                                "host-a",
                                                "app",
                                                "/10.0.0.1",
                                                6,
                                                List.of("orders"),
                                                ASSIGNMENT,
                                                List.of()),
                                        new DescribedMember(
                                                "m-2",
                                                null,
                                                "app",
                                                "/10.0.0.2",
                                                5,
                                                List.of("orders", "pay-é"),
                                                List.of(),
                                                List.of(new TopicPartitions("orders", List.of(4)))))),
                        DescribedGroup.error("gone", Errors.GROUP_ID_NOT_FOUND)))::write));
            case DELETE_GROUPS_REQUEST -> b.add(bytes(new DeleteGroupsRequest(List.of("orders-app", "g-é"))::write));
            case DELETE_GROUPS_RESPONSE ->
                b.add(bytes(new DeleteGroupsResponse(List.of(
                        new DeleteGroupsResponse.GroupResult("orders-app", Errors.NON_EMPTY_GROUP),
                        new DeleteGroupsResponse.GroupResult("g-é", Errors.NONE)))::write));
            case OFFSET_DELETE_REQUEST -> b.add(bytes(new OffsetDeleteRequest("orders-app", ASSIGNMENT)::write));
            case OFFSET_DELETE_RESPONSE -> {
                b.add(bytes(new OffsetDeleteResponse(
                        Errors.NONE,
                        List.of(new OffsetDeleteResponse.OffsetDeleteTopicResponse(
                                "orders",
                                List.of(
                                        new OffsetDeleteResponse.OffsetDeletePartitionResponse(0, Errors.NONE),
                                        new OffsetDeleteResponse.OffsetDeletePartitionResponse(
                                                2, Errors.GROUP_SUBSCRIBED_TO_TOPIC)))))::write));
                b.add(bytes(new OffsetDeleteResponse(Errors.GROUP_ID_NOT_FOUND, List.of())::write));
            }
            case OFFSET_HISTORY_REQUEST -> b.add(bytes(new OffsetHistoryRequest("orders-app", 100)::write));
            case OFFSET_HISTORY_RESPONSE ->
                b.add(bytes(
                        new OffsetHistoryResponse(
                                Errors.NONE,
                                List.of(
                                        new OffsetHistoryEntry(
                                                SeedFiles.TS,
                                                "orders",
                                                0,
                                                -1L,
                                                120L,
                                                "commit",
                                                "ANONYMOUS",
                                                "app",
                                                "m-1"),
                                        new OffsetHistoryEntry(
                                                SeedFiles.TS + 1,
                                                "orders",
                                                0,
                                                120L,
                                                0L,
                                                "reset",
                                                "ANONYMOUS",
                                                "tool",
                                                null)))::write));
            default -> {}
        }
        return b;
    }
}
