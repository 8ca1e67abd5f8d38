package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.HeartbeatResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitPartition;
import io.stellflow.protocol.message.OffsetCommitRequest.OffsetCommitTopic;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchRequest.OffsetFetchTopic;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetFetchResponse.OffsetFetchPartitionResponse;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.SyncGroupResponse;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The v0 group path end to end against a real broker, with a minimal client written from {@code
 * docs/spec/wire-protocol.md} §6.6-6.11 (raw frames, the protocol module's codecs): FindCoordinator
 * creates {@code __consumer_offsets} and names this broker; member A joins, syncs, heartbeats and
 * commits (a client's Produce to {@code __consumer_offsets} is refused); member B joins and fetches A's commit (an unknown group and an uncommitted partition read
 * -1 and "", no error); OffsetCommit without a groupId is INVALID_REQUEST header-only; and after a
 * restart the loaded coordinator still holds the commit. Deleting a topic removes every group's
 * offsets for it, and a recreated topic starts clean.
 */
@IntegrationTest
class GroupsEndToEndTest {
    private static final String GROUP = "e2e-group";
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    /** The spec's client, one connection per member. */
    private static final class Member implements AutoCloseable {
        final RawClient client;
        int correlationId = 1;

        Member(int port) throws IOException {
            client = new RawClient(port);
        }

        RawClient.Response call(short apiKey, short version, io.stellflow.protocol.message.ApiMessage body)
                throws IOException {
            int id = correlationId++;
            client.send(
                    RequestHeader.of(
                            apiKey,
                            version,
                            id,
                            "member-" + client.localAddress().getPort()),
                    body);
            RawClient.Response r = client.receive();
            assertThat(r.correlationId()).isEqualTo(id);
            return r;
        }

        FindCoordinatorResponse findCoordinator(String group) throws IOException {
            RawClient.Response r = call(ApiKeys.FIND_COORDINATOR, (short) 0, FindCoordinatorRequest.forGroup(group));
            assertThat(r.errorCode()).as("errors go in the body").isEqualTo(Errors.NONE);
            return FindCoordinatorResponse.read(r.body());
        }

        JoinGroupResponse join(String memberId) throws IOException {
            RawClient.Response r = call(ApiKeys.JOIN_GROUP, (short) 0, new JoinGroupRequest(GROUP, memberId, 10_000));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            return JoinGroupResponse.read(r.body());
        }

        short sync(int generation, String memberId) throws IOException {
            RawClient.Response r =
                    call(ApiKeys.SYNC_GROUP, (short) 0, new SyncGroupRequest(GROUP, generation, memberId));
            assertThat(r.body().readableBytes())
                    .as("SyncGroup v0 body is 2 bytes")
                    .isEqualTo(2);
            return SyncGroupResponse.read(r.body()).errorCode();
        }

        short heartbeat(int generation, String memberId) throws IOException {
            RawClient.Response r =
                    call(ApiKeys.HEARTBEAT, (short) 0, new HeartbeatRequest(GROUP, generation, memberId));
            return HeartbeatResponse.read(r.body()).errorCode();
        }

        OffsetCommitResponse commit(String group, int partition, long offset, String metadata) throws IOException {
            RawClient.Response r = call(
                    ApiKeys.OFFSET_COMMIT,
                    (short) 0,
                    new OffsetCommitRequest(
                            group,
                            null,
                            OffsetCommitRequest.NO_MEMBER_EPOCH,
                            List.of(new OffsetCommitTopic(
                                    TOPIC, List.of(new OffsetCommitPartition(partition, offset, metadata))))));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            return OffsetCommitResponse.read(r.body());
        }

        List<OffsetFetchPartitionResponse> fetch(String group) throws IOException {
            RawClient.Response r = call(
                    ApiKeys.OFFSET_FETCH,
                    (short) 0,
                    new OffsetFetchRequest(group, List.of(new OffsetFetchTopic(TOPIC, List.of(0, 1)))));
            assertThat(r.errorCode()).isEqualTo(Errors.NONE);
            return OffsetFetchResponse.read(r.body()).topics().get(0).partitions();
        }

        @Override
        public void close() throws IOException {
            client.close();
        }
    }

    private static Properties props(Path dir) {
        Properties p = TestBroker.props(dir, "nio");
        p.setProperty("offsets.topic.num.partitions", "3");
        return p;
    }

    /** Asks until the coordinator is loaded (COORDINATOR_NOT_AVAILABLE meanwhile, as clients retry). */
    private static FindCoordinatorResponse awaitCoordinator(Member m) {
        FindCoordinatorResponse[] last = new FindCoordinatorResponse[1];
        Wait.until(
                Duration.ofSeconds(20),
                () -> {
                    try {
                        last[0] = m.findCoordinator(GROUP);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                    assertThat(last[0].errorCode()).isIn(Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE);
                    return last[0].errorCode() == Errors.NONE;
                },
                "the coordinator of " + GROUP);
        return last[0];
    }

    @Test
    void joinSyncCommitAndASecondMemberFetchesTheCommitAlsoAfterARestart() throws Exception {
        StellflowServer server = TestBroker.start(props(dir));
        try (Member a = new Member(server.port())) {
            Requests.createTopic(a.client, TOPIC, 2);
            FindCoordinatorResponse coordinator = awaitCoordinator(a);
            assertThat(coordinator.nodeId()).isEqualTo(server.brokerId());
            assertThat(coordinator.host()).isEqualTo("127.0.0.1");
            assertThat(coordinator.port()).isEqualTo(server.port());
            TopicImage offsets = server.replicaManager().image().topic(OffsetsTopic.NAME);
            assertThat(offsets.partitions()).hasSize(3);
            assertThat(offsets.config()).containsEntry("cleanup.policy", "compact");

            // Only the coordinator writes __consumer_offsets: a client's Produce is refused.
            int groupPartition = GroupPartitioner.partitionFor(GROUP, 3);
            long endBefore = server.replicaManager()
                    .hostedPartition(OffsetsTopic.NAME, groupPartition)
                    .logEndOffset();
            assertThat(Requests.produceOne(a.client, OffsetsTopic.NAME, groupPartition, Requests.batch(1, 1L))
                            .errorCode())
                    .isEqualTo(Errors.INVALID_REQUEST);
            assertThat(server.replicaManager()
                            .hostedPartition(OffsetsTopic.NAME, groupPartition)
                            .logEndOffset())
                    .isEqualTo(endBefore);

            JoinGroupResponse joinA = a.join("");
            assertThat(joinA.errorCode()).isEqualTo(Errors.NONE);
            assertThat(joinA.memberId()).isNotEmpty();
            assertThat(a.sync(joinA.generationId(), joinA.memberId())).isEqualTo(Errors.NONE);
            assertThat(a.heartbeat(joinA.generationId(), joinA.memberId())).isEqualTo(Errors.NONE);
            OffsetCommitResponse committed = a.commit(GROUP, 0, 42, "after-42");
            assertThat(committed.topics().get(0).partitions().get(0).errorCode())
                    .isEqualTo(Errors.NONE);

            try (Member b = new Member(server.port())) {
                JoinGroupResponse joinB = b.join("");
                assertThat(joinB.errorCode()).isEqualTo(Errors.NONE);
                assertThat(joinB.memberId()).isNotEqualTo(joinA.memberId());
                List<OffsetFetchPartitionResponse> fetched = b.fetch(GROUP);
                assertThat(fetched)
                        .containsExactly(
                                new OffsetFetchPartitionResponse(0, 42, "after-42", Errors.NONE),
                                new OffsetFetchPartitionResponse(1, -1, "", Errors.NONE));
                assertThat(b.fetch("never-used-group"))
                        .as("an unknown group is no error")
                        .containsExactly(
                                new OffsetFetchPartitionResponse(0, -1, "", Errors.NONE),
                                new OffsetFetchPartitionResponse(1, -1, "", Errors.NONE));

                // A null or empty groupId: INVALID_REQUEST header-only (spec 6.6).
                RawClient.Response bad = b.call(
                        ApiKeys.OFFSET_COMMIT,
                        (short) 0,
                        new OffsetCommitRequest(
                                "",
                                null,
                                OffsetCommitRequest.NO_MEMBER_EPOCH,
                                List.of(new OffsetCommitTopic(TOPIC, List.of(new OffsetCommitPartition(0, 1, ""))))));
                assertThat(bad.errorCode()).isEqualTo(Errors.INVALID_REQUEST);
                assertThat(bad.body().readableBytes()).isZero();
            }
        } finally {
            server.close();
        }

        // The commit is a record of __consumer_offsets: the restarted broker loads it.
        server = TestBroker.start(props(dir));
        try (Member c = new Member(server.port())) {
            awaitCoordinator(c);
            assertThat(c.fetch(GROUP))
                    .containsExactly(
                            new OffsetFetchPartitionResponse(0, 42, "after-42", Errors.NONE),
                            new OffsetFetchPartitionResponse(1, -1, "", Errors.NONE));
            int partition = GroupPartitioner.partitionFor(GROUP, 3);
            assertThat(server.replicaManager()
                            .hostedPartition(OffsetsTopic.NAME, partition)
                            .logEndOffset())
                    .as("the group's records are in its partition")
                    .isGreaterThan(0);
        } finally {
            server.close();
        }
    }

    @Test
    void deletingATopicRemovesEveryGroupsOffsetsForItAndARecreatedTopicStartsClean() throws Exception {
        StellflowServer server = TestBroker.start(props(dir));
        try (Member m = new Member(server.port());
                ControllerClient controller = ControllerClient.builder(
                                server.controller().rpcEndpoint())
                        .build()) {
            Requests.createTopic(m.client, TOPIC, 2);
            awaitCoordinator(m);
            for (String group : List.of(GROUP, "second-group", "third-group")) {
                assertThat(m.commit(group, 1, 7, "")
                                .topics()
                                .get(0)
                                .partitions()
                                .get(0)
                                .errorCode())
                        .isEqualTo(Errors.NONE);
                assertThat(m.fetch(group).get(1).offset()).isEqualTo(7);
            }
            assertThat(controller
                            .deleteTopics(DeleteTopicsRequest.newBuilder()
                                    .addNames(TOPIC)
                                    .build())
                            .getError())
                    .isEqualTo(ErrorCode.NONE);
            Wait.untilPasses(
                    Duration.ofSeconds(20),
                    () -> {
                        try {
                            for (String group : List.of(GROUP, "second-group", "third-group")) {
                                assertThat(m.fetch(group).get(1).offset()).isEqualTo(-1);
                            }
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    "every group's offsets of the deleted topic are gone");
            Requests.createTopic(m.client, TOPIC, 2);
            assertThat(m.fetch(GROUP)).as("the recreated topic starts clean").allMatch(p -> p.offset() == -1);
        } finally {
            server.close();
        }
    }
}
