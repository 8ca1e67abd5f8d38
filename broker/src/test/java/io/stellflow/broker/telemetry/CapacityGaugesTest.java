package io.stellflow.broker.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Disk per log dir and partition counts, read at collection time from a fake broker. */
class CapacityGaugesTest {
    private static final Path A = Path.of("/data/a");
    private static final Path B = Path.of("/data/b");

    @Test
    void usedIsSummedPerDirFreeSkipsAnUnreadableDirAndCountsSplitLeaders() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            InstrumentCallbacks callbacks = new InstrumentCallbacks(provider.get("test"));
            CapacityGauges.Source partitions = v -> {
                v.partition(A, true, 10);
                v.partition(A, false, 20);
                v.partition(B, true, 5);
            };
            new CapacityGauges(callbacks, 2, List.of(A, B), partitions, dir -> dir.equals(A) ? 1_000 : -1);

            Collection<MetricData> data = reader.collectAllMetrics();
            assertThat(byDir(data, "stellflow.log.dir.used")).isEqualTo(Map.of(A.toString(), 30L, B.toString(), 5L));
            // B's file system cannot be read (a dir that is gone): no sample rather than a false 0.
            assertThat(byDir(data, "stellflow.log.dir.free")).isEqualTo(Map.of(A.toString(), 1_000L));
            assertThat(single(data, "stellflow.partition.count")).isEqualTo(3);
            assertThat(single(data, "stellflow.partition.leader.count")).isEqualTo(2);
        }
    }

    @Test
    void aBrokerWithoutPartitionsReportsZeroes() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            new CapacityGauges(new InstrumentCallbacks(provider.get("test")), 2, List.of(A), v -> {}, dir -> 7);
            Collection<MetricData> data = reader.collectAllMetrics();
            assertThat(byDir(data, "stellflow.log.dir.used")).isEqualTo(Map.of(A.toString(), 0L));
            assertThat(single(data, "stellflow.partition.count")).isZero();
            assertThat(single(data, "stellflow.partition.leader.count")).isZero();
        }
    }

    private static MetricData metric(Collection<MetricData> data, String name) {
        return data.stream()
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " not exported"));
    }

    private static Map<String, Long> byDir(Collection<MetricData> data, String name) {
        return metric(data, name).getLongGaugeData().getPoints().stream()
                .collect(Collectors.toMap(p -> p.getAttributes().get(BrokerMetrics.LOG_DIR), LongPointData::getValue));
    }

    private static long single(Collection<MetricData> data, String name) {
        List<LongPointData> points =
                List.copyOf(metric(data, name).getLongGaugeData().getPoints());
        assertThat(points).hasSize(1);
        assertThat(points.get(0).getAttributes().get(BrokerMetrics.NODE_ID)).isEqualTo(2L);
        return points.get(0).getValue();
    }
}
