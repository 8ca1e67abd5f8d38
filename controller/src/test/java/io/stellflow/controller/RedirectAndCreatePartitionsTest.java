package io.stellflow.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.stellflow.controller.TestCluster.FakeBroker;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.PartitionElectionResult;
import io.stellflow.controller.server.ControllerServer;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NOT_CONTROLLER redirects from a follower controller, and CreatePartitions, on one 3-controller quorum. */
@IntegrationTest
class RedirectAndCreatePartitionsTest {
    @TempDir
    static Path dir;

    static TestCluster cluster;
    static ControllerClient client;

    @BeforeAll
    static void start() throws Exception {
        Properties p = new Properties();
        p.setProperty("broker.session.timeout.ms", "60000");
        cluster = new TestCluster(dir, 3, p).startAll();
        client = cluster.client(Duration.ofSeconds(20));
        cluster.awaitActive(Duration.ofSeconds(20));
        for (int id = 1; id <= 3; id++) {
            new FakeBroker(id, "").registerAndUnfence(client);
        }
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static CreateTopicsRequest create(String name, int partitions, int rf) {
        return CreateTopicsRequest.newBuilder()
                .addTopics(CreatableTopic.newBuilder()
                        .setName(name)
                        .setNumPartitions(partitions)
                        .setReplicationFactor(rf))
                .build();
    }

    private static CreatePartitionsRequest grow(String name, int total) {
        return CreatePartitionsRequest.newBuilder()
                .setName(name)
                .setTotalCount(total)
                .build();
    }

    private static MetadataImage activeImage() {
        return cluster.servers[cluster.activeIndex()].image();
    }

    @Test
    void aFollowerAnswersNotControllerNamingTheLeaderAndTheClientFollowsTheRedirect() throws Exception {
        int active = cluster.awaitActive(Duration.ofSeconds(20));
        int follower = (active + 1) % 3;
        ControllerServer leader = cluster.servers[active];
        ControllerServer f = cluster.servers[follower];
        // The follower knows the leader's control-plane endpoint once the leader's record is applied there.
        TestCluster.awaitTrue(
                () -> f.image().controllers().containsKey(leader.nodeId()),
                Duration.ofSeconds(10),
                "the follower knows the leader's endpoint");
        BrokerEndpoint leaderEndpoint = f.image().controllers().get(leader.nodeId());

        ManagedChannel ch = Grpc.newChannelBuilder(f.rpcEndpoint(), InsecureChannelCredentials.create())
                .build();
        try {
            CreateTopicsResponse r = ClientCalls.blockingUnaryCall(
                    ch,
                    ControllerRpc.CREATE_TOPICS,
                    CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                    create("via-follower", 1, 1));
            assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
            assertThat(r.getTopicsCount()).isZero();
            assertThat(r.getLeader().getLeaderId()).isEqualTo(leader.nodeId());
            assertThat(r.getLeader().getEndpoint().getHost()).isEqualTo(leaderEndpoint.host());
            assertThat(r.getLeader().getEndpoint().getPort())
                    .isEqualTo(leader.rpcAddress().getPort());
            ElectLeadersResponse e = ClientCalls.blockingUnaryCall(
                    ch,
                    ControllerRpc.ELECT_LEADERS,
                    CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS),
                    ElectLeadersRequest.newBuilder().setAllTopicPartitions(true).build());
            assertThat(e.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
            assertThat(e.getResultsCount()).isZero();
            assertThat(e.getLeader().getLeaderId()).isEqualTo(leader.nodeId());
            assertThat(e.getLeader().getEndpoint().getPort())
                    .isEqualTo(leader.rpcAddress().getPort());
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        assertThat(activeImage().topic("via-follower")).as("nothing written").isNull();

        // A client that only knows the follower reaches the leader through the redirect.
        try (ControllerClient onlyFollower = ControllerClient.builder(f.rpcEndpoint())
                .requestTimeout(Duration.ofSeconds(20))
                .build()) {
            CreateTopicsResponse r = onlyFollower.createTopics(create("via-follower", 2, 2));
            assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
            ElectLeadersResponse e = onlyFollower.electLeaders(ElectLeadersRequest.newBuilder()
                    .setElectionType(ElectionType.PREFERRED)
                    .addTopics(ElectionTopicPartitions.newBuilder().setTopic("via-follower"))
                    .build());
            assertThat(e.getError()).isEqualTo(ErrorCode.NONE);
            assertThat(e.getResultsList())
                    .extracting(PartitionElectionResult::getError)
                    .containsExactly(ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.ELECTION_NOT_NEEDED);
        }
        assertThat(activeImage().topic("via-follower").partitions()).hasSize(2);
    }

    @Test
    void createPartitionsAddsPlacedPartitionsAndLeavesTheOldOnesUntouched() {
        assertThat(client.createTopics(create("grow", 2, 2)).getTopics(0).getError())
                .isEqualTo(ErrorCode.NONE);
        TopicImage before = activeImage().topic("grow");

        CreatePartitionsResponse r = client.createPartitions(grow("grow", 5));
        assertThat(r.getError()).as(r.getErrorMessage()).isEqualTo(ErrorCode.NONE);

        TopicImage after = activeImage().topic("grow");
        assertThat(after.id()).isEqualTo(before.id());
        assertThat(after.partitions()).hasSize(5);
        assertThat(after.partitions().subList(0, 2)).isEqualTo(before.partitions());
        Set<Integer> leaders = new HashSet<>();
        for (int p = 2; p < 5; p++) {
            PartitionImage pi = after.partition(p);
            assertThat(pi.partition()).isEqualTo(p);
            assertThat(pi.replicas()).hasSize(2).doesNotHaveDuplicates().isSubsetOf(1, 2, 3);
            assertThat(pi.isr()).isEqualTo(pi.replicas());
            assertThat(pi.leader()).isEqualTo(pi.replicas().get(0));
            assertThat(pi.leaderEpoch()).isZero();
            assertThat(pi.partitionEpoch()).isZero();
            leaders.add(pi.leader());
        }
        assertThat(leaders).as("three new partitions led by the three brokers").hasSize(3);
    }

    @Test
    void createPartitionsRejectsDecreaseSameCountAndUnknownTopicWritingNothing() {
        assertThat(client.createTopics(create("fixed", 3, 1)).getTopics(0).getError())
                .isEqualTo(ErrorCode.NONE);
        MetadataImage before = activeImage();
        long offset = before.offset();

        for (int total : List.of(2, 3, 0, -1)) {
            CreatePartitionsResponse r = client.createPartitions(grow("fixed", total));
            assertThat(r.getError()).as("total %d", total).isEqualTo(ErrorCode.INVALID_PARTITIONS);
            assertThat(r.getErrorMessage()).contains("topic has 3");
        }
        CreatePartitionsResponse unknown = client.createPartitions(grow("no-such-topic", 4));
        assertThat(unknown.getError()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(unknown.getErrorMessage()).contains("no-such-topic");

        MetadataImage after = activeImage();
        assertThat(after.offset()).as("no record written").isEqualTo(offset);
        assertThat(after.topic("fixed")).isEqualTo(before.topic("fixed"));
        assertThat(after.topic("no-such-topic")).isNull();
        assertThat(Stream.of(cluster.servers).allMatch(s -> s.image().topic("no-such-topic") == null))
                .isTrue();
    }
}
