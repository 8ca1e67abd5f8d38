package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The producer's retry budget is {@code delivery.timeout.ms}, not a count: with the default
 * {@code retries} (unbounded, as Kafka's) a send outlives a leader that is unreachable for far longer
 * than 10 backoffs, and fails with a message naming the timeout and the last error once
 * {@code delivery.timeout.ms} has passed.
 */
@IntegrationTest
class ProducerDeliveryTimeoutTest {
    private static Properties props(int port, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + port);
        p.setProperty("linger.ms", "0");
        p.setProperty("retry.backoff.ms", "10");
        p.setProperty("retry.backoff.max.ms", "20");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void defaultRetriesAreUnboundedWithinTheDeliveryTimeout() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:9092");
        ProducerConfig c = ProducerConfig.from(p);
        assertThat(c.common().retries()).isEqualTo(Integer.MAX_VALUE);
        assertThat(c.deliveryTimeoutMs()).isEqualTo(120_000);
        p.setProperty("retries", "3");
        assertThat(ProducerConfig.from(p).common().retries()).isEqualTo(3);
    }

    @Test
    void aSendSurvivesALeaderUnreachableForManyBackoffsAndLandsOnceItIsBack() throws Exception {
        FakeBroker first = new FakeBroker();
        int port = first.port();
        first.createTopic("t", 1);
        // The broker that comes back is a new one with an empty log, which knows no producer id: an
        // idempotent producer's next sequence (1) would rightly be refused as out of order. This test
        // is about the retries, so the producer is the plain one.
        try (StellflowProducer producer = new StellflowProducer(props(port, "enable.idempotence", "false"))) {
            assertThat(producer.send(new ProducerRecord("t", 0, null, bytes("before")))
                            .get(10, TimeUnit.SECONDS)
                            .offset())
                    .isZero();
            first.close();
            long downNs = System.nanoTime();
            CompletableFuture<RecordMetadata> during = producer.send(new ProducerRecord("t", 0, null, bytes("during")));
            // Down for 1.5 s: 75 backoffs of at most 20 ms, far more than the 10 the old default allowed.
            Thread.sleep(1500);
            assertThat(during).isNotDone();
            try (FakeBroker second = new FakeBroker(port)) {
                second.createTopic("t", 1);
                RecordMetadata m = during.get(30, TimeUnit.SECONDS);
                assertThat(m.offset()).isZero(); // the new broker's empty log
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downNs))
                        .isGreaterThanOrEqualTo(1500);
                assertThat(second.produces).isNotEmpty();
            }
        }
    }

    @Test
    void aDeliveryTimeoutAfterBrokerAnswersCarriesTheLastAnswersCode() throws Exception {
        FakeBroker broker = new FakeBroker();
        broker.createTopic("t", 1);
        TopicPartition tp = new TopicPartition("t", 0);
        for (int i = 0; i < 200; i++) {
            broker.failNextProduce(tp, Errors.NOT_ENOUGH_REPLICAS); // the ISR stays below min.insync.replicas
        }
        try (StellflowProducer producer = new StellflowProducer(
                props(broker.port(), "delivery.timeout.ms", "1000", "request.timeout.ms", "1000"))) {
            CompletableFuture<RecordMetadata> refused = producer.send(new ProducerRecord("t", 0, null, bytes("x")));
            assertThatThrownBy(() -> refused.get(30, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(StellflowException.class)
                    .hasMessageContaining("batch expired after 1000 ms (delivery.timeout.ms)")
                    .hasMessageEndingWith("last error: produce to t-0 failed (NOT_ENOUGH_REPLICAS 32)")
                    .satisfies(e -> assertThat(e.getMessage().split("NOT_ENOUGH_REPLICAS 32", -1))
                            .as("the code named once: " + e.getMessage())
                            .hasSize(2))
                    .satisfies(e ->
                            assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS));
        } finally {
            broker.close();
        }
    }

    @Test
    void deliveryTimeoutEndsTheRetriesWithAClearError() throws Exception {
        FakeBroker broker = new FakeBroker();
        int port = broker.port();
        broker.createTopic("t", 1);
        try (StellflowProducer producer =
                new StellflowProducer(props(port, "delivery.timeout.ms", "1500", "request.timeout.ms", "500"))) {
            producer.send(new ProducerRecord("t", 0, null, bytes("before"))).get(10, TimeUnit.SECONDS);
            broker.close();
            long startNs = System.nanoTime();
            CompletableFuture<RecordMetadata> lost = producer.send(new ProducerRecord("t", 0, null, bytes("lost")));
            assertThatThrownBy(() -> lost.get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(StellflowException.class)
                    .hasMessageContaining("produce to t-0")
                    .hasMessageContaining("batch expired after 1500 ms (delivery.timeout.ms)")
                    .hasMessageContaining("last error: ")
                    .hasMessageEndingWith("(NETWORK_ERROR)")
                    .hasMessageContaining("127.0.0.1:" + port)
                    .hasMessageContaining("(NETWORK_ERROR)");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertThat(tookMs).isGreaterThanOrEqualTo(1400).isLessThan(20_000);
        }
    }
}
