package io.stellflow.broker.config;

import static io.stellflow.server.common.config.ConfigValues.bool;
import static io.stellflow.server.common.config.ConfigValues.longValue;

import io.stellflow.controller.ControllerConfig;
import io.stellflow.server.common.config.ConfigException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * How a Stellflow process takes part in a cluster: its {@code process.roles}, its node id, where the
 * controllers are and (for a controller) the controller settings.
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>Key</th><th>Default</th><th>Rule</th></tr>
 *   <tr><td>process.roles</td><td>broker,controller</td><td>{@code broker}, {@code controller} or
 *       {@code broker,controller} (combined mode, the single-node default)</td></tr>
 *   <tr><td>node.id</td><td>broker.id</td><td>&gt;= 0; when both are set they must be equal</td></tr>
 *   <tr><td>controller.quorum.voters</td><td>combined mode only: one voter
 *       {@code <node.id>@127.0.0.1:<listener port + 1>} (when the listener port is 0: a free port
 *       below the ephemeral range, replaced at start if taken by then)</td>
 *       <td>{@code id@host:raftPort,...}, 1, 3 or 5 voters</td></tr>
 *   <tr><td>controller.listener</td><td>with the implicit one voter: {@code 127.0.0.1:<listener port
 *       + 2>} (ephemeral when the listener port is 0); otherwise 127.0.0.1:9094</td><td>host:port of the
 *       gRPC control plane</td></tr>
 *   <tr><td>controller.quorum.bootstrap.servers</td><td>combined mode: this node's control plane</td>
 *       <td>control-plane host:port list; required for {@code process.roles=broker}</td></tr>
 *   <tr><td>metadata.log.dir</td><td>{@code <first log dir>-metadata} (a sibling, never inside
 *       {@code log.dirs})</td><td>controller storage</td></tr>
 *   <tr><td>broker.heartbeat.interval.ms</td><td>2000</td><td>10..60000, well below the
 *       controllers' {@code broker.session.timeout.ms}</td></tr>
 *   <tr><td>broker.rack</td><td>none</td><td>rack id for rack-aware placement</td></tr>
 *   <tr><td>default.replication.factor</td><td>1</td><td>1..32767, for CreateTopic without a
 *       replication factor and for auto-created topics</td></tr>
 * </table>
 * The controller keys of {@link ControllerConfig} ({@code broker.session.timeout.ms},
 * {@code controller.quorum.election.timeout.ms}, {@code controller.request.timeout.ms},
 * {@code metadata.snapshot.interval.entries}, {@code metadata.delta.retained.entries}) are read by
 * {@link ControllerConfig#forNode} when this process is a controller.
 *
 * <p>Removed: {@code metadata.local} (a single broker without any controller) is refused when
 * {@code true}, since a broker now always runs with a controller; {@code false}, its old default,
 * is an unknown key like any other (a warning at start).
 *
 * <p>Thread-safety: immutable.
 *
 * @param roles the roles, never empty
 * @param nodeId {@code node.id}
 * @param controllerBootstrapServers control-plane endpoints the broker talks to, or null in combined
 *     mode when unset (then the embedded controller's bound endpoint)
 * @param heartbeatIntervalMs {@code broker.heartbeat.interval.ms}
 * @param rack {@code broker.rack}, empty when none
 * @param defaultReplicationFactor {@code default.replication.factor}
 * @param controller the controller settings, or null when this process is not a controller
 * @param raftPortPicked whether the controller's Raft port was picked here (a one-node quorum with
 *     no {@code controller.quorum.voters} and no listener port + 1 to use: listener port 0, 65534 or
 *     65535, or no data-plane listener), so another free port
 *     may replace it when it is taken before the Raft server binds it ({@link
 *     ControllerConfig#withPickedRaftPort})
 */
public record ClusterConfig(
        Set<ProcessRole> roles,
        int nodeId,
        String controllerBootstrapServers,
        long heartbeatIntervalMs,
        String rack,
        int defaultReplicationFactor,
        ControllerConfig controller,
        boolean raftPortPicked) {

    /** A role of {@code process.roles}. */
    public enum ProcessRole {
        BROKER,
        CONTROLLER
    }

    /** Keys read here (besides those {@link ControllerConfig} reads). */
    public static final Set<String> KEYS = Set.of(
            "process.roles",
            "node.id",
            "controller.quorum.voters",
            "controller.listener",
            "controller.quorum.bootstrap.servers",
            "metadata.log.dir",
            "broker.heartbeat.interval.ms",
            "broker.rack",
            "default.replication.factor",
            "broker.session.timeout.ms",
            "controller.quorum.election.timeout.ms",
            "controller.request.timeout.ms",
            "metadata.snapshot.interval.entries",
            "metadata.delta.retained.entries");

    public ClusterConfig {
        roles = Set.copyOf(roles);
    }

    /** Whether this process serves the data plane. */
    public boolean isBroker() {
        return roles.contains(ProcessRole.BROKER);
    }

    /** Whether this process hosts a controller (a Ratis voter and the control plane). */
    public boolean isController() {
        return roles.contains(ProcessRole.CONTROLLER);
    }

    /**
     * Reads the cluster keys.
     *
     * @param brokerId {@code broker.id} as read (or null when absent)
     * @param listenerPort the data-plane listener port (for the single-node defaults)
     * @param firstLogDir the first {@code log.dirs} entry (for the default {@code metadata.log.dir})
     * @throws ConfigException naming the bad key
     */
    static ClusterConfig parse(Properties props, Integer brokerId, int listenerPort, Path firstLogDir) {
        Set<ProcessRole> roles = parseRoles(props.getProperty("process.roles", "broker,controller"));
        int nodeId;
        String rawNode = props.getProperty("node.id");
        if (rawNode != null) {
            try {
                nodeId = Integer.parseInt(rawNode.trim());
            } catch (NumberFormatException e) {
                throw new ConfigException("node.id", rawNode, "not an integer");
            }
            if (nodeId < 0) {
                throw new ConfigException("node.id", rawNode, "must be >= 0");
            }
            if (brokerId != null && brokerId != nodeId) {
                throw new ConfigException("node.id", rawNode, "differs from broker.id " + brokerId);
            }
        } else {
            nodeId = brokerId == null ? 0 : brokerId;
        }
        if (bool(props, "metadata.local", false)) {
            throw new ConfigException(
                    "metadata.local",
                    props.getProperty("metadata.local"),
                    "removed: every broker runs with a controller; for a single node leave process.roles unset"
                            + " (broker,controller: combined mode)");
        }
        String bootstrap = props.getProperty("controller.quorum.bootstrap.servers");
        if (bootstrap != null && bootstrap.isBlank()) {
            throw new ConfigException("controller.quorum.bootstrap.servers", bootstrap, "must not be blank");
        }
        if (!roles.contains(ProcessRole.CONTROLLER) && bootstrap == null) {
            throw new ConfigException(
                    "controller.quorum.bootstrap.servers", null, "required when process.roles=broker");
        }
        long heartbeatMs = longValue(props, "broker.heartbeat.interval.ms", 2000, 10, 60_000);
        String rack = props.getProperty("broker.rack", "").trim();
        int rf = (int) longValue(props, "default.replication.factor", 1, 1, Short.MAX_VALUE);
        ControllerConfig controller = null;
        boolean raftPortPicked = false;
        if (roles.contains(ProcessRole.CONTROLLER)) {
            controller = ControllerConfig.forNode(props, nodeId, listenerPort, firstLogDir);
            raftPortPicked = controller.raftPortPicked();
        }
        return new ClusterConfig(
                roles,
                nodeId,
                bootstrap == null ? null : bootstrap.trim(),
                heartbeatMs,
                rack,
                rf,
                controller,
                raftPortPicked);
    }

    private static Set<ProcessRole> parseRoles(String raw) {
        EnumSet<ProcessRole> roles = EnumSet.noneOf(ProcessRole.class);
        for (String part : raw.split(",")) {
            String r = part.trim().toLowerCase(Locale.ROOT);
            switch (r) {
                case "broker" -> roles.add(ProcessRole.BROKER);
                case "controller" -> roles.add(ProcessRole.CONTROLLER);
                default ->
                    throw new ConfigException("process.roles", raw, "must be broker, controller or broker,controller");
            }
        }
        return roles;
    }
}
