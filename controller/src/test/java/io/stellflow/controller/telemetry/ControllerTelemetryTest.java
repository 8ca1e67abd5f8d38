package io.stellflow.controller.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.server.common.telemetry.Instrument;
import io.stellflow.server.common.telemetry.MetricsDictionary;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The controller instruments against the metrics dictionary's "Controller" table, declared and exported. */
class ControllerTelemetryTest {
    private static final int NODE = 7;

    @Test
    void theControllerTableIsRegisteredRowForRow() throws Exception {
        Map<String, MetricsDictionary.Row> controllerRows = new HashMap<>();
        for (MetricsDictionary.Row row : MetricsDictionary.load().values()) {
            if (row.section().equals("Controller")) {
                controllerRows.put(row.name(), row);
            }
        }
        assertThat(controllerRows).hasSize(13);
        assertThat(ControllerInstruments.REGISTERED.stream().map(Instrument::name))
                .containsExactlyInAnyOrderElementsOf(controllerRows.keySet());
        for (Instrument i : ControllerInstruments.REGISTERED) {
            MetricsDictionary.Row row = controllerRows.get(i.name());
            assertThat(i.kind().name().toLowerCase(Locale.ROOT)).as(i.name()).isEqualTo(row.kind());
            assertThat(i.unit()).as(i.name()).isEqualTo(row.unit());
            assertThat(i.attributes()).as(i.name()).isEqualTo(row.attributes());
            assertThat(i.diagnosticAttributes()).as(i.name()).isEmpty();
        }
    }

    @Test
    void countersAndGaugesAreExportedAtZeroBeforeAnythingHappensAndStopOnClose() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            ControllerTelemetry telemetry = new ControllerTelemetry(provider.get("test"), NODE);
            Collection<MetricData> exported = reader.collectAllMetrics();
            Set<String> expected = ControllerInstruments.REGISTERED.stream()
                    .filter(i -> i.kind() != Instrument.Kind.HISTOGRAM)
                    .map(Instrument::name)
                    .collect(Collectors.toSet());
            assertThat(exported.stream().map(MetricData::getName)).containsExactlyInAnyOrderElementsOf(expected);
            for (MetricData data : exported) {
                for (PointData p : data.getData().getPoints()) {
                    assertThat(((LongPointData) p).getValue())
                            .as(data.getName())
                            .isZero();
                }
            }
            MetricData commands = metric(exported, "stellflow.controller.command.count");
            assertThat(commands.getData().getPoints().stream()
                            .map(p -> p.getAttributes().get(ControllerTelemetry.RESULT)))
                    .containsExactlyInAnyOrder("success", "error", "timeout");

            telemetry.close();
            telemetry.close(); // idempotent
            assertThat(reader.collectAllMetrics()).as("no callback after close").isEmpty();
        }
    }

    @Test
    void everyHookReachesItsInstrumentWithOnlyTheAllowedAttributes() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                        SdkMeterProvider.builder().registerMetricReader(reader).build();
                ControllerTelemetry t = new ControllerTelemetry(provider.get("test"), NODE)) {
            t.active(true);
            t.electionWon();
            t.epoch(4);
            t.command(CommandResult.SUCCESS, 1_000_000);
            t.command(CommandResult.SUCCESS, 3_000_000);
            t.command(CommandResult.TIMEOUT, 2_500_000);
            t.logAppend(500_000);
            t.replay(12_000_000);
            t.deltaBroadcast();
            t.deltaBroadcast();
            t.brokers(3, 1);
            t.heartbeatTimeout();
            t.partitionChanges(5);

            Collection<MetricData> exported = reader.collectAllMetrics();
            Map<String, Instrument> byName =
                    ControllerInstruments.REGISTERED.stream().collect(Collectors.toMap(Instrument::name, i -> i));
            assertThat(exported.stream().map(MetricData::getName)).containsExactlyInAnyOrderElementsOf(byName.keySet());
            for (MetricData data : exported) {
                Instrument i = byName.get(data.getName());
                assertThat(data.getUnit()).as(data.getName()).isEqualTo(i.unit());
                assertThat(MetricsDictionary.kind(data.getType()))
                        .as(data.getName())
                        .isEqualTo(i.kind());
                for (PointData p : data.getData().getPoints()) {
                    assertThat(p.getAttributes().asMap().keySet().stream().map(AttributeKey::getKey))
                            .as(data.getName())
                            .containsExactlyInAnyOrderElementsOf(i.attributes());
                    assertThat(p.getAttributes().get(ControllerTelemetry.NODE_ID))
                            .isEqualTo((long) NODE);
                    if (p instanceof HistogramPointData h) {
                        assertThat(h.getBoundaries()).isEqualTo(Instrument.LATENCY_BUCKETS_MS);
                    }
                }
            }
            assertThat(longValue(exported, "stellflow.controller.active")).isEqualTo(1);
            assertThat(longValue(exported, "stellflow.controller.election.count"))
                    .isEqualTo(1);
            assertThat(longValue(exported, "stellflow.controller.epoch")).isEqualTo(4);
            assertThat(longValue(exported, "stellflow.metadata.delta.broadcast.count"))
                    .isEqualTo(2);
            assertThat(longValue(exported, "stellflow.broker.registered.count")).isEqualTo(3);
            assertThat(longValue(exported, "stellflow.broker.fenced.count")).isEqualTo(1);
            assertThat(longValue(exported, "stellflow.broker.heartbeat.timeout.count"))
                    .isEqualTo(1);
            assertThat(longValue(exported, "stellflow.partition.assignment.change.count"))
                    .isEqualTo(5);
            assertThat(longValue(exported, "stellflow.unclean.election.count")).isZero();

            Map<String, Long> commands = new HashMap<>();
            for (PointData p : metric(exported, "stellflow.controller.command.count")
                    .getData()
                    .getPoints()) {
                commands.put(p.getAttributes().get(ControllerTelemetry.RESULT), ((LongPointData) p).getValue());
            }
            assertThat(commands).isEqualTo(Map.of("success", 2L, "error", 0L, "timeout", 1L));
            Map<String, Double> latencySums = new HashMap<>();
            for (HistogramPointData h : metric(exported, "stellflow.controller.command.latency")
                    .getHistogramData()
                    .getPoints()) {
                latencySums.put(h.getAttributes().get(ControllerTelemetry.RESULT), h.getSum());
            }
            assertThat(latencySums).as("ms").isEqualTo(Map.of("success", 4.0, "timeout", 2.5));
            assertThat(histogramSum(exported, "stellflow.metadata.log.append.latency"))
                    .isEqualTo(0.5);
            assertThat(histogramSum(exported, "stellflow.metadata.log.replay.latency"))
                    .isEqualTo(12.0);

            t.active(false);
            assertThat(longValue(reader.collectAllMetrics(), "stellflow.controller.active"))
                    .isZero();
        }
    }

    private static MetricData metric(Collection<MetricData> exported, String name) {
        return exported.stream()
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " not exported"));
    }

    private static long longValue(Collection<MetricData> exported, String name) {
        List<? extends PointData> points =
                List.copyOf(metric(exported, name).getData().getPoints());
        assertThat(points).as(name).hasSize(1);
        return ((LongPointData) points.get(0)).getValue();
    }

    private static double histogramSum(Collection<MetricData> exported, String name) {
        List<HistogramPointData> points =
                List.copyOf(metric(exported, name).getHistogramData().getPoints());
        assertThat(points).as(name).hasSize(1);
        return points.get(0).getSum();
    }
}
