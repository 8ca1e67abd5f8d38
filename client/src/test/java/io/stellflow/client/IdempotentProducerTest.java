package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code enable.idempotence=true} against {@link FakeBroker}'s sequence check (issue #20, "our
 * producer"): a lost ack is retried with the same sequence and answered with the original offset; a
 * later batch refused out of order behind a retried one is retried in order after it; an out of order
 * answer with no earlier batch outstanding fails the batch and the producer goes on under a new id.
 */
class IdempotentProducerTest {
    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("enable.idempotence", "true");
        p.setProperty("retry.backoff.ms", "20");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code stellflow.producer.retry.count}: batch attempts that went back for another. */
    private static long retries(InMemoryMetricReader reader) {
        long n = 0;
        for (MetricData d : reader.collectAllMetrics()) {
            if (d.getName().equals("stellflow.producer.retry.count")) {
                for (LongPointData point : d.getLongSumData().getPoints()) {
                    n += point.getValue();
                }
            }
        }
        return n;
    }

    private static List<String> values(FakeBroker broker, TopicPartition tp) {
        List<String> values = new ArrayList<>();
        for (FakeBroker.StoredBatch b : broker.log(tp)) {
            ByteBuf buf = Unpooled.wrappedBuffer(b.bytes());
            buf.setInt(0, 0);
            RecordBatchReader.decode(buf, 0).forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        }
        return values;
    }

    private static void assertWrittenOnceInOrder(
            FakeBroker broker, TopicPartition tp, List<CompletableFuture<RecordMetadata>> futures) throws Exception {
        for (int i = 0; i < futures.size(); i++) {
            assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
        }
        List<String> values = values(broker, tp);
        assertThat(values).hasSize(futures.size());
        for (int i = 0; i < futures.size(); i++) {
            assertThat(values.get(i)).isEqualTo("v" + i);
        }
    }

    @Test
    void aRetryAfterALostAckGetsTheOriginalOffsetAndIsWrittenOnce() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.dropNextProduceResponses(1);
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "60000"))) {
                for (int i = 0; i < 10; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + i))));
                }
                producer.flush();
            }
            assertWrittenOnceInOrder(broker, tp, futures);
            assertThat(broker.initProducerIdRequests.get()).isEqualTo(1);
            // The batch was sent twice with the same id and sequence; the second was the duplicate.
            assertThat(broker.sequencesSeen).hasSize(2);
            for (long[] seen : broker.sequencesSeen) {
                assertThat(seen).containsExactly(1000, 0);
            }
            assertThat(broker.log(tp)).hasSize(1);
        }
    }

    @Test
    void laterBatchesRefusedOutOfOrderBehindARetriedOneAreRetriedInOrderAfterIt() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            // The first request fails retriably without an append; the two after it, already in flight,
            // arrive with later sequences and are refused out of order. Answers come newest first.
            broker.holdAndReverse(3, ApiKeys.PRODUCE);
            broker.failNextProduce(tp, Errors.NOT_LEADER_OR_FOLLOWER);
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                for (int group = 0; group < 3; group++) {
                    for (int i = 0; i < 10; i++) {
                        futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + (group * 10 + i)))));
                    }
                    Thread.sleep(100);
                }
                producer.flush();
            }
            assertWrittenOnceInOrder(broker, tp, futures);
            assertThat(broker.outOfOrderAnswers.get()).isGreaterThanOrEqualTo(2);
            assertThat(broker.initProducerIdRequests.get())
                    .as("out of order behind a retried batch is not fatal")
                    .isEqualTo(1);
        }
    }

    @Test
    void outOfOrderWithNoEarlierBatchOutstandingFailsTheBatchAndTakesANewProducerId() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.failNextProduce(tp, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                CompletableFuture<RecordMetadata> lost = producer.send(new ProducerRecord("t", 0, null, bytes("lost")));
                assertThat(lost)
                        .failsWithin(5, TimeUnit.SECONDS)
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause()
                        .isInstanceOf(StellflowException.class)
                        .withMessageContaining("OUT_OF_ORDER_SEQUENCE_NUMBER 22 (producer id 1000, epoch 0, base"
                                + " sequence 0); the batch is lost and the producer goes on under a new producer id");
                assertThat(((StellflowException) lost.exceptionNow()).errorCode())
                        .isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + i))));
                }
                producer.flush();
                assertWrittenOnceInOrder(broker, tp, futures);
            }
            assertThat(broker.initProducerIdRequests.get()).isEqualTo(2);
            // The refused batch never reached the fake's sequence check (the injected error comes first);
            // the later records went out under the new id from sequence 0.
            assertThat(broker.sequencesSeen).isNotEmpty();
            assertThat(broker.sequencesSeen.get(0)).containsExactly(1001, 0);
            assertThat(broker.sequencesSeen)
                    .allSatisfy(seen -> assertThat(seen[0]).isEqualTo(1001));
        }
    }

    /**
     * A batch appended whose answer was lost, waiting for its retry when another partition's batch
     * fails for good and the producer takes a new id: sent again under the new id it would be stored
     * twice (the fault checker's DUPLICATE, issue #20). It fails instead, stored once.
     */
    @Test
    void aBatchThatMayBeStoredFailsAtTheResetInsteadOfBeingStoredTwice() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            TopicPartition p0 = new TopicPartition("t", 0);
            TopicPartition p1 = new TopicPartition("t", 1);
            broker.dropNextProduceResponses(1);
            broker.failNextProduce(p0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER);
            // The lost answer's retry must still be waiting when the other partition's batch fails
            // and the producer resets: a back-off far above the time to get there (with 1 s, a
            // loaded CI machine once let the retry go first, answered as a duplicate).
            Properties props =
                    props(broker, "linger.ms", "0", "retry.backoff.ms", "10000", "retry.backoff.max.ms", "10000");
            InMemoryMetricReader reader = InMemoryMetricReader.create();
            try (SdkMeterProvider meters = SdkMeterProvider.builder()
                            .registerMetricReader(reader)
                            .build();
                    StellflowProducer producer = new StellflowProducer(
                            props,
                            OpenTelemetrySdk.builder().setMeterProvider(meters).build())) {
                CompletableFuture<RecordMetadata> unknown =
                        producer.send(new ProducerRecord("t", 1, null, bytes("maybe-stored")));
                // Appended; its answer is lost with the connection. The next send waits until the
                // producer has seen that (the batch waits for its retry): seeing the record in the
                // log is not enough, a send before the producer noticed the close could go out on
                // the closing connection and have its outcome unknown too.
                Wait.until(
                        Duration.ofSeconds(5),
                        () -> retries(reader) == 1,
                        "the lost answer taken as no verdict, the batch waiting for its retry");
                assertThat(values(broker, p1)).containsExactly("maybe-stored");
                CompletableFuture<RecordMetadata> lost = producer.send(new ProducerRecord("t", 0, null, bytes("lost")));
                assertThat(lost)
                        .failsWithin(5, TimeUnit.SECONDS)
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause()
                        .withMessageContaining("OUT_OF_ORDER_SEQUENCE_NUMBER");
                assertThat(unknown)
                        .failsWithin(5, TimeUnit.SECONDS)
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause()
                        .isInstanceOf(StellflowException.class)
                        .withMessageContaining("outcome unknown")
                        .withMessageContaining("not sent again under the producer's new id");
                CompletableFuture<RecordMetadata> after =
                        producer.send(new ProducerRecord("t", 1, null, bytes("after")));
                producer.flush();
                assertThat(after.get(5, TimeUnit.SECONDS).offset()).isEqualTo(1);
            }
            assertThat(values(broker, p1)).containsExactly("maybe-stored", "after");
            assertThat(broker.initProducerIdRequests.get()).isEqualTo(2);
        }
    }

    @Test
    void initProducerIdIsRetriedOnARetriableErrorBeforeAnythingIsSent() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.failNextInitProducerId(Errors.COORDINATOR_NOT_AVAILABLE);
            broker.failNextInitProducerId(Errors.COORDINATOR_NOT_AVAILABLE);
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                for (int i = 0; i < 5; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + i))));
                }
                producer.flush();
            }
            assertWrittenOnceInOrder(broker, tp, futures);
            assertThat(broker.initProducerIdRequests.get()).isEqualTo(3);
            assertThat(broker.sequencesSeen)
                    .allSatisfy(seen -> assertThat(seen[0]).isEqualTo(1000));
        }
    }

    /**
     * While a failed InitProducerId backs off, a record waits in its batch: the sender sleeps until
     * the back-off ends instead of going round every nanosecond (it took a whole core for the
     * back-off before). Its CPU time over about a second of back-off stays far below that second.
     */
    @Test
    void theSenderSleepsThroughAnInitProducerIdBackOff() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextInitProducerId(Errors.COORDINATOR_NOT_AVAILABLE);
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "client.id",
                    "backoff",
                    "linger.ms",
                    "0",
                    "retry.backoff.ms",
                    "1500",
                    "retry.backoff.max.ms",
                    "1500"))) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("t", 0, null, bytes("v")));
                Wait.until(Duration.ofSeconds(5), () -> broker.initProducerIdRequests.get() == 1, "first init");
                long cpuNs = SenderCpu.nanosOver("backoff", Duration.ofSeconds(1));
                assertThat(broker.initProducerIdRequests.get())
                        .as("still backing off")
                        .isEqualTo(1);
                assertThat(cpuNs)
                        .as("sender CPU during 1 s of back-off")
                        .isLessThan(TimeUnit.MILLISECONDS.toNanos(200));
                assertThat(f.get(10, TimeUnit.SECONDS).offset()).isZero();
            }
        }
    }

    @Test
    void aBrokerWithoutInitProducerIdFailsTheSendsWithAClearError() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.offersInitProducerId = false;
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("t", 0, null, bytes("v")));
                assertThat(f)
                        .failsWithin(5, TimeUnit.SECONDS)
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause()
                        .withMessageContaining(
                                "enable.idempotence=true: InitProducerId failed with UNSUPPORTED_VERSION")
                        .withMessageContaining("does the broker offer idempotent producers?");
            }
            assertThat(broker.produceRequests.get())
                    .as("nothing sent without a producer id")
                    .isZero();
            assertThat(broker.log(new TopicPartition("t", 0))).isEmpty();
        }
    }
}
