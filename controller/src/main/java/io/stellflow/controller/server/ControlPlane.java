package io.stellflow.controller.server;

import io.grpc.ServerServiceDefinition;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerRpc;
import io.stellflow.controller.proto.AllocateProducerIdsResponse;
import io.stellflow.controller.proto.AlterPartitionResponse;
import io.stellflow.controller.proto.BrokerHeartbeatResponse;
import io.stellflow.controller.proto.CreatePartitionsResponse;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ElectLeadersResponse;
import io.stellflow.controller.proto.IncrementalAlterConfigsResponse;
import io.stellflow.controller.proto.MetadataEvent;
import io.stellflow.controller.proto.RegisterBrokerResponse;
import java.util.function.LongSupplier;

/**
 * The gRPC control plane of one controller, assembled from one class per RPC family behind one
 * not-controller guard ({@link NotControllerGuard}: requests are answered only while this node is the
 * active controller, otherwise NOT_CONTROLLER naming the leader):
 *
 * <ul>
 *   <li>{@link BrokerRpcs}: RegisterBroker, BrokerHeartbeat (broker lifecycle, with {@link
 *       BrokerLiveness} and {@link Fencing});
 *   <li>{@link TopicRpcs}: CreateTopics, DeleteTopics, CreatePartitions;
 *   <li>{@link PartitionRpcs}: AlterPartition, ElectLeaders (leader and ISR changes, with {@link
 *       LeaderElections});
 *   <li>{@link ConfigRpcs}: IncrementalAlterConfigs, DescribeConfigs;
 *   <li>{@link ProducerIdRpcs}: AllocateProducerIds (blocks of producer ids for brokers);
 *   <li>{@link DescribeRpcs}: DescribeQuorum, DescribeCluster;
 *   <li>{@link MetadataStream}: FollowMetadata.
 * </ul>
 *
 * <p>Every change is validated against the current image first (bad input writes nothing) and then
 * committed through the quorum, whose state machine re-checks it deterministically; how a change
 * request counts as a command in {@link ControllerMetrics} is in {@link Commands}.
 *
 * <p>Leader elections: fencing, unfencing and re-registration elect in the same entry as the broker's
 * change ({@link Fencing}); ElectLeaders (PREFERRED or UNCLEAN) on request, offline partitions and
 * automatic rebalancing from the controller's timer ({@link LeaderElections}). Rules: {@link Elections}.
 *
 * <p>Thread-safety: handlers run on gRPC executor threads concurrently, the timer entry points on the
 * controller's timer thread; state lives in the image (immutable), in {@link BrokerLiveness}
 * (concurrent), in {@link StorageReports} (the failed replicas and log dir state each broker's heartbeats
 * report; concurrent) and in the Raft log.
 */
public final class ControlPlane {
    private final ControllerConfig config;
    private final Quorum quorum;
    private final BrokerLiveness liveness;
    /** The brokers' failed replicas and log dir state, from their heartbeats (memory only). */
    private final StorageReports storage = new StorageReports();

    private final NotControllerGuard guard;
    private final LeaderElections elections;
    private final BrokerRpcs brokers;
    private final TopicRpcs topics;
    private final PartitionRpcs partitions;
    private final ConfigRpcs configs;
    private final ProducerIdRpcs producerIds;
    private final DescribeRpcs describe;
    private final MetadataStream stream;

    /** Wires the service; {@link ControllerServer} owns its lifecycle. */
    public ControlPlane(ControllerConfig config, RaftQuorum quorum, ControllerMetrics metrics) {
        this(config, quorum, quorum.stateMachine(), metrics, System::nanoTime);
    }

    /**
     * @param stateMachine the quorum's state machine, whose retained deltas FollowMetadata streams
     * @param nanoClock monotonic nanoseconds for broker sessions and command latencies
     */
    ControlPlane(
            ControllerConfig config,
            Quorum quorum,
            MetadataStateMachine stateMachine,
            ControllerMetrics metrics,
            LongSupplier nanoClock) {
        this.config = config;
        this.quorum = quorum;
        boolean uncleanDefault = config.uncleanLeaderElectionEnable();
        this.liveness =
                new BrokerLiveness(config.brokerSessionTimeoutMs(), nanoClock, metrics, uncleanDefault, storage);
        this.guard = new NotControllerGuard(config.nodeId(), quorum);
        this.elections = new LeaderElections(config, quorum, metrics, storage);
        Commands commands = new Commands(quorum, config.requestTimeoutMs(), metrics, nanoClock);
        this.brokers = new BrokerRpcs(quorum, liveness, guard, commands, uncleanDefault, storage);
        this.topics = new TopicRpcs(quorum, guard, commands, storage);
        this.partitions = new PartitionRpcs(quorum, guard, commands, elections, storage);
        this.configs = new ConfigRpcs(quorum, guard, commands, uncleanDefault, storage);
        this.producerIds = new ProducerIdRpcs(quorum, commands);
        this.describe = new DescribeRpcs(config.nodeId(), quorum);
        this.stream = new MetadataStream(stateMachine, guard, metrics);
    }

    /** Stops answering (NOT_CONTROLLER) and ends metadata streams. */
    public void close() {
        guard.close();
    }

    /**
     * Leadership changed (to this node or another): requests wait, answered NOT_CONTROLLER, until
     * {@link #activated}.
     */
    public void leadershipChanged() {
        guard.activationPending(true);
    }

    /**
     * This node's first command as the active controller is committed (the image names it): requests
     * are served from now on.
     */
    public void activated() {
        guard.activationPending(false);
    }

    /** Whether requests wait for this node's activation (since the last leadership change). */
    public boolean activationPending() {
        return guard.activationPending();
    }

    /** This node just became the active controller: every broker's session restarts now. */
    public void becameActive() {
        liveness.reset();
        storage.reset();
    }

    /** Fences brokers whose session expired (no-op unless active). */
    public void checkLiveness() {
        if (!guard.isClosed()) {
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
        return guard.isClosed() ? 0 : elections.electOfflinePartitions();
    }

    /**
     * One automatic leader rebalance check; see {@link LeaderElections#rebalanceLeaders}. No-op
     * unless active. Called by the controller's timer every {@code leader.imbalance.check.interval.seconds}.
     *
     * @return the partitions whose leader moved back to the preferred replica
     */
    public int rebalanceLeaders() {
        return guard.isClosed() ? 0 : elections.rebalanceLeaders();
    }

    /** The gRPC service definition to add to a server: every method behind the guard. */
    public ServerServiceDefinition definition() {
        NotControllerGuard g = guard;
        return ServerServiceDefinition.builder(ControllerRpc.SERVICE)
                .addMethod(g.unary(
                        ControllerRpc.REGISTER_BROKER,
                        brokers::register,
                        (e, m, l) -> RegisterBrokerResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.BROKER_HEARTBEAT,
                        brokers::heartbeat,
                        (e, m, l) -> BrokerHeartbeatResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.CREATE_TOPICS,
                        topics::createTopics,
                        (e, m, l) -> CreateTopicsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.DELETE_TOPICS,
                        topics::deleteTopics,
                        (e, m, l) -> DeleteTopicsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.CREATE_PARTITIONS,
                        topics::createPartitions,
                        (e, m, l) -> CreatePartitionsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.ALTER_PARTITION,
                        partitions::alterPartition,
                        (e, m, l) -> AlterPartitionResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.DESCRIBE_QUORUM,
                        describe::describeQuorum,
                        (e, m, l) -> DescribeQuorumResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.DESCRIBE_CLUSTER,
                        describe::describeCluster,
                        (e, m, l) -> DescribeClusterResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.INCREMENTAL_ALTER_CONFIGS,
                        configs::incrementalAlterConfigs,
                        (e, m, l) -> IncrementalAlterConfigsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.DESCRIBE_CONFIGS,
                        configs::describeConfigs,
                        (e, m, l) -> DescribeConfigsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.ELECT_LEADERS,
                        partitions::electLeaders,
                        (e, m, l) -> ElectLeadersResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.unary(
                        ControllerRpc.ALLOCATE_PRODUCER_IDS,
                        producerIds::allocate,
                        (e, m, l) -> AllocateProducerIdsResponse.newBuilder()
                                .setError(e)
                                .setErrorMessage(m)
                                .setLeader(l)
                                .build()))
                .addMethod(g.serverStreaming(
                        ControllerRpc.FOLLOW_METADATA,
                        stream::follow,
                        l -> MetadataEvent.newBuilder().setNotController(l).build()))
                .build();
    }
}
