package io.stellflow.server.common.telemetry;

import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.List;
import java.util.function.Consumer;

/**
 * One row of the metrics dictionary ({@code docs/spec/metrics.md}) as this code registers it: the
 * OpenTelemetry instrument name, its kind, its UCUM unit and the attribute keys it may carry.
 * The broker's ({@code BrokerInstruments}) and the controller's ({@code ControllerInstruments})
 * instrument lists are made of these; their tests compare them with the dictionary.
 *
 * <p>Thread-safety: immutable.
 *
 * @param name dotted instrument name, for example {@code stellflow.request.count}
 * @param kind counter, histogram or gauge (as the dictionary spells them)
 * @param unit UCUM unit, for example {@code ms}, {@code By} or {@code {request}}
 * @param attributes attribute keys in the dictionary's order; {@code topic} and {@code partition}
 *     are added only on diagnostic instruments and are listed in {@link #diagnosticAttributes}
 * @param diagnosticAttributes extra keys exported only with {@code metrics.diagnostic.enabled=true}
 */
public record Instrument(
        String name, Kind kind, String unit, List<String> attributes, List<String> diagnosticAttributes) {

    /** Bucket boundaries of every ms latency histogram: 50 us to 60 s, roughly 1-2.5-5 steps. */
    public static final List<Double> LATENCY_BUCKETS_MS = List.of(
            0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1_000.0, 2_500.0, 5_000.0,
            10_000.0, 30_000.0, 60_000.0);

    /** Instrument kinds of the dictionary. */
    public enum Kind {
        COUNTER,
        HISTOGRAM,
        GAUGE
    }

    /** A counter row. */
    public static Instrument counter(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.COUNTER, unit, List.of(attributes), List.of());
    }

    /** A histogram row. */
    public static Instrument histogram(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.HISTOGRAM, unit, List.of(attributes), List.of());
    }

    /** A gauge row. */
    public static Instrument gauge(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.GAUGE, unit, List.of(attributes), List.of());
    }

    /** This instrument with topic and partition as diagnostic attributes. */
    public Instrument withDiagnosticTopicPartition() {
        return new Instrument(name, kind, unit, attributes, List.of("topic", "partition"));
    }

    /**
     * Registers this counter on {@code meter} as an asynchronous (observable) counter: {@code
     * callback} reports the cumulative values at collection time, so counting on the caller's path is
     * a plain add on a {@code LongAdder} or atomic.
     *
     * @return the registration; closing it stops the callback
     * @throws IllegalStateException when this is not a counter
     */
    public AutoCloseable observeCounter(Meter meter, Consumer<ObservableLongMeasurement> callback) {
        requireKind(Kind.COUNTER);
        return meter.counterBuilder(name).setUnit(unit).buildWithCallback(callback);
    }

    /**
     * Registers this gauge on {@code meter}; {@code callback} reports the current values at collection
     * time.
     *
     * @return the registration; closing it stops the callback
     * @throws IllegalStateException when this is not a gauge
     */
    public AutoCloseable observeGauge(Meter meter, Consumer<ObservableLongMeasurement> callback) {
        requireKind(Kind.GAUGE);
        return meter.gaugeBuilder(name).ofLongs().setUnit(unit).buildWithCallback(callback);
    }

    /**
     * Builds this histogram on {@code meter} with the explicit ms buckets of {@link
     * #LATENCY_BUCKETS_MS}.
     *
     * @throws IllegalStateException when this is not a histogram in {@code ms}
     */
    public DoubleHistogram latencyHistogram(Meter meter) {
        requireKind(Kind.HISTOGRAM);
        if (!unit.equals("ms")) {
            throw new IllegalStateException(name + " is in " + unit + ", not ms");
        }
        return meter.histogramBuilder(name)
                .setUnit(unit)
                .setExplicitBucketBoundariesAdvice(LATENCY_BUCKETS_MS)
                .build();
    }

    private void requireKind(Kind expected) {
        if (kind != expected) {
            throw new IllegalStateException(name + " is a " + kind + ", not a " + expected);
        }
    }
}
