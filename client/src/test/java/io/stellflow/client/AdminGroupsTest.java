package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.DeleteGroupsRequest;
import io.stellflow.protocol.message.DeleteGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsRequest;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.ListGroupsRequest;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetHistoryRequest;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.TopicPartitions;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The admin client's group calls against {@link FakeBroker} acting as the coordinator: routing through
 * FindCoordinator, the retries on coordinator errors, the versions and fields sent, and the answers'
 * mapping (returned per partition, thrown per group).
 */
class AdminGroupsTest {
    /** Which API keys were received, in order. */
    private final List<Short> seen = new CopyOnWriteArrayList<>();
    /** Codes FindCoordinator answers before it names the broker. */
    private final ArrayDeque<Short> findErrors = new ArrayDeque<>();
    /** Group-level codes the next group calls answer before they succeed. */
    private final ArrayDeque<Short> callErrors = new ArrayDeque<>();

    private volatile OffsetCommitRequest lastCommit;
    private volatile short lastCommitVersion = -1;
    private volatile OffsetFetchRequest lastFetch;
    private volatile OffsetDeleteRequest lastDelete;

    private FakeBroker coordinator(short offsetFetchMax) throws InterruptedException {
        FakeBroker b = new FakeBroker();
        b.extraApiVersions = Map.of(
                ApiKeys.OFFSET_COMMIT, (short) 1,
                ApiKeys.OFFSET_FETCH, offsetFetchMax,
                ApiKeys.FIND_COORDINATOR, (short) 0,
                ApiKeys.LIST_GROUPS, (short) 0,
                ApiKeys.DESCRIBE_GROUPS, (short) 0,
                ApiKeys.DELETE_GROUPS, (short) 0,
                ApiKeys.OFFSET_DELETE, (short) 0,
                ApiKeys.OFFSET_HISTORY, (short) 0);
        b.extraApis = (h, body) -> answer(b, h, body);
        return b;
    }

    private Consumer<ByteBuf> answer(FakeBroker b, RequestHeader h, ByteBuf body) {
        seen.add(h.apiKey());
        return switch (h.apiKey()) {
            case ApiKeys.FIND_COORDINATOR -> {
                assertThat(FindCoordinatorRequest.read(body).key()).isEqualTo("g");
                Short err = findErrors.poll();
                yield (err != null
                                ? FindCoordinatorResponse.error(err)
                                : new FindCoordinatorResponse(Errors.NONE, 0, "127.0.0.1", b.port()))::write;
            }
            case ApiKeys.LIST_GROUPS -> {
                ListGroupsRequest.read(body);
                yield new ListGroupsResponse(
                        Errors.NONE,
                        List.of(
                                new ListGroupsResponse.ListedGroup("zeta", "consumer", "Stable"),
                                new ListGroupsResponse.ListedGroup("alpha", "classic", "Empty")))::write;
            }
            case ApiKeys.DESCRIBE_GROUPS -> {
                String id = DescribeGroupsRequest.read(body).groupIds().get(0);
                Short err = callErrors.poll();
                yield new DescribeGroupsResponse(List.of(
                        err != null
                                ? DescribeGroupsResponse.DescribedGroup.error(id, err)
                                : new DescribeGroupsResponse.DescribedGroup(
                                        Errors.NONE,
                                        id,
                                        "consumer",
                                        "Stable",
                                        3,
                                        3,
                                        "uniform",
                                        List.of(new DescribeGroupsResponse.DescribedMember(
                                                "m1",
                                                null,
                                                "c1",
                                                "/127.0.0.1",
                                                3,
                                                List.of("t"),
                                                List.of(new TopicPartitions("t", List.of(0, 1))),
                                                List.of())))))::write;
            }
            case ApiKeys.OFFSET_FETCH -> {
                lastFetch = OffsetFetchRequest.read(body, h.apiVersion());
                yield out -> new OffsetFetchResponse(List.of(new OffsetFetchResponse.OffsetFetchTopicResponse(
                                "t",
                                List.of(
                                        new OffsetFetchResponse.OffsetFetchPartitionResponse(1, 7, "", Errors.NONE),
                                        new OffsetFetchResponse.OffsetFetchPartitionResponse(0, 5, "", Errors.NONE),
                                        new OffsetFetchResponse.OffsetFetchPartitionResponse(2, -1, "", Errors.NONE)))))
                        .write(out, h.apiVersion());
            }
            case ApiKeys.OFFSET_COMMIT -> {
                lastCommitVersion = h.apiVersion();
                OffsetCommitRequest req = OffsetCommitRequest.read(body, h.apiVersion());
                lastCommit = req;
                Short err = callErrors.poll();
                yield new OffsetCommitResponse(req.topics().stream()
                        .map(t -> new OffsetCommitResponse.OffsetCommitTopicResponse(
                                t.topic(),
                                t.partitions().stream()
                                        .map(p -> new OffsetCommitResponse.OffsetCommitPartitionResponse(
                                                p.partition(),
                                                err != null ? err : p.offset() < 0 ? Errors.OFFSET_OUT_OF_RANGE : 0))
                                        .toList()))
                        .toList())::write;
            }
            case ApiKeys.DELETE_GROUPS -> {
                String id = DeleteGroupsRequest.read(body).groupIds().get(0);
                Short err = callErrors.poll();
                yield new DeleteGroupsResponse(
                        List.of(new DeleteGroupsResponse.GroupResult(id, err == null ? Errors.NONE : err)))::write;
            }
            case ApiKeys.OFFSET_DELETE -> {
                OffsetDeleteRequest req = OffsetDeleteRequest.read(body);
                lastDelete = req;
                yield new OffsetDeleteResponse(
                        Errors.NONE,
                        req.topics().stream()
                                .map(t -> new OffsetDeleteResponse.OffsetDeleteTopicResponse(
                                        t.topic(),
                                        t.partitions().stream()
                                                .map(p -> new OffsetDeleteResponse.OffsetDeletePartitionResponse(
                                                        p, p == 0 ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : 0))
                                                .toList()))
                                .toList())::write;
            }
            case ApiKeys.OFFSET_HISTORY -> {
                OffsetHistoryRequest req = OffsetHistoryRequest.read(body);
                Short err = callErrors.poll();
                yield new OffsetHistoryResponse(
                        err == null ? Errors.NONE : err,
                        err != null
                                ? List.of()
                                : List.of(new OffsetHistoryResponse.OffsetHistoryEntry(
                                        1000, "t", 0, 5, req.maxEntries(), "reset", "ANONYMOUS", "c", null)))::write;
            }
            default -> throw new IllegalStateException("unexpected api " + h.apiKey());
        };
    }

    private static StellflowAdmin admin(FakeBroker b) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", b.bootstrap());
        p.setProperty("retry.backoff.ms", "1");
        p.setProperty("retries", "3");
        return new StellflowAdmin(p);
    }

    @Test
    void listGroupsAsksEveryBrokerAndSortsById() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            assertThat(admin.groups().listGroups())
                    .extracting(ListGroupsResponse.ListedGroup::groupId)
                    .containsExactly("alpha", "zeta");
            assertThat(seen).containsExactly(ApiKeys.LIST_GROUPS);
        }
    }

    @Test
    void groupCallsFindTheCoordinatorAndRetryCoordinatorErrors() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            findErrors.add(Errors.COORDINATOR_NOT_AVAILABLE);
            callErrors.add(Errors.NOT_COORDINATOR);
            DescribeGroupsResponse.DescribedGroup g = admin.groups().describeGroup("g");
            assertThat(g.state()).isEqualTo("Stable");
            assertThat(g.members())
                    .extracting(DescribeGroupsResponse.DescribedMember::memberId)
                    .containsExactly("m1");
            // a refused lookup, a lookup, NOT_COORDINATOR, a lookup, the answer
            assertThat(seen)
                    .containsExactly(
                            ApiKeys.FIND_COORDINATOR,
                            ApiKeys.FIND_COORDINATOR,
                            ApiKeys.DESCRIBE_GROUPS,
                            ApiKeys.FIND_COORDINATOR,
                            ApiKeys.DESCRIBE_GROUPS);
        }
    }

    @Test
    void coordinatorErrorsBeyondTheRetriesAreThrownWithTheCode() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            for (int i = 0; i < 10; i++) {
                findErrors.add(Errors.COORDINATOR_NOT_AVAILABLE);
            }
            assertThatThrownBy(() -> admin.groups().describeGroup("g"))
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE));
            assertThat(seen).hasSize(4).containsOnly(ApiKeys.FIND_COORDINATOR);
        }
    }

    @Test
    void aNonRetriableLookupErrorFailsAtOnce() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            findErrors.add(Errors.FEATURE_NOT_ENABLED);
            assertThatThrownBy(() -> admin.groups().describeGroup("g"))
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.FEATURE_NOT_ENABLED));
            assertThat(seen).containsExactly(ApiKeys.FIND_COORDINATOR);
        }
    }

    @Test
    void anUnknownGroupIsDescribedNotThrown() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            callErrors.add(Errors.GROUP_ID_NOT_FOUND);
            assertThat(admin.groups().describeGroup("g").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        }
    }

    @Test
    void committedOffsetsAskForEveryPartitionWithOffsetFetchV1() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            Map<TopicPartition, Long> offsets = admin.groups().committedOffsets("g");
            assertThat(lastFetch.topics()).as("null topics: every partition").isNull();
            assertThat(offsets)
                    .containsExactly(
                            Map.entry(new TopicPartition("t", 0), 5L), Map.entry(new TopicPartition("t", 1), 7L));
        }
    }

    @Test
    void describeLagJoinsTheGroupWithTheLeadersHighWatermarks() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            // t has one partition holding 9 records; the member owns t-0 and t-1 (beyond the count)
            b.createTopic("t", 1);
            ByteBuf buf = Unpooled.buffer();
            RecordBatchBuilder batch = new RecordBatchBuilder(buf, 1000L);
            for (int i = 0; i < 9; i++) {
                batch.append(1000L + i, null, new byte[] {(byte) i});
            }
            batch.close();
            b.append(new TopicPartition("t", 0), buf);

            GroupLag lag = admin.groups().describeLag("g");
            assertThat(lag.group().state()).isEqualTo("Stable");
            DescribeGroupsResponse.DescribedMember m1 = lag.group().members().get(0);
            assertThat(lag.partitions())
                    .containsExactly(
                            new GroupLag.PartitionLag(new TopicPartition("t", 0), 5, 9, m1),
                            new GroupLag.PartitionLag(new TopicPartition("t", 1), 7, GroupLag.UNKNOWN, m1));
            assertThat(lag.totalLag()).isEqualTo(4);
            assertThat(lag.idleMembers()).isEmpty();
            assertThat(seen)
                    .containsExactly(
                            ApiKeys.FIND_COORDINATOR,
                            ApiKeys.DESCRIBE_GROUPS,
                            ApiKeys.FIND_COORDINATOR,
                            ApiKeys.OFFSET_FETCH);
        }
    }

    @Test
    void committedOffsetsNeedOffsetFetchV1() throws Exception {
        try (FakeBroker b = coordinator((short) 0);
                StellflowAdmin admin = admin(b)) {
            assertThatThrownBy(() -> admin.groups().committedOffsets("g"))
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION))
                    .hasMessageContaining("OffsetFetch v0 only");
        }
    }

    @Test
    void commitsGoOutAsV1FromOutsideTheGroupAndReturnCodesPerPartition() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            Map<TopicPartition, Short> codes = admin.groups()
                    .commitOffsets(
                            "g",
                            Map.of(
                                    new TopicPartition("t", 1), 9L,
                                    new TopicPartition("t", 0), -3L,
                                    new TopicPartition("a", 0), 1L));
            assertThat(lastCommitVersion).isEqualTo((short) 1);
            assertThat(lastCommit.memberId()).isNull();
            assertThat(lastCommit.memberEpoch()).isEqualTo(OffsetCommitRequest.NO_MEMBER_EPOCH);
            assertThat(lastCommit.topics())
                    .extracting(OffsetCommitRequest.OffsetCommitTopic::topic)
                    .containsExactly("a", "t");
            assertThat(codes)
                    .containsExactly(
                            Map.entry(new TopicPartition("a", 0), Errors.NONE),
                            Map.entry(new TopicPartition("t", 0), Errors.OFFSET_OUT_OF_RANGE),
                            Map.entry(new TopicPartition("t", 1), Errors.NONE));
        }
    }

    @Test
    void deleteGroupThrowsTheRefusal() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            callErrors.add(Errors.NON_EMPTY_GROUP);
            assertThatThrownBy(() -> admin.groups().deleteGroup("g"))
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.NON_EMPTY_GROUP));
            admin.groups().deleteGroup("g");
            assertThat(seen).filteredOn(k -> k == ApiKeys.DELETE_GROUPS).hasSize(2);
        }
    }

    @Test
    void deleteOffsetsReturnsCodesPerPartition() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            Map<TopicPartition, Short> codes =
                    admin.groups().deleteOffsets("g", List.of(new TopicPartition("t", 1), new TopicPartition("t", 0)));
            assertThat(lastDelete.topics()).containsExactly(new TopicPartitions("t", List.of(0, 1)));
            assertThat(codes)
                    .containsExactly(
                            Map.entry(new TopicPartition("t", 0), Errors.GROUP_SUBSCRIBED_TO_TOPIC),
                            Map.entry(new TopicPartition("t", 1), Errors.NONE));
        }
    }

    @Test
    void offsetHistoryReturnsEntriesOrThrows() throws Exception {
        try (FakeBroker b = coordinator((short) 1);
                StellflowAdmin admin = admin(b)) {
            assertThat(admin.groups().offsetHistory("g", 42)).singleElement().satisfies(e -> {
                assertThat(e.source()).isEqualTo("reset");
                assertThat(e.newOffset()).as("maxEntries sent").isEqualTo(42);
            });
            callErrors.add(Errors.GROUP_ID_NOT_FOUND);
            assertThatThrownBy(() -> admin.groups().offsetHistory("g", 1))
                    .isInstanceOfSatisfying(
                            StellflowException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND));
        }
    }
}
