package io.stellflow.controller;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

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
 * <p>Thread-safety: immutable.
 *
 * <p>Errors: {@link IllegalArgumentException} with the bad key and value.
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
        int leaderImbalancePerBrokerPercentage) {

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
                leaderImbalancePerBrokerPercentage);
    }

    /** Reads and validates the keys in the class comment. */
    public static ControllerConfig fromProperties(Properties p) {
        int nodeId = (int) longValue(p, "node.id", -1, 0, Integer.MAX_VALUE, true);
        List<QuorumVoter> voters = QuorumVoter.parseList(p.getProperty("controller.quorum.voters"));
        String listener = p.getProperty("controller.listener", "127.0.0.1:9094").trim();
        int colon = listener.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("controller.listener '" + listener + "' is not host:port");
        }
        String host = listener.substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(listener.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("controller.listener '" + listener + "' is not host:port");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("controller.listener port " + port + " out of range 0..65535");
        }
        return new ControllerConfig(
                nodeId,
                voters,
                host,
                port,
                Path.of(p.getProperty("metadata.log.dir", "/tmp/stellflow-metadata")
                        .trim()),
                longValue(p, "broker.session.timeout.ms", 9000, 100, 3_600_000, false),
                longValue(p, "controller.quorum.election.timeout.ms", 1000, 100, 60_000, false),
                longValue(p, "controller.request.timeout.ms", 5000, 100, 600_000, false),
                longValue(p, "metadata.snapshot.interval.entries", 1000, 1, Long.MAX_VALUE, false),
                (int) longValue(p, "metadata.delta.retained.entries", 10_000, 16, 10_000_000, false),
                clusterId(p.getProperty("cluster.id")),
                booleanValue(p, "unclean.leader.election.enable", false),
                booleanValue(p, "auto.leader.rebalance.enable", true),
                longValue(p, "leader.imbalance.check.interval.seconds", 300, 1, 86_400, false),
                (int) longValue(p, "leader.imbalance.per.broker.percentage", 10, 0, 100, false));
    }

    private static boolean booleanValue(Properties p, String key, boolean def) {
        String v = p.getProperty(key);
        if (v == null) {
            return def;
        }
        String t = v.strip();
        if (t.equalsIgnoreCase("true")) {
            return true;
        }
        if (t.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException(key + "=" + v + " is not true or false");
    }

    private static String clusterId(String raw) {
        if (raw == null) {
            return null;
        }
        if (raw.isBlank()) {
            throw new IllegalArgumentException("cluster.id must not be blank");
        }
        return raw.trim();
    }

    private static long longValue(Properties p, String key, long def, long min, long max, boolean required) {
        String v = p.getProperty(key);
        if (v == null) {
            if (required) {
                throw new IllegalArgumentException(key + " is required");
            }
            return def;
        }
        long x;
        try {
            x = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + " is not a number");
        }
        if (x < min || x > max) {
            throw new IllegalArgumentException(key + "=" + v + " is out of range " + min + ".." + max);
        }
        return x;
    }

    /** This node's voter entry. */
    public QuorumVoter self() {
        return voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow();
    }
}
