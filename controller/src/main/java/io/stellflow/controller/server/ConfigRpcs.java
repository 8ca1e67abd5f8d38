package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.MetadataRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * The topic config RPCs: IncrementalAlterConfigs (validated by {@link TopicCommands}; a change that
 * lets leaderless partitions elect, such as switching unclean election on, elects them in the same
 * entry) and DescribeConfigs (a topic's overrides from the image).
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: stateless apart from
 * its collaborators; handlers run on gRPC executor threads concurrently.
 */
final class ConfigRpcs {
    private final Quorum quorum;
    private final NotControllerGuard guard;
    private final Commands commands;
    private final boolean uncleanDefault;
    private final TopicCommands topics = new TopicCommands();
    private final StorageReports storage;

    ConfigRpcs(Quorum quorum, NotControllerGuard guard, Commands commands, boolean uncleanDefault) {
        this(quorum, guard, commands, uncleanDefault, new StorageReports());
    }

    /**
     * @param uncleanDefault {@code unclean.leader.election.enable} for topics without an override
     * @param storage replicas their brokers report failed are never elected
     */
    ConfigRpcs(
            Quorum quorum,
            NotControllerGuard guard,
            Commands commands,
            boolean uncleanDefault,
            StorageReports storage) {
        this.storage = storage;
        this.quorum = quorum;
        this.guard = guard;
        this.commands = commands;
        this.uncleanDefault = uncleanDefault;
    }

    /**
     * IncrementalAlterConfigs: the topic's overrides after the change (with {@code validate_only}, or
     * when nothing changes: what they would be), or why the change was refused.
     */
    IncrementalAlterConfigsResponse incrementalAlterConfigs(IncrementalAlterConfigsRequest req) {
        IncrementalAlterConfigsResponse.Builder r = IncrementalAlterConfigsResponse.newBuilder();
        long startNs = commands.startNs();
        MetadataImage img = quorum.image();
        TopicCommands.Plan plan = topics.planAlterConfigs(img, req);
        if (plan.error() != ErrorCode.NONE) {
            commands.answered(CommandResult.ERROR, startNs);
            return r.setError(plan.error()).setErrorMessage(plan.message()).build();
        }
        if (req.getValidateOnly() || plan.records().isEmpty()) {
            // What the change would give: the plan applied to the image it was made from.
            MetadataImage preview = MetadataApplier.apply(img, img.term(), img.offset(), plan.records())
                    .image();
            commands.answered(CommandResult.SUCCESS, startNs);
            return r.putAllConfig(preview.topic(plan.topicId()).config()).build();
        }
        // Switching unclean election on (or removing an override that kept it off under a true
        // default) gives leaderless partitions of the topic a leader in the same entry.
        MetadataImage after = MetadataApplier.apply(img, img.term(), img.offset(), plan.records())
                .image();
        TopicImage afterTopic = after.topic(plan.topicId());
        List<Elections.Change> elections = new ArrayList<>();
        IntPredicate live = Elections.live(after);
        boolean unclean = Elections.uncleanEnabled(afterTopic, uncleanDefault);
        for (PartitionImage p : afterTopic.partitions()) {
            Elections.Change c = Elections.electLeaderless(
                    afterTopic, p, storage.eligible(live, afterTopic, p), unclean, Elections.Reason.OFFLINE);
            if (c != null) {
                elections.add(c);
            }
        }
        List<MetadataRecord> records = new ArrayList<>(plan.records());
        records.addAll(Elections.records(elections));
        RaftQuorum.Submitted s = commands.commit(records);
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
            if (s.error() == ErrorCode.NOT_CONTROLLER) {
                r.setLeader(guard.leader());
            }
        } else {
            commands.elected(elections);
            TopicImage now = quorum.image().topic(plan.topicId());
            if (now != null) {
                r.putAllConfig(now.config());
            }
        }
        commands.answered(Commands.result(s.error()), startNs);
        return r.build();
    }

    /** DescribeConfigs: the topic's overrides, or UNKNOWN_TOPIC_OR_PARTITION. Not a command. */
    DescribeConfigsResponse describeConfigs(DescribeConfigsRequest req) {
        DescribeConfigsResponse.Builder r = DescribeConfigsResponse.newBuilder();
        TopicImage t = quorum.image().topic(req.getTopic());
        if (t == null) {
            r.setError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).setErrorMessage("no topic '" + req.getTopic() + "'");
        } else {
            r.putAllConfig(t.config());
        }
        return r.build();
    }
}
