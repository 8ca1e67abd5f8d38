package io.stellflow.server.common.telemetry;

import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The observable (callback) instruments one owner (the broker's {@code BrokerMetrics}, the controller's
 * {@code ControllerTelemetry})
 * registered on a meter, so that they are stopped together: after {@link #close} the SDK no longer
 * calls them and their series disappear. The meter provider itself is closed by its own owner.
 *
 * <p>Thread-safety: register from the owner's constructor (or start); {@link #close} from any thread,
 * idempotent.
 */
public final class InstrumentCallbacks {
    private final Meter meter;
    private final List<AutoCloseable> registrations = new ArrayList<>();

    /** Callbacks to register on {@code meter}. */
    public InstrumentCallbacks(Meter meter) {
        this.meter = meter;
    }

    /** Registers counter {@code i}; {@code callback} reports its cumulative values at collection time. */
    public synchronized void counter(Instrument i, Consumer<ObservableLongMeasurement> callback) {
        registrations.add(i.observeCounter(meter, callback));
    }

    /** Registers gauge {@code i}; {@code callback} reports its current values at collection time. */
    public synchronized void gauge(Instrument i, Consumer<ObservableLongMeasurement> callback) {
        registrations.add(i.observeGauge(meter, callback));
    }

    /** Stops every callback registered here. Idempotent. */
    public synchronized void close() {
        for (AutoCloseable r : registrations) {
            try {
                r.close();
            } catch (Exception e) {
                // The SDK's observable instruments do not throw on close; nothing to recover.
                throw new IllegalStateException("closing an instrument callback failed", e);
            }
        }
        registrations.clear();
    }
}
