package io.stellflow.controller.server;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ElectionTopicPartitions;
import io.stellflow.controller.proto.ElectionType;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.PartitionElectionResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The active controller's leader elections that are not part of a broker's fence or unfence
 * ({@link Fencing}): ElectLeaders requests (PREFERRED, UNCLEAN), the periodic re-check of offline
 * partitions and automatic leader rebalancing. Each plans on the current image with {@link Elections}
 * and commits all its partition changes as one Raft entry; a change whose partition moved meanwhile
 * is rejected by the applier (stale partition epoch), so nothing is decided in memory only.
 *
 * <p>Thread-safety: stateless apart from its collaborators; callable from the timer thread and gRPC
 * threads concurrently (concurrent plans race through the partition epoch check).
 */
final class LeaderElections {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderElections.class);

    private final ControllerConfig config;
    private final Quorum quorum;
    private final ControllerMetrics metrics;
    private final StorageReports storage;

    LeaderElections(ControllerConfig config, Quorum quorum, ControllerMetrics metrics) {
        this(config, quorum, metrics, new StorageReports());
    }

    /** @param storage the brokers' failed replicas, never elected */
    LeaderElections(ControllerConfig config, Quorum quorum, ControllerMetrics metrics, StorageReports storage) {
        this.config = config;
        this.quorum = quorum;
        this.metrics = metrics;
        this.storage = storage;
    }

    /**
     * Gives leaderless partitions a leader when a replica became eligible (clean, or unclean where the
     * topic allows it); normally unfencing and config changes do it in their own entry, this catches
     * the rest (for example a controller restarted with a new {@code unclean.leader.election.enable}
     * default). No-op unless active. Called by the controller's timer thread.
     *
     * @return the partitions that got a leader
     */
    int electOfflinePartitions() {
        if (!quorum.isActive()) {
            return 0;
        }
        MetadataImage img = quorum.image();
        List<Elections.Change> changes = Elections.electLeaderless(
                img, Elections.live(img), config.uncleanLeaderElectionEnable(), Elections.Reason.OFFLINE, storage);
        return commitElections(changes, "offline partitions");
    }

    /**
     * One automatic leader rebalance check ({@link Elections#rebalance} with
     * {@code leader.imbalance.per.broker.percentage}): preferred elections for the imbalanced brokers'
     * partitions, committed as one entry. No-op unless active. Called by the controller's timer
     * thread every {@code leader.imbalance.check.interval.seconds}.
     *
     * @return the partitions whose leader moved back to the preferred replica
     */
    int rebalanceLeaders() {
        if (!quorum.isActive()) {
            return 0;
        }
        MetadataImage img = quorum.image();
        List<Elections.Change> changes =
                Elections.rebalance(img, Elections.live(img), config.leaderImbalancePerBrokerPercentage(), storage);
        int n = commitElections(changes, "leader rebalance");
        if (n > 0) {
            LOG.info(
                    "LEADER_REBALANCE partitions={} threshold_percent={} metadataOffset={}",
                    n,
                    config.leaderImbalancePerBrokerPercentage(),
                    quorum.image().offset());
        }
        return n;
    }

    private int commitElections(List<Elections.Change> changes, String what) {
        if (changes.isEmpty()) {
            return 0;
        }
        RaftQuorum.Submitted s = quorum.submit(Elections.records(changes), config.requestTimeoutMs());
        if (s.error() != ErrorCode.NONE) {
            // Raced with another change (stale partition epoch) or lost leadership: next round.
            LOG.warn("{}: {} partition changes not committed: {} {}", what, changes.size(), s.error(), s.message());
            return 0;
        }
        Elections.committed(changes, metrics);
        return changes.size();
    }

    /** One requested partition: its names and, when it exists, the image's view. */
    private record Target(String topic, int partition, TopicImage t, PartitionImage p) {}

    private record TargetKey(String topic, int partition) {}

    /** The partitions a request names, each once, in request order. */
    private static List<Target> targets(MetadataImage img, ElectLeadersRequest req) {
        Map<TargetKey, Target> out = new LinkedHashMap<>();
        if (req.getAllTopicPartitions()) {
            for (TopicImage t : img.topicsByName().values()) {
                for (PartitionImage p : t.partitions()) {
                    out.put(new TargetKey(t.name(), p.partition()), new Target(t.name(), p.partition(), t, p));
                }
            }
            return List.copyOf(out.values());
        }
        for (ElectionTopicPartitions tp : req.getTopicsList()) {
            TopicImage t = img.topic(tp.getTopic());
            List<Integer> parts = new ArrayList<>(tp.getPartitionsList());
            if (parts.isEmpty() && t != null) {
                t.partitions().forEach(p -> parts.add(p.partition()));
            } else if (parts.isEmpty()) {
                parts.add(-1);
            }
            for (int part : parts) {
                PartitionImage p = t == null ? null : t.partition(part);
                out.putIfAbsent(new TargetKey(tp.getTopic(), part), new Target(tp.getTopic(), part, t, p));
            }
        }
        return List.copyOf(out.values());
    }

    /** An ElectLeaders answer and how it counts as a command. */
    record Answer(ElectLeadersResponse.Builder response, CommandResult result) {}

    /**
     * Plans and commits the elections of one ElectLeaders request (the caller checked that this node
     * is active). NOT_CONTROLLER in the response means leadership was lost before the commit.
     */
    Answer electLeaders(ElectLeadersRequest req) {
        ElectLeadersResponse.Builder r = ElectLeadersResponse.newBuilder();
        String bad = null;
        if (req.getAllTopicPartitions() == (req.getTopicsCount() > 0)) {
            bad = "name topics (and partitions) or all_topic_partitions, not both and not neither";
        } else if (req.getElectionType() == ElectionType.UNRECOGNIZED) {
            bad = "unknown election type " + req.getElectionTypeValue();
        }
        if (bad != null) {
            return new Answer(r.setError(ErrorCode.INVALID_REQUEST).setErrorMessage(bad), CommandResult.ERROR);
        }
        boolean preferred = req.getElectionType() == ElectionType.PREFERRED;
        Elections.Reason reason = preferred ? Elections.Reason.PREFERRED : Elections.Reason.UNCLEAN;
        CommandResult result = CommandResult.SUCCESS;
        // Planned on one image and committed as one entry; a race with another change of the same
        // partitions (stale partition epoch, a chosen leader fenced meanwhile) is planned once more.
        for (int attempt = 0; ; attempt++) {
            MetadataImage img = quorum.image();
            IntPredicate live = Elections.live(img);
            List<Target> targets = targets(img, req);
            List<PartitionElectionResult.Builder> results = new ArrayList<>();
            List<Elections.Change> changes = new ArrayList<>();
            List<PartitionElectionResult.Builder> pending = new ArrayList<>();
            for (Target tg : targets) {
                PartitionElectionResult.Builder pr = PartitionElectionResult.newBuilder()
                        .setTopic(tg.topic())
                        .setPartition(tg.partition())
                        .setLeader(PartitionImage.NO_LEADER);
                results.add(pr);
                if (tg.p() == null) {
                    pr.setError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                            .setErrorMessage(
                                    tg.t() == null
                                            ? "no topic '" + tg.topic() + "'"
                                            : "topic '" + tg.topic() + "' has no partition " + tg.partition());
                    continue;
                }
                pr.setLeader(tg.p().leader()).setLeaderEpoch(tg.p().leaderEpoch());
                IntPredicate eligible = storage.eligible(live, tg.t(), tg.p());
                Elections.Outcome o = preferred
                        ? Elections.preferred(tg.t(), tg.p(), eligible, reason)
                        : Elections.unclean(tg.t(), tg.p(), eligible);
                if (o.change() != null) {
                    changes.add(o.change());
                    pending.add(pr);
                } else {
                    pr.setError(o.error()).setErrorMessage(o.message());
                }
            }
            if (!changes.isEmpty()) {
                RaftQuorum.Submitted s = quorum.submit(Elections.records(changes), config.requestTimeoutMs());
                boolean raced =
                        s.error() == ErrorCode.INVALID_UPDATE_VERSION || s.error() == ErrorCode.INELIGIBLE_REPLICA;
                if (raced && attempt == 0) {
                    continue;
                }
                if (s.error() == ErrorCode.NOT_CONTROLLER) {
                    return new Answer(r.setError(s.error()).setErrorMessage(s.message()), CommandResult.ERROR);
                }
                if (s.error() == ErrorCode.NONE) {
                    Elections.committed(changes, metrics);
                    MetadataImage now = quorum.image();
                    for (int i = 0; i < changes.size(); i++) {
                        Elections.Change c = changes.get(i);
                        PartitionImage p =
                                now.partition(c.topic().id(), c.before().partition());
                        if (p != null) {
                            pending.get(i).setLeader(p.leader()).setLeaderEpoch(p.leaderEpoch());
                        }
                    }
                    LOG.info(
                            "LEADER_ELECTION type={} elected={} requested={} metadataOffset={}",
                            reason.label(),
                            changes.size(),
                            targets.size(),
                            s.index());
                } else {
                    result = Commands.worse(result, s.error());
                    pending.forEach(pr -> pr.setError(s.error()).setErrorMessage(s.message()));
                }
            }
            for (PartitionElectionResult.Builder pr : results) {
                if (pr.getError() != ErrorCode.ELECTION_NOT_NEEDED) {
                    result = Commands.worse(result, pr.getError());
                }
                r.addResults(pr);
            }
            return new Answer(r, result);
        }
    }
}
