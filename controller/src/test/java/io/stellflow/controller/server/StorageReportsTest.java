package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.FailedReplica;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.controller.proto.TopicResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Failed replicas reported in heartbeats (issue #23, log dir failures): the controller takes the
 * replica out of the ISR and leadership, never elects it while it is reported, elects it again once
 * it is not, and places no new replica on a broker without a writable log dir.
 */
class StorageReportsTest {
    private static final UUID TOPIC = new UUID(7, 7);

    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final StorageReports storage = new StorageReports();
    private final Commands commands = new Commands(quorum, 5_000, metrics, () -> 0L);
    private final BrokerRpcs rpcs = new BrokerRpcs(
            quorum,
            new BrokerLiveness(10_000, () -> 0L, metrics, false, storage),
            new NotControllerGuard(1, quorum),
            commands,
            false,
            storage);
    private final LeaderElections elections;

    StorageReportsTest() {
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:9093");
        elections = new LeaderElections(ControllerConfig.fromProperties(p), quorum, metrics, storage);
    }

    /** Brokers 1..3 unfenced, topic t with partition 0 on {@code replicas} led by the first. */
    private void cluster(List<Integer> replicas) {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(
                ClusterIdRecord.newBuilder().setClusterId("c").build()));
        for (int id = 1; id <= 3; id++) {
            records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(new UUID(1, id)))
                    .setFenced(false)
                    .build()));
        }
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setName("t")
                .build()));
        records.add(MetadataRecords.of(PartitionRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .addAllReplicas(replicas)
                .setLeader(replicas.get(0))
                .addAllIsr(replicas)
                .build()));
        quorum.with(records);
        quorum.submitted.clear();
    }

    private BrokerHeartbeatRequest.Builder heartbeat(int id) {
        return BrokerHeartbeatRequest.newBuilder()
                .setBrokerId(id)
                .setBrokerEpoch(quorum.image().broker(id).brokerEpoch())
                .setMetadataOffset(quorum.image().offset());
    }

    private static FailedReplica failed(int partition) {
        return FailedReplica.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(partition)
                .build();
    }

    private PartitionImage partition() {
        return quorum.image().partition(TOPIC, 0);
    }

    @Test
    void aLeaderReportingItsReplicaFailedLosesLeadershipAndIsrMembershipOnce() {
        cluster(List.of(1, 2, 3));
        assertThat(rpcs.heartbeat(heartbeat(1).addFailedReplicas(failed(0)).build())
                        .getError())
                .isEqualTo(ErrorCode.NONE);
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().isr()).containsExactly(2, 3);
        assertThat(partition().leaderEpoch()).isEqualTo(1);

        rpcs.heartbeat(heartbeat(1).addFailedReplicas(failed(0)).build());
        assertThat(quorum.submitted).as("the same report plans nothing again").hasSize(1);

        // Broker 2 fails too while 1 still reports: 3 leads, never 1.
        rpcs.heartbeat(heartbeat(2).addFailedReplicas(failed(0)).build());
        assertThat(partition().leader()).isEqualTo(3);
        assertThat(partition().isr()).containsExactly(3);
    }

    @Test
    void aFollowerReportingItsReplicaFailedLeavesTheIsrAndTheLeaderStays() {
        cluster(List.of(1, 2, 3));
        rpcs.heartbeat(heartbeat(3).addFailedReplicas(failed(0)).build());
        assertThat(partition().leader()).isEqualTo(1);
        assertThat(partition().isr()).containsExactly(1, 2);
        assertThat(partition().leaderEpoch()).as("no leader change").isZero();
    }

    @Test
    void aSingleReplicaStaysLeaderlessWhileReportedAndIsElectedAgainOnceItIsNot() {
        cluster(List.of(1));
        rpcs.heartbeat(heartbeat(1).addFailedReplicas(failed(0)).build());
        assertThat(partition().leader()).isEqualTo(PartitionImage.NO_LEADER);
        assertThat(partition().isr()).as("the last ISR member stays").containsExactly(1);

        assertThat(elections.electOfflinePartitions())
                .as("the periodic election skips a reported replica")
                .isZero();
        assertThat(elections.rebalanceLeaders()).as("so does the rebalance").isZero();
        assertThat(partition().leader()).isEqualTo(PartitionImage.NO_LEADER);

        rpcs.heartbeat(heartbeat(1).build()); // recovered in place
        assertThat(partition().leader()).isEqualTo(1);
        assertThat(partition().isr()).containsExactly(1);
    }

    @Test
    void aReadableReplicaWithoutAnotherIsrMemberKeepsLeading() {
        cluster(List.of(1));
        rpcs.heartbeat(heartbeat(1)
                .addFailedReplicas(failed(0).toBuilder().setReadable(true))
                .build());
        assertThat(partition().leader())
                .as("a full disk: reads go on, no election")
                .isEqualTo(1);
        assertThat(quorum.submitted).isEmpty();
    }

    @Test
    void aReadableReplicaLosesLeadershipToAnotherIsrMember() {
        cluster(List.of(1, 2, 3));
        rpcs.heartbeat(heartbeat(1)
                .addFailedReplicas(failed(0).toBuilder().setReadable(true))
                .build());
        assertThat(partition().leader()).isEqualTo(2);
        assertThat(partition().isr()).containsExactly(2, 3);
    }

    @Test
    void aReplicaReportedFailedCannotJoinTheIsrAgainUntilItIsNot() {
        cluster(List.of(1, 2, 3));
        rpcs.heartbeat(heartbeat(3).addFailedReplicas(failed(0)).build());
        PartitionRpcs partitions =
                new PartitionRpcs(quorum, new NotControllerGuard(1, quorum), commands, elections, storage);
        AlterPartitionRequest.Builder expand = AlterPartitionRequest.newBuilder()
                .setBrokerId(1)
                .setBrokerEpoch(quorum.image().broker(1).brokerEpoch())
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setLeaderEpoch(partition().leaderEpoch())
                .setPartitionEpoch(partition().partitionEpoch())
                .addAllNewIsr(List.of(1, 2, 3));
        AlterPartitionResponse refused = partitions.alterPartition(expand.build());
        assertThat(refused.getError()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(refused.getErrorMessage()).contains("broker 3 reports its replica failed");

        rpcs.heartbeat(heartbeat(3).build());
        assertThat(partitions.alterPartition(expand.build()).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(partition().isr()).containsExactly(1, 2, 3);
    }

    @Test
    void switchingUncleanElectionOnDoesNotElectAReportedReplica() {
        cluster(List.of(1));
        rpcs.heartbeat(heartbeat(1).addFailedReplicas(failed(0)).build());
        ConfigRpcs configs = new ConfigRpcs(quorum, new NotControllerGuard(1, quorum), commands, false, storage);
        assertThat(configs.incrementalAlterConfigs(IncrementalAlterConfigsRequest.newBuilder()
                                .setTopic("t")
                                .addConfigs(AlterableConfig.newBuilder()
                                        .setKey(Elections.UNCLEAN_KEY)
                                        .setValue("true")
                                        .setOp(ConfigOpType.SET))
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.NONE);
        assertThat(partition().leader()).isEqualTo(PartitionImage.NO_LEADER);
    }

    @Test
    void aNewIncarnationStartsWithoutTheOldReport() {
        cluster(List.of(1));
        rpcs.heartbeat(heartbeat(1).addFailedReplicas(failed(0)).build());
        assertThat(storage.failed(1, TOPIC, 0)).isTrue();
        storage.forget(1);
        assertThat(storage.failed(1, TOPIC, 0)).isFalse();
        assertThat(elections.electOfflinePartitions()).isEqualTo(1);
        assertThat(partition().leader()).isEqualTo(1);
    }

    @Test
    void newReplicasSkipBrokersWithoutAWritableLogDirAndNoneLeftIsAnError() {
        cluster(List.of(1, 2, 3));
        TopicRpcs topics = new TopicRpcs(quorum, new NotControllerGuard(1, quorum), commands, storage);
        rpcs.heartbeat(heartbeat(2).setNoWritableLogDir(true).build());
        TopicResult spread = topics.createTopics(CreateTopicsRequest.newBuilder()
                        .addTopics(CreatableTopic.newBuilder()
                                .setName("spread")
                                .setNumPartitions(6)
                                .setReplicationFactor(2))
                        .build())
                .getTopics(0);
        assertThat(spread.getError()).isEqualTo(ErrorCode.NONE);
        UUID id = MetadataRecords.uuid(spread.getTopicId());
        for (int p = 0; p < 6; p++) {
            assertThat(quorum.image().partition(id, p).replicas()).doesNotContain(2);
        }

        TopicResult tooMany = topics.createTopics(CreateTopicsRequest.newBuilder()
                        .addTopics(CreatableTopic.newBuilder()
                                .setName("three")
                                .setNumPartitions(1)
                                .setReplicationFactor(3))
                        .build())
                .getTopics(0);
        assertThat(tooMany.getError()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
        assertThat(tooMany.getErrorMessage()).contains("brokers [2] have none");

        rpcs.heartbeat(heartbeat(2).build()); // space freed
        assertThat(topics.createTopics(CreateTopicsRequest.newBuilder()
                                .addTopics(CreatableTopic.newBuilder()
                                        .setName("three")
                                        .setNumPartitions(1)
                                        .setReplicationFactor(3))
                                .build())
                        .getTopics(0)
                        .getError())
                .isEqualTo(ErrorCode.NONE);
    }
}
