package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import io.stellflow.controller.proto.TopicRecord;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class BrokerRpcsTest {
    private static final String CLUSTER = "cluster-a";
    private static final UUID TOPIC = new UUID(7, 7);

    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final BrokerRpcs rpcs = new BrokerRpcs(
            quorum,
            new BrokerLiveness(10_000, () -> 0L, metrics, false),
            new NotControllerGuard(1, quorum),
            new Commands(quorum, 5_000, metrics, () -> 0L),
            false);

    private static MetadataRecord clusterId() {
        return MetadataRecords.of(
                ClusterIdRecord.newBuilder().setClusterId(CLUSTER).build());
    }

    private static MetadataRecord broker(int id, long incarnation, boolean fenced) {
        return MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                .setBrokerId(id)
                .setIncarnationId(MetadataRecords.uuid(new UUID(1, incarnation)))
                .setFenced(fenced)
                .build());
    }

    private static RegisterBrokerRequest register(int id, long incarnation, String clusterId) {
        return RegisterBrokerRequest.newBuilder()
                .setBrokerId(id)
                .setIncarnationId(MetadataRecords.uuid(new UUID(1, incarnation)))
                .setClusterId(clusterId)
                .build();
    }

    private List<CommandResult> commands() {
        return metrics.commands.stream().map(CommandsTest.Command::result).toList();
    }

    @Test
    void beforeTheClusterIdIsWrittenRegistrationIsRedirectedAndWritesNothing() {
        RegisterBrokerResponse r = rpcs.register(register(5, 1, ""));
        assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(r.getErrorMessage()).contains("has not written the cluster id yet");
        assertThat(r.getLeader().getLeaderId()).isEqualTo(1);
        assertThat(quorum.submitted).isEmpty();
        assertThat(commands()).as("a redirect is not a command").isEmpty();
    }

    @Test
    void badRequestsAndAnotherClusterAreRefusedWithoutWriting() {
        quorum.with(List.of(clusterId()));
        assertThat(rpcs.register(RegisterBrokerRequest.newBuilder()
                                .setBrokerId(5)
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.INVALID_REQUEST);
        assertThat(rpcs.register(register(-1, 1, "")).getError()).isEqualTo(ErrorCode.INVALID_REQUEST);
        RegisterBrokerResponse other = rpcs.register(register(5, 1, "cluster-b"));
        assertThat(other.getError()).isEqualTo(ErrorCode.INCONSISTENT_CLUSTER_ID);
        assertThat(other.getErrorMessage()).contains("'cluster-b'", "'" + CLUSTER + "'");
        assertThat(quorum.submitted).isEmpty();
        assertThat(commands()).containsExactly(CommandResult.ERROR, CommandResult.ERROR, CommandResult.ERROR);
    }

    @Test
    void aNewBrokerIsRegisteredFencedWithTheEntryIndexAsEpochAndTheSameIncarnationAgainGetsItBack() {
        quorum.with(List.of(clusterId()));
        RegisterBrokerResponse r = rpcs.register(register(5, 1, CLUSTER));
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getClusterId()).isEqualTo(CLUSTER);
        assertThat(r.getBrokerEpoch()).isEqualTo(2);
        assertThat(quorum.image().broker(5).fenced()).isTrue();
        assertThat(quorum.image().broker(5).brokerEpoch()).isEqualTo(2);

        RegisterBrokerResponse again = rpcs.register(register(5, 1, ""));
        assertThat(again.getBrokerEpoch()).isEqualTo(2);
        assertThat(quorum.submitted).as("a retried registration writes nothing").hasSize(1);
        assertThat(commands()).containsExactly(CommandResult.SUCCESS, CommandResult.SUCCESS);
    }

    @Test
    void aNewIncarnationOfALeaderTakesItOutOfItsPartitionsInTheSameEntry() {
        quorum.with(List.of(
                clusterId(),
                broker(1, 1, false),
                broker(2, 1, false),
                MetadataRecords.of(TopicRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(TOPIC))
                        .setName("t")
                        .build()),
                MetadataRecords.of(PartitionRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(TOPIC))
                        .setPartition(0)
                        .addAllReplicas(List.of(1, 2))
                        .setLeader(1)
                        .addAllIsr(List.of(1, 2))
                        .build())));
        RegisterBrokerResponse r = rpcs.register(register(1, 2, CLUSTER));
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(quorum.submitted)
                .singleElement()
                .satisfies(entry -> assertThat(entry).hasSize(2));
        assertThat(quorum.image().partition(TOPIC, 0).leader()).isEqualTo(2);
        assertThat(quorum.image().partition(TOPIC, 0).isr()).containsExactly(2);
        assertThat(quorum.image().broker(1).brokerEpoch()).isEqualTo(r.getBrokerEpoch());
    }

    @Test
    void aRegistrationThatLostLeadershipNamesTheLeader() {
        quorum.with(List.of(clusterId()));
        quorum.failNext(ErrorCode.NOT_CONTROLLER);
        quorum.leaderId = 3;
        RegisterBrokerResponse r = rpcs.register(register(5, 1, CLUSTER));
        assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(r.getLeader().getLeaderId()).isEqualTo(3);
        assertThat(commands()).containsExactly(CommandResult.ERROR);
    }

    @Test
    void heartbeatsOfUnknownOrStaleBrokersAreRefusedAndAreNotCommands() {
        quorum.with(List.of(clusterId(), broker(5, 1, true)));
        long epoch = quorum.image().broker(5).brokerEpoch();
        BrokerHeartbeatResponse unknown = rpcs.heartbeat(
                BrokerHeartbeatRequest.newBuilder().setBrokerId(6).build());
        assertThat(unknown.getError()).isEqualTo(ErrorCode.BROKER_ID_NOT_REGISTERED);
        BrokerHeartbeatResponse stale = rpcs.heartbeat(BrokerHeartbeatRequest.newBuilder()
                .setBrokerId(5)
                .setBrokerEpoch(epoch - 1)
                .build());
        assertThat(stale.getError()).isEqualTo(ErrorCode.STALE_BROKER_EPOCH);
        assertThat(quorum.submitted).isEmpty();
        assertThat(commands()).isEmpty();
    }

    @Test
    void aFencedBrokerThatCaughtUpIsUnfencedAndOneAskingToStopIsFenced() {
        quorum.with(List.of(clusterId(), broker(5, 1, true)));
        long epoch = quorum.image().broker(5).brokerEpoch();
        BrokerHeartbeatRequest.Builder hb =
                BrokerHeartbeatRequest.newBuilder().setBrokerId(5).setBrokerEpoch(epoch);

        BrokerHeartbeatResponse behind =
                rpcs.heartbeat(hb.setMetadataOffset(epoch - 1).build());
        assertThat(behind.getFenced())
                .as("not caught up with its own registration")
                .isTrue();
        assertThat(quorum.submitted).isEmpty();

        BrokerHeartbeatResponse caughtUp =
                rpcs.heartbeat(hb.setMetadataOffset(epoch).build());
        assertThat(caughtUp.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(caughtUp.getFenced()).isFalse();
        assertThat(caughtUp.getCommittedOffset()).isEqualTo(quorum.image().offset());

        BrokerHeartbeatResponse plain = rpcs.heartbeat(hb.build());
        assertThat(plain.getFenced()).isFalse();

        BrokerHeartbeatResponse stopping = rpcs.heartbeat(hb.setWantFence(true).build());
        assertThat(stopping.getFenced()).isTrue();
        assertThat(quorum.image().broker(5).fenced()).isTrue();
        assertThat(quorum.submitted)
                .as("unfence and fence, not the plain heartbeats")
                .hasSize(2);
        assertThat(commands()).containsExactly(CommandResult.SUCCESS, CommandResult.SUCCESS);
    }
}
