package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.RecordTooLargeException;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.client.TransactionAbortedException;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionConfig;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import io.stellflow.testsupport.Wait;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Our producer against a real broker whose {@code message.max.bytes} (4 KiB) is far below the
 * producer's batches: every batch the broker refuses with MESSAGE_TOO_LARGE is split in halves down
 * to what fits, each record is acknowledged with its own offset, consecutive in send order, and a
 * consumer reads the values back in that order; also when the topic's {@code compression.type}
 * makes the broker decompress a batch that fitted as sent, for a transaction (committed, or aborted
 * while its batches are split), and for a single record too large on its own, which fails without
 * holding up the records after it. The same against a broker at the default 1 MiB with a topic whose
 * {@code max.message.bytes} is 4 KiB.
 */
@IntegrationTest
class ProducerSplitEndToEndTest {
    private static final int MESSAGE_MAX_BYTES = 4096;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger TOPICS = new AtomicInteger();

    @RegisterExtension
    static final TestBroker.Shared NODES = new TestBroker.Shared(p -> {
        p.setProperty("message.max.bytes", Integer.toString(MESSAGE_MAX_BYTES));
        p.setProperty("transaction.state.log.num.partitions", "2");
        p.setProperty("transaction.max.timeout.ms", "120000");
    });

    /**
     * A broker at the default {@code message.max.bytes} (1 MiB, above every batch here): only a
     * topic's {@code max.message.bytes} refuses batches on it.
     */
    @RegisterExtension
    static final TestBroker.Shared DEFAULT_LIMIT_NODES = new TestBroker.Shared();

    private static StellflowServer server() throws Exception {
        return NODES.get("nio");
    }

    private static String topic(StellflowServer server, Map<String, String> config) throws Exception {
        String topic = "split-" + TOPICS.incrementAndGet();
        assertThat(TestBroker.createTopic(server, topic, 1, config)).isEqualTo(ErrorCode.NONE);
        return topic;
    }

    /**
     * A producer whose batches hold far more than 4 KiB: 256 KiB batches, sent at the flush
     * ({@code linger.ms} 20 s; with {@code request.timeout.ms} 10 s within {@code delivery.timeout.ms}).
     */
    private static Properties producerProps(StellflowServer server, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        p.setProperty("batch.size", Integer.toString(256 << 10));
        p.setProperty("linger.ms", "20000");
        p.setProperty("request.timeout.ms", "10000");
        p.setProperty("max.block.ms", "15000");
        p.setProperty("delivery.timeout.ms", "30000");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** Value i: its index, then {@code bytes} of seeded random (incompressible) bytes. */
    private static byte[] randomValue(int i, int bytes) {
        byte[] v = new byte[bytes];
        new Random(i).nextBytes(v);
        byte[] index = ("#" + i + "#").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(index, 0, v, 0, index.length);
        return v;
    }

    /** Sends {@code values} to partition 0 of {@code topic}, flushes, checks offsets 0, 1, 2, ... */
    private static void sendAll(StellflowProducer producer, String topic, List<byte[]> values) throws Exception {
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        for (byte[] v : values) {
            futures.add(producer.send(new ProducerRecord(topic, 0, null, v)));
        }
        producer.flush();
        for (int i = 0; i < values.size(); i++) {
            assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset())
                    .as("offset of record %d", i)
                    .isEqualTo(i);
        }
    }

    /** Every value of partition 0 of {@code topic}, in offset order, read until {@code expected} came. */
    private static List<byte[]> readAll(StellflowServer server, String topic, int expected, String isolation) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:" + server.port());
        p.setProperty("auto.offset.reset", "earliest");
        p.setProperty("isolation.level", isolation);
        p.setProperty("fetch.max.wait.ms", "50");
        List<byte[]> values = new ArrayList<>();
        try (StellflowConsumer c = new StellflowConsumer(p)) {
            List<TopicPartition> tps = List.of(new TopicPartition(topic, 0));
            c.assign(tps);
            c.seekToBeginning(tps);
            Wait.until(
                    WAIT,
                    () -> {
                        for (ConsumerRecord r : c.poll(Duration.ofMillis(100))) {
                            values.add(r.value());
                        }
                        return values.size() >= expected;
                    },
                    "records of " + topic);
        }
        assertThat(values).hasSize(expected);
        return values;
    }

    /** Sizes in bytes of the batches stored in partition 0 of {@code topic}, in offset order. */
    private static List<Integer> storedBatchBytes(StellflowServer server, String topic) throws Exception {
        ByteBuf stored = Unpooled.buffer();
        try {
            TestBroker.partition(server, topic, 0).log().readInto(0, Integer.MAX_VALUE, Long.MAX_VALUE, true, stored);
            List<Integer> sizes = new ArrayList<>();
            for (int pos = stored.readerIndex(); pos < stored.writerIndex(); ) {
                int size = RecordBatchLayout.batchSize(stored, pos);
                sizes.add(size);
                pos += size;
            }
            return sizes;
        } finally {
            stored.release();
        }
    }

    private static void assertSameValues(List<byte[]> read, List<byte[]> sent) {
        assertThat(read).hasSameSizeAs(sent);
        for (int i = 0; i < sent.size(); i++) {
            assertThat(Arrays.equals(read.get(i), sent.get(i)))
                    .as("value at offset %d", i)
                    .isTrue();
        }
    }

    @ParameterizedTest(name = "compression={0} idempotence={1}")
    @CsvSource({
        "none, false",
        "none, true",
        "lz4, false",
        "lz4, true",
        "zstd, false",
        "zstd, true",
    })
    void batchesAboveMessageMaxBytesAreSplitAndDeliveredInSendOrder(String compression, String idempotence)
            throws Exception {
        StellflowServer server = server();
        String topic = topic(server, Map.of());
        // 1500 records of ~130 bytes, incompressible: one ~190 KB batch, 4 KiB fits ~30 of them.
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            values.add(randomValue(i, 100));
        }
        try (StellflowProducer producer = new StellflowProducer(
                producerProps(server, "compression.type", compression, "enable.idempotence", idempotence))) {
            sendAll(producer, topic, values);
        }
        assertSameValues(readAll(server, topic, values.size(), "read_uncommitted"), values);
    }

    /**
     * Topic {@code compression.type=uncompressed}, producer lz4, very compressible values: the batch
     * as sent fits in 4 KiB, the broker's decompressed batch (about 14 KB) does not, and the broker
     * answers MESSAGE_TOO_LARGE; split down to batches whose records fit uncompressed.
     */
    @ParameterizedTest(name = "idempotence={0}")
    @CsvSource({"false", "true"})
    void aBatchThatOnlyTheTopicsDecompressionMakesTooLargeIsSplitAndDelivered(String idempotence) throws Exception {
        StellflowServer server = server();
        String topic = topic(server, Map.of("compression.type", "uncompressed"));
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            values.add(String.format("value-%05d-%s", i, "x".repeat(200)).getBytes(StandardCharsets.US_ASCII));
        }
        assertCompressedFitsButPlainDoesNot(values);
        Properties props = producerProps(server, "compression.type", "lz4", "enable.idempotence", idempotence);
        props.setProperty("batch.size", Integer.toString(32 << 10)); // one batch of all 60 at the flush
        try (StellflowProducer producer = new StellflowProducer(props)) {
            sendAll(producer, topic, values);
        }
        assertSameValues(readAll(server, topic, values.size(), "read_uncommitted"), values);
    }

    /** The premise: the 60 records as one lz4 batch fit in message.max.bytes, uncompressed they do not. */
    private static void assertCompressedFitsButPlainDoesNot(List<byte[]> values) {
        ByteBuf plain = Unpooled.buffer();
        ByteBuf lz4 = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(CompressionType.LZ4, CompressionConfig.DEFAULT)) {
            RecordBatchBuilder b = new RecordBatchBuilder(plain, 0);
            for (byte[] v : values) {
                b.append(0, null, v);
            }
            b.close();
            BatchCompression.compress(plain, 0, codec, lz4);
            assertThat(lz4.readableBytes()).as("lz4 batch").isLessThan(MESSAGE_MAX_BYTES);
            assertThat(plain.readableBytes()).as("plain batch").isGreaterThan(3 * MESSAGE_MAX_BYTES);
        } finally {
            plain.release();
            lz4.release();
        }
    }

    @ParameterizedTest(name = "idempotence={0}")
    @CsvSource({"false", "true"})
    void aSingleRecordTooLargeFailsWithTheReasonAndTheRecordsAfterItAreDelivered(String idempotence) throws Exception {
        StellflowServer server = server();
        String topic = topic(server, Map.of());
        Properties props = producerProps(server, "enable.idempotence", idempotence, "linger.ms", "0");
        if (!Boolean.parseBoolean(idempotence)) {
            // Without idempotence a request already in flight when an earlier one is refused as too
            // large is appended before that one's halves (as in Kafka: ProducerSender's class comment);
            // one request in flight keeps the offsets checked below in send order.
            props.setProperty("max.in.flight.requests.per.connection", "1");
        }
        List<byte[]> after = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            after.add(randomValue(i, 100));
        }
        try (StellflowProducer producer = new StellflowProducer(props)) {
            CompletableFuture<RecordMetadata> tooLarge =
                    producer.send(new ProducerRecord(topic, 0, null, randomValue(-1, 2 * MESSAGE_MAX_BYTES)));
            Throwable e = tooLarge.handle((r, err) -> err).get(15, TimeUnit.SECONDS);
            assertThat(e).isInstanceOf(StellflowException.class);
            assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(e.getMessage()).contains("this record alone is too large");
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (byte[] v : after) {
                futures.add(producer.send(new ProducerRecord(topic, 0, null, v)));
            }
            producer.flush();
            for (int i = 0; i < after.size(); i++) {
                assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
            }
        }
        assertSameValues(readAll(server, topic, after.size(), "read_uncommitted"), after);
    }

    /**
     * A transaction aborted while its batches are being refused and split (the abort right after
     * the sends, {@code linger.ms} 0 so they are on their way): the abort returns, each record was
     * either never sent ({@link TransactionAbortedException}) or appended and aborted, and the
     * producer's next transaction (a new epoch after the sequence hole) commits; {@code
     * read_committed} reads exactly it, in order.
     */
    @Test
    void aTransactionAbortedWhileItsBatchesAreSplitLeavesNothingAndTheNextOneCommits() throws Exception {
        StellflowServer server = server();
        String topic = topic(server, Map.of());
        Properties props = producerProps(
                server,
                "transactional.id",
                "split-abort-tx",
                "transaction.timeout.ms",
                "30000",
                "compression.type",
                "lz4",
                "linger.ms",
                "0");
        List<byte[]> committed = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            committed.add(randomValue(10_000 + i, 100));
        }
        try (StellflowProducer producer = new StellflowProducer(props)) {
            producer.initTransactions();
            producer.beginTransaction();
            List<CompletableFuture<RecordMetadata>> aborted = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                aborted.add(producer.send(new ProducerRecord(topic, 0, null, randomValue(i, 100))));
            }
            producer.abortTransaction();
            for (CompletableFuture<RecordMetadata> f : aborted) {
                Throwable e = f.handle((m, err) -> err).get(5, TimeUnit.SECONDS);
                if (e != null) {
                    assertThat(e).isInstanceOf(TransactionAbortedException.class);
                }
            }
            producer.beginTransaction();
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (byte[] v : committed) {
                futures.add(producer.send(new ProducerRecord(topic, 0, null, v)));
            }
            producer.commitTransaction();
            for (CompletableFuture<RecordMetadata> f : futures) {
                assertThat(f.get(5, TimeUnit.SECONDS).offset()).isNotNegative();
            }
        }
        assertSameValues(readAll(server, topic, committed.size(), "read_committed"), committed);
    }

    /**
     * The broker's limit is 1 MiB, the topic's {@code max.message.bytes} 4 KiB: the ~190 KB batch is
     * split down to batches the topic takes, every record arrives in send order; the same records to
     * a topic without the override go as one batch (the broker's limit applies).
     */
    @ParameterizedTest(name = "compression={0} idempotence={1}")
    @CsvSource({"none, false", "none, true", "zstd, true"})
    void batchesAboveTheTopicsMaxMessageBytesAreSplitAndDeliveredInSendOrder(String compression, String idempotence)
            throws Exception {
        StellflowServer server = DEFAULT_LIMIT_NODES.get("nio");
        String limited = topic(server, Map.of("max.message.bytes", Integer.toString(MESSAGE_MAX_BYTES)));
        String open = topic(server, Map.of());
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            values.add(randomValue(i, 100));
        }
        try (StellflowProducer producer = new StellflowProducer(
                producerProps(server, "compression.type", compression, "enable.idempotence", idempotence))) {
            sendAll(producer, limited, values);
            sendAll(producer, open, values);
        }
        assertSameValues(readAll(server, limited, values.size(), "read_uncommitted"), values);
        List<Integer> limitedBatches = storedBatchBytes(server, limited);
        assertThat(limitedBatches)
                .hasSizeGreaterThan(30)
                .allSatisfy(bytes -> assertThat(bytes).isLessThanOrEqualTo(MESSAGE_MAX_BYTES));
        assertSameValues(readAll(server, open, values.size(), "read_uncommitted"), values);
        assertThat(storedBatchBytes(server, open))
                .singleElement()
                .satisfies(bytes -> assertThat(bytes).isGreaterThan(10 * MESSAGE_MAX_BYTES));
    }

    /**
     * A record whose batch is above the topic's {@code max.message.bytes} (and far below the broker's
     * 1 MiB) fails with a {@link RecordTooLargeException} naming the topic's limit; the records after
     * it go on, and the same record is taken by a topic without the override.
     */
    @Test
    void aSingleRecordAboveTheTopicsMaxMessageBytesFailsNamingTheTopicsLimit() throws Exception {
        StellflowServer server = DEFAULT_LIMIT_NODES.get("nio");
        String limited = topic(server, Map.of("max.message.bytes", Integer.toString(MESSAGE_MAX_BYTES)));
        String open = topic(server, Map.of());
        byte[] large = randomValue(-1, 2 * MESSAGE_MAX_BYTES);
        List<byte[]> after = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            after.add(randomValue(i, 100));
        }
        try (StellflowProducer producer = new StellflowProducer(producerProps(server, "linger.ms", "0"))) {
            Throwable e = producer.send(new ProducerRecord(limited, 0, null, large))
                    .handle((r, err) -> err)
                    .get(15, TimeUnit.SECONDS);
            assertThat(e).isInstanceOf(RecordTooLargeException.class);
            assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE);
            assertThat(e.getMessage())
                    .startsWith("produce to " + limited + "-0 refused: a batch of " + (large.length + 86)
                            + " bytes as sent holding one record is larger than the topic's max.message.bytes (the"
                            + " broker's message.max.bytes for a topic without one)")
                    .contains("this record alone is too large")
                    .endsWith("(MESSAGE_TOO_LARGE 12)");
            sendAll(producer, limited, after);
            assertThat(producer.send(new ProducerRecord(open, 0, null, large))
                            .get(5, TimeUnit.SECONDS)
                            .offset())
                    .isZero();
        }
        assertSameValues(readAll(server, limited, after.size(), "read_uncommitted"), after);
    }

    @Test
    void aTransactionsBatchIsSplitAndCommittedAndReadCommittedSeesItInOrder() throws Exception {
        StellflowServer server = server();
        String topic = topic(server, Map.of());
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            values.add(randomValue(i, 100));
        }
        Properties props = producerProps(
                server, "transactional.id", "split-tx", "transaction.timeout.ms", "30000", "compression.type", "lz4");
        try (StellflowProducer producer = new StellflowProducer(props)) {
            producer.initTransactions();
            producer.beginTransaction();
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            for (byte[] v : values) {
                futures.add(producer.send(new ProducerRecord(topic, 0, null, v)));
            }
            producer.commitTransaction();
            // Offset 0 is the transaction's BEGIN marker: the records follow it, consecutive.
            long first = futures.get(0).get(5, TimeUnit.SECONDS).offset();
            for (int i = 0; i < values.size(); i++) {
                assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(first + i);
            }
        }
        assertSameValues(readAll(server, topic, values.size(), "read_committed"), values);
    }
}
