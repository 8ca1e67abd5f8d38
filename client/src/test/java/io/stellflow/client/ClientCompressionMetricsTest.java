package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The client compression metrics as the producer and consumer record them (issue #21): against
 * {@link FakeBroker}, the producer's {@code direction=compress} bytes are exactly the records
 * sections of the batches the broker stored, and the consumer's {@code direction=decompress} counts
 * each stored batch once with the same compressed bytes; read through an in-memory OpenTelemetry
 * reader.
 */
@IntegrationTest
class ClientCompressionMetricsTest {
    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** The points of the client compression instruments: name -> value, for codec zstd. */
    private static Map<String, Long> zstdPoints(InMemoryMetricReader reader, String direction) {
        Map<String, Long> points = new HashMap<>();
        for (MetricData d : reader.collectAllMetrics()) {
            if (!d.getName().startsWith("stellflow.client.compression.")) {
                continue;
            }
            for (LongPointData p : d.getLongSumData().getPoints()) {
                assertThat(p.getAttributes().get(ClientMetrics.DIRECTION)).isEqualTo(direction);
                assertThat(p.getAttributes().get(ClientMetrics.CODEC)).isEqualTo("zstd");
                points.put(d.getName(), p.getValue());
            }
        }
        return points;
    }

    @Test
    void producerAndConsumerCountEachBatchOnceWithTheStoredBytes() throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        int records = 3000;
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            InMemoryMetricReader producerReader = InMemoryMetricReader.create();
            InMemoryMetricReader consumerReader = InMemoryMetricReader.create();
            try (SdkMeterProvider pm = SdkMeterProvider.builder()
                            .registerMetricReader(producerReader)
                            .build();
                    SdkMeterProvider cm = SdkMeterProvider.builder()
                            .registerMetricReader(consumerReader)
                            .build()) {
                try (StellflowProducer producer = new StellflowProducer(
                        props(broker, "compression.type", "zstd", "batch.size", "16384", "linger.ms", "60000"),
                        OpenTelemetrySdk.builder().setMeterProvider(pm).build())) {
                    SplittableRandom r = new SplittableRandom(5);
                    for (int i = 0; i < records; i++) {
                        String value = "{\"i\":" + i + ",\"level\":\"INFO\",\"trace\":\""
                                + Long.toHexString(r.nextLong()) + "\",\"ms\":" + r.nextInt(900) + "}";
                        producer.send(new ProducerRecord("t", 0, null, value.getBytes(StandardCharsets.UTF_8)));
                    }
                    producer.flush();
                }
                List<FakeBroker.StoredBatch> log = broker.log(tp);
                long storedRecordsBytes = 0;
                for (FakeBroker.StoredBatch b : log) {
                    storedRecordsBytes += b.bytes().length - RecordBatchLayout.HEADER_SIZE;
                }
                assertThat(log.size()).isGreaterThan(1);

                Map<String, Long> produced = zstdPoints(producerReader, ClientMetrics.COMPRESS);
                long producedBatches = produced.get("stellflow.client.compression.batch.count");
                assertThat(producedBatches).isBetween(1L, (long) log.size()); // a split batch is stored as parts
                assertThat(produced.get("stellflow.client.compression.compressed.bytes"))
                        .isEqualTo(storedRecordsBytes);
                assertThat(produced.get("stellflow.client.compression.uncompressed.bytes"))
                        .isGreaterThan(storedRecordsBytes * 2);
                assertThat(produced.get("stellflow.client.compression.time")).isPositive();

                try (StellflowConsumer consumer = new StellflowConsumer(
                        props(broker, "auto.offset.reset", "earliest"),
                        OpenTelemetrySdk.builder().setMeterProvider(cm).build())) {
                    consumer.assign(List.of(tp));
                    List<ConsumerRecord> got = new ArrayList<>();
                    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                    while (got.size() < records && System.nanoTime() < deadline) {
                        got.addAll(consumer.poll(Duration.ofMillis(100)));
                    }
                    assertThat(got).hasSize(records);
                }
                Map<String, Long> consumed = zstdPoints(consumerReader, ClientMetrics.DECOMPRESS);
                assertThat(consumed.get("stellflow.client.compression.batch.count"))
                        .isEqualTo(log.size());
                assertThat(consumed.get("stellflow.client.compression.compressed.bytes"))
                        .isEqualTo(storedRecordsBytes);
                if (producedBatches == log.size()) { // no split: the same records sections both ways
                    assertThat(consumed.get("stellflow.client.compression.uncompressed.bytes"))
                            .isEqualTo(produced.get("stellflow.client.compression.uncompressed.bytes"));
                }
                assertThat(consumed.get("stellflow.client.compression.time")).isPositive();
            }
        }
    }
}
