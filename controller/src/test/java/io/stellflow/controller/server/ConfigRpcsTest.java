package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class ConfigRpcsTest {
    private static final UUID TOPIC = new UUID(7, 7);

    private final FakeQuorum quorum = new FakeQuorum(1);
    private final CommandsTest.RecordingMetrics metrics = new CommandsTest.RecordingMetrics();
    private final ConfigRpcs rpcs = new ConfigRpcs(
            quorum, new NotControllerGuard(1, quorum), new Commands(quorum, 5_000, metrics, () -> 0L), false);

    ConfigRpcsTest() {
        // Broker 1 (the only ISR member) is fenced, broker 2 is live but out of sync: the partition is
        // leaderless until unclean election is allowed.
        quorum.with(List.of(
                MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                        .setBrokerId(1)
                        .setIncarnationId(MetadataRecords.uuid(new UUID(1, 1)))
                        .setBrokerEpoch(101)
                        .setFenced(true)
                        .build()),
                MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                        .setBrokerId(2)
                        .setIncarnationId(MetadataRecords.uuid(new UUID(1, 2)))
                        .setBrokerEpoch(102)
                        .setFenced(false)
                        .build()),
                MetadataRecords.of(TopicRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(TOPIC))
                        .setName("t")
                        .putConfig("retention.ms", "1000")
                        .build()),
                MetadataRecords.of(PartitionRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(TOPIC))
                        .setPartition(0)
                        .addAllReplicas(List.of(1, 2))
                        .setLeader(PartitionImage.NO_LEADER)
                        .setLeaderEpoch(5)
                        .addAllIsr(List.of(1))
                        .setPartitionEpoch(9)
                        .build())));
    }

    private static IncrementalAlterConfigsRequest.Builder set(String key, String value) {
        return IncrementalAlterConfigsRequest.newBuilder()
                .setTopic("t")
                .addConfigs(
                        AlterableConfig.newBuilder().setKey(key).setValue(value).setOp(ConfigOpType.SET));
    }

    private List<CommandResult> commands() {
        return metrics.commands.stream().map(CommandsTest.Command::result).toList();
    }

    @Test
    void validateOnlyAnswersTheOverridesItWouldGiveAndWritesNothing() {
        IncrementalAlterConfigsResponse r = rpcs.incrementalAlterConfigs(
                set("retention.ms", "2000").setValidateOnly(true).build());
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getConfigMap()).isEqualTo(Map.of("retention.ms", "2000"));
        assertThat(quorum.submitted).isEmpty();
        assertThat(quorum.image().topic("t").config()).isEqualTo(Map.of("retention.ms", "1000"));
        assertThat(commands()).containsExactly(CommandResult.SUCCESS);
    }

    @Test
    void badValuesAreRefused() {
        IncrementalAlterConfigsResponse r =
                rpcs.incrementalAlterConfigs(set("retention.ms", "soon").build());
        assertThat(r.getError()).isEqualTo(ErrorCode.INVALID_CONFIG);
        assertThat(quorum.submitted).isEmpty();
        assertThat(commands()).containsExactly(CommandResult.ERROR);
    }

    @Test
    void switchingUncleanElectionOnElectsTheLeaderlessPartitionInTheSameEntry() {
        IncrementalAlterConfigsResponse r =
                rpcs.incrementalAlterConfigs(set(Elections.UNCLEAN_KEY, "true").build());
        assertThat(r.getError()).isEqualTo(ErrorCode.NONE);
        assertThat(r.getConfigMap()).containsEntry(Elections.UNCLEAN_KEY, "true");
        assertThat(quorum.submitted).hasSize(1);
        assertThat(quorum.image().partition(TOPIC, 0).leader()).isEqualTo(2);
        assertThat(commands()).containsExactly(CommandResult.SUCCESS);
    }

    @Test
    void describeAnswersTheOverridesOrUnknownTopic() {
        DescribeConfigsResponse r = rpcs.describeConfigs(
                DescribeConfigsRequest.newBuilder().setTopic("t").build());
        assertThat(r.getConfigMap()).isEqualTo(Map.of("retention.ms", "1000"));
        assertThat(rpcs.describeConfigs(DescribeConfigsRequest.newBuilder()
                                .setTopic("nope")
                                .build())
                        .getError())
                .isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        assertThat(commands()).as("queries are not commands").isEmpty();
    }
}
