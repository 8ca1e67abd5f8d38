package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
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
 * Compression off the sender thread ({@link ProducerCompressionQueue}), end to end against {@link
 * FakeBroker}: per-partition order with several sending threads, idempotent sequences across
 * retries, {@code linger.ms}, a slow compression of one partition not holding back another, {@code
 * flush} and {@code close} while a batch is being compressed, {@code buffer.memory} while batches
 * wait for a codec, and a codec failure as a send error.
 */
class ProducerCompressionPipelineTest {
    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        p.setProperty("retry.backoff.ms", "20");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    private static byte[] value(int partition, int n) {
        return ("{\"ts\":" + (1_700_000_000_000L + n) + ",\"level\":\"INFO\",\"partition\":" + partition + ",\"n\":" + n
                        + ",\"msg\":\"order " + (n * 7919 % 10_007) + " served from cache\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The partition's stored values in log order, each stored batch checked to be compressed with {@code type}. */
    private static List<String> storedValues(FakeBroker broker, TopicPartition tp, CompressionType type) {
        List<String> values = new ArrayList<>();
        try (RecordBatchDecompressor d = new RecordBatchDecompressor(64 << 20)) {
            for (FakeBroker.StoredBatch b : broker.log(tp)) {
                ByteBuf buf = Unpooled.wrappedBuffer(b.bytes());
                assertThat(RecordBatchLayout.attributes(buf, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .isEqualTo(type.id());
                RecordBatchReader.decode(
                        buf,
                        b.baseOffset(),
                        true,
                        d,
                        (o, ts, k, v, h) -> values.add(new String(v, StandardCharsets.UTF_8)));
            }
        }
        return values;
    }

    private static void assertWrittenOnceInOrder(
            FakeBroker broker,
            TopicPartition tp,
            CompressionType type,
            List<CompletableFuture<RecordMetadata>> futures,
            List<byte[]> sent)
            throws Exception {
        for (int i = 0; i < futures.size(); i++) {
            assertThat(futures.get(i).get(10, TimeUnit.SECONDS).offset()).isEqualTo(i);
        }
        List<String> stored = storedValues(broker, tp, type);
        assertThat(stored).hasSize(sent.size());
        for (int i = 0; i < sent.size(); i++) {
            assertThat(stored.get(i)).isEqualTo(new String(sent.get(i), StandardCharsets.UTF_8));
        }
    }

    @Test
    void everyPartitionKeepsSendOrderWithSeveralThreadsSealingAndCompressing() throws Exception {
        int partitions = 3;
        int perPartition = 4000;
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", partitions);
            List<List<CompletableFuture<RecordMetadata>>> futures = new ArrayList<>();
            List<List<byte[]>> sent = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                futures.add(new ArrayList<>());
                sent.add(new ArrayList<>());
            }
            try (StellflowProducer producer = new StellflowProducer(
                    props(broker, "compression.type", "zstd", "batch.size", "4096", "linger.ms", "1", "acks", "1"))) {
                // Thread p sends to partition p: batches fill (sealed by the sending thread) and linger
                // out (sealed by the sender), and the three threads and the compressor thread compress.
                Thread[] threads = new Thread[partitions];
                for (int p = 0; p < partitions; p++) {
                    int partition = p;
                    threads[p] = Thread.ofPlatform().start(() -> {
                        for (int n = 0; n < perPartition; n++) {
                            byte[] v = value(partition, n);
                            sent.get(partition).add(v);
                            futures.get(partition).add(producer.send(new ProducerRecord("t", partition, null, v)));
                            if (n % 500 == 0) {
                                sleep(3); // let a batch linger out now and then
                            }
                        }
                    });
                }
                for (Thread t : threads) {
                    t.join(30_000);
                }
                producer.flush();
            }
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition("t", p);
                assertWrittenOnceInOrder(broker, tp, CompressionType.ZSTD, futures.get(p), sent.get(p));
                assertThat(broker.log(tp).size()).as("many batches").isGreaterThan(10);
            }
        }
    }

    @Test
    void idempotentSequencesStayContiguousWhenCompressedBatchesAreRetried() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            // The first request fails retriably; the two after it, already in flight, are refused out of
            // order (answers come newest first) and retried in order after it, compressed as they were.
            broker.holdAndReverse(3, ApiKeys.PRODUCE);
            broker.failNextProduce(tp, Errors.NOT_LEADER_OR_FOLLOWER);
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            List<byte[]> sent = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(
                    props(broker, "enable.idempotence", "true", "compression.type", "lz4", "linger.ms", "0"))) {
                for (int group = 0; group < 3; group++) {
                    for (int i = 0; i < 50; i++) {
                        byte[] v = value(0, sent.size());
                        sent.add(v);
                        futures.add(producer.send(new ProducerRecord("t", 0, null, v)));
                    }
                    Thread.sleep(100);
                }
                producer.flush();
            }
            assertWrittenOnceInOrder(broker, tp, CompressionType.LZ4, futures, sent);
            assertThat(broker.outOfOrderAnswers.get()).isGreaterThanOrEqualTo(2);
            assertThat(broker.initProducerIdRequests.get()).isEqualTo(1);
            // Stored batches: one producer id, base sequences continuing record by record.
            int nextSequence = 0;
            for (FakeBroker.StoredBatch b : broker.log(tp)) {
                ByteBuf buf = Unpooled.wrappedBuffer(b.bytes());
                assertThat(RecordBatchLayout.producerId(buf, 0)).isEqualTo(1000);
                assertThat(RecordBatchLayout.baseSequence(buf, 0)).isEqualTo(nextSequence);
                nextSequence += RecordBatchLayout.recordCount(buf, 0);
            }
            assertThat(nextSequence).isEqualTo(sent.size());
        }
    }

    @Test
    void aLingeringBatchIsSealedAtLingerMsCompressedAndSentWithoutAFlush() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            try (StellflowProducer producer = new StellflowProducer(
                    props(broker, "compression.type", "gzip", "batch.size", "1048576", "linger.ms", "50"))) {
                long startNs = System.nanoTime();
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                List<byte[]> sent = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    sent.add(value(0, i));
                    futures.add(producer.send(new ProducerRecord("t", 0, null, sent.get(i))));
                }
                assertWrittenOnceInOrder(broker, tp, CompressionType.GZIP, futures, sent);
                assertThat(Duration.ofNanos(System.nanoTime() - startNs)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
                assertThat(broker.log(tp)).hasSize(1);
            }
        }
    }

    @Test
    void aRecordThatDoesNotFitOpensItsBatchOnlyAfterTheSendingThreadCompressedTheFullOne() throws Exception {
        // Each compression takes 100 ms, longer than linger.ms: a batch opened before the sending thread
        // compresses the full one would linger out meanwhile and go with one record (issue #21).
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 0, 0);
        script.delayMs = 100;
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerConfig config = ProducerConfig.from(
                    props(broker, "compression.type", "lz4", "batch.size", "4096", "linger.ms", "20", "acks", "1"));
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            List<byte[]> sent = new ArrayList<>();
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                for (int n = 0; n < 1500; n++) {
                    sent.add(value(0, n));
                    futures.add(producer.send(new ProducerRecord("t", 0, null, sent.get(n))));
                }
                producer.flush();
            }
            assertWrittenOnceInOrder(broker, tp, CompressionType.LZ4, futures, sent);
            List<FakeBroker.StoredBatch> log = broker.log(tp);
            assertThat(log.size()).as("batches").isGreaterThan(5);
            // Every batch but the last (the flush's tail) was full: dozens of records. One short batch is
            // allowed (a pause of the test's thread over linger.ms while one filled); the old order sent
            // a one-record batch after every full one.
            assertThat(log.subList(0, log.size() - 1))
                    .as("records per batch")
                    .filteredOn(b -> b.recordCount() <= 10)
                    .hasSizeLessThanOrEqualTo(1);
        }
    }

    @Test
    void aSlowCompressionOfOnePartitionDoesNotHoldBackAnother() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.ZSTD, 1, 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            ProducerConfig config = ProducerConfig.from(props(broker, "compression.type", "zstd", "linger.ms", "5"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                CompletableFuture<RecordMetadata> slow =
                        sendFromAnotherThread(producer, new ProducerRecord("t", 0, null, value(0, 0)));
                script.atGate.await(); // partition 0's batch, sealed at linger.ms, is stuck in its codec
                // Partition 1 goes on: its lingered batches are compressed by this thread's next sends.
                CompletableFuture<RecordMetadata> first = producer.send(new ProducerRecord("t", 1, null, value(1, 0)));
                List<CompletableFuture<RecordMetadata>> others = new ArrayList<>();
                long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!first.isDone() && System.nanoTime() < deadlineNs) {
                    Thread.sleep(10);
                    others.add(producer.send(new ProducerRecord("t", 1, null, value(1, others.size() + 1))));
                }
                assertThat(first.get(1, TimeUnit.SECONDS).offset()).isZero();
                assertThat(slow).as("partition 0 still compressing").isNotDone();
                script.open();
                assertThat(slow.get(10, TimeUnit.SECONDS).offset()).isZero();
                producer.flush();
                for (int i = 0; i < others.size(); i++) {
                    assertThat(others.get(i).get(10, TimeUnit.SECONDS).offset()).isEqualTo(i + 1);
                }
            }
        }
    }

    @Test
    void flushWaitsForABatchBeingCompressed() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.LZ4, 1, 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            ProducerConfig config = ProducerConfig.from(props(broker, "compression.type", "lz4", "linger.ms", "60000"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                CompletableFuture<RecordMetadata> a = producer.send(new ProducerRecord("t", 0, null, value(0, 0)));
                CompletableFuture<RecordMetadata> b = producer.send(new ProducerRecord("t", 1, null, value(1, 0)));
                CompletableFuture<Void> flushed = CompletableFuture.runAsync(() -> {
                    try {
                        producer.flush();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                script.atGate.await();
                Thread.sleep(200);
                assertThat(flushed).as("a batch is still in its codec").isNotDone();
                script.open();
                flushed.get(10, TimeUnit.SECONDS);
                assertThat(a).isCompleted();
                assertThat(b).isCompleted();
                assertThat(a.get().offset()).isZero();
                assertThat(b.get().offset()).isZero();
            }
        }
    }

    @Test
    void closeWhileABatchIsBeingCompressedSendsItBeforeReturning() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.SNAPPY, 1, 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerConfig config =
                    ProducerConfig.from(props(broker, "compression.type", "snappy", "linger.ms", "60000"));
            StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()));
            List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
            List<byte[]> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add(value(0, i));
                futures.add(producer.send(new ProducerRecord("t", 0, null, sent.get(i))));
            }
            CompletableFuture<Void> closed = CompletableFuture.runAsync(producer::close);
            script.atGate.await(); // close sealed the batch; the compressor thread is in the codec
            Thread.sleep(200);
            assertThat(closed).isNotDone();
            script.open();
            closed.get(10, TimeUnit.SECONDS);
            assertWrittenOnceInOrder(broker, tp, CompressionType.SNAPPY, futures, sent);
            assertThat(script.closed.get()).as("the producer's codecs freed").isEqualTo(script.made.get());
        }
    }

    @Test
    void bufferMemoryBlocksSendsWhileBatchesWaitForACodecAndFailsAfterMaxBlockMs() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.ZSTD, 1, 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            // One batch reserves batch.size = buffer.memory: the second batch cannot be opened until
            // the first is compressed, sent and acknowledged.
            ProducerConfig config = ProducerConfig.from(props(
                    broker,
                    "compression.type",
                    "zstd",
                    "batch.size",
                    "4096",
                    "buffer.memory",
                    "4096",
                    "max.block.ms",
                    "300",
                    "linger.ms",
                    "0"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                CompletableFuture<RecordMetadata> first =
                        sendFromAnotherThread(producer, new ProducerRecord("t", 0, null, value(0, 0)));
                script.atGate.await();
                long startNs = System.nanoTime();
                CompletableFuture<RecordMetadata> blocked =
                        producer.send(new ProducerRecord("t", 0, null, value(0, 1)));
                assertThat(Duration.ofNanos(System.nanoTime() - startNs))
                        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
                assertThat(blocked)
                        .failsWithin(1, TimeUnit.SECONDS)
                        .withThrowableOfType(ExecutionException.class)
                        .havingCause()
                        .isInstanceOf(StellflowException.class)
                        .withMessageContaining("buffer.memory exhausted for 300 ms");
                script.open();
                assertThat(first.get(10, TimeUnit.SECONDS).offset()).isZero();
                // Memory is back: the next send goes through.
                assertThat(producer.send(new ProducerRecord("t", 0, null, value(0, 2)))
                                .get(10, TimeUnit.SECONDS)
                                .offset())
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void aCodecFailureFailsThatBatchsSendsWithTheErrorAndLaterBatchesGoThrough() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.ZSTD, 0, 1);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerConfig config =
                    ProducerConfig.from(props(broker, "compression.type", "zstd", "linger.ms", "60000"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                List<CompletableFuture<RecordMetadata>> lost = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    lost.add(producer.send(new ProducerRecord("t", 0, null, value(0, i))));
                }
                producer.flush();
                for (CompletableFuture<RecordMetadata> f : lost) {
                    assertThat(f)
                            .failsWithin(1, TimeUnit.SECONDS)
                            .withThrowableOfType(ExecutionException.class)
                            .havingCause()
                            .isInstanceOf(StellflowException.class)
                            .withMessageContaining("compressing a batch of t-0 with zstd failed")
                            .withMessageContaining("scripted codec failure of call 1");
                    assertThat(((StellflowException) f.exceptionNow()).errorCode())
                            .isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
                }
                assertThat(broker.produceRequests.get())
                        .as("nothing sent for the failed batch")
                        .isZero();
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                List<byte[]> sent = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    sent.add(value(0, 100 + i));
                    futures.add(producer.send(new ProducerRecord("t", 0, null, sent.get(i))));
                }
                producer.flush();
                assertWrittenOnceInOrder(broker, tp, CompressionType.ZSTD, futures, sent);
            }
        }
    }

    /**
     * A transaction whose batch failed in the codec cannot commit: the records are lost, so the commit
     * throws and only an abort is allowed; the next transaction commits. Before the codec failure made
     * the transaction abortable, the commit succeeded without the failed records.
     */
    @Test
    void aCodecFailureInATransactionMakesItAbortable() throws Exception {
        ScriptedCodec.Script script = new ScriptedCodec.Script(CompressionType.ZSTD, 0, 1);
        try (FakeBroker broker = new FakeBroker()) {
            broker.transactionCoordinator = true;
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            ProducerConfig config = ProducerConfig.from(props(
                    broker,
                    "compression.type",
                    "zstd",
                    "linger.ms",
                    "60000",
                    "transactional.id",
                    "codec-failure",
                    "max.block.ms",
                    "10000"));
            try (StellflowProducer producer =
                    new StellflowProducer(config, null, ProducerCompression.of(config, script.codecs()))) {
                producer.initTransactions();
                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> lost = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    lost.add(producer.send(new ProducerRecord("t", 0, null, value(0, i))));
                }
                assertThatThrownBy(producer::commitTransaction)
                        .isInstanceOf(StellflowException.class)
                        .hasMessageContaining("abortTransaction");
                for (CompletableFuture<RecordMetadata> f : lost) {
                    assertThat(f).failsWithin(1, TimeUnit.SECONDS);
                }
                producer.abortTransaction();

                producer.beginTransaction();
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                List<byte[]> sent = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    sent.add(value(0, 100 + i));
                    futures.add(producer.send(new ProducerRecord("t", 0, null, sent.get(i))));
                }
                producer.commitTransaction();
                assertWrittenOnceInOrder(broker, tp, CompressionType.ZSTD, futures, sent);
            }
            assertThat(broker.events)
                    .as("no commit before the second transaction's")
                    .endsWith("end commit");
            assertThat(broker.events.indexOf("end commit")).isEqualTo(broker.events.size() - 1);
        }
    }

    /**
     * Sends on a thread of its own: a send may help compress a waiting batch, and with a gated codec
     * that would hold the test's thread at the gate.
     */
    private static CompletableFuture<RecordMetadata> sendFromAnotherThread(StellflowProducer producer, ProducerRecord r)
            throws Exception {
        CompletableFuture<CompletableFuture<RecordMetadata>> sent = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> sent.complete(producer.send(r)));
        return sent.thenCompose(f -> f);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
