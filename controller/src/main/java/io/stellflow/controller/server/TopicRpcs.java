package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.RemoveTopicRecord;
import io.stellflow.controller.proto.TopicResult;
import java.util.List;

/**
 * The topic administration RPCs: CreateTopics, DeleteTopics, CreatePartitions. Each topic is
 * validated against the current image by {@link TopicCommands} (bad input writes nothing) and
 * committed as its own entry; CreateTopics answers per topic, except that a lost leadership or a
 * timeout fails the whole request (nothing reported as done, the caller retries).
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: stateless apart from
 * its collaborators; handlers run on gRPC executor threads concurrently.
 */
final class TopicRpcs {
    private final Quorum quorum;
    private final NotControllerGuard guard;
    private final Commands commands;
    private final TopicCommands topics;

    TopicRpcs(Quorum quorum, NotControllerGuard guard, Commands commands) {
        this(quorum, guard, commands, new StorageReports());
    }

    /** @param storage brokers without a writable log dir get no new replica */
    TopicRpcs(Quorum quorum, NotControllerGuard guard, Commands commands, StorageReports storage) {
        this.quorum = quorum;
        this.guard = guard;
        this.commands = commands;
        this.topics = new TopicCommands(storage);
    }

    /** CreateTopics: one result per topic (its id, or why not), or a request-level error. */
    CreateTopicsResponse createTopics(CreateTopicsRequest req) {
        CreateTopicsResponse.Builder r = CreateTopicsResponse.newBuilder();
        long startNs = commands.startNs();
        CommandResult result = CommandResult.SUCCESS;
        for (var t : req.getTopicsList()) {
            TopicCommands.Plan plan = topics.planCreate(quorum.image(), t);
            TopicResult.Builder tr = TopicResult.newBuilder().setName(t.getName());
            result = Commands.worse(result, plan.error());
            if (plan.error() != ErrorCode.NONE) {
                tr.setError(plan.error()).setErrorMessage(plan.message());
            } else if (req.getValidateOnly()) {
                tr.setTopicId(MetadataRecords.uuid(plan.topicId()));
            } else {
                RaftQuorum.Submitted s = commands.commit(plan.records());
                result = Commands.worse(result, s.error());
                if (s.error() == ErrorCode.NONE) {
                    tr.setTopicId(MetadataRecords.uuid(plan.topicId()));
                } else if (s.error() == ErrorCode.NOT_CONTROLLER || s.error() == ErrorCode.REQUEST_TIMED_OUT) {
                    // Nothing reported as done: the caller sees the request-level error and retries.
                    ControllerLeader l = guard.leader();
                    commands.answered(result, startNs);
                    return r.clearTopics()
                            .setError(s.error())
                            .setErrorMessage(s.message())
                            .setLeader(l)
                            .build();
                } else {
                    tr.setError(s.error()).setErrorMessage(s.message());
                }
            }
            r.addTopics(tr);
        }
        commands.answered(result, startNs);
        return r.build();
    }

    /** DeleteTopics: one result per name (the deleted topic's id, or why not). */
    DeleteTopicsResponse deleteTopics(DeleteTopicsRequest req) {
        DeleteTopicsResponse.Builder r = DeleteTopicsResponse.newBuilder();
        long startNs = commands.startNs();
        CommandResult result = CommandResult.SUCCESS;
        for (String name : req.getNamesList()) {
            TopicResult.Builder tr = TopicResult.newBuilder().setName(name);
            TopicImage t = quorum.image().topic(name);
            if (t == null) {
                tr.setError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).setErrorMessage("no topic '" + name + "'");
                result = Commands.worse(result, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            } else {
                RaftQuorum.Submitted s = commands.commit(List.of(MetadataRecords.of(RemoveTopicRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(t.id()))
                        .build())));
                tr.setTopicId(MetadataRecords.uuid(t.id()));
                result = Commands.worse(result, s.error());
                if (s.error() != ErrorCode.NONE) {
                    tr.setError(s.error()).setErrorMessage(s.message());
                }
            }
            r.addTopics(tr);
        }
        commands.answered(result, startNs);
        return r.build();
    }

    /** CreatePartitions: adds partitions to one topic, or says why not. */
    CreatePartitionsResponse createPartitions(CreatePartitionsRequest req) {
        CreatePartitionsResponse.Builder r = CreatePartitionsResponse.newBuilder();
        long startNs = commands.startNs();
        TopicCommands.Plan plan = topics.planCreatePartitions(quorum.image(), req);
        if (plan.error() != ErrorCode.NONE) {
            commands.answered(CommandResult.ERROR, startNs);
            return r.setError(plan.error()).setErrorMessage(plan.message()).build();
        }
        RaftQuorum.Submitted s = commands.commit(plan.records());
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
        }
        commands.answered(Commands.result(s.error()), startNs);
        return r.build();
    }
}
