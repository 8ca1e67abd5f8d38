package io.stellflow.broker.telemetry;

import java.util.List;

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
}
