package io.stellflow.controller;

/**
 * Hooks for the controller metrics of {@code spec/metrics.md} ("Controller"). The controller calls
 * them; the broker's telemetry wires an implementation onto the OpenTelemetry SDK (attribute
 * {@code node.id} is the implementation's to add). Gauges are reported by value on change.
 *
 * <p>Thread-safety: implementations must accept calls from any thread (Ratis apply thread, gRPC
 * threads, the heartbeat checker).
 */
public interface ControllerMetrics {
    /** No-op implementation. */
    ControllerMetrics NOOP = new ControllerMetrics() {};

    /** {@code stellflow.controller.active}: 1 while this node is the active (leader) controller. */
    default void active(boolean active) {}

    /** {@code stellflow.controller.election.count}: this node observed a new Raft leader. */
    default void electionObserved() {}

    /** {@code stellflow.controller.epoch}: the current Raft term. */
    default void epoch(long term) {}

    /**
     * {@code stellflow.controller.command.count} and {@code .command.latency}.
     *
     * @param result {@code success}, {@code error} or {@code timeout}
     * @param latencyMs submit-to-answer time
     */
    default void command(String result, double latencyMs) {}

    /** {@code stellflow.metadata.log.append.latency}: submit-to-commit time of one entry. */
    default void logAppend(double latencyMs) {}

    /** {@code stellflow.metadata.log.replay.latency}: time to load a snapshot at start or install. */
    default void replay(double latencyMs) {}

    /** {@code stellflow.metadata.delta.broadcast.count}: one delta sent to one follower stream. */
    default void deltaBroadcast() {}

    /** {@code stellflow.broker.registered.count} and {@code stellflow.broker.fenced.count}. */
    default void brokers(int registered, int fenced) {}

    /** {@code stellflow.broker.heartbeat.timeout.count}. */
    default void heartbeatTimeout() {}

    /** {@code stellflow.partition.assignment.change.count}: one partition's leader or ISR changed. */
    default void partitionChange() {}

    /** {@code stellflow.unclean.election.count} (never today: unclean election is off). */
    default void uncleanElection() {}
}
