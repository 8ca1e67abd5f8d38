package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PartitionRpcsTest {
    private static final UUID TOPIC = new UUID(7, 7);

    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final PartitionRpcs rpcs;

    PartitionRpcsTest() {
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:9093");
        ControllerConfig config = ControllerConfig.fromProperties(p);
        rpcs = new PartitionRpcs(
                quorum,
                new NotControllerGuard(1, quorum),
                new Commands(quorum, 5_000, metrics, () -> 0L),
                new LeaderElections(config, quorum, metrics));
        List<MetadataRecord> records = new ArrayList<>();
        for (int id = 1; id <= 3; id++) {
            records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(new UUID(1, id)))
                    .setBrokerEpoch(100 + id)
                    .setFenced(false)
                    .build()));
        }
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setName("t")
                .build()));
        // Broker 2 leads although 1 is preferred: a preferred election has something to do.
        records.add(MetadataRecords.of(PartitionRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .addAllReplicas(List.of(1, 2, 3))
                .setLeader(2)
                .setLeaderEpoch(5)
                .addAllIsr(List.of(1, 2, 3))
                .setPartitionEpoch(9)
                .build()));
        quorum.with(records);
    }

    private AlterPartitionRequest.Builder shrinkTo(Integer... isr) {
        return AlterPartitionRequest.newBuilder()
                .setBrokerId(2)
                .setBrokerEpoch(102)
                .setTopicId(MetadataRecords.uuid(TOPIC))
                .setPartition(0)
                .setLeaderEpoch(5)
                .setPartitionEpoch(9)
                .addAllNewIsr(List.of(isr));
    }

    private List<CommandResult> commands() {
        return metrics.commands.stream().map(CommandsTest.Command::result).toList();
    }

    @Test
    void theLeaderShrinksTheIsrAndGetsThePartitionAsCommitted() {
        AlterPartitionResponse r = rpcs.alterPartition(shrinkTo(2, 3).build());
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getPartition().getIsrList()).containsExactly(2, 3);
        assertThat(r.getPartition().getPartitionEpoch()).isEqualTo(10);
        assertThat(r.getPartition().getLeaderEpoch()).as("same leader").isEqualTo(5);
        assertThat(commands()).containsExactly(CommandResult.SUCCESS);
    }

    @Test
    void staleOrWrongRequestsAreRefusedWithTheirOwnCodeAndWriteNothing() {
        assertThat(rpcs.alterPartition(shrinkTo(2).setBrokerEpoch(1).build()).getError())
                .isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
        assertThat(rpcs.alterPartition(shrinkTo(2).setPartition(4).build()).getError())
                .isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(rpcs.alterPartition(shrinkTo(2).setLeaderEpoch(4).build()).getError())
                .isEqualTo(ErrorCode.FENCED_LEADER_EPOCH);
        assertThat(rpcs.alterPartition(shrinkTo(2).setPartitionEpoch(8).build()).getError())
                .isEqualTo(ErrorCode.INVALID_UPDATE_VERSION);
        assertThat(rpcs.alterPartition(shrinkTo(2, 7).build()).getError()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(quorum.submitted).isEmpty();
        assertThat(commands()).hasSize(5).containsOnly(CommandResult.ERROR);
    }

    @Test
    void aFollowerJoinsTheIsrOnlyOnFetchesOfItsCurrentBrokerEpoch() {
        assertThat(rpcs.alterPartition(shrinkTo(2, 3).build()).getError()).isEqualTo(ErrorCode.NONE);
        AlterPartitionRequest.Builder expand = shrinkTo(2, 3, 1).setPartitionEpoch(10);

        // Broker 1 is registered at epoch 101: fetches its earlier process (epoch 99) made do not count.
        AlterPartitionResponse stale = rpcs.alterPartition(
                expand.clone().addAllNewIsrBrokerEpochs(List.of(-1L, 103L, 99L)).build());
        assertThat(stale.getError()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(stale.getErrorMessage()).contains("broker 1", "epoch 99", "registered at epoch 101");
        // Epochs that are not one per member are refused as a whole.
        AlterPartitionResponse badSize = rpcs.alterPartition(
                expand.clone().addAllNewIsrBrokerEpochs(List.of(-1L)).build());
        assertThat(badSize.getError()).isEqualTo(ErrorCode.INELIGIBLE_REPLICA);
        assertThat(quorum.submitted).hasSize(1);

        // A member already in the ISR is not checked (3's epoch 7 is not its registration's 103).
        AlterPartitionResponse ok = rpcs.alterPartition(
                expand.clone().addAllNewIsrBrokerEpochs(List.of(-1L, 7L, 101L)).build());
        assertThat(ok.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(ok.getPartition().getIsrList()).containsExactly(2, 3, 1);
        // The entry names the joining member and its epoch, checked again when it applies.
        var committed = quorum.submitted.getLast().getFirst().getPartitionChange();
        assertThat(committed.getJoiningReplicasList()).containsExactly(1);
        assertThat(committed.getJoiningBrokerEpochsList()).containsExactly(101L);
    }

    @Test
    void aLeaderThatSendsNoBrokerEpochsOrAnUnknownOneIsNotChecked() {
        assertThat(rpcs.alterPartition(shrinkTo(2, 3).build()).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(rpcs.alterPartition(shrinkTo(2, 3, 1)
                                .setPartitionEpoch(10)
                                .addAllNewIsrBrokerEpochs(List.of(-1L, -1L, -1L))
                                .build())
                        .getError())
                .as("Fetch v1 followers: epochs unknown")
                .isEqualTo(ErrorCode.NONE);
        assertThat(rpcs.alterPartition(shrinkTo(2, 3).setPartitionEpoch(11).build())
                        .getError())
                .isEqualTo(ErrorCode.NONE);
        assertThat(rpcs.alterPartition(shrinkTo(2, 3, 1).setPartitionEpoch(12).build())
                        .getError())
                .as("no epochs at all: an older leader")
                .isEqualTo(ErrorCode.NONE);
    }

    @Test
    void aPreferredElectionMovesLeadershipBackAndALostLeadershipNamesTheLeader() {
        ElectLeadersRequest req = ElectLeadersRequest.newBuilder()
                .setElectionType(ElectionType.PREFERRED)
                .addTopics(ElectionTopicPartitions.newBuilder().setTopic("t").addPartitions(0))
                .build();
        quorum.failNext(ErrorCode.NOT_CONTROLLER);
        quorum.leaderId = 3;
        ElectLeadersResponse lost = rpcs.electLeaders(req);
        assertThat(lost.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(lost.getLeader().getLeaderId()).isEqualTo(3);

        ElectLeadersResponse r = rpcs.electLeaders(req);
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getResults(0).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getResults(0).getLeader()).isEqualTo(1);
        PartitionImage p = quorum.image().partition(TOPIC, 0);
        assertThat(p.leader()).isEqualTo(1);
        assertThat(commands()).containsExactly(CommandResult.ERROR, CommandResult.SUCCESS);
    }
}
