package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.testsupport.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue #21, client side: the producer compresses whole batches with {@code compression.type} (9.o),
 * sizes them by estimated compressed bytes, and the consumer reads them back through its reusable
 * expansion buffer; a malformed or over-cap batch fails {@code poll} naming the partition and offset.
 * Against {@link FakeBroker} (which validates compressed batches by decoding them whole).
 */
@IntegrationTest
class CompressionRoundTripTest {
    private static final int BATCH_SIZE = 16_384;

    private static Properties props(FakeBroker broker, String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", broker.bootstrap());
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    /** A JSON-like log line from a fixed seed: repeated field names, varying values. */
    private static byte[] line(SplittableRandom r, int i) {
        String[] levels = {"INFO", "INFO", "INFO", "WARN", "ERROR"};
        return ("{\"ts\":" + (1_700_000_000_000L + i) + ",\"level\":\"" + levels[r.nextInt(levels.length)]
                        + "\",\"service\":\"orders-" + r.nextInt(12) + "\",\"trace\":\""
                        + Long.toHexString(r.nextLong())
                        + "\",\"path\":\"/api/v1/orders/" + r.nextInt(100_000) + "\",\"status\":"
                        + (r.nextInt(10) == 0 ? 500 : 200) + ",\"ms\":" + r.nextInt(900) + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static List<ConsumerRecord> pollUntil(StellflowConsumer c, int n) {
        List<ConsumerRecord> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            out.addAll(c.poll(Duration.ofMillis(100)));
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void everyCodecRoundTripsThroughProducerAndConsumerWithBatchesSizedByCompressedBytes(CompressionType type)
            throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        int rounds = 8;
        int perRound = 1500;
        List<byte[]> sent = new ArrayList<>();
        long uncompressedBytes = 0;
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            List<Integer> lastRoundBatchBytes = new ArrayList<>();
            try (StellflowProducer producer = new StellflowProducer(props(
                    broker,
                    "compression.type",
                    type.configName(),
                    "batch.size",
                    Integer.toString(BATCH_SIZE),
                    "linger.ms",
                    "60000"))) {
                SplittableRandom r = new SplittableRandom(21);
                List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    int before = broker.log(tp).size();
                    for (int i = 0; i < perRound; i++) {
                        byte[] value = line(r, sent.size());
                        sent.add(value);
                        uncompressedBytes += value.length;
                        futures.add(producer.send(new ProducerRecord("t", 0, null, value)));
                    }
                    producer.flush(); // every batch compressed, and the partition's ratio learned
                    if (round == rounds - 1) {
                        List<FakeBroker.StoredBatch> log = broker.log(tp);
                        for (int b = before; b < log.size() - 1; b++) { // all but the round's partial tail
                            lastRoundBatchBytes.add(log.get(b).bytes().length);
                        }
                    }
                }
                for (int i = 0; i < futures.size(); i++) {
                    assertThat(futures.get(i).get(5, TimeUnit.SECONDS).offset()).isEqualTo(i);
                }
            }
            List<FakeBroker.StoredBatch> log = broker.log(tp);
            long storedBytes = 0;
            for (FakeBroker.StoredBatch b : log) {
                ByteBuf bytes = Unpooled.wrappedBuffer(b.bytes());
                assertThat(RecordBatchLayout.attributes(bytes, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .isEqualTo(type.id());
                storedBytes += b.bytes().length;
            }
            assertThat(storedBytes).isLessThan(uncompressedBytes * 6 / 10);
            // batch.size counts compressed bytes once the ratio is learned: full batches come out
            // a little under batch.size, not near batch.size times the ratio (what counting raw
            // bytes gives), and never above it (a batch that would be is split in two).
            assertThat(lastRoundBatchBytes)
                    .isNotEmpty()
                    .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(BATCH_SIZE));
            List<Integer> sorted = new ArrayList<>(lastRoundBatchBytes);
            sorted.sort(null);
            // Counting raw bytes would give batch.size / ratio (a third or less here); the median is
            // held above half, not tighter: gzip's ratio moves from batch to batch (one run's median
            // was 0.58 of batch.size).
            assertThat(sorted.get(sorted.size() / 2)).as("median").isGreaterThan(BATCH_SIZE / 2);

            try (StellflowConsumer consumer = new StellflowConsumer(props(broker, "auto.offset.reset", "earliest"))) {
                consumer.assign(List.of(tp));
                List<ConsumerRecord> got = pollUntil(consumer, sent.size());
                assertThat(got).hasSize(sent.size());
                for (int i = 0; i < sent.size(); i++) {
                    assertThat(got.get(i).offset()).isEqualTo(i);
                    assertThat(got.get(i).value()).isEqualTo(sent.get(i));
                }
            }
        }
    }

    /** A batch of {@code records} values of {@code valueBytes} 'a's, compressed with {@code type}. */
    private static ByteBuf compressedBatch(CompressionType type, int records, int valueBytes) {
        return compressed(type, plainBatch(records, valueBytes));
    }

    /** An uncompressed batch of {@code records} values of {@code valueBytes} 'a's, from offset delta 0. */
    private static ByteBuf plainBatch(int records, int valueBytes) {
        ByteBuf plain = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(plain, 1000L);
        byte[] value = new byte[valueBytes];
        java.util.Arrays.fill(value, (byte) 'a');
        for (int i = 0; i < records; i++) {
            b.append(1000L + i, null, value);
        }
        b.close();
        return plain;
    }

    /** {@code plain} compressed with {@code type} (released). */
    private static ByteBuf compressed(CompressionType type, ByteBuf plain) {
        ByteBuf out = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            BatchCompression.compress(plain, 0, codec, out);
        } finally {
            plain.release();
        }
        return out;
    }

    /**
     * Polls until a poll fails, adding what the polls before it handed out to {@code got}.
     *
     * @return the failure, or null when none came within 20 s
     */
    private static StellflowException pollUntilFailure(StellflowConsumer c, List<ConsumerRecord> got) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                got.addAll(c.poll(Duration.ofMillis(100)));
            } catch (StellflowException e) {
                return e;
            }
        }
        return null;
    }

    /**
     * Issue #21: the broker accepts a compressed batch up to its {@code
     * compression.max.decompressed.bytes} (64 MiB by default), so a default consumer must read one
     * that expands to more than {@code fetch.max.bytes} (50 MiB by default), which bounds an answer's
     * compressed bytes, not a batch's expansion. 53 values of 1 MiB: about 53 MiB (55.6 MB)
     * decompressed, at most 2.6 MB compressed (snappy), in one answer with a small batch either side.
     */
    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aDefaultConsumerReadsABatchTheBrokerAcceptsThatExpandsPastFetchMaxBytes(CompressionType type)
            throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        int bigRecords = 53;
        int valueBytes = 1 << 20;
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            ByteBuf before = compressedBatch(type, 3, 10);
            broker.append(tp, before); // offsets 0-2
            before.release();
            ByteBuf plain = plainBatch(bigRecords, valueBytes);
            int expandedBytes = plain.readableBytes() - RecordBatchLayout.HEADER_SIZE;
            assertThat(expandedBytes)
                    .isGreaterThan(50 << 20) // the default fetch.max.bytes
                    .isLessThan(64 << 20); // the broker's default compression.max.decompressed.bytes
            ByteBuf big = compressed(type, plain);
            assertThat(big.readableBytes()).isLessThan(4 << 20); // snappy: 2.6 MB; one answer
            broker.append(tp, big); // offsets 3-55
            big.release();
            ByteBuf after = compressedBatch(type, 3, 10);
            broker.append(tp, after); // offsets 56-58
            after.release();
            try (StellflowConsumer consumer = new StellflowConsumer(props(broker, "auto.offset.reset", "earliest"))) {
                consumer.assign(List.of(tp));
                List<ConsumerRecord> got = pollUntil(consumer, 59);
                assertThat(got).extracting(ConsumerRecord::offset).containsExactlyElementsOf(offsets(0, 59));
                for (int i = 3; i < 56; i++) {
                    assertThat(got.get(i).value()).hasSize(valueBytes);
                }
            }
        }
    }

    private static List<Long> offsets(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long o = from; o < to; o++) {
            out.add(o);
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aBatchExpandingPastTheConsumersCapFailsPollNamingPartitionAndOffsetAfterTheRecordsBeforeIt(
            CompressionType type) throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            ByteBuf small = compressedBatch(type, 3, 10);
            broker.append(tp, small); // offsets 0-2
            small.release();
            ByteBuf bomb = compressedBatch(type, 4, 100_000); // 400 KB of 'a' in a few KB
            assertThat(bomb.readableBytes()).isLessThan(40_000);
            broker.append(tp, bomb); // offsets 3-6
            bomb.release();
            try (StellflowConsumer consumer = new StellflowConsumer(
                    props(broker, "auto.offset.reset", "earliest", "compression.max.decompressed.bytes", "200000"))) {
                consumer.assign(List.of(tp));
                List<ConsumerRecord> got = new ArrayList<>();
                assertThat(pollUntilFailure(consumer, got))
                        .isNotNull()
                        .satisfies(e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD))
                        .hasMessageContaining("bad record batch from t-0")
                        .hasMessageContaining("compressed batch at offset 3: " + type.configName()
                                + " stream decompresses to more than 200000 bytes");
                // The good batch before the bad one was handed out (in the same answer), nothing past it.
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
                assertThat(consumer.position(tp)).isEqualTo(3);
            }
        }
    }

    /**
     * The error held back for a bad batch behind records a poll handed out is dropped when the
     * application seeks past the bad batch before its next poll, and never thrown twice.
     */
    @Test
    void aSeekPastTheBadBatchBeforeTheNextPollDropsTheHeldError() throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            ByteBuf small = compressedBatch(CompressionType.ZSTD, 3, 10);
            broker.append(tp, small); // offsets 0-2
            small.release();
            ByteBuf bomb = compressedBatch(CompressionType.ZSTD, 4, 100_000);
            broker.append(tp, bomb); // offsets 3-6, over the cap below
            bomb.release();
            ByteBuf after = compressedBatch(CompressionType.ZSTD, 2, 10);
            broker.append(tp, after); // offsets 7-8
            after.release();
            try (StellflowConsumer consumer = new StellflowConsumer(
                    props(broker, "auto.offset.reset", "earliest", "compression.max.decompressed.bytes", "200000"))) {
                consumer.assign(List.of(tp));
                // The first answer holds all three batches: the poll hands out 0-2 and holds the error.
                List<ConsumerRecord> first = pollUntil(consumer, 3);
                assertThat(first).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
                assertThat(consumer.position(tp)).isEqualTo(3);
                consumer.seek(tp, 7);
                assertThat(pollUntil(consumer, 2))
                        .extracting(ConsumerRecord::offset)
                        .containsExactly(7L, 8L);
                // Back to the bad batch: it fails again, from a fresh fetch, once per poll.
                consumer.seek(tp, 3);
                assertThat(pollUntilFailure(consumer, new ArrayList<>()))
                        .isNotNull()
                        .hasMessageContaining("compressed batch at offset 3");
                assertThat(consumer.position(tp)).isEqualTo(3);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aMalformedStreamWithAValidCrcFailsPollWithCorruptMessage(CompressionType type) throws Exception {
        TopicPartition tp = new TopicPartition("t", 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            ByteBuf good = compressedBatch(type, 20, 50);
            ByteBuf cut = Unpooled.buffer();
            cut.writeBytes(good, 0, good.readableBytes() - 9); // a truncated container
            good.release();
            cut.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, cut.readableBytes() - RecordBatchLayout.LOG_OVERHEAD);
            cut.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(cut, 0));
            broker.append(tp, cut);
            cut.release();
            try (StellflowConsumer consumer = new StellflowConsumer(props(broker, "auto.offset.reset", "earliest"))) {
                consumer.assign(List.of(tp));
                assertThatThrownBy(() -> pollUntil(consumer, 20))
                        .isInstanceOfSatisfying(
                                StellflowException.class,
                                e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE))
                        .hasMessageContaining("bad record batch from t-0: compressed batch at offset 0: "
                                + type.configName() + " stream is malformed");
                assertThat(consumer.position(tp)).isZero();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void aBadRecordBehindAGoodBatchOfOneAnswerFailsPollAsTheLazyPathDoes(CompressionType type) throws Exception {
        // zstd, gzip and snappy answers are expanded ahead (FetchExpander), which validates each
        // batch as it expands it and refuses the answer at the bad one; poll then decodes the answer
        // as sent and must fail the same way the lazy path (lz4) does.
        TopicPartition tp = new TopicPartition("t", 0);
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            ByteBuf good = compressedBatch(type, 5, 50);
            broker.append(tp, good); // offsets 0-4
            good.release();
            ByteBuf plain = plainBatch(10, 2);
            // The record count says 11: the walk over the decompressed records runs out of bytes.
            plain.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, 11);
            plain.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 10);
            ByteBuf bad = compressed(type, plain);
            broker.append(tp, bad); // offsets 5-15
            bad.release();
            try (StellflowConsumer consumer = new StellflowConsumer(props(broker, "auto.offset.reset", "earliest"))) {
                consumer.assign(List.of(tp));
                List<ConsumerRecord> got = new ArrayList<>();
                assertThat(pollUntilFailure(consumer, got))
                        .isNotNull()
                        .satisfies(e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD))
                        .hasMessageContaining("bad record batch from t-0: compressed batch at offset 5 holds invalid "
                                + "records: INVALID_RECORD");
                // As Kafka's consumer: the good batch of the answer was handed out first, and the
                // error comes when the application reaches the bad batch; the next poll refetches it
                // and fails the same way.
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
                assertThat(consumer.position(tp)).isEqualTo(5);
                assertThatThrownBy(() -> consumer.poll(Duration.ofSeconds(5)))
                        .isInstanceOf(StellflowException.class)
                        .hasMessageContaining("compressed batch at offset 5 holds invalid records");
                assertThat(consumer.position(tp)).isEqualTo(5);
            }
        }
    }
}
