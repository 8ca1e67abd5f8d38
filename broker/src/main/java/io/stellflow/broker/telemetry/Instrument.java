package io.stellflow.broker.telemetry;

import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.List;
import java.util.function.Consumer;

/**
 * One row of the metrics dictionary ({@code spec/metrics.md}) as this code registers it: the
 * OpenTelemetry instrument name, its kind, its UCUM unit and the attribute keys it may carry.
 * {@link BrokerInstruments} and the client's instrument list are made of these; a test compares
 * them with the dictionary.
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

    /** Instrument kinds of the dictionary. */
    public enum Kind {
        COUNTER,
        HISTOGRAM,
        GAUGE
    }

    static Instrument counter(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.COUNTER, unit, List.of(attributes), List.of());
    }

    static Instrument histogram(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.HISTOGRAM, unit, List.of(attributes), List.of());
    }

    static Instrument gauge(String name, String unit, String... attributes) {
        return new Instrument(name, Kind.GAUGE, unit, List.of(attributes), List.of());
    }

    /** This instrument with topic and partition as diagnostic attributes. */
    Instrument withDiagnosticTopicPartition() {
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
    AutoCloseable observeCounter(Meter meter, Consumer<ObservableLongMeasurement> callback) {
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
    AutoCloseable observeGauge(Meter meter, Consumer<ObservableLongMeasurement> callback) {
        requireKind(Kind.GAUGE);
        return meter.gaugeBuilder(name).ofLongs().setUnit(unit).buildWithCallback(callback);
    }

    /**
     * Builds this histogram on {@code meter} with the explicit ms buckets of {@link
     * BrokerInstruments#LATENCY_BUCKETS_MS}.
     *
     * @throws IllegalStateException when this is not a histogram in {@code ms}
     */
    DoubleHistogram latencyHistogram(Meter meter) {
        requireKind(Kind.HISTOGRAM);
        if (!unit.equals("ms")) {
            throw new IllegalStateException(name + " is in " + unit + ", not ms");
        }
        return meter.histogramBuilder(name)
                .setUnit(unit)
                .setExplicitBucketBoundariesAdvice(BrokerInstruments.LATENCY_BUCKETS_MS)
                .build();
    }

    private void requireKind(Kind expected) {
        if (kind != expected) {
            throw new IllegalStateException(name + " is a " + kind + ", not a " + expected);
        }
    }
}
