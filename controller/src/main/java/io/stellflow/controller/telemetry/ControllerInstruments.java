package io.stellflow.controller.telemetry;

import static io.stellflow.server.common.telemetry.Instrument.counter;
import static io.stellflow.server.common.telemetry.Instrument.gauge;
import static io.stellflow.server.common.telemetry.Instrument.histogram;

import io.stellflow.server.common.telemetry.Instrument;
import java.util.List;

/**
 * The "Controller" instruments of the metrics dictionary ({@code docs/spec/metrics.md}), all
 * thirteen, with their exact names, units and attribute keys; {@link ControllerTelemetry} registers
 * them.
 *
 * <p>Thread-safety: constants only.
 */
public final class ControllerInstruments {
    private ControllerInstruments() {}

    public static final Instrument ACTIVE = gauge("stellflow.controller.active", "1", "node.id");
    public static final Instrument ELECTION_COUNT =
            counter("stellflow.controller.election.count", "{event}", "node.id");
    public static final Instrument EPOCH = gauge("stellflow.controller.epoch", "1", "node.id");
    public static final Instrument COMMAND_COUNT =
            counter("stellflow.controller.command.count", "{command}", "node.id", "result");
    public static final Instrument COMMAND_LATENCY =
            histogram("stellflow.controller.command.latency", "ms", "node.id", "result");
    public static final Instrument LOG_APPEND_LATENCY =
            histogram("stellflow.metadata.log.append.latency", "ms", "node.id");
    public static final Instrument LOG_REPLAY_LATENCY =
            histogram("stellflow.metadata.log.replay.latency", "ms", "node.id");
    public static final Instrument DELTA_BROADCAST_COUNT =
            counter("stellflow.metadata.delta.broadcast.count", "{event}", "node.id");
    public static final Instrument BROKER_REGISTERED_COUNT =
            gauge("stellflow.broker.registered.count", "{broker}", "node.id");
    public static final Instrument BROKER_FENCED_COUNT = gauge("stellflow.broker.fenced.count", "{broker}", "node.id");
    public static final Instrument HEARTBEAT_TIMEOUT_COUNT =
            counter("stellflow.broker.heartbeat.timeout.count", "{event}", "node.id");
    public static final Instrument ASSIGNMENT_CHANGE_COUNT =
            counter("stellflow.partition.assignment.change.count", "{event}", "node.id");
    public static final Instrument UNCLEAN_ELECTION_COUNT =
            counter("stellflow.unclean.election.count", "{event}", "node.id");

    /** Every instrument a controller registers. */
    public static final List<Instrument> REGISTERED = List.of(
            ACTIVE,
            ELECTION_COUNT,
            EPOCH,
            COMMAND_COUNT,
            COMMAND_LATENCY,
            LOG_APPEND_LATENCY,
            LOG_REPLAY_LATENCY,
            DELTA_BROADCAST_COUNT,
            BROKER_REGISTERED_COUNT,
            BROKER_FENCED_COUNT,
            HEARTBEAT_TIMEOUT_COUNT,
            ASSIGNMENT_CHANGE_COUNT,
            UNCLEAN_ELECTION_COUNT);
}
