package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The client instruments against the "Clients" section of docs/spec/metrics.md, as the SDK exports them. */
class ClientMetricsTest {
    record Row(String kind, String unit, List<String> attributes) {}

    /**
     * The client rows of the dictionary ({@code docs/spec/metrics.md}, "Clients") and of our additions
     * beside it ({@code docs/metrics-additions.md}, sections "Clients: ...").
     */
    static Map<String, Row> clientRows() throws Exception {
        Path dir = Path.of("").toAbsolutePath();
        Path docs = null;
        for (int i = 0; i < 5 && dir != null; i++, dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docs/spec/metrics.md"))) {
                docs = dir.resolve("docs");
                break;
            }
        }
        assertThat(docs).as("docs/spec/metrics.md above the working directory").isNotNull();
        Map<String, Row> rows = new HashMap<>();
        for (Path file : List.of(docs.resolve("spec/metrics.md"), docs.resolve("metrics-additions.md"))) {
            boolean clients = false;
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("## ")) {
                    clients = line.equals("## Clients") || line.startsWith("## Clients: ");
                } else if (clients && line.startsWith("| stellflow.")) {
                    String[] c = line.split("\\|");
                    List<String> attrs = new ArrayList<>();
                    for (String a : c[4].split(",")) {
                        attrs.add(a.trim());
                    }
                    rows.put(c[1].trim(), new Row(c[2].trim(), c[3].trim(), attrs));
                }
            }
        }
        return rows;
    }

    @Test
    void exportedClientInstrumentsMatchTheDictionary() throws Exception {
        Map<String, Row> dictionary = clientRows();
        assertThat(dictionary).hasSize(19); // 14 in the dictionary, 4 compression additions, 1 split
        assertThat(dictionary.keySet()).containsAll(ClientMetrics.REGISTERED);
        Set<String> exported = new HashSet<>();
        for (String type : List.of("producer", "consumer")) {
            InMemoryMetricReader reader = InMemoryMetricReader.create();
            try (SdkMeterProvider provider =
                    SdkMeterProvider.builder().registerMetricReader(reader).build()) {
                ClientMetrics m = new ClientMetrics(
                        OpenTelemetrySdk.builder().setMeterProvider(provider).build(), type);
                m.request(ApiKeys.PRODUCE, ClientMetrics.result(Errors.NONE, false), 2_000_000);
                m.request(ApiKeys.FETCH, ClientMetrics.result(Errors.NONE, true), 2_000_000);
                m.metadataRefreshed();
                m.batchSent(16_384, 16);
                m.sendFailed(ClientMetrics.ERROR);
                m.retried();
                m.fetched(4096);
                m.polled(1_000_000, 4);
                m.consumerLag(12);
                m.compression(CompressionType.LZ4, 300, 1000, 5000);
                for (MetricData d : reader.collectAllMetrics()) {
                    exported.add(d.getName());
                    Row row = dictionary.get(d.getName());
                    assertThat(row).as(d.getName()).isNotNull();
                    assertThat(d.getUnit()).as(d.getName()).isEqualTo(row.unit());
                    for (PointData p : d.getData().getPoints()) {
                        Set<String> keys = p.getAttributes().asMap().keySet().stream()
                                .map(AttributeKey::getKey)
                                .collect(Collectors.toSet());
                        assertThat(row.attributes()).as(d.getName()).containsAll(keys);
                        assertThat(p.getAttributes().get(ClientMetrics.CLIENT_TYPE))
                                .isEqualTo(type);
                    }
                }
            }
        }
        assertThat(exported).containsExactlyInAnyOrderElementsOf(ClientMetrics.REGISTERED);
    }

    /** Sums of one instrument's points by codec, with the direction each point carries. */
    private static Map<String, Long> byCodec(InMemoryMetricReader reader, String name, String direction) {
        Map<String, Long> sums = new HashMap<>();
        for (MetricData d : reader.collectAllMetrics()) {
            if (d.getName().equals(name)) {
                for (LongPointData p : d.getLongSumData().getPoints()) {
                    assertThat(p.getAttributes().get(ClientMetrics.DIRECTION)).isEqualTo(direction);
                    assertThat(p.getAttributes().size())
                            .as("client.type, codec, direction only")
                            .isEqualTo(3);
                    sums.merge(p.getAttributes().get(ClientMetrics.CODEC), p.getValue(), Long::sum);
                }
            }
        }
        return sums;
    }

    @Test
    void compressionIsCountedPerCodecOnceABatchWithTheClientsDirection() {
        for (String type : List.of("producer", "consumer")) {
            String direction = type.equals("producer") ? ClientMetrics.COMPRESS : ClientMetrics.DECOMPRESS;
            InMemoryMetricReader reader = InMemoryMetricReader.create();
            try (SdkMeterProvider provider =
                    SdkMeterProvider.builder().registerMetricReader(reader).build()) {
                ClientMetrics m = new ClientMetrics(
                        OpenTelemetrySdk.builder().setMeterProvider(provider).build(), type);
                assertThat(byCodec(reader, "stellflow.client.compression.batch.count", direction))
                        .as("no point before a codec worked")
                        .isEmpty();
                m.compression(CompressionType.ZSTD, 200, 1000, 7_000);
                m.compression(CompressionType.ZSTD, 300, 1500, 8_000);
                m.compression(CompressionType.LZ4, 400, 1200, 2_000);
                assertThat(byCodec(reader, "stellflow.client.compression.batch.count", direction))
                        .containsExactlyInAnyOrderEntriesOf(Map.of("zstd", 2L, "lz4", 1L));
                assertThat(byCodec(reader, "stellflow.client.compression.compressed.bytes", direction))
                        .containsExactlyInAnyOrderEntriesOf(Map.of("zstd", 500L, "lz4", 400L));
                assertThat(byCodec(reader, "stellflow.client.compression.uncompressed.bytes", direction))
                        .containsExactlyInAnyOrderEntriesOf(Map.of("zstd", 2500L, "lz4", 1200L));
                assertThat(byCodec(reader, "stellflow.client.compression.time", direction))
                        .containsExactlyInAnyOrderEntriesOf(Map.of("zstd", 15_000L, "lz4", 2_000L));
            }
        }
    }

    @Test
    void withoutAnOpenTelemetryNothingIsExportedAndNothingFails() {
        ClientMetrics m = new ClientMetrics(null, "producer");
        m.batchSent(100, 1);
        m.request(ApiKeys.METADATA, ClientMetrics.TIMEOUT, 1);
    }
}
