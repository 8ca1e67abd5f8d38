package io.stellflow.broker.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ReplicaTelemetryTest {
    private static final Attributes NODE = Attributes.of(BrokerMetrics.NODE_ID, 3L);
    private static final Attributes LEADER =
            Attributes.of(BrokerMetrics.NODE_ID, 3L, BrokerMetrics.REPLICA_ROLE, "leader");
    private static final Attributes FOLLOWER =
            Attributes.of(BrokerMetrics.NODE_ID, 3L, BrokerMetrics.REPLICA_ROLE, "follower");

    /** A source with distinct values per gauge, so a swapped callback shows. */
    private static final class Source implements ReplicaTelemetry.Source {
        @Override
        public long underReplicatedPartitions() {
            return 4;
        }

        @Override
        public long underMinIsrPartitions() {
            return 2;
        }

        @Override
        public long offlinePartitions() {
            return 1;
        }

        @Override
        public long maxLagBytes(boolean leaderRole) {
            return leaderRole ? 4096 : 512;
        }

        @Override
        public long maxLagTimeMs(boolean leaderRole) {
            return leaderRole ? 1500 : 20;
        }
    }

    @Test
    void hooksCountAndGaugesReadTheSourcePerRole() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 3, false);
            ReplicaTelemetry replication = metrics.replication();
            replication.registerGauges(new Source());
            replication.replicaFetch(2_500_000);
            replication.replicaFetch(500_000);
            replication.isrShrunk();
            replication.isrShrunk();
            replication.isrExpanded();
            for (int i = 0; i < 5; i++) {
                replication.highWatermarkAdvanced();
            }
            replication.leaderChanged();

            Map<String, MetricData> byName = reader.collectAllMetrics().stream()
                    .collect(Collectors.toMap(MetricData::getName, Function.identity()));
            assertThat(value(byName, "stellflow.replica.fetch.request.count", NODE))
                    .isEqualTo(2);
            assertThat(value(byName, "stellflow.isr.shrink.count", NODE)).isEqualTo(2);
            assertThat(value(byName, "stellflow.isr.expand.count", NODE)).isEqualTo(1);
            assertThat(value(byName, "stellflow.high_watermark.advance.count", NODE))
                    .isEqualTo(5);
            assertThat(value(byName, "stellflow.partition.leader.change.count", NODE))
                    .isEqualTo(1);
            assertThat(value(byName, "stellflow.partition.under_replicated.count", NODE))
                    .isEqualTo(4);
            assertThat(value(byName, "stellflow.partition.under_min_isr.count", NODE))
                    .isEqualTo(2);
            assertThat(value(byName, "stellflow.partition.offline.count", NODE)).isEqualTo(1);
            assertThat(value(byName, "stellflow.replica.lag", LEADER)).isEqualTo(4096);
            assertThat(value(byName, "stellflow.replica.lag", FOLLOWER)).isEqualTo(512);
            assertThat(value(byName, "stellflow.replica.lag.time", LEADER)).isEqualTo(1500);
            assertThat(value(byName, "stellflow.replica.lag.time", FOLLOWER)).isEqualTo(20);
            HistogramPointData latency = (HistogramPointData) byName.get("stellflow.replica.fetch.latency")
                    .getData()
                    .getPoints()
                    .iterator()
                    .next();
            assertThat(latency.getCount()).isEqualTo(2);
            assertThat(latency.getSum()).isEqualTo(3.0); // ms
        }
    }

    private static long value(Map<String, MetricData> byName, String name, Attributes attributes) {
        MetricData data = byName.get(name);
        assertThat(data).as(name).isNotNull();
        return data.getData().getPoints().stream()
                .filter(p -> p.getAttributes().equals(attributes))
                .map(p -> ((LongPointData) p).getValue())
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " has no point with " + attributes));
    }
}
