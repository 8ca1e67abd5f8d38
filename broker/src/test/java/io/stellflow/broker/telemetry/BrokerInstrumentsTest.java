package io.stellflow.broker.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.controller.telemetry.ControllerInstruments;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.telemetry.Instrument;
import io.stellflow.server.common.telemetry.MetricsDictionary;
import io.stellflow.storage.Quarantined;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The broker's instruments against the metrics dictionary, declared and as the SDK exports them. */
class BrokerInstrumentsTest {

    @Test
    void everyRegisteredInstrumentMatchesItsDictionaryRow() throws Exception {
        Map<String, MetricsDictionary.Row> dictionary = MetricsDictionary.load();
        assertThat(dictionary).hasSizeGreaterThan(60);
        List<Instrument> all = new ArrayList<>(BrokerInstruments.REGISTERED);
        all.addAll(BrokerInstruments.TOPIC_DIAGNOSTIC);
        for (Instrument i : all) {
            MetricsDictionary.Row row = dictionary.get(i.name());
            assertThat(row).as(i.name()).isNotNull();
            assertThat(row.section()).as(i.name()).startsWith("Broker");
            assertThat(i.kind().name().toLowerCase(Locale.ROOT)).as(i.name()).isEqualTo(row.kind());
            assertThat(i.unit()).as(i.name()).isEqualTo(row.unit());
            assertThat(i.attributes()).as(i.name()).isEqualTo(row.attributes());
            assertThat(!i.diagnosticAttributes().isEmpty()).as(i.name()).isEqualTo(row.diagnostic());
        }
    }

    @Test
    void everyBrokerAndControllerRowIsRegisteredOrExplicitlyDeferred() throws Exception {
        Set<String> registered = new HashSet<>();
        BrokerInstruments.REGISTERED.forEach(i -> registered.add(i.name()));
        BrokerInstruments.TOPIC_DIAGNOSTIC.forEach(i -> registered.add(i.name()));
        ControllerInstruments.REGISTERED.forEach(i -> registered.add(i.name()));
        for (MetricsDictionary.Row row : MetricsDictionary.load().values()) {
            if (row.section().startsWith("Clients")) { // "Clients" and "Clients: compression": ClientMetrics
                continue;
            }
            boolean deferred = BrokerInstruments.DEFERRED.stream().anyMatch(row.name()::startsWith);
            assertThat(registered.contains(row.name()) ^ deferred)
                    .as(row.name() + " is either registered or deferred, not both")
                    .isTrue();
        }
    }

    @Test
    void theSdkExportsExactlyTheRegisteredNamesUnitsAndAllowedAttributes() {
        exportedMatchDictionary(false);
        exportedMatchDictionary(true);
    }

    private static void exportedMatchDictionary(boolean diagnostic) {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 7, diagnostic);
            metrics.registerGauges(new FakeSource());
            metrics.registerLogDirGauge(List.of(Path.of("/data/d1"), Path.of("/data/d2")), d -> d.endsWith("d2"));
            metrics.replication().registerGauges(ReplicaTelemetry.SINGLE_NODE);
            metrics.registerThreadGauges(new FakeThreads());
            metrics.registerGroupCoordinatorGauge(() -> 3);
            metrics.registerProducerStateGauges(() -> 5, () -> 2);
            Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
            metrics.registerCapacityGauges(List.of(tmp), v -> v.partition(tmp, true, 100));
            exerciseEverything(metrics);

            Collection<MetricData> exported = reader.collectAllMetrics();
            Map<String, Instrument> byName =
                    BrokerInstruments.REGISTERED.stream().collect(Collectors.toMap(Instrument::name, i -> i));
            assertThat(exported.stream().map(MetricData::getName).collect(Collectors.toSet()))
                    .isEqualTo(byName.keySet());
            for (MetricData data : exported) {
                Instrument i = byName.get(data.getName());
                assertThat(data.getUnit()).as(data.getName()).isEqualTo(i.unit());
                assertThat(MetricsDictionary.kind(data.getType()))
                        .as(data.getName())
                        .isEqualTo(i.kind());
                Set<String> allowed = new HashSet<>(i.attributes());
                if (diagnostic) {
                    allowed.addAll(i.diagnosticAttributes());
                }
                for (PointData p : data.getData().getPoints()) {
                    Set<String> keys = p.getAttributes().asMap().keySet().stream()
                            .map(AttributeKey::getKey)
                            .collect(Collectors.toSet());
                    assertThat(allowed).as(data.getName()).containsAll(keys);
                    assertThat(p.getAttributes().get(BrokerMetrics.NODE_ID)).isEqualTo(7L);
                    if (p instanceof HistogramPointData h) {
                        assertThat(h.getBoundaries()).isEqualTo(BrokerInstruments.LATENCY_BUCKETS_MS);
                    }
                }
            }
        }
    }

    @Test
    void latencyIsRecordedInMillisecondsWithApiAndResult() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 0, false);
            metrics.request(ApiKeys.FETCH, BrokerMetrics.result(Errors.OFFSET_OUT_OF_RANGE), 3_000_000L);
            MetricData latency = reader.collectAllMetrics().stream()
                    .filter(m -> m.getName().equals("stellflow.request.latency"))
                    .findFirst()
                    .orElseThrow();
            HistogramPointData p =
                    latency.getHistogramData().getPoints().iterator().next();
            assertThat(p.getSum()).isEqualTo(3.0);
            assertThat(p.getAttributes().get(BrokerMetrics.API)).isEqualTo("Fetch");
            assertThat(p.getAttributes().get(BrokerMetrics.RESULT)).isEqualTo("error");
        }
    }

    /**
     * Transactional requests get series of their own (they were all {@code api="Unknown"}, so a slow
     * commit could not be told from a slow admin call); an admin API still counts as Unknown.
     */
    @Test
    void transactionalApisHaveTheirOwnSeriesAndAdminApisCountAsUnknown() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 0, false);
            short[] keys = {
                ApiKeys.INIT_PRODUCER_ID,
                ApiKeys.BEGIN_TRANSACTION,
                ApiKeys.END_TRANSACTION,
                ApiKeys.REGISTER_TXN_PARTITION,
                ApiKeys.WRITE_TXN_MARKERS,
                ApiKeys.TXN_OFFSET_COMMIT,
                ApiKeys.FORWARD_STATUS,
                ApiKeys.DESCRIBE_LOG_DIRS
            };
            for (short key : keys) {
                metrics.request(key, BrokerMetrics.result(Errors.NONE), 1_000_000L);
            }
            MetricData latency = reader.collectAllMetrics().stream()
                    .filter(m -> m.getName().equals("stellflow.request.latency"))
                    .findFirst()
                    .orElseThrow();
            Set<String> apis = new HashSet<>();
            latency.getHistogramData()
                    .getPoints()
                    .forEach(p -> apis.add(p.getAttributes().get(BrokerMetrics.API)));
            assertThat(apis)
                    .containsExactlyInAnyOrder(
                            "InitProducerId",
                            "BeginTransaction",
                            "EndTransaction",
                            "RegisterTxnPartition",
                            "WriteTxnMarkers",
                            "TxnOffsetCommit",
                            "ForwardStatus",
                            "Unknown");
        }
    }

    @Test
    void backgroundTaskFailuresAreCountedPerTaskFromZero() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 0, false);
            metrics.storage().backgroundTaskFailedAgain("retention");
            metrics.storage().backgroundTaskFailedAgain("retention");
            metrics.backgroundTaskFailedAgain(BrokerMetrics.HW_CHECKPOINT_TASK);
            Map<String, Long> byTask = reader.collectAllMetrics().stream()
                    .filter(m -> m.getName().equals("stellflow.log.background.error.count"))
                    .flatMap(m -> m.getLongSumData().getPoints().stream())
                    .collect(Collectors.toMap(p -> p.getAttributes().get(BrokerMetrics.TASK), LongPointData::getValue));
            assertThat(byTask)
                    .isEqualTo(Map.of("checkpoint", 0L, "compaction", 0L, "retention", 2L, "hw-checkpoint", 1L));
        }
    }

    @Test
    void groupCountFollowsTheRuntimeAndRebalancesCountFromZero() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (SdkMeterProvider provider =
                SdkMeterProvider.builder().registerMetricReader(reader).build()) {
            BrokerMetrics metrics = new BrokerMetrics(provider.get("test"), 3, false);
            AtomicLong groups = new AtomicLong();
            metrics.registerGroupCoordinatorGauge(groups::get);
            assertThat(longPoint(reader.collectAllMetrics(), "stellflow.group.rebalance.count")
                            .getValue())
                    .as("a series from the first scrape")
                    .isZero();

            groups.set(5);
            metrics.groupRebalanced();
            metrics.groupRebalanced();
            Collection<MetricData> exported = reader.collectAllMetrics();
            LongPointData count = longPoint(exported, "stellflow.coordinator.group.count");
            assertThat(count.getValue()).isEqualTo(5);
            assertThat(count.getAttributes().get(BrokerMetrics.COORDINATOR_TYPE))
                    .isEqualTo("group");
            assertThat(longPoint(exported, "stellflow.group.rebalance.count").getValue())
                    .isEqualTo(2);

            groups.set(1);
            assertThat(longPoint(reader.collectAllMetrics(), "stellflow.coordinator.group.count")
                            .getValue())
                    .isEqualTo(1);
        }
    }

    private static LongPointData longPoint(Collection<MetricData> exported, String name) {
        MetricData data = exported.stream()
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow();
        Collection<LongPointData> points = data.getType() == MetricDataType.LONG_GAUGE
                ? data.getLongGaugeData().getPoints()
                : data.getLongSumData().getPoints();
        assertThat(points).hasSize(1);
        return points.iterator().next();
    }

    @Test
    void resultsMapErrorCodes() {
        assertThat(BrokerMetrics.result(Errors.NONE)).isEqualTo(BrokerMetrics.SUCCESS);
        assertThat(BrokerMetrics.result(Errors.THROTTLED)).isEqualTo(BrokerMetrics.THROTTLED);
        assertThat(BrokerMetrics.result(Errors.CORRUPT_MESSAGE)).isEqualTo(BrokerMetrics.ERROR);
    }

    private static void exerciseEverything(BrokerMetrics metrics) {
        metrics.request(ApiKeys.PRODUCE, BrokerMetrics.SUCCESS, 1_000_000);
        metrics.decodeError(ApiKeys.FETCH);
        metrics.produceRequest(BrokerMetrics.SUCCESS, 1_000_000);
        metrics.produced(1024, 10);
        metrics.fetchRequest(BrokerMetrics.SUCCESS, 2_000_000, 1024, 10);
        metrics.longPoll(true, 5_000_000);
        ReplicationMetrics replication = metrics.replication();
        replication.replicaFetch(3_000_000);
        replication.isrExpanded();
        replication.isrShrunk();
        replication.highWatermarkAdvanced();
        replication.leaderChanged();
        StorageMetrics storage = metrics.storage();
        storage.append(100_000, true);
        storage.append(100_000, false);
        storage.flush(1_000_000);
        storage.segmentRolled();
        storage.logLoaded(10_000_000, false);
        storage.indexRebuilt();
        storage.segmentsDeleted(2);
        metrics.groupCoordinatorLoaded(12);
        metrics.offsetCommit(BrokerMetrics.SUCCESS, 3_000_000);
        metrics.groupRebalanced();
        storage.logQuarantined(new Quarantined(
                Path.of("/logs/orders-0"),
                Path.of("/logs/orders-0/00000000000000000000.log"),
                120,
                "CRC-32C mismatch",
                Path.of("/logs/orders-0.1.quarantine"),
                List.of("00000000000000000000.log.tail-120"),
                1,
                4000));
    }

    private static final class FakeThreads implements BrokerMetrics.ThreadSource {
        @Override
        public void forEachThread(BrokerMetrics.ThreadVisitor visitor) {
            visitor.thread("sf-append-0", true, 20);
            visitor.thread("sf-timer", false, 4000);
        }

        @Override
        public long restarts() {
            return 1;
        }

        @Override
        public long stucks() {
            return 2;
        }
    }

    private static final class FakeSource implements BrokerMetrics.GaugeSource {
        @Override
        public long connections() {
            return 2;
        }

        @Override
        public long queuedRequests() {
            return 1;
        }

        @Override
        public long queuedResponses() {
            return 0;
        }

        @Override
        public void forEachPartition(BrokerMetrics.PartitionVisitor visitor) {
            for (int p : List.of(0, 1)) {
                visitor.partition("orders", p, 0, 100, 4096);
            }
        }
    }
}
