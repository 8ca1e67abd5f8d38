package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicResult;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TopicRpcsTest {
    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final TopicRpcs rpcs =
            new TopicRpcs(quorum, new NotControllerGuard(1, quorum), new Commands(quorum, 5_000, metrics, () -> 0L));

    TopicRpcsTest() {
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(
                ClusterIdRecord.newBuilder().setClusterId("c").build()));
        for (int id = 1; id <= 2; id++) {
            records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                    .setBrokerId(id)
                    .setIncarnationId(MetadataRecords.uuid(new UUID(1, id)))
                    .setFenced(false)
                    .build()));
        }
        quorum.with(records);
    }

    private static CreatableTopic topic(String name, int partitions, int rf) {
        return CreatableTopic.newBuilder()
                .setName(name)
                .setNumPartitions(partitions)
                .setReplicationFactor(rf)
                .build();
    }

    private List<CommandResult> commands() {
        return metrics.commands.stream().map(CommandsTest.Command::result).toList();
    }

    @Test
    void eachTopicIsAnsweredOnItsOwnAndTheRequestCountsItsWorst() {
        CreateTopicsResponse r = rpcs.createTopics(CreateTopicsRequest.newBuilder()
                .addTopics(topic("a", 3, 2))
                .addTopics(topic("b", 1, 3))
                .addTopics(topic("c", 1, 1))
                .build());
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getTopicsList()).extracting(TopicResult::getName).containsExactly("a", "b", "c");
        assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getTopics(1).getError()).isEqualTo(ErrorCode.INVALID_REPLICATION_FACTOR);
        assertThat(r.getTopics(2).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(quorum.image().topic("a").partitions()).hasSize(3);
        assertThat(MetadataRecords.uuid(r.getTopics(0).getTopicId()))
                .isEqualTo(quorum.image().topic("a").id());
        assertThat(quorum.image().topic("b")).isNull();
        assertThat(quorum.submitted).as("one entry per valid topic").hasSize(2);
        assertThat(commands()).containsExactly(CommandResult.ERROR);
    }

    @Test
    void validateOnlyWritesNothing() {
        CreateTopicsResponse r = rpcs.createTopics(CreateTopicsRequest.newBuilder()
                .addTopics(topic("a", 1, 1))
                .setValidateOnly(true)
                .build());
        assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getTopics(0).hasTopicId()).isTrue();
        assertThat(quorum.submitted).isEmpty();
        assertThat(quorum.image().topic("a")).isNull();
    }

    @Test
    void aLostLeadershipOrTimeoutFailsTheWholeRequestSoNothingIsReportedDone() {
        quorum.leaderId = 2;
        for (ErrorCode e : List.of(ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT)) {
            quorum.failNext(e);
            CreateTopicsResponse r = rpcs.createTopics(CreateTopicsRequest.newBuilder()
                    .addTopics(topic("x-" + e.getNumber(), 1, 1))
                    .addTopics(topic("y-" + e.getNumber(), 1, 1))
                    .build());
            assertThat(r.getError()).isEqualTo(e);
            assertThat(r.getTopicsList()).isEmpty();
            assertThat(r.getLeader().getLeaderId()).isEqualTo(2);
        }
        assertThat(commands()).containsExactly(CommandResult.ERROR, CommandResult.TIMEOUT);
    }

    @Test
    void deleteAnswersPerNameAndUnknownNamesAreErrors() {
        rpcs.createTopics(
                CreateTopicsRequest.newBuilder().addTopics(topic("a", 1, 1)).build());
        UUID id = quorum.image().topic("a").id();
        DeleteTopicsResponse r = rpcs.deleteTopics(
                DeleteTopicsRequest.newBuilder().addNames("a").addNames("nope").build());
        assertThat(r.getTopics(0).getError()).isEqualTo(ErrorCode.NONE);
        assertThat(MetadataRecords.uuid(r.getTopics(0).getTopicId())).isEqualTo(id);
        assertThat(r.getTopics(1).getError()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(quorum.image().topic("a")).isNull();
        assertThat(commands()).containsExactly(CommandResult.SUCCESS, CommandResult.ERROR);
    }

    @Test
    void createPartitionsGrowsTheTopicOrSaysWhyNot() {
        rpcs.createTopics(
                CreateTopicsRequest.newBuilder().addTopics(topic("a", 1, 2)).build());
        assertThat(rpcs.createPartitions(CreatePartitionsRequest.newBuilder()
                                .setName("a")
                                .setTotalCount(3)
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.NONE);
        assertThat(quorum.image().topic("a").partitions()).hasSize(3);
        assertThat(rpcs.createPartitions(CreatePartitionsRequest.newBuilder()
                                .setName("a")
                                .setTotalCount(2)
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.INVALID_PARTITIONS);
        assertThat(rpcs.createPartitions(CreatePartitionsRequest.newBuilder()
                                .setName("nope")
                                .setTotalCount(2)
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(commands())
                .containsExactly(
                        CommandResult.SUCCESS, CommandResult.SUCCESS, CommandResult.ERROR, CommandResult.ERROR);
    }
}
