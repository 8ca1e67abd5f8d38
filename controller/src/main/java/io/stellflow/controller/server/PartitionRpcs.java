package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.PartitionChangeRecord;
import java.util.List;

/**
 * The RPCs that change an existing partition's leader or ISR: AlterPartition (the partition leader's
 * ISR change, checked against its broker epoch, leader epoch and partition epoch) and ElectLeaders
 * (PREFERRED or UNCLEAN on request, planned and committed by {@link LeaderElections}). Both commit
 * {@code PartitionChangeRecord}s that the applier re-checks against the partition epoch.
 *
 * <p>Reached only while active ({@link NotControllerGuard}). Thread-safety: stateless apart from
 * its collaborators; handlers run on gRPC executor threads concurrently.
 */
final class PartitionRpcs {
    private final Quorum quorum;
    private final NotControllerGuard guard;
    private final Commands commands;
    private final LeaderElections elections;
    private final StorageReports storage;

    PartitionRpcs(Quorum quorum, NotControllerGuard guard, Commands commands, LeaderElections elections) {
        this(quorum, guard, commands, elections, new StorageReports());
    }

    /** @param storage a replica its broker reports failed may not join an ISR */
    PartitionRpcs(
            Quorum quorum,
            NotControllerGuard guard,
            Commands commands,
            LeaderElections elections,
            StorageReports storage) {
        this.storage = storage;
        this.quorum = quorum;
        this.guard = guard;
        this.commands = commands;
        this.elections = elections;
    }

    /** AlterPartition: the partition as committed with the new ISR, or why the change was refused. */
    AlterPartitionResponse alterPartition(AlterPartitionRequest req) {
        AlterPartitionResponse.Builder r = AlterPartitionResponse.newBuilder();
        long startNs = commands.startNs();
        MetadataImage img = quorum.image();
        BrokerRegistration b = img.broker(req.getBrokerId());
        var topicId = MetadataRecords.uuid(req.getTopicId());
        PartitionImage p = img.partition(topicId, req.getPartition());
        String bad = null;
        ErrorCode code = ErrorCode.NONE;
        if (b == null || b.brokerEpoch() != req.getBrokerEpoch()) {
            code = ErrorCode.STALE_BROKER_EPOCH;
            bad = "broker " + req.getBrokerId() + " epoch " + req.getBrokerEpoch() + " is not current";
        } else if (p == null) {
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            bad = "unknown partition " + topicId + "-" + req.getPartition();
        } else if (p.leader() != req.getBrokerId() || p.leaderEpoch() != req.getLeaderEpoch()) {
            code = ErrorCode.FENCED_LEADER_EPOCH;
            bad = "broker " + req.getBrokerId() + " at leader epoch " + req.getLeaderEpoch()
                    + " is not the leader (leader " + p.leader() + ", epoch " + p.leaderEpoch() + ")";
        } else if (p.partitionEpoch() != req.getPartitionEpoch()) {
            code = ErrorCode.INVALID_UPDATE_VERSION;
            bad = "partition epoch " + req.getPartitionEpoch() + " is stale (current " + p.partitionEpoch() + ")";
        } else {
            bad = Fencing.checkIsr(img, p, req.getNewIsrList());
            if (bad == null) {
                bad = Fencing.checkJoiningEpochs(img, p, req.getNewIsrList(), req.getNewIsrBrokerEpochsList());
            }
            for (int replica : req.getNewIsrList()) {
                if (bad == null && !p.isr().contains(replica) && storage.failed(replica, topicId, p.partition())) {
                    bad = "broker " + replica + " reports its replica failed and cannot join the ISR";
                }
            }
            if (bad != null) {
                code = ErrorCode.INELIGIBLE_REPLICA;
            }
        }
        if (bad != null) {
            commands.answered(CommandResult.ERROR, startNs);
            return r.setError(code).setErrorMessage(bad).build();
        }
        PartitionChangeRecord.Builder change = PartitionChangeRecord.newBuilder()
                .setTopicId(req.getTopicId())
                .setPartition(req.getPartition())
                .setExpectedPartitionEpoch(req.getPartitionEpoch())
                .setLeader(p.leader())
                .addAllIsr(req.getNewIsrList());
        // The members it adds are checked again when the entry applies: one may register again
        // (restart) or be fenced between the check above and the commit.
        for (int i = 0; i < req.getNewIsrCount(); i++) {
            int replica = req.getNewIsr(i);
            if (!p.isr().contains(replica)) {
                change.addJoiningReplicas(replica)
                        .addJoiningBrokerEpochs(
                                req.getNewIsrBrokerEpochsCount() == 0 ? -1L : req.getNewIsrBrokerEpochs(i));
            }
        }
        RaftQuorum.Submitted s = commands.commit(List.of(MetadataRecords.of(change.build())));
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
        } else {
            PartitionImage now = quorum.image().partition(topicId, req.getPartition());
            if (now != null) {
                r.setPartition(MetadataRecords.partitionRecord(topicId, now));
            }
        }
        commands.answered(Commands.result(s.error()), startNs);
        return r.build();
    }

    /** ElectLeaders: one result per requested partition, or a request-level error. */
    ElectLeadersResponse electLeaders(ElectLeadersRequest req) {
        long startNs = commands.startNs();
        LeaderElections.Answer a = elections.electLeaders(req);
        ElectLeadersResponse.Builder r = a.response();
        if (r.getError() == ErrorCode.NOT_CONTROLLER) {
            r.setLeader(guard.leader());
        }
        commands.answered(a.result(), startNs);
        return r.build();
    }
}
