package io.stellflow.controller;

import static io.stellflow.server.common.config.ConfigValues.bool;
import static io.stellflow.server.common.config.ConfigValues.intValue;
import static io.stellflow.server.common.config.ConfigValues.longValue;
import static io.stellflow.server.common.config.ConfigValues.requiredLong;

import io.stellflow.server.common.config.ConfigException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * The validated controller configuration, read from Kafka-style properties. Keys not listed here are
 * ignored, so a combined-mode {@code server.properties} (broker and controller keys) can be passed
 * whole.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>node.id</td><td>required</td><td>&gt;= 0, one of the voter ids</td></tr>
 *   <tr><td>controller.quorum.voters</td><td>required</td><td>{@code id@host:raftPort,...}: 1, 3 or 5
 *       voters; the port is the Raft (Ratis) port between controllers</td></tr>
 *   <tr><td>controller.listener</td><td>127.0.0.1:9094</td><td>{@code host:port} of this controller's
 *       gRPC control plane (brokers and tools connect here); port 0 = ephemeral</td></tr>
 *   <tr><td>controller.quorum.bootstrap.servers</td><td>none</td><td>not read by the controller: the
 *       brokers' and tools' list of control-plane {@code host:port}s ({@link ControllerClient})</td></tr>
 *   <tr><td>metadata.log.dir</td><td>/tmp/stellflow-metadata</td><td>controller storage (Raft log,
 *       snapshots); never shared with {@code log.dirs}</td></tr>
 *   <tr><td>broker.session.timeout.ms</td><td>9000</td><td>100..3600000; a broker without heartbeat
 *       this long is fenced</td></tr>
 *   <tr><td>controller.quorum.election.timeout.ms</td><td>1000</td><td>100..60000; Raft election
 *       timeout, randomised in [t, 2t)</td></tr>
 *   <tr><td>controller.request.timeout.ms</td><td>5000</td><td>100..600000; longest wait for a
 *       command to commit before answering REQUEST_TIMED_OUT</td></tr>
 *   <tr><td>metadata.snapshot.interval.entries</td><td>1000</td><td>&gt;= 1; Raft entries between
 *       snapshots (the log before a snapshot is purged)</td></tr>
 *   <tr><td>metadata.delta.retained.entries</td><td>10000</td><td>&gt;= 16; recent committed deltas kept in
 *       memory for FollowMetadata; an older offset gets the full image first</td></tr>
 *   <tr><td>cluster.id</td><td>none: generated</td><td>not blank; the cluster id the first active
 *       controller writes into the metadata log (ignored once the log has one; a differing value is
 *       logged as {@code CLUSTER_ID_MISMATCH}); set the same value on every node, or on none</td></tr>
 *   <tr><td>unclean.leader.election.enable</td><td>false</td><td>true or false; the default of the
 *       topic config of the same name: whether a partition with no live ISR member may elect a live
 *       replica outside the ISR (losing what only the ISR had)</td></tr>
 *   <tr><td>auto.leader.rebalance.enable</td><td>true</td><td>true or false; the active controller
 *       moves leadership back to preferred replicas (first of each assignment) periodically</td></tr>
 *   <tr><td>leader.imbalance.check.interval.seconds</td><td>300</td><td>1..86400; how often it
 *       checks</td></tr>
 *   <tr><td>leader.imbalance.per.broker.percentage</td><td>10</td><td>0..100; a broker's partitions
 *       are rebalanced when more than this percentage of those it is the preferred replica of are led
 *       by another broker</td></tr>
 * </table>
 *
 * The values are read with the servers' one parser ({@code ConfigValues}); {@link #forNode} adds the
 * defaults a node derives from its own data-plane settings when these keys are absent.
 *
 * <p>Thread-safety: immutable.
 *
 * <p>Errors: {@link IllegalArgumentException} with the bad key and value (a {@link ConfigException}
 * for a value that does not parse or is out of range).
 *
 * @param raftPortPicked whether the Raft port was picked by {@link #forNode} (a one-node quorum
 *     without configured voters and without a data-plane listener port to derive it from), so another
 *     free port may replace it when it is taken before the Raft server binds it ({@link
 *     #withPickedRaftPort})
 */
public record ControllerConfig(
        int nodeId,
        List<QuorumVoter> voters,
        String listenerHost,
        int listenerPort,
        Path metadataLogDir,
        long brokerSessionTimeoutMs,
        long electionTimeoutMs,
        long requestTimeoutMs,
        long snapshotIntervalEntries,
        int deltaRetainedEntries,
        String clusterId,
        boolean uncleanLeaderElectionEnable,
        boolean autoLeaderRebalanceEnable,
        long leaderImbalanceCheckIntervalSeconds,
        int leaderImbalancePerBrokerPercentage,
        boolean raftPortPicked) {

    /** Every key {@link #fromProperties} reads. */
    public static final Set<String> KEYS = Set.of(
            "node.id",
            "controller.quorum.voters",
            "controller.listener",
            "metadata.log.dir",
            "broker.session.timeout.ms",
            "controller.quorum.election.timeout.ms",
            "controller.request.timeout.ms",
            "metadata.snapshot.interval.entries",
            "metadata.delta.retained.entries",
            "cluster.id",
            "unclean.leader.election.enable",
            "auto.leader.rebalance.enable",
            "leader.imbalance.check.interval.seconds",
            "leader.imbalance.per.broker.percentage");

    public ControllerConfig {
        voters = List.copyOf(voters);
        if (voters.stream().noneMatch(v -> v.id() == nodeId)) {
            throw new IllegalArgumentException("node.id " + nodeId + " is not in controller.quorum.voters " + voters);
        }
        if (clusterId != null && clusterId.isBlank()) {
            throw new IllegalArgumentException("cluster.id must not be blank");
        }
    }

    /**
     * This configuration with {@code cluster.id} set to {@code id} (combined mode: the id already in
     * the broker's {@code meta.properties} when {@code cluster.id} is not configured).
     */
    public ControllerConfig withClusterId(String id) {
        return with(voters, id);
    }

    /**
     * This configuration of a one-voter quorum with that voter's (this node's) Raft port set to
     * {@code raftPort}; the voter's host stays.
     *
     * @param raftPort 1..65535
     * @throws IllegalStateException when the quorum has more than one voter (their addresses are
     *     shared configuration, not this node's to change)
     * @throws IllegalArgumentException when {@code raftPort} is out of range
     */
    public ControllerConfig withSoleVoterRaftPort(int raftPort) {
        if (raftPort < 1 || raftPort > 65_535) {
            throw new IllegalArgumentException("Raft port " + raftPort + " out of range 1..65535");
        }
        if (voters.size() != 1) {
            throw new IllegalStateException("the quorum has " + voters.size() + " voters: " + voters);
        }
        QuorumVoter self = self();
        return with(List.of(new QuorumVoter(self.id(), self.host(), raftPort)), clusterId);
    }

    /**
     * This configuration with a newly picked free Raft port, for another start attempt after the
     * picked one was taken (between the pick and the bind, any process may take it). Only for {@link
     * #raftPortPicked()} configurations.
     *
     * @throws IllegalStateException when the port was configured, not picked
     * @throws ConfigException when no free port is found
     */
    public ControllerConfig withPickedRaftPort() {
        if (!raftPortPicked) {
            throw new IllegalStateException("the Raft port was configured, not picked");
        }
        return withSoleVoterRaftPort(freePort());
    }

    /** This configuration with {@code voters} and {@code cluster.id} replaced. */
    private ControllerConfig with(List<QuorumVoter> newVoters, String newClusterId) {
        return new ControllerConfig(
                nodeId,
                newVoters,
                listenerHost,
                listenerPort,
                metadataLogDir,
                brokerSessionTimeoutMs,
                electionTimeoutMs,
                requestTimeoutMs,
                snapshotIntervalEntries,
                deltaRetainedEntries,
                newClusterId,
                uncleanLeaderElectionEnable,
                autoLeaderRebalanceEnable,
                leaderImbalanceCheckIntervalSeconds,
                leaderImbalancePerBrokerPercentage,
                raftPortPicked);
    }

    /** Reads and validates the keys in the class comment. */
    public static ControllerConfig fromProperties(Properties p) {
        return fromProperties(p, false);
    }

    /**
     * The controller settings of node {@code nodeId} whose {@code process.roles} include {@code
     * controller}, with the defaults it derives from its data-plane settings:
     *
     * <ul>
     *   <li>without {@code controller.quorum.voters}: one voter {@code <nodeId>@127.0.0.1:<dataPlanePort
     *       + 1>}, and (without {@code controller.listener}) the control plane on {@code
     *       127.0.0.1:<dataPlanePort + 2>}; when {@code dataPlanePort} is 0, 65534 or 65535, a free port
     *       below the ephemeral range ({@link LoopbackPorts}) and an ephemeral control plane, marked
     *       {@link #raftPortPicked()};
     *   <li>without {@code metadata.log.dir}: {@code <firstLogDir>-metadata}, a sibling of the first
     *       data directory (never inside it).
     * </ul>
     *
     * @param props the node's properties ({@code node.id} in them is replaced by {@code nodeId})
     * @param nodeId the node's id as the caller read it ({@code node.id} or {@code broker.id})
     * @param dataPlanePort the node's data-plane listener port, 0 = ephemeral
     * @param firstLogDir the node's first data directory
     * @throws ConfigException naming the bad key
     */
    public static ControllerConfig forNode(Properties props, int nodeId, int dataPlanePort, Path firstLogDir) {
        Properties cp = new Properties();
        cp.putAll(props);
        cp.setProperty("node.id", Integer.toString(nodeId));
        boolean picked = false;
        if (props.getProperty("controller.quorum.voters") == null) {
            picked = !(dataPlanePort > 0 && dataPlanePort < 65_534);
            int raftPort = picked ? freePort() : dataPlanePort + 1;
            cp.setProperty("controller.quorum.voters", nodeId + "@127.0.0.1:" + raftPort);
            if (props.getProperty("controller.listener") == null) {
                int rpcPort = picked ? 0 : dataPlanePort + 2;
                cp.setProperty("controller.listener", "127.0.0.1:" + rpcPort);
            }
        }
        if (props.getProperty("metadata.log.dir") == null) {
            Path abs = firstLogDir.toAbsolutePath().normalize();
            Path sibling = abs.resolveSibling(abs.getFileName() + "-metadata");
            cp.setProperty("metadata.log.dir", sibling.toString());
        }
        try {
            return fromProperties(cp, picked);
        } catch (ConfigException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            // Messages of the parsers start with the key they read ("controller.quorum.voters:
            // duplicate address ..."): name that key and its value, not a made-up one.
            String msg = String.valueOf(e.getMessage());
            int colon = msg.indexOf(':');
            String key = colon > 0 ? msg.substring(0, colon) : null;
            if (key != null && cp.getProperty(key) != null) {
                throw new ConfigException(
                        key, cp.getProperty(key), msg.substring(colon + 1).strip());
            }
            throw new ConfigException("controller", null, msg);
        }
    }

    private static ControllerConfig fromProperties(Properties p, boolean raftPortPicked) {
        int nodeId = (int) requiredLong(p, "node.id", 0, Integer.MAX_VALUE);
        List<QuorumVoter> voters = QuorumVoter.parseList(p.getProperty("controller.quorum.voters"));
        String listener = p.getProperty("controller.listener", "127.0.0.1:9094").trim();
        int colon = listener.lastIndexOf(':');
        if (colon <= 0) {
            throw new ConfigException("controller.listener", listener, "is not host:port");
        }
        String host = listener.substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(listener.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException("controller.listener", listener, "is not host:port");
        }
        if (port < 0 || port > 65535) {
            throw new ConfigException("controller.listener", listener, "port must be in 0..65535");
        }
        return new ControllerConfig(
                nodeId,
                voters,
                host,
                port,
                Path.of(p.getProperty("metadata.log.dir", "/tmp/stellflow-metadata")
                        .trim()),
                longValue(p, "broker.session.timeout.ms", 9000, 100, 3_600_000),
                longValue(p, "controller.quorum.election.timeout.ms", 1000, 100, 60_000),
                longValue(p, "controller.request.timeout.ms", 5000, 100, 600_000),
                longValue(p, "metadata.snapshot.interval.entries", 1000, 1, Long.MAX_VALUE),
                intValue(p, "metadata.delta.retained.entries", 10_000, 16, 10_000_000),
                clusterId(p.getProperty("cluster.id")),
                bool(p, "unclean.leader.election.enable", false),
                bool(p, "auto.leader.rebalance.enable", true),
                longValue(p, "leader.imbalance.check.interval.seconds", 300, 1, 86_400),
                intValue(p, "leader.imbalance.per.broker.percentage", 10, 0, 100),
                raftPortPicked);
    }

    private static String clusterId(String raw) {
        if (raw == null) {
            return null;
        }
        if (raw.isBlank()) {
            throw new ConfigException("cluster.id", raw, "must not be blank");
        }
        return raw.trim();
    }

    /**
     * A free TCP port on 127.0.0.1 below the ephemeral range (the single-node default Raft port when
     * listening on port 0; {@link LoopbackPorts}).
     */
    private static int freePort() {
        try {
            return LoopbackPorts.pick();
        } catch (IOException e) {
            throw new ConfigException("controller.quorum.voters", null, "no free port for the default: " + e);
        }
    }

    /** This node's voter entry. */
    public QuorumVoter self() {
        return voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow();
    }
}
