package io.stellflow.controller.telemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.server.common.telemetry.Instrument;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.util.concurrent.atomic.LongAdder;

/**
 * The controller's {@link ControllerMetrics} hooks on the OpenTelemetry SDK: every instrument of
 * {@link ControllerInstruments} with {@code node.id} (and {@code result} on the command count and
 * latency), registered once at construction.
 *
 * <p>Cost per hook call: counters are {@link LongAdder}s read by observable counters at collection
 * time; gauges are volatile fields read by observable gauges; latencies are recorded on histograms
 * (explicit ms buckets of {@link Instrument#LATENCY_BUCKETS_MS}) with attribute sets built at
 * construction. No lock and no allocation of ours per call.
 *
 * <p>Every series exists from the first collection: the counters report 0 for each {@code result}
 * until something happens, the unclean election count stays 0 until an unclean election commits, and the
 * gauges report 0 until the controller sets them.
 *
 * <p>Hosted by the broker's {@code BrokerTelemetry.controllerMetrics()} in combined mode (the broker's
 * meter provider and endpoint) and by {@link io.stellflow.controller.node.ControllerNode} for {@code
 * process.roles=controller}.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class ControllerTelemetry implements ControllerMetrics, AutoCloseable {
    /** Instrumentation scope of the controller instruments. */
    public static final String SCOPE = "io.stellflow.controller";

    static final AttributeKey<Long> NODE_ID = AttributeKey.longKey("node.id");
    static final AttributeKey<String> RESULT = AttributeKey.stringKey("result");

    private static final double NANOS_PER_MS = 1_000_000.0;
    private static final CommandResult[] RESULTS = CommandResult.values();

    private final InstrumentCallbacks callbacks;
    private final Attributes node;
    private final Attributes[] resultAttrs = new Attributes[RESULTS.length];

    private volatile long active;
    private volatile long epoch;
    private volatile long registeredBrokers;
    private volatile long fencedBrokers;

    private final LongAdder elections = new LongAdder();
    private final LongAdder[] commands = new LongAdder[RESULTS.length];
    private final LongAdder deltasSent = new LongAdder();
    private final LongAdder heartbeatTimeouts = new LongAdder();
    private final LongAdder partitionChanges = new LongAdder();
    private final LongAdder uncleanElections = new LongAdder();

    private final DoubleHistogram commandLatency;
    private final DoubleHistogram appendLatency;
    private final DoubleHistogram replayLatency;

    /**
     * Registers every controller instrument.
     *
     * @param meter where instruments are created (a no-op meter exports nothing)
     * @param nodeId the controller's {@code node.id}
     */
    public ControllerTelemetry(Meter meter, int nodeId) {
        this.callbacks = new InstrumentCallbacks(meter);
        this.node = Attributes.of(NODE_ID, (long) nodeId);
        for (CommandResult r : RESULTS) {
            resultAttrs[r.ordinal()] = Attributes.of(NODE_ID, (long) nodeId, RESULT, r.label());
            commands[r.ordinal()] = new LongAdder();
        }
        callbacks.gauge(ControllerInstruments.ACTIVE, m -> m.record(active, node));
        callbacks.gauge(ControllerInstruments.EPOCH, m -> m.record(epoch, node));
        callbacks.gauge(ControllerInstruments.BROKER_REGISTERED_COUNT, m -> m.record(registeredBrokers, node));
        callbacks.gauge(ControllerInstruments.BROKER_FENCED_COUNT, m -> m.record(fencedBrokers, node));
        counter(ControllerInstruments.ELECTION_COUNT, elections);
        callbacks.counter(ControllerInstruments.COMMAND_COUNT, m -> {
            for (CommandResult r : RESULTS) {
                m.record(commands[r.ordinal()].sum(), resultAttrs[r.ordinal()]);
            }
        });
        counter(ControllerInstruments.DELTA_BROADCAST_COUNT, deltasSent);
        counter(ControllerInstruments.HEARTBEAT_TIMEOUT_COUNT, heartbeatTimeouts);
        counter(ControllerInstruments.ASSIGNMENT_CHANGE_COUNT, partitionChanges);
        counter(ControllerInstruments.UNCLEAN_ELECTION_COUNT, uncleanElections);
        commandLatency = ControllerInstruments.COMMAND_LATENCY.latencyHistogram(meter);
        appendLatency = ControllerInstruments.LOG_APPEND_LATENCY.latencyHistogram(meter);
        replayLatency = ControllerInstruments.LOG_REPLAY_LATENCY.latencyHistogram(meter);
    }

    @Override
    public void active(boolean isActive) {
        active = isActive ? 1 : 0;
    }

    @Override
    public void electionWon() {
        elections.increment();
    }

    @Override
    public void epoch(long term) {
        epoch = term;
    }

    @Override
    public void command(CommandResult result, long latencyNs) {
        int r = result.ordinal();
        commands[r].increment();
        commandLatency.record(latencyNs / NANOS_PER_MS, resultAttrs[r]);
    }

    @Override
    public void logAppend(long latencyNs) {
        appendLatency.record(latencyNs / NANOS_PER_MS, node);
    }

    @Override
    public void replay(long latencyNs) {
        replayLatency.record(latencyNs / NANOS_PER_MS, node);
    }

    @Override
    public void deltaBroadcast() {
        deltasSent.increment();
    }

    @Override
    public void brokers(int registered, int fenced) {
        registeredBrokers = registered;
        fencedBrokers = fenced;
    }

    @Override
    public void heartbeatTimeout() {
        heartbeatTimeouts.increment();
    }

    @Override
    public void partitionChanges(int count) {
        partitionChanges.add(count);
    }

    @Override
    public void uncleanElection() {
        uncleanElections.increment();
    }

    /** Stops the callbacks (the meter provider is closed by its owner). Idempotent. */
    @Override
    public void close() {
        callbacks.close();
    }

    /** A counter of one series ({@code node.id}) read from {@code adder}. */
    private void counter(Instrument i, LongAdder adder) {
        callbacks.counter(i, m -> m.record(adder.sum(), node));
    }
}
