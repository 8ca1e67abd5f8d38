package io.stellflow.broker.telemetry;

/**
 * Hook point for the "Controller" instruments of {@code spec/metrics.md}, for the controller module to
 * call. Nothing implements it yet, so no controller series is exported; the implementation registers
 * {@code stellflow.controller.active} (1 on the active controller, else 0), {@code
 * stellflow.controller.election.count}, {@code stellflow.controller.epoch}, {@code
 * stellflow.controller.command.count} / {@code .latency} (node.id, result), {@code
 * stellflow.metadata.log.append.latency}, {@code stellflow.metadata.log.replay.latency}, {@code
 * stellflow.metadata.delta.broadcast.count}, {@code stellflow.broker.registered.count}, {@code
 * stellflow.broker.fenced.count}, {@code stellflow.broker.heartbeat.timeout.count}, {@code
 * stellflow.partition.assignment.change.count} and {@code stellflow.unclean.election.count}, and logs
 * {@link LogEvents#CONTROLLER_ELECTED}, {@link LogEvents#BROKER_REGISTERED} and {@link
 * LogEvents#BROKER_FENCED}.
 *
 * <p>Contract: called on the controller's state machine thread once per command or event.
 */
public interface ControllerMetrics {
    /** Does nothing. */
    ControllerMetrics NOOP = new ControllerMetrics() {};

    /** This node won a controller election at {@code epoch}. */
    default void elected(long epoch) {}

    /** A metadata command finished after {@code nanos}; {@code result} as {@link BrokerMetrics#result}. */
    default void command(int result, long nanos) {}

    /** A broker's heartbeat timed out. */
    default void heartbeatTimedOut() {}
}
