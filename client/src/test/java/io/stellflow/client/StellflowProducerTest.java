package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class StellflowProducerTest {

    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A batch of partition 1 is ready while its leader already has {@code
     * max.in.flight.requests.per.connection} requests in flight (partition 0's, its answer held):
     * the sender waits for that answer instead of going round every nanosecond (it took a whole core
     * until the answer before). Its CPU time over a second of waiting stays far below that second.
     */
    @Test
    @Timeout(60)
    void theSenderSleepsWhileItsBrokerHasTheMostRequestsInFlight() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.holdProduceResponses();
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "client.id",
                    "inflight",
                    "linger.ms",
                    "0",
                    "acks",
                    "1",
                    "enable.idempotence",
                    "false",
                    "max.in.flight.requests.per.connection",
                    "1"))) {
                CompletableFuture<RecordMetadata> first = producer.send(new ProducerRecord("t", 0, null, bytes("a")));
                assertThat(broker.heldProduceResponses.tryAcquire(10, TimeUnit.SECONDS))
                        .as("partition 0's request in flight")
                        .isTrue();
                CompletableFuture<RecordMetadata> second = producer.send(new ProducerRecord("t", 1, null, bytes("b")));
                long cpuNs = SenderCpu.nanosOver("inflight", Duration.ofSeconds(1));
                boolean secondDoneWhileHeld = second.isDone();
                broker.releaseProduceResponses(); // before any check, so a failing one does not hang the close
                assertThat(secondDoneWhileHeld)
                        .as("waited for the request in flight")
                        .isFalse();
                assertThat(cpuNs)
                        .as("sender CPU during 1 s at the in-flight limit")
                        .isLessThan(TimeUnit.MILLISECONDS.toNanos(200));
                assertThat(first.get(10, TimeUnit.SECONDS).partition()).isZero();
                assertThat(second.get(10, TimeUnit.SECONDS).partition()).isEqualTo(1);
            }
        }
    }

    @Test
    void futuresGetConsecutiveOffsetsAcrossBatchesOfOneRequest() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            // batch.size 200 holds two 60-byte records; linger long so the flush drives the send.
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "200", "linger.ms", "60000"))) {
                for (int i = 0; i < 10; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, new byte[60])));
                }
                producer.flush();
                for (int i = 0; i < 10; i++) {
                    RecordMetadata md = futures.get(i).get(1, TimeUnit.SECONDS);
                    assertThat(md.offset()).isEqualTo(i);
                    assertThat(md.partition()).isZero();
                    assertThat(md.topic()).isEqualTo("t");
                }
            }
            List<FakeBroker.StoredBatch> log = broker.log(new TopicPartition("t", 0));
            assertThat(log).hasSizeGreaterThanOrEqualTo(5);
            assertThat(log).allSatisfy(b -> assertThat(b.recordCount()).isLessThanOrEqualTo(2));
        }
    }

    /**
     * Every flush completes all batches at once; the next batches reuse their buffers instead of
     * taking fresh direct memory (zero-filled and page-faulted in: docs/performance.md, "Where the
     * 100 ms case lost").
     */
    @Test
    void batchBuffersAreReusedAcrossFlushes() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            // batch.size 16384 holds three 5,000-byte records: 2 batches per partition per round.
            StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "16384", "linger.ms", "60000"));
            try {
                long afterFirstRound = 0;
                for (int round = 0; round < 5; round++) {
                    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                    for (int i = 0; i < 6; i++) {
                        for (int p = 0; p < 2; p++) {
                            futures.add(producer.send(new ProducerRecord("t", p, null, new byte[5_000])));
                        }
                    }
                    producer.flush();
                    for (CompletableFuture<RecordMetadata> f : futures) {
                        f.get(1, TimeUnit.SECONDS);
                    }
                    if (round == 0) {
                        afterFirstRound = producer.batchBuffers().allocatedBuffers();
                        assertThat(afterFirstRound).isBetween(1L, 4L);
                    }
                }
                assertThat(producer.batchBuffers().allocatedBuffers()).isEqualTo(afterFirstRound);
            } finally {
                producer.close();
            }
            assertThat(broker.log(new TopicPartition("t", 0))).hasSize(10);
            assertThat(broker.log(new TopicPartition("t", 1))).hasSize(10);
        }
    }

    /**
     * A send's future completes on the client's I/O thread, so a callback that closes the producer
     * must not wait for the sender or for that thread (it would wait for itself, or deadlock): as
     * Kafka's, such a close does not wait. (When the answer is back before the sender has attached
     * its completion to the request's future, the completion runs on the sender thread instead: a
     * local broker answers that fast in 7 of 200 runs; the close must not wait there either.)
     */
    @Test
    @Timeout(30)
    void closeFromASendCallbackDoesNotWaitForItself() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "60000"));
            CompletableFuture<String> closedOn = new CompletableFuture<>();
            CompletableFuture<Long> closeMs = new CompletableFuture<>();
            producer.send(new ProducerRecord("t", 0, null, bytes("v"))).whenComplete((md, e) -> {
                closedOn.complete(Thread.currentThread().getName());
                long startNs = System.nanoTime();
                producer.close(); // delivery.timeout.ms (120 s) would be the wait without the guard
                closeMs.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
            });
            producer.flush();
            assertThat(closedOn.get(10, TimeUnit.SECONDS))
                    .as("the callback's thread")
                    .matches("stellflow-io-.*|stellflow-producer-sender-.*");
            assertThat(closeMs.get(10, TimeUnit.SECONDS)).isLessThan(5_000L);
            producer.close(); // idempotent
        }
    }

    /** Kafka users close with {@code Duration.ofMillis(Long.MAX_VALUE)} ("wait as long as it takes"). */
    @Test
    @Timeout(30)
    void closeWithTheLongestTimeoutWaitsForTheRecordsAndReturns() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "60000"));
            CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("t", 0, null, bytes("v")));
            producer.close(Duration.ofMillis(Long.MAX_VALUE));
            assertThat(f).isCompleted();
            assertThat(f.get().offset()).isZero();
        }
    }

    @Test
    void fullBatchesAreSentWithoutWaitingForLinger() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "1000", "linger.ms", "60000"))) {
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                // ~129 bytes per record: 7 fit in 1000 bytes (57 header), the 8th opens a new batch.
                for (int i = 0; i < 8; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, new byte[100])));
                }
                for (int i = 0; i < 7; i++) {
                    assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
                Thread.sleep(200);
                assertThat(futures.get(7)).isNotDone();
                assertThat(broker.produces).hasSize(1);
                assertThat(broker.produces.get(0).recordCount()).isEqualTo(7);
            }
        }
    }

    @Test
    void lingerSendsAPartialBatchAfterTheLingerTime() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "100000", "linger.ms", "300"))) {
                long start = System.nanoTime();
                CompletableFuture<RecordMetadata> a = producer.send(new ProducerRecord("t", 0, null, bytes("a")));
                CompletableFuture<RecordMetadata> b = producer.send(new ProducerRecord("t", 0, null, bytes("b")));
                Thread.sleep(100);
                assertThat(a).isNotDone();
                assertThat(b.get(5, TimeUnit.SECONDS).offset()).isEqualTo(1);
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(elapsedMs).isGreaterThanOrEqualTo(290);
                assertThat(broker.produces).hasSize(1);
                assertThat(broker.produces.get(0).batchCount()).isEqualTo(1);
                assertThat(broker.produces.get(0).recordCount()).isEqualTo(2);
            }
        }
    }

    @Test
    void notLeaderIsRetriedAfterAMetadataRefreshKeepingOrder() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.failNextProduce(tp, Errors.NOT_LEADER_OR_FOLLOWER);
            // One request in flight: the only setting where a single failed request cannot be
            // overtaken by a later one (see ProducerSender's ordering note).
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "linger.ms",
                    "0",
                    "retry.backoff.ms",
                    "20",
                    "max.in.flight.requests.per.connection",
                    "1"))) {
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + i))));
                }
                producer.flush();
                for (int i = 0; i < 50; i++) {
                    assertThat(futures.get(i).get(1, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            assertThat(broker.metadataRequests.get()).isGreaterThanOrEqualTo(2);
            assertThat(broker.produceRequests.get()).isGreaterThanOrEqualTo(2);
            // The log holds the values in send order: the failed batch was resent before later ones.
            List<String> values = new ArrayList<>();
            for (FakeBroker.StoredBatch b : broker.log(tp)) {
                io.netty.buffer.ByteBuf buf = io.netty.buffer.Unpooled.wrappedBuffer(b.bytes());
                buf.setInt(0, 0);
                io.stellflow.protocol.record.RecordBatchReader.decode(buf, 0)
                        .forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
            }
            assertThat(values).hasSize(50);
            for (int i = 0; i < 50; i++) {
                assertThat(values.get(i)).isEqualTo("v" + i);
            }
        }
    }

    /** Sends 3 groups of 10 records, each group its own request, while the earlier ones are in flight. */
    private static List<CompletableFuture<RecordMetadata>> sendInThreeRequests(StellflowProducer producer)
            throws InterruptedException {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (int group = 0; group < 3; group++) {
            for (int i = 0; i < 10; i++) {
                futures.add(producer.send(new ProducerRecord("t", 0, null, bytes("v" + (group * 10 + i)))));
            }
            Thread.sleep(100);
        }
        return futures;
    }

    private static List<String> values(FakeBroker broker, TopicPartition tp) {
        List<String> values = new ArrayList<>();
        for (FakeBroker.StoredBatch b : broker.log(tp)) {
            io.netty.buffer.ByteBuf buf = io.netty.buffer.Unpooled.wrappedBuffer(b.bytes());
            buf.setInt(0, 0);
            io.stellflow.protocol.record.RecordBatchReader.decode(buf, 0)
                    .forEach(r -> values.add(new String(r.value(), StandardCharsets.UTF_8)));
        }
        return values;
    }

    @Test
    void severalRequestsOfOnePartitionAreInFlightAndAppendedInSendOrder() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            // The fake answers only once 3 Produce requests have arrived, and in reverse order: with
            // one request in flight per partition this would never complete.
            broker.holdAndReverse(3, io.stellflow.protocol.ApiKeys.PRODUCE);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                List<CompletableFuture<RecordMetadata>> futures = sendInThreeRequests(producer);
                producer.flush();
                for (int i = 0; i < 30; i++) {
                    assertThat(futures.get(i).get(1, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            assertThat(broker.produceRequests.get()).isGreaterThanOrEqualTo(3);
            List<String> values = values(broker, tp);
            assertThat(values).hasSize(30);
            for (int i = 0; i < 30; i++) {
                assertThat(values.get(i)).isEqualTo("v" + i);
            }
        }
    }

    @Test
    void inFlightRequestsThatAllFailAreResentInOrder() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.holdAndReverse(3, io.stellflow.protocol.ApiKeys.PRODUCE);
            for (int i = 0; i < 3; i++) {
                broker.failNextProduce(tp, Errors.NOT_LEADER_OR_FOLLOWER);
            }
            // At most 3 requests in flight, and all 3 fail (as when a leader moves): no later request
            // can overtake them, so order must hold.
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "linger.ms",
                    "0",
                    "retry.backoff.ms",
                    "20",
                    "max.in.flight.requests.per.connection",
                    "3"))) {
                List<CompletableFuture<RecordMetadata>> futures = sendInThreeRequests(producer);
                producer.flush();
                for (int i = 0; i < 30; i++) {
                    assertThat(futures.get(i).get(1, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            // The failures came back newest first; the batches were still resent oldest first.
            List<String> values = values(broker, tp);
            assertThat(values).hasSize(30);
            for (int i = 0; i < 30; i++) {
                assertThat(values.get(i)).isEqualTo("v" + i);
            }
        }
    }

    @Test
    void invalidRecordSaysThatACompactedTopicNeedsKeys() throws Exception {
        assertThat(refusedWith(Errors.INVALID_RECORD, "linger.ms", "0").getMessage())
                .isEqualTo("produce to t-0 refused: a record was rejected; on a compacted topic"
                        + " (cleanup.policy=compact) every record needs a key, otherwise the"
                        + " batch was malformed (INVALID_RECORD 14)");
    }

    /** The exception a send fails with when the broker answers its produce {@code code}. */
    private static StellflowException refusedWith(short code, String... producerProps) throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextProduce(new TopicPartition("t", 0), code);
            try (StellflowProducer producer = new StellflowProducer(props(broker, producerProps))) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("t", 0, null, bytes("x")));
                Throwable e = f.handle((r, err) -> err).get(5, TimeUnit.SECONDS);
                assertThat(e).isInstanceOf(StellflowException.class);
                assertThat(((StellflowException) e).errorCode()).isEqualTo(code);
                return (StellflowException) e;
            }
        }
    }

    @Test
    void messageTooLargeSaysWhichLimitAndWhatToChange() throws Exception {
        StellflowException e = refusedWith(Errors.MESSAGE_TOO_LARGE, "linger.ms", "0");
        assertThat(e).isInstanceOf(RecordTooLargeException.class);
        assertThat(e.getMessage())
                .matches("produce to t-0 refused: a batch of \\d+ bytes as sent holding one record is larger than"
                        + " the topic's max.message.bytes \\(the broker's message.max.bytes for a topic without"
                        + " one\\) \\(or grows past it when the topic's compression.type recompresses it, for"
                        + " example to uncompressed\\); the producer splits a refused batch down to single"
                        + " records, and this record alone is too large: make it smaller, raise the topic's"
                        + " max.message.bytes \\(stellflow-configs.sh --alter\\) or the broker's"
                        + " message.max.bytes, or produce with the topic's compression.type \\(MESSAGE_TOO_LARGE"
                        + " 12\\)");
    }

    /**
     * Kafka's {@code ensureValidRecordSize}: a record whose one-record batch is above {@code
     * max.request.size} or {@code buffer.memory} fails its send at once with a {@link
     * RecordTooLargeException} naming the size and the key, without waiting for metadata (its topic
     * does not exist here, and {@code max.block.ms} is a minute) and without sending anything; a
     * record exactly at {@code max.request.size} goes out, in a batch of exactly that size.
     */
    @Test
    @Timeout(20)
    void aRecordAboveMaxRequestSizeOrBufferMemoryFailsAtOnceWithRecordTooLarge() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            byte[] key = bytes("k");
            int maxRequestBytes = 10_000;
            int atLimit = maxRequestBytes - (int) StellflowProducer.serializedBytes(key, new byte[0]);
            try (StellflowProducer producer = new StellflowProducer(
                    props(broker, "max.request.size", Integer.toString(maxRequestBytes), "max.block.ms", "60000"))) {
                long startNs = System.nanoTime();
                CompletableFuture<RecordMetadata> tooLarge =
                        producer.send(new ProducerRecord("absent", null, key, new byte[atLimit + 1]));
                assertThat(tooLarge).isCompletedExceptionally();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs))
                        .isLessThan(5_000);
                Throwable e = tooLarge.handle((r, err) -> err).get();
                assertThat(e).isInstanceOf(RecordTooLargeException.class);
                assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
                assertThat(((StellflowException) e).retriable()).isFalse();
                assertThat(e.getMessage())
                        .isEqualTo("record for topic absent is 10001 bytes when serialized, larger than"
                                + " max.request.size=10000: nothing was sent; raise max.request.size or make the"
                                + " record smaller (MESSAGE_TOO_LARGE 12)");

                RecordMetadata md = producer.send(new ProducerRecord("t", 0, key, new byte[atLimit]))
                        .get(5, TimeUnit.SECONDS);
                assertThat(md.offset()).isZero();
            }
            List<FakeBroker.StoredBatch> log = broker.log(new TopicPartition("t", 0));
            assertThat(log).singleElement().satisfies(b -> assertThat(b.bytes()).hasSize(maxRequestBytes));

            try (StellflowProducer producer = new StellflowProducer(
                    props(broker, "max.request.size", Integer.toString(64 << 20), "buffer.memory", "65536"))) {
                CompletableFuture<RecordMetadata> tooLarge =
                        producer.send(new ProducerRecord("t", 0, null, new byte[70_000]));
                assertThat(tooLarge).isCompletedExceptionally();
                assertThat(tooLarge.handle((r, err) -> err).get())
                        .isInstanceOf(RecordTooLargeException.class)
                        .hasMessageStartingWith("record for topic t is 70086 bytes when serialized, larger than"
                                + " buffer.memory=65536 (the producer's memory for batches)");
            }
            assertThat(broker.log(new TopicPartition("t", 0)))
                    .as("nothing more sent")
                    .hasSize(1);
        }
    }

    @Test
    void featureNotEnabledOnACompressedBatchNamesTheTopicsPolicy() throws Exception {
        assertThat(refusedWith(Errors.FEATURE_NOT_ENABLED, "linger.ms", "0", "compression.type", "lz4")
                        .getMessage())
                .isEqualTo("produce to t-0 refused with FEATURE_NOT_ENABLED for a compressed batch: the topic's"
                        + " compression.produce.policy is likely refuse (for readers that cannot decompress); produce"
                        + " to it with compression.type=none (FEATURE_NOT_ENABLED 20)");
    }

    @Test
    void nonRetriableErrorFailsTheFuturesWithTheCode() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            broker.failNextProduce(new TopicPartition("t", 0), Errors.CORRUPT_MESSAGE);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("t", 0, null, bytes("x")));
                assertThat(f.handle((r, e) -> e).get(5, TimeUnit.SECONDS))
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE));
            }
        }
    }

    @Test
    void keyedRecordsGoToAStablePartitionAndUnknownTopicsFail() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 4);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0", "retries", "1"))) {
                int p1 = producer.send(new ProducerRecord("t", null, bytes("k"), bytes("a")))
                        .get(5, TimeUnit.SECONDS)
                        .partition();
                int p2 = producer.send(new ProducerRecord("t", null, bytes("k"), bytes("b")))
                        .get(5, TimeUnit.SECONDS)
                        .partition();
                assertThat(p1).isEqualTo(p2).isEqualTo((Partitioner.hash(bytes("k")) & 0x7fffffff) % 4);
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord("missing", bytes("x")));
                assertThat(f.handle((r, e) -> e).get(5, TimeUnit.SECONDS))
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION));
            }
        }
    }

    @Test
    void keylessRecordsStickToOnePartitionUntilItsBatchIsDone() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 4);
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "300", "linger.ms", "60000"))) {
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                for (int i = 0; i < 12; i++) {
                    futures.add(producer.send(new ProducerRecord("t", new byte[60])));
                }
                producer.flush();
                // 89-byte records: three fill a 300-byte batch (57 + 3 * 89 = 324 > 300, so two per batch).
                List<Integer> partitions = new ArrayList<>();
                for (CompletableFuture<RecordMetadata> f : futures) {
                    partitions.add(f.get(1, TimeUnit.SECONDS).partition());
                }
                for (int i = 0; i < 12; i += 2) {
                    assertThat(partitions.get(i + 1)).isEqualTo(partitions.get(i));
                    assertThat(partitions.get(i + 2 < 12 ? i + 2 : i - 2)).isNotEqualTo(partitions.get(i));
                }
            }
            assertThat(broker.produces)
                    .allSatisfy(p -> assertThat(p.recordCount() % 2).isZero());
        }
    }

    @Test
    void acksAllOutcomesOfProduceV1AreRetriedWithinTheDeliveryTimeout() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.produceMaxVersion = 1;
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            broker.failNextProduce(tp, Errors.NOT_ENOUGH_REPLICAS);
            broker.failNextProduce(tp, Errors.REQUEST_TIMED_OUT);
            broker.failNextProduce(tp, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "linger.ms", "0", "retry.backoff.ms", "10"))) {
                RecordMetadata md = producer.send(new ProducerRecord("t", 0, null, bytes("v")))
                        .get(10, TimeUnit.SECONDS);
                assertThat(md.offset()).isZero();
            }
            assertThat(broker.produceRequests.get()).isEqualTo(4);
            assertThat(broker.produceVersions)
                    .as("v1 once the broker offers it")
                    .containsOnly((short) 1);
        }
    }

    /** What one callback saw, and on which thread. */
    private record Outcome(RecordMetadata metadata, Exception exception, Thread thread) {}

    @Test
    @Timeout(30) // a throwing callback used to leave flush() waiting forever
    void callbacksGetOffsetsInSendOrderAndAThrowingCallbackDoesNotStopTheOthersNorFlush() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            List<Outcome> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
            try (StellflowProducer producer =
                    new StellflowProducer(props(broker, "batch.size", "200", "linger.ms", "60000"))) {
                for (int i = 0; i < 10; i++) {
                    boolean throwing = i == 3;
                    producer.send(new ProducerRecord("t", 0, null, new byte[60]), (md, e) -> {
                        outcomes.add(new Outcome(md, e, Thread.currentThread()));
                        if (throwing) {
                            throw new AssertionError("a callback bug"); // an Error, as a failed assertion
                        }
                    });
                }
                producer.flush();
            }
            assertThat(outcomes).hasSize(10);
            assertThat(outcomes)
                    .extracting(o -> o.metadata().offset())
                    .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
            assertThat(outcomes).allSatisfy(o -> {
                assertThat(o.exception()).isNull();
                assertThat(o.metadata().topic()).isEqualTo("t");
                assertThat(o.thread()).isNotEqualTo(Thread.currentThread());
            });
        }
    }

    @Test
    void callbacksGetTheBrokersErrorAndAnUnknownPartitionOnTheSendingThread() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            broker.failNextProduce(new TopicPartition("t", 0), Errors.CORRUPT_MESSAGE);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                CompletableFuture<Outcome> failed = new CompletableFuture<>();
                producer.send(
                        new ProducerRecord("t", 0, null, bytes("x")),
                        (md, e) -> failed.complete(new Outcome(md, e, Thread.currentThread())));
                Outcome o = failed.get(5, TimeUnit.SECONDS);
                assertThat(o.metadata()).isNull();
                assertThat(o.exception())
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE));

                List<Outcome> unknown = new ArrayList<>();
                producer.send(
                        new ProducerRecord("t", 5, null, bytes("y")),
                        (md, e) -> unknown.add(new Outcome(md, e, Thread.currentThread())));
                assertThat(unknown).singleElement().satisfies(u -> {
                    assertThat(u.thread()).isEqualTo(Thread.currentThread());
                    assertThat(u.exception())
                            .isInstanceOfSatisfying(
                                    StellflowException.class,
                                    e -> assertThat(e.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION));
                });

                CompletableFuture<Outcome> ok = new CompletableFuture<>();
                producer.send(
                        new ProducerRecord("t", 1, null, bytes("z")),
                        (md, e) -> ok.complete(new Outcome(md, e, Thread.currentThread())));
                assertThat(ok.get(5, TimeUnit.SECONDS).metadata().partition()).isEqualTo(1);
            }
        }
    }

    @Test
    void aNullCallbackSendsTheRecordWithoutTellingTheOutcome() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            try (StellflowProducer producer = new StellflowProducer(props(broker, "linger.ms", "0"))) {
                producer.send(new ProducerRecord("t", 0, null, bytes("a")), null);
                producer.flush();
                assertThat(producer.send(new ProducerRecord("t", 0, null, bytes("b")))
                                .get(5, TimeUnit.SECONDS)
                                .offset())
                        .isEqualTo(1);
            }
        }
    }
}
