package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class StellflowConsumerTest {

    private static void appendBatch(FakeBroker broker, TopicPartition tp, int count, int firstValue) {
        ByteBuf buf = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(buf, 1000L);
        for (int i = 0; i < count; i++) {
            b.append(1000L + i, null, ("v" + (firstValue + i)).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        broker.append(tp, buf);
    }

    private static List<ConsumerRecord> pollUntil(StellflowConsumer c, int n) {
        List<ConsumerRecord> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (out.size() < n && System.nanoTime() < deadline) {
            out.addAll(c.poll(Duration.ofMillis(100)));
        }
        return out;
    }

    @Test
    void offsetsAreComputedAcrossBatchesAndRecordsBelowThePositionAreSkipped() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            appendBatch(broker, tp, 3, 0); // offsets 0-2
            appendBatch(broker, tp, 4, 3); // offsets 3-6
            appendBatch(broker, tp, 2, 7); // offsets 7-8
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("auto.offset.reset", "earliest");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(tp));
                // Start inside the second batch: the broker returns it whole (baseOffsetDelta -2).
                consumer.seek(tp, 5);
                List<ConsumerRecord> got = pollUntil(consumer, 4);
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(5L, 6L, 7L, 8L);
                assertThat(got)
                        .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                        .containsExactly("v5", "v6", "v7", "v8");
                assertThat(got.get(0).timestampMs()).isEqualTo(1002L);
                assertThat(consumer.position(tp)).isEqualTo(9);

                consumer.seekToBeginning(List.of(tp));
                got = pollUntil(consumer, 9);
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);

                appendBatch(broker, tp, 2, 9);
                got = pollUntil(consumer, 2);
                assertThat(got).extracting(ConsumerRecord::offset).containsExactly(9L, 10L);
                assertThat(consumer.poll(Duration.ofMillis(100))).isEmpty();
                assertThat(consumer.endOffsets(List.of(tp))).containsEntry(tp, 11L);
            }
        }
    }

    @Test
    void seekBackReturnsTheRecordsNotTakenAgainPerPartition() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            TopicPartition t0 = new TopicPartition("t", 0);
            TopicPartition t1 = new TopicPartition("t", 1);
            appendBatch(broker, t0, 5, 0); // offsets 0-4
            appendBatch(broker, t1, 3, 0); // offsets 0-2
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("auto.offset.reset", "earliest");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(t0, t1));
                List<ConsumerRecord> got = pollUntil(consumer, 8);
                assertThat(consumer.position(t0)).isEqualTo(5);
                // give back t0's offsets 2-4 and t1's 1-2, in any order
                List<ConsumerRecord> back = got.stream()
                        .filter(r -> r.partition() == 0 ? r.offset() >= 2 : r.offset() >= 1)
                        .sorted((a, b) -> Long.compare(b.offset(), a.offset()))
                        .toList();
                consumer.seekBack(back);
                assertThat(consumer.position(t0)).isEqualTo(2);
                assertThat(consumer.position(t1)).isEqualTo(1);
                assertThat(pollUntil(consumer, 5))
                        .extracting(r -> r.partition() + ":" + r.offset())
                        .containsExactlyInAnyOrder("0:2", "0:3", "0:4", "1:1", "1:2");

                consumer.seekBack(List.of());
                assertThat(consumer.position(t0)).as("nothing to give back").isEqualTo(5);
            }
        }
    }

    @Test
    void producedRecordsComeBackFromSeveralPartitions() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 3);
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("linger.ms", "1");
            try (StellflowProducer producer = new StellflowProducer(p)) {
                for (int i = 0; i < 300; i++) {
                    producer.send(new ProducerRecord("t", i % 3, null, ("m" + i).getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
            }
            p.setProperty("auto.offset.reset", "earliest");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(
                        List.of(new TopicPartition("t", 0), new TopicPartition("t", 1), new TopicPartition("t", 2)));
                List<ConsumerRecord> got = pollUntil(consumer, 300);
                assertThat(got).hasSize(300);
                for (ConsumerRecord r : got) {
                    int i = Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8).substring(1));
                    assertThat(r.partition()).isEqualTo(i % 3);
                    assertThat(r.offset()).isEqualTo(i / 3);
                }
            }
        }
    }

    @Test
    void aCorruptBatchFailsEveryPollUntilSeekedPastAndNothingAfterItIsSkippedSilently() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            appendBatch(broker, tp, 2, 0); // offsets 0-1
            ByteBuf bad = Unpooled.buffer();
            RecordBatchBuilder b = new RecordBatchBuilder(bad, 1000L);
            b.append(1000L, null, "v2".getBytes(StandardCharsets.UTF_8));
            b.close();
            bad.setByte(bad.writerIndex() - 1, bad.getByte(bad.writerIndex() - 1) ^ 0x01); // CRC no longer matches
            broker.append(tp, bad); // offset 2
            appendBatch(broker, tp, 2, 3); // offsets 3-4
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("auto.offset.reset", "earliest");
            // One batch per Fetch, so the good batch before the bad one arrives on its own.
            p.setProperty("max.partition.fetch.bytes", "1");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(tp));
                assertThat(pollUntil(consumer, 2))
                        .extracting(ConsumerRecord::offset)
                        .containsExactly(0L, 1L);
                for (int attempt = 0; attempt < 3; attempt++) {
                    assertThatThrownBy(() -> pollUntil(consumer, 1))
                            .isInstanceOf(StellflowException.class)
                            .satisfies(e -> assertThat(((StellflowException) e).errorCode())
                                    .isEqualTo(Errors.CORRUPT_MESSAGE));
                    assertThat(consumer.position(tp)).isEqualTo(2);
                }
                consumer.seek(tp, 3);
                assertThat(pollUntil(consumer, 2))
                        .extracting(ConsumerRecord::offset)
                        .containsExactly(3L, 4L);
            }
        }
    }

    /**
     * A batch whose value byte changed after its CRC was computed: with {@code check.crcs=true} (the
     * default) poll fails with CORRUPT_MESSAGE and hands out nothing of it; with {@code false} the
     * CRC is not checked and the damaged value reaches the application, as in Kafka.
     */
    @Test
    void checkCrcsDecidesWhetherADamagedValueIsAnErrorOrHandedOut() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            ByteBuf damaged = Unpooled.buffer();
            RecordBatchBuilder b = new RecordBatchBuilder(damaged, 1000L);
            b.append(1000L, null, "v2".getBytes(StandardCharsets.UTF_8));
            b.close();
            int at = indexOf(damaged, "v2".getBytes(StandardCharsets.UTF_8)) + 1;
            damaged.setByte(at, '3'); // the value becomes "v3"; the CRC still covers "v2"
            broker.append(tp, damaged);
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("auto.offset.reset", "earliest");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(tp));
                assertThatThrownBy(() -> pollUntil(consumer, 1))
                        .isInstanceOf(StellflowException.class)
                        .hasMessageContaining("CORRUPT_MESSAGE")
                        .satisfies(e ->
                                assertThat(((StellflowException) e).errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE));
                assertThat(consumer.position(tp)).isZero();
            }
            p.setProperty("check.crcs", "false");
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(tp));
                assertThat(pollUntil(consumer, 1))
                        .extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                        .containsExactly("v3");
            }
        }
    }

    private static int indexOf(ByteBuf buf, byte[] needle) {
        for (int i = buf.readerIndex(); i + needle.length <= buf.writerIndex(); i++) {
            boolean match = true;
            for (int j = 0; j < needle.length && match; j++) {
                match = buf.getByte(i + j) == needle[j];
            }
            if (match) {
                return i;
            }
        }
        throw new AssertionError("not found");
    }

    @Test
    void aCorruptBatchInOnePartitionNeitherLosesNorRepeatsTheOtherPartitionsRecords() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 2);
            TopicPartition good = new TopicPartition("t", 0);
            TopicPartition bad = new TopicPartition("t", 1);
            for (int i = 0; i < 10; i++) {
                appendBatch(broker, good, 2, 2 * i); // offsets 0-19, two per batch
            }
            ByteBuf corrupt = Unpooled.buffer();
            RecordBatchBuilder b = new RecordBatchBuilder(corrupt, 1000L);
            b.append(1000L, null, "x".getBytes(StandardCharsets.UTF_8));
            b.close();
            corrupt.setByte(corrupt.writerIndex() - 1, corrupt.getByte(corrupt.writerIndex() - 1) ^ 0x01);
            broker.append(bad, corrupt); // offset 0
            appendBatch(broker, bad, 1, 1); // offset 1
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("auto.offset.reset", "earliest");
            p.setProperty("max.partition.fetch.bytes", "1"); // one batch per Fetch: many polls
            List<Long> goodOffsets = new ArrayList<>();
            List<Long> badOffsets = new ArrayList<>();
            int failures = 0;
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(good, bad));
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while ((goodOffsets.size() < 20 || badOffsets.isEmpty()) && System.nanoTime() < deadline) {
                    try {
                        for (ConsumerRecord r : consumer.poll(Duration.ofMillis(100))) {
                            (r.partition() == 0 ? goodOffsets : badOffsets).add(r.offset());
                        }
                    } catch (StellflowException e) {
                        assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE);
                        if (++failures == 3) {
                            consumer.seek(bad, 1);
                        }
                    }
                }
            }
            assertThat(failures).isGreaterThanOrEqualTo(3);
            List<Long> expected = new ArrayList<>();
            for (long o = 0; o < 20; o++) {
                expected.add(o);
            }
            assertThat(goodOffsets).isEqualTo(expected);
            assertThat(badOffsets).containsExactly(1L);
        }
    }

    @Test
    void aFetchAnsweredAfterItsPartitionWasUnassignedAndAssignedAgainIsDropped() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            broker.createTopic("t", 1);
            TopicPartition tp = new TopicPartition("t", 0);
            appendBatch(broker, tp, 5, 0); // offsets 0-4
            appendBatch(broker, tp, 5, 5); // offsets 5-9
            appendBatch(broker, tp, 5, 10); // offsets 10-14
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            p.setProperty("max.partition.fetch.bytes", "1"); // one batch per Fetch
            try (StellflowConsumer consumer = new StellflowConsumer(p)) {
                consumer.assign(List.of(tp));
                assertThat(consumer.endOffsets(List.of(tp))).containsEntry(tp, 15L); // leader known: Fetch at once
                consumer.seek(tp, 10);
                broker.holdAndReverse(2, io.stellflow.protocol.ApiKeys.FETCH);
                assertThat(consumer.poll(Duration.ofMillis(200))).isEmpty(); // the Fetch at 10 is held
                // A group revocation and reassignment does the same: the partition's state is new.
                consumer.assign(List.of());
                consumer.assign(List.of(tp));
                consumer.seek(tp, 0);
                // The Fetch at 0 is answered first, then the stale one at 10: it must not count.
                List<ConsumerRecord> got = pollUntil(consumer, 15);
                assertThat(got)
                        .extracting(ConsumerRecord::offset)
                        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L);
            }
        }
    }
}
