package io.stellflow.controller.server;

import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.ControllerRpc;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataApplier;
import io.stellflow.controller.image.MetadataDelta;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.AlterPartitionRequest;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.BrokerDescription;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.DescribeClusterRequest;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.DescribeQuorumRequest;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ElectLeadersRequest;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.FollowMetadataRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.MetadataEvent;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RegisterBrokerRequest;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import io.stellflow.controller.proto.RemoveTopicRecord;
import io.stellflow.controller.proto.TopicResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC control plane of one controller. Requests are answered only while this node is the
 * active controller (otherwise NOT_CONTROLLER naming the leader); every change is validated against
 * the current image first (bad input writes nothing) and then committed through {@link RaftQuorum},
 * whose state machine re-checks it deterministically.
 *
 * <p>Leader elections: fencing, unfencing and re-registration elect in the same entry as the broker's
 * change ({@link Fencing}); ElectLeaders (PREFERRED or UNCLEAN) on request, offline partitions and
 * automatic rebalancing from the controller's timer ({@link LeaderElections}). Rules: {@link Elections}.
 *
 * <p>Metrics ({@link ControllerMetrics}): every request that asks for a metadata change (RegisterBroker,
 * CreateTopics, DeleteTopics, CreatePartitions, AlterPartition, IncrementalAlterConfigs, ElectLeaders, a
 * heartbeat that fences or unfences) and reaches the active controller is one command, timed from its
 * arrival to its answer, with result success,
 * error (bad input, stale epochs, lost leadership; a request with several topics counts its worst) or
 * timeout; NOT_CONTROLLER redirects, plain heartbeats and queries are not commands. Each delta (or full
 * image) sent on a FollowMetadata stream counts once.
 *
 * <p>Thread-safety: handlers run on gRPC executor threads concurrently; state lives in the image
 * (immutable), in {@link BrokerLiveness} (concurrent) and in the Raft log.
 */
public final class ControlPlane {
    private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);
    /** Attempts of a registration whose partition changes raced another committed change. */
    private static final int REGISTER_ATTEMPTS = 5;

    private final ControllerConfig config;
    private final RaftQuorum quorum;
    private final BrokerLiveness liveness;
    private final ControllerMetrics metrics;
    private final TopicCommands topics;
    private final LeaderElections elections;
    private volatile boolean closed;

    /** Wires the service; {@code ControllerServer} owns its lifecycle. */
    public ControlPlane(ControllerConfig config, RaftQuorum quorum, ControllerMetrics metrics) {
        this.config = config;
        this.quorum = quorum;
        this.liveness = new BrokerLiveness(
                config.brokerSessionTimeoutMs(), System::nanoTime, metrics, config.uncleanLeaderElectionEnable());
        this.metrics = metrics;
        this.topics = new TopicCommands();
        this.elections = new LeaderElections(config, quorum, metrics);
    }

    /** Stops answering (NOT_CONTROLLER) and ends metadata streams. */
    public void close() {
        closed = true;
    }

    /** This node just became the active controller: every broker's session restarts now. */
    public void becameActive() {
        liveness.reset();
    }

    /** Fences brokers whose session expired (no-op unless active). */
    public void checkLiveness() {
        if (!closed) {
            liveness.checkOnce(quorum, config.requestTimeoutMs());
        }
    }

    /**
     * Gives leaderless partitions a leader when a replica became eligible; see {@link
     * LeaderElections#electOfflinePartitions}. No-op unless active. Called by the controller's timer.
     *
     * @return the partitions that got a leader
     */
    public int electOfflinePartitions() {
        return closed ? 0 : elections.electOfflinePartitions();
    }

    /**
     * One automatic leader rebalance check; see {@link LeaderElections#rebalanceLeaders}. No-op
     * unless active. Called by the controller's timer every {@code leader.imbalance.check.interval.seconds}.
     *
     * @return the partitions whose leader moved back to the preferred replica
     */
    public int rebalanceLeaders() {
        return closed ? 0 : elections.rebalanceLeaders();
    }

    /** The gRPC service definition to add to a server. */
    public ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(ControllerRpc.SERVICE)
                .addMethod(ControllerRpc.REGISTER_BROKER, ServerCalls.asyncUnaryCall(this::registerBroker))
                .addMethod(ControllerRpc.BROKER_HEARTBEAT, ServerCalls.asyncUnaryCall(this::brokerHeartbeat))
                .addMethod(ControllerRpc.CREATE_TOPICS, ServerCalls.asyncUnaryCall(this::createTopics))
                .addMethod(ControllerRpc.DELETE_TOPICS, ServerCalls.asyncUnaryCall(this::deleteTopics))
                .addMethod(ControllerRpc.CREATE_PARTITIONS, ServerCalls.asyncUnaryCall(this::createPartitions))
                .addMethod(ControllerRpc.ALTER_PARTITION, ServerCalls.asyncUnaryCall(this::alterPartition))
                .addMethod(ControllerRpc.DESCRIBE_QUORUM, ServerCalls.asyncUnaryCall(this::describeQuorum))
                .addMethod(ControllerRpc.DESCRIBE_CLUSTER, ServerCalls.asyncUnaryCall(this::describeCluster))
                .addMethod(
                        ControllerRpc.INCREMENTAL_ALTER_CONFIGS,
                        ServerCalls.asyncUnaryCall(this::incrementalAlterConfigs))
                .addMethod(ControllerRpc.DESCRIBE_CONFIGS, ServerCalls.asyncUnaryCall(this::describeConfigs))
                .addMethod(ControllerRpc.ELECT_LEADERS, ServerCalls.asyncUnaryCall(this::electLeaders))
                .addMethod(ControllerRpc.FOLLOW_METADATA, ServerCalls.asyncServerStreamingCall(this::followMetadata))
                .build();
    }

    /** Who the leader is, for NOT_CONTROLLER answers. */
    ControllerLeader leader() {
        int id = quorum.leaderId();
        ControllerLeader.Builder b = ControllerLeader.newBuilder().setLeaderId(id);
        if (id >= 0 && !(id == config.nodeId() && !quorum.isActive())) {
            BrokerEndpoint e = quorum.image().controllers().get(id);
            if (e != null) {
                b.setEndpoint(e.toProto());
            }
        }
        return b.build();
    }

    private static String notController(ControllerLeader l) {
        return "this controller is not active; leader is "
                + (l.getLeaderId() < 0 ? "unknown (election in progress)" : String.valueOf(l.getLeaderId()));
    }

    private RaftQuorum.Submitted commit(List<MetadataRecord> records) {
        return quorum.submit(records, config.requestTimeoutMs());
    }

    /** The {@code result} of an answer with {@code error}. */
    static CommandResult result(ErrorCode error) {
        return switch (error) {
            case NONE -> CommandResult.SUCCESS;
            case REQUEST_TIMED_OUT -> CommandResult.TIMEOUT;
            default -> CommandResult.ERROR;
        };
    }

    /** The worse of two results (timeout over error over success), for requests with several items. */
    static CommandResult worse(CommandResult a, ErrorCode error) {
        CommandResult b = result(error);
        return b.ordinal() > a.ordinal() ? b : a;
    }

    /** One answered command: {@code stellflow.controller.command.count} and {@code .latency}. */
    private void answered(CommandResult result, long startNs) {
        metrics.command(result, System.nanoTime() - startNs);
    }

    // ---- broker lifecycle ----

    private void registerBroker(RegisterBrokerRequest req, StreamObserver<RegisterBrokerResponse> out) {
        RegisterBrokerResponse.Builder r = RegisterBrokerResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        if (req.getBrokerId() < 0 || !req.hasIncarnationId()) {
            answered(CommandResult.ERROR, startNs);
            reply(
                    out,
                    r.setError(ErrorCode.INVALID_REQUEST)
                            .setErrorMessage("broker_id must be >= 0 and incarnation_id set")
                            .build());
            return;
        }
        registerBroker(req, out, r, startNs, 0);
    }

    /**
     * One attempt at registering: reads the image, builds the registration and the partition changes
     * of the broker's previous incarnation from it, and commits them as one entry. When another
     * change of those partitions committed in between ({@code INVALID_UPDATE_VERSION}, or {@code
     * INELIGIBLE_REPLICA} for a leader it chose), the entry is refused as a whole and the attempt is
     * made again from the newer image, up to {@link #REGISTER_ATTEMPTS} times (a broker whose
     * registration is refused does not start).
     */
    private void registerBroker(
            RegisterBrokerRequest req,
            StreamObserver<RegisterBrokerResponse> out,
            RegisterBrokerResponse.Builder r,
            long startNs,
            int attempt) {
        MetadataImage img = quorum.image();
        String clusterId = img.clusterId();
        if (clusterId == null) {
            // This controller's first entry (with the cluster id) has not applied yet: the caller
            // retries (ControllerClient backs off and asks again), so the id has a single writer.
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage("the active controller has not written the cluster id yet; retry")
                            .setLeader(l)
                            .build());
            return;
        }
        if (!req.getClusterId().isEmpty() && !req.getClusterId().equals(clusterId)) {
            answered(CommandResult.ERROR, startNs);
            reply(
                    out,
                    r.setError(ErrorCode.INCONSISTENT_CLUSTER_ID)
                            .setErrorMessage("broker " + req.getBrokerId() + " belongs to cluster '"
                                    + req.getClusterId()
                                    + "' (its meta.properties or cluster.id), but this is cluster '"
                                    + clusterId + "'")
                            .build());
            return;
        }
        BrokerRegistration existing = img.broker(req.getBrokerId());
        if (existing != null && existing.incarnationId().equals(MetadataRecords.uuid(req.getIncarnationId()))) {
            liveness.touch(req.getBrokerId());
            answered(CommandResult.SUCCESS, startNs);
            reply(
                    out,
                    r.setBrokerEpoch(existing.brokerEpoch())
                            .setClusterId(clusterId)
                            .build());
            return;
        }
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(RegisterBrokerRecord.newBuilder()
                .setBrokerId(req.getBrokerId())
                .setIncarnationId(req.getIncarnationId())
                .addAllListeners(req.getListenersList())
                .setRack(req.getRack())
                .setFenced(true)
                .build()));
        // A new incarnation starts fenced: its old partitions lose it as leader and ISR member.
        List<Elections.Change> changes = existing == null
                ? List.of()
                : Fencing.leaveBroker(img, req.getBrokerId(), config.uncleanLeaderElectionEnable());
        records.addAll(Elections.records(changes));
        RaftQuorum.Submitted s = commit(records);
        boolean raced = !changes.isEmpty()
                && (s.error() == ErrorCode.INVALID_UPDATE_VERSION || s.error() == ErrorCode.INELIGIBLE_REPLICA);
        if (raced && attempt + 1 < REGISTER_ATTEMPTS) {
            LOG.info(
                    "Registration of broker {} raced a partition change ({}); building it again",
                    req.getBrokerId(),
                    s.message());
            registerBroker(req, out, r, startNs, attempt + 1);
            return;
        }
        if (s.error() == ErrorCode.NONE) {
            Elections.committed(changes, metrics);
            liveness.touch(req.getBrokerId());
            r.setBrokerEpoch(s.index()).setClusterId(clusterId);
            LOG.info(
                    "BROKER_REGISTERED broker={} epoch={} incarnation={} rack={} previous_epoch={}",
                    req.getBrokerId(),
                    s.index(),
                    MetadataRecords.uuid(req.getIncarnationId()),
                    req.getRack().isEmpty() ? "none" : req.getRack(),
                    existing == null ? -1 : existing.brokerEpoch());
        } else {
            r.setError(s.error()).setErrorMessage(s.message());
            if (s.error() == ErrorCode.NOT_CONTROLLER) {
                r.setLeader(leader());
            }
        }
        answered(result(s.error()), startNs);
        reply(out, r.build());
    }

    private void brokerHeartbeat(BrokerHeartbeatRequest req, StreamObserver<BrokerHeartbeatResponse> out) {
        BrokerHeartbeatResponse.Builder r = BrokerHeartbeatResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        MetadataImage img = quorum.image();
        BrokerRegistration b = img.broker(req.getBrokerId());
        if (b == null) {
            reply(
                    out,
                    r.setError(ErrorCode.BROKER_ID_NOT_REGISTERED)
                            .setErrorMessage("broker " + req.getBrokerId() + " is not registered")
                            .build());
            return;
        }
        if (b.brokerEpoch() != req.getBrokerEpoch()) {
            reply(
                    out,
                    r.setError(ErrorCode.STALE_BROKER_EPOCH)
                            .setErrorMessage(
                                    "broker epoch " + req.getBrokerEpoch() + " is not the current " + b.brokerEpoch())
                            .build());
            return;
        }
        liveness.touch(b.id());
        boolean fenced = b.fenced();
        // A plain heartbeat is liveness (memory only); one that fences or unfences is a command.
        RaftQuorum.Submitted s = null;
        if (req.getWantFence() && !fenced) {
            Fencing.Plan plan = Fencing.fence(img, b, config.uncleanLeaderElectionEnable());
            s = commit(plan.records());
            fenced =
                    s.error() == ErrorCode.NONE || quorum.image().broker(b.id()).fenced();
            if (s.error() == ErrorCode.NONE) {
                Elections.committed(plan.changes(), metrics);
                LOG.info("BROKER_FENCED broker={} epoch={} reason=shutdown", b.id(), b.brokerEpoch());
            }
        } else if (!req.getWantFence() && fenced && req.getMetadataOffset() >= b.brokerEpoch()) {
            Fencing.Plan plan = Fencing.unfence(img, b, config.uncleanLeaderElectionEnable());
            s = commit(plan.records());
            BrokerRegistration now = quorum.image().broker(b.id());
            fenced = s.error() != ErrorCode.NONE && (now == null || now.fenced());
            if (s.error() == ErrorCode.NONE) {
                Elections.committed(plan.changes(), metrics);
            }
        }
        if (s != null) {
            answered(result(s.error()), startNs);
        }
        reply(
                out,
                r.setFenced(fenced).setCommittedOffset(quorum.image().offset()).build());
    }

    // ---- topics ----

    private void createTopics(CreateTopicsRequest req, StreamObserver<CreateTopicsResponse> out) {
        CreateTopicsResponse.Builder r = CreateTopicsResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        CommandResult result = CommandResult.SUCCESS;
        for (var t : req.getTopicsList()) {
            TopicCommands.Plan plan = topics.planCreate(quorum.image(), t);
            TopicResult.Builder tr = TopicResult.newBuilder().setName(t.getName());
            result = worse(result, plan.error());
            if (plan.error() != ErrorCode.NONE) {
                tr.setError(plan.error()).setErrorMessage(plan.message());
            } else if (req.getValidateOnly()) {
                tr.setTopicId(MetadataRecords.uuid(plan.topicId()));
            } else {
                RaftQuorum.Submitted s = commit(plan.records());
                result = worse(result, s.error());
                if (s.error() == ErrorCode.NONE) {
                    tr.setTopicId(MetadataRecords.uuid(plan.topicId()));
                } else if (s.error() == ErrorCode.NOT_CONTROLLER || s.error() == ErrorCode.REQUEST_TIMED_OUT) {
                    // Nothing reported as done: the caller sees the request-level error and retries.
                    ControllerLeader l = leader();
                    answered(result, startNs);
                    reply(
                            out,
                            r.clearTopics()
                                    .setError(s.error())
                                    .setErrorMessage(s.message())
                                    .setLeader(l)
                                    .build());
                    return;
                } else {
                    tr.setError(s.error()).setErrorMessage(s.message());
                }
            }
            r.addTopics(tr);
        }
        answered(result, startNs);
        reply(out, r.build());
    }

    private void deleteTopics(DeleteTopicsRequest req, StreamObserver<DeleteTopicsResponse> out) {
        DeleteTopicsResponse.Builder r = DeleteTopicsResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        CommandResult result = CommandResult.SUCCESS;
        for (String name : req.getNamesList()) {
            TopicResult.Builder tr = TopicResult.newBuilder().setName(name);
            TopicImage t = quorum.image().topic(name);
            if (t == null) {
                tr.setError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).setErrorMessage("no topic '" + name + "'");
                result = worse(result, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
            } else {
                RaftQuorum.Submitted s = commit(List.of(MetadataRecords.of(RemoveTopicRecord.newBuilder()
                        .setTopicId(MetadataRecords.uuid(t.id()))
                        .build())));
                tr.setTopicId(MetadataRecords.uuid(t.id()));
                result = worse(result, s.error());
                if (s.error() != ErrorCode.NONE) {
                    tr.setError(s.error()).setErrorMessage(s.message());
                }
            }
            r.addTopics(tr);
        }
        answered(result, startNs);
        reply(out, r.build());
    }

    private void createPartitions(CreatePartitionsRequest req, StreamObserver<CreatePartitionsResponse> out) {
        CreatePartitionsResponse.Builder r = CreatePartitionsResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        TopicCommands.Plan plan = topics.planCreatePartitions(quorum.image(), req);
        if (plan.error() != ErrorCode.NONE) {
            answered(CommandResult.ERROR, startNs);
            reply(out, r.setError(plan.error()).setErrorMessage(plan.message()).build());
            return;
        }
        RaftQuorum.Submitted s = commit(plan.records());
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
        }
        answered(result(s.error()), startNs);
        reply(out, r.build());
    }

    private void alterPartition(AlterPartitionRequest req, StreamObserver<AlterPartitionResponse> out) {
        AlterPartitionResponse.Builder r = AlterPartitionResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
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
            if (bad != null) {
                code = ErrorCode.INELIGIBLE_REPLICA;
            }
        }
        if (bad != null) {
            answered(CommandResult.ERROR, startNs);
            reply(out, r.setError(code).setErrorMessage(bad).build());
            return;
        }
        RaftQuorum.Submitted s = commit(List.of(MetadataRecords.of(PartitionChangeRecord.newBuilder()
                .setTopicId(req.getTopicId())
                .setPartition(req.getPartition())
                .setExpectedPartitionEpoch(req.getPartitionEpoch())
                .setLeader(p.leader())
                .addAllIsr(req.getNewIsrList())
                .build())));
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
        } else {
            PartitionImage now = quorum.image().partition(topicId, req.getPartition());
            if (now != null) {
                r.setPartition(MetadataRecords.partitionRecord(topicId, now));
            }
        }
        answered(result(s.error()), startNs);
        reply(out, r.build());
    }

    // ---- description ----

    private void describeQuorum(DescribeQuorumRequest req, StreamObserver<DescribeQuorumResponse> out) {
        DescribeQuorumResponse.Builder r = DescribeQuorumResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        try {
            RaftQuorum.QuorumState q = quorum.describe();
            String clusterId = quorum.image().clusterId();
            r.setClusterId(clusterId == null ? "" : clusterId)
                    .setLeaderId(q.leaderId())
                    .setTerm(q.term())
                    .setCommittedIndex(q.committedIndex())
                    .setLastIndex(q.lastIndex())
                    .addAllVoters(q.voters());
        } catch (IOException e) {
            r.setError(ErrorCode.UNKNOWN_SERVER_ERROR).setErrorMessage(e.toString());
        }
        reply(out, r.build());
    }

    private void describeCluster(DescribeClusterRequest req, StreamObserver<DescribeClusterResponse> out) {
        DescribeClusterResponse.Builder r = DescribeClusterResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        MetadataImage img = quorum.image();
        r.setControllerId(config.nodeId())
                .setMetadataOffset(img.offset())
                .setClusterId(img.clusterId() == null ? "" : img.clusterId());
        for (BrokerRegistration b : img.brokers().values()) {
            BrokerDescription.Builder d = BrokerDescription.newBuilder()
                    .setBrokerId(b.id())
                    .setIncarnationId(MetadataRecords.uuid(b.incarnationId()))
                    .setBrokerEpoch(b.brokerEpoch())
                    .setRack(b.rack())
                    .setFenced(b.fenced());
            b.listeners().forEach(l -> d.addListeners(l.toProto()));
            r.addBrokers(d);
        }
        reply(out, r.build());
    }

    // ---- configs ----

    private void incrementalAlterConfigs(
            IncrementalAlterConfigsRequest req, StreamObserver<IncrementalAlterConfigsResponse> out) {
        IncrementalAlterConfigsResponse.Builder r = IncrementalAlterConfigsResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        MetadataImage img = quorum.image();
        TopicCommands.Plan plan = topics.planAlterConfigs(img, req);
        if (plan.error() != ErrorCode.NONE) {
            answered(CommandResult.ERROR, startNs);
            reply(out, r.setError(plan.error()).setErrorMessage(plan.message()).build());
            return;
        }
        if (req.getValidateOnly() || plan.records().isEmpty()) {
            // What the change would give: the plan applied to the image it was made from.
            MetadataImage preview = MetadataApplier.apply(img, img.term(), img.offset(), plan.records())
                    .image();
            answered(CommandResult.SUCCESS, startNs);
            reply(out, r.putAllConfig(preview.topic(plan.topicId()).config()).build());
            return;
        }
        // Switching unclean election on (or removing an override that kept it off under a true
        // default) gives leaderless partitions of the topic a leader in the same entry.
        MetadataImage after = MetadataApplier.apply(img, img.term(), img.offset(), plan.records())
                .image();
        TopicImage afterTopic = after.topic(plan.topicId());
        List<Elections.Change> elections = new ArrayList<>();
        Elections.electLeaderless(
                afterTopic,
                Elections.live(after),
                Elections.uncleanEnabled(afterTopic, config.uncleanLeaderElectionEnable()),
                Elections.Reason.OFFLINE,
                elections);
        List<MetadataRecord> records = new ArrayList<>(plan.records());
        records.addAll(Elections.records(elections));
        RaftQuorum.Submitted s = commit(records);
        if (s.error() != ErrorCode.NONE) {
            r.setError(s.error()).setErrorMessage(s.message());
            if (s.error() == ErrorCode.NOT_CONTROLLER) {
                r.setLeader(leader());
            }
        } else {
            Elections.committed(elections, metrics);
            TopicImage now = quorum.image().topic(plan.topicId());
            if (now != null) {
                r.putAllConfig(now.config());
            }
        }
        answered(result(s.error()), startNs);
        reply(out, r.build());
    }

    private void describeConfigs(DescribeConfigsRequest req, StreamObserver<DescribeConfigsResponse> out) {
        DescribeConfigsResponse.Builder r = DescribeConfigsResponse.newBuilder();
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    r.setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        TopicImage t = quorum.image().topic(req.getTopic());
        if (t == null) {
            r.setError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).setErrorMessage("no topic '" + req.getTopic() + "'");
        } else {
            r.putAllConfig(t.config());
        }
        reply(out, r.build());
    }

    // ---- elections ----

    private void electLeaders(ElectLeadersRequest req, StreamObserver<ElectLeadersResponse> out) {
        if (!quorum.isActive() || closed) {
            ControllerLeader l = leader();
            reply(
                    out,
                    ElectLeadersResponse.newBuilder()
                            .setError(ErrorCode.NOT_CONTROLLER)
                            .setErrorMessage(notController(l))
                            .setLeader(l)
                            .build());
            return;
        }
        long startNs = System.nanoTime();
        LeaderElections.Answer a = elections.electLeaders(req);
        ElectLeadersResponse.Builder r = a.response();
        if (r.getError() == ErrorCode.NOT_CONTROLLER) {
            r.setLeader(leader());
        }
        answered(a.result(), startNs);
        reply(out, r.build());
    }

    // ---- metadata stream ----

    /** Most deltas taken from the state machine at once for one stream. */
    private static final int STREAM_BATCH_DELTAS = 256;

    /** How often a stream waiting for its follower (or for new entries) re-checks leadership, ms. */
    private static final long STREAM_RECHECK_MS = 500;

    private void followMetadata(FollowMetadataRequest req, StreamObserver<MetadataEvent> out) {
        ServerCallStreamObserver<MetadataEvent> obs = (ServerCallStreamObserver<MetadataEvent>) out;
        if (!quorum.isActive() || closed) {
            obs.onNext(MetadataEvent.newBuilder().setNotController(leader()).build());
            obs.onCompleted();
            return;
        }
        // Flow control: events are sent only while the call is ready (gRPC's outbound buffer is below
        // its threshold and the follower's HTTP/2 window is open). A slow follower therefore holds back
        // the stream instead of piling up events in this controller's memory; what it has not read yet
        // stays in the state machine's retained deltas (or becomes one full image once they roll past).
        StreamGate gate = new StreamGate();
        obs.setOnReadyHandler(gate::signal);
        obs.setOnCancelHandler(gate::signal);
        Thread.ofVirtual().name("metadata-stream").start(() -> stream(req.getFromOffset(), obs, gate));
    }

    /** Wakes the stream's thread when gRPC reports the call ready again or cancelled. */
    private static final class StreamGate {
        synchronized void signal() {
            notifyAll();
        }

        /** Waits until the call is ready; false when cancelled or still not ready after {@code maxWaitMs}. */
        synchronized boolean awaitReady(ServerCallStreamObserver<?> obs, long maxWaitMs) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxWaitMs);
            while (!obs.isReady() && !obs.isCancelled()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return !obs.isCancelled();
        }
    }

    private void stream(long fromOffset, ServerCallStreamObserver<MetadataEvent> obs, StreamGate gate) {
        MetadataStateMachine sm = quorum.stateMachine();
        long next = fromOffset;
        try {
            if (next <= 0) {
                next = sendImage(sm, obs);
            }
            while (!obs.isCancelled()) {
                if (!quorum.isActive() || closed) {
                    obs.onNext(MetadataEvent.newBuilder()
                            .setNotController(leader())
                            .build());
                    obs.onCompleted();
                    return;
                }
                if (!gate.awaitReady(obs, STREAM_RECHECK_MS)) {
                    continue;
                }
                List<MetadataDelta> deltas = sm.awaitDeltasAfter(next, STREAM_RECHECK_MS, STREAM_BATCH_DELTAS);
                if (deltas == null) {
                    next = sendImage(sm, obs);
                    continue;
                }
                for (MetadataDelta d : deltas) {
                    if (!obs.isReady()) {
                        break; // the rest after `next` is taken again once the follower has read
                    }
                    obs.onNext(MetadataEvent.newBuilder().setDelta(d.toProto()).build());
                    metrics.deltaBroadcast();
                    next = d.offset();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            obs.onCompleted();
        } catch (RuntimeException e) {
            // Cancelled by the client, or the server is shutting down: the stream is over either way.
            if (!obs.isCancelled()) {
                try {
                    obs.onError(io.grpc.Status.UNAVAILABLE
                            .withDescription(e.toString())
                            .asRuntimeException());
                } catch (RuntimeException ignoredAlreadyClosed) {
                    // the call was closed concurrently
                }
            }
        }
    }

    private long sendImage(MetadataStateMachine sm, ServerCallStreamObserver<MetadataEvent> obs) {
        MetadataImage img = sm.image();
        obs.onNext(MetadataEvent.newBuilder().setImage(img.toSnapshot()).build());
        metrics.deltaBroadcast();
        return img.offset();
    }

    private static <T> void reply(StreamObserver<T> out, T value) {
        out.onNext(value);
        out.onCompleted();
    }
}
