package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A batch the broker refuses with MESSAGE_TOO_LARGE is split in halves (down to one record) that
 * take its place: every record is appended once, in send order, and its future gets its own offset;
 * with and without idempotence and compression. The broker here refuses batches of more than a
 * few records ({@link FakeBroker#maxBatchRecords}), so the split is predictable.
 */
class ProducerSplitTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private static Properties props(FakeBroker broker, String idempotence, String compression, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("enable.idempotence", idempotence);
        p.setProperty("compression.type", compression);
        p.setProperty("linger.ms", "60000"); // the flush sends: one batch of every record
        p.setProperty("batch.size", "1048576");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** The values stored on {@code tp}, in offset order, decompressed. */
    private static List<String> values(FakeBroker broker, TopicPartition tp) {
        List<String> values = new ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(64 << 20)) {
            for (FakeBroker.StoredBatch b : broker.log(tp)) {
                ByteBuf buf = Unpooled.wrappedBuffer(b.bytes());
                buf.setInt(0, 0);
                RecordBatchReader.decode(
                        buf, 0, true, d, (o, ts, k, v, h) -> values.add(new String(v, StandardCharsets.UTF_8)));
            }
        }
        return values;
    }

    private static void sendAndCheck(FakeBroker broker, Properties props, int records) throws Exception {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        try (StellflowProducer producer = new StellflowProducer(props)) {
            for (int i = 0; i < records; i++) {
                futures.add(producer.send(new ProducerRecord(
                        "t", 0, null, ("value-" + i).getBytes(StandardCharsets.UTF_8), 1_000_000L + i)));
            }
            producer.flush();
            for (int i = 0; i < records; i++) {
                RecordMetadata m = futures.get(i).get(5, TimeUnit.SECONDS);
                assertThat(m.offset()).as("offset of record %d", i).isEqualTo(i);
                assertThat(m.timestampMs()).as("timestamp of record %d", i).isEqualTo(1_000_000L + i);
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            expected.add("value-" + i);
        }
        assertThat(values(broker, TP)).containsExactlyElementsOf(expected);
    }

    @ParameterizedTest(name = "idempotence={0} compression={1}")
    @CsvSource({"false, none", "true, none", "false, lz4", "true, lz4", "true, zstd"})
    void aBatchRefusedAsTooLargeIsHalvedUntilItsPartsFitAndEveryRecordGetsItsOwnOffset(
            String idempotence, String compression) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 7;
            // 50 records: 25 + 25, 12 + 13 (x2), then 6 + 6 and 6 + 7 (x2) fit: 7 refusals.
            sendAndCheck(broker, props(broker, idempotence, compression), 50);
            assertThat(broker.tooLargeAnswers.get()).isEqualTo(7);
            assertThat(broker.log(TP)).hasSize(8);
            if (idempotence.equals("true")) {
                assertThat(broker.outOfOrderAnswers.get()).isZero();
                assertThat(broker.initProducerIdRequests.get()).as("no reset").isEqualTo(1);
            }
        }
    }

    /** Each split counts once in {@code stellflow.producer.batch.split.count} (Kafka's batch-split-total). */
    @Test
    void everySplitCountsInTheSplitMetric() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 7;
            InMemoryMetricReader reader = InMemoryMetricReader.create();
            try (SdkMeterProvider provider =
                    SdkMeterProvider.builder().registerMetricReader(reader).build()) {
                try (StellflowProducer producer = new StellflowProducer(
                        props(broker, "true", "none"),
                        OpenTelemetrySdk.builder().setMeterProvider(provider).build())) {
                    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                    for (int i = 0; i < 50; i++) {
                        futures.add(producer.send(
                                new ProducerRecord("t", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8))));
                    }
                    producer.flush();
                    for (CompletableFuture<RecordMetadata> f : futures) {
                        f.get(5, TimeUnit.SECONDS);
                    }
                }
                long splits = -1;
                long retries = -1;
                for (MetricData d : reader.collectAllMetrics()) {
                    if (d.getName().equals("stellflow.producer.batch.split.count")) {
                        splits =
                                d.getLongSumData().getPoints().iterator().next().getValue();
                    } else if (d.getName().equals("stellflow.producer.retry.count")) {
                        retries =
                                d.getLongSumData().getPoints().iterator().next().getValue();
                    }
                }
                assertThat(splits).isEqualTo(broker.tooLargeAnswers.get()).isEqualTo(7);
                assertThat(retries).as("a split is also a retry").isEqualTo(7);
            }
        }
    }

    /** A part that expires says in its error that it was split, and how often. */
    @Test
    void anExpiredPartSaysItWasSplit() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextProduce(TP, Errors.MESSAGE_TOO_LARGE);
            for (int i = 0; i < 200; i++) {
                broker.failNextProduce(TP, Errors.NOT_LEADER_OR_FOLLOWER); // the parts never get through
            }
            CompletableFuture<RecordMetadata> first;
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "false",
                    "none",
                    "delivery.timeout.ms",
                    "5000",
                    // linger.ms + request.timeout.ms within delivery.timeout.ms; the flush still sends
                    "linger.ms",
                    "1000",
                    "request.timeout.ms",
                    "1000",
                    "retry.backoff.max.ms",
                    "200"))) {
                first = producer.send(new ProducerRecord("t", 0, null, "a".getBytes(StandardCharsets.UTF_8)));
                producer.send(new ProducerRecord("t", 0, null, "b".getBytes(StandardCharsets.UTF_8)));
                producer.flush();
            }
            assertThatThrownBy(() -> first.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .hasMessageContaining("batch expired after 5000 ms (delivery.timeout.ms)")
                    .hasMessageContaining("as a part of a batch split 1 time(s) after refusals as too large");
        }
    }

    /**
     * A split is not a retry (as in Kafka's producer): with {@code retries=1} (idempotence needs one)
     * a refused batch is still halved three levels deep until its parts fit, with and without
     * idempotence.
     */
    @ParameterizedTest(name = "idempotence={0}")
    @CsvSource({"false", "true"})
    void splitsDoNotUseUpRetries(String idempotence) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 7;
            sendAndCheck(broker, props(broker, idempotence, "none", "retries", "1"), 50);
            assertThat(broker.tooLargeAnswers.get()).isEqualTo(7);
        }
    }

    /**
     * A batch whose first attempt got no verdict (REQUEST_TIMED_OUT: it may be in the log) and whose
     * retry is refused as too large: under its current stamp it is still split, the parts keep its
     * sequences, and every record is stored once (a broker restart mid-split, from a user test).
     */
    @ParameterizedTest(name = "compression={0}")
    @CsvSource({"none", "lz4"})
    void aBatchWithoutAVerdictIsStillSplitUnderItsStamp(String compression) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 7;
            broker.failNextProduce(TP, Errors.REQUEST_TIMED_OUT);
            sendAndCheck(broker, props(broker, "true", compression), 50);
            assertThat(broker.tooLargeAnswers.get()).isEqualTo(7);
            assertThat(broker.initProducerIdRequests.get()).as("no reset").isEqualTo(1);
        }
    }

    /**
     * Several batches of the partition in one refused request: the answer does not say which one is
     * too large, so they are sent one per request, and only the refused one is split.
     */
    @Test
    void aRefusedRequestOfSeveralBatchesIsSentOneBatchPerRequestAndOnlyTheLargeOneSplit() throws Exception {
        String compression = "none"; // both batches READY at once: one request
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 10;
            Properties props = props(
                    broker, "false", compression, "batch.size", "1000", "max.in.flight.requests.per.connection", "1");
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props)) {
                // Batch A: 12 small records, lingering. Then a record above batch.size: batch B of its
                // own, full, and A sealed with it, at once: one request with both.
                for (int i = 0; i < 13; i++) {
                    String value = i < 12 ? "v" + i : "L".repeat(1200);
                    expected.add(value);
                    futures.add(producer.send(new ProducerRecord("t", 0, null, value.getBytes())));
                }
                producer.flush();
                for (int i = 0; i < 13; i++) {
                    assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            assertThat(values(broker, TP)).containsExactlyElementsOf(expected);
            assertThat(broker.produces)
                    .extracting(FakeBroker.ProduceSeen::recordCount)
                    .as("A's halves, then B, each alone")
                    .containsExactly(6, 6, 1);
            assertThat(broker.tooLargeAnswers.get())
                    .as("the request of A and B, then A alone")
                    .isEqualTo(2);
        }
    }

    /**
     * Idempotent, five requests in flight: the first batch (4 records) is refused as too large, the
     * four after it (2 records each) come back OUT_OF_ORDER_SEQUENCE_NUMBER, and the answers arrive
     * in reverse order. The four are retried after the halves of the first, which carry its
     * sequences: every record once, in order, and no sequence hole (no new producer id).
     */
    @Test
    void laterIdempotentBatchesInFlightAtARefusalAreRetriedAfterTheHalves() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.maxBatchRecords = 3;
            broker.holdAndReverse(5, ApiKeys.PRODUCE);
            // batch.size 200: 4 records of 30 bytes fill a batch, or 2 of 69 bytes.
            Properties props = props(broker, "true", "none", "batch.size", "200");
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props)) {
                for (int i = 0; i < 24; i++) {
                    String value = i < 4 ? Integer.toString(i) : String.format("value-%02d-%s", i, "y".repeat(31));
                    expected.add(value);
                    futures.add(producer.send(new ProducerRecord("t", 0, null, value.getBytes())));
                }
                producer.flush();
                for (int i = 0; i < futures.size(); i++) {
                    assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            assertThat(values(broker, TP)).containsExactlyElementsOf(expected);
            assertThat(broker.tooLargeAnswers.get()).isEqualTo(1);
            assertThat(broker.outOfOrderAnswers.get())
                    .as("the 4 batches sent behind the refused one")
                    .isEqualTo(4);
            assertThat(broker.initProducerIdRequests.get()).as("no reset").isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "idempotence={0}")
    @CsvSource({"false", "true"})
    void aSingleRecordStillRefusedFailsWithTheReasonAndLaterRecordsGoOn(String idempotence) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextProduce(TP, Errors.MESSAGE_TOO_LARGE); // the one-record batch below
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, idempotence, "none", "linger.ms", "0"))) {
                CompletableFuture<RecordMetadata> refused =
                        producer.send(new ProducerRecord("t", 0, null, "big".getBytes()));
                Throwable e = refused.handle((r, err) -> err).get(5, TimeUnit.SECONDS);
                assertThat(e).isInstanceOf(StellflowException.class);
                assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
                assertThat(e.getMessage())
                        .contains("holding one record")
                        .contains("splits a refused batch down to single records, and this record alone is too large");
                CompletableFuture<RecordMetadata> later =
                        producer.send(new ProducerRecord("t", 0, null, "after".getBytes()));
                assertThat(later.get(5, TimeUnit.SECONDS).offset()).isZero();
            }
            assertThat(values(broker, TP)).containsExactly("after");
        }
    }
}
