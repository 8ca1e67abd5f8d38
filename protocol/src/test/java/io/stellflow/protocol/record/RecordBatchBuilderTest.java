package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RecordBatchBuilderTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /** An idempotent producer stamps a sealed batch; the CRC is rewritten over the new fields. */
    @Test
    void setProducerFieldsStampsASealedBatchAndKeepsItsCrcValid() {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 500);
        b.append(700, new byte[] {1}, new byte[] {2});
        b.close();
        int crcBefore = RecordBatchLayout.crc(out, 0);
        RecordBatchLayout.setProducerFields(out, 0, 1000L, (short) 3, 42);
        assertThat(RecordBatchLayout.producerId(out, 0)).isEqualTo(1000L);
        assertThat(RecordBatchLayout.producerEpoch(out, 0)).isEqualTo((short) 3);
        assertThat(RecordBatchLayout.baseSequence(out, 0)).isEqualTo(42);
        assertThat(RecordBatchLayout.crc(out, 0))
                .isNotEqualTo(crcBefore)
                .isEqualTo(RecordBatchLayout.computeCrc(out, 0));
        assertThat(RecordBatchValidator.validate(out, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchReader.decode(out, 0)).hasSize(1);
    }

    /**
     * Sealed without a CRC (the producer's batches that are stamped or compressed before they are
     * sent): everything else is as {@code close()} writes it, the CRC field is 0 until the stamp sums
     * it once, and a second close does not change the decision.
     */
    @Test
    void closeWithoutCrcLeavesItToTheStamp() {
        ByteBuf summed = bufs.heap();
        ByteBuf deferred = bufs.heap();
        RecordBatchBuilder a = new RecordBatchBuilder(summed, 500);
        RecordBatchBuilder b = new RecordBatchBuilder(deferred, 500);
        for (int i = 0; i < 3; i++) {
            a.append(700 + i, new byte[] {(byte) i}, new byte[] {2, 3});
            b.append(700 + i, new byte[] {(byte) i}, new byte[] {2, 3});
        }
        a.close();
        b.close(false);
        b.close(true); // already closed: still without a CRC
        assertThat(RecordBatchLayout.crc(deferred, 0)).isZero();
        assertThat(RecordBatchValidator.validate(deferred, Integer.MAX_VALUE)).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(deferred.writerIndex()).isEqualTo(summed.writerIndex());
        summed.setInt(RecordBatchLayout.CRC_OFFSET, 0);
        assertThat(deferred).isEqualTo(summed); // the same bytes but the CRC

        RecordBatchLayout.setProducerFields(deferred, 0, 1000L, (short) 3, 42);
        assertThat(RecordBatchLayout.crc(deferred, 0)).isEqualTo(RecordBatchLayout.computeCrc(deferred, 0));
        assertThat(RecordBatchValidator.validate(deferred, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchReader.decode(deferred, 0)).hasSize(3);
    }

    /**
     * The stamp from the records' CRC taken at sealing (the producer's idempotent batches) writes the
     * same bytes as summing the stamped batch whole; a wrong records CRC gives a batch the validator
     * refuses, not one that passes.
     */
    @Test
    void stampFromTheRecordsCrcWritesTheSameBytesAsSummingTheWholeBatch() {
        ByteBuf whole = bufs.heap();
        ByteBuf combined = bufs.heap();
        ByteBuf wrong = bufs.heap();
        for (ByteBuf out : new ByteBuf[] {whole, combined, wrong}) {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 500);
            for (int i = 0; i < 50; i++) {
                b.append(700 + i, new byte[] {(byte) i}, new byte[100 + i]);
            }
            b.close(false);
        }
        int recordsCrc = RecordBatchLayout.recordsCrc(combined, 0);
        assertThat(recordsCrc)
                .isEqualTo(Crc32c.compute(
                        combined,
                        RecordBatchLayout.RECORDS_OFFSET,
                        combined.writerIndex() - RecordBatchLayout.RECORDS_OFFSET));
        RecordBatchLayout.setProducerFields(whole, 0, 1000L, (short) 3, 42);
        RecordBatchLayout.setProducerFields(combined, 0, 1000L, (short) 3, 42, recordsCrc);
        assertThat(combined).isEqualTo(whole);
        assertThat(RecordBatchValidator.validate(combined, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);

        RecordBatchLayout.setProducerFields(wrong, 0, 1000L, (short) 3, 42, recordsCrc ^ 1);
        assertThat(RecordBatchValidator.validate(wrong, Integer.MAX_VALUE)).isEqualTo(Errors.CORRUPT_MESSAGE);
    }

    @Test
    void writesTheClientDefaultsOfSpec7_1() {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 500);
        b.append(700, new byte[] {1}, null);
        b.append(600, (byte[]) null, new byte[] {2, 3});
        b.close();
        assertThat(RecordBatchLayout.baseOffsetDelta(out, 0)).isZero();
        assertThat(RecordBatchLayout.partitionLeaderEpoch(out, 0)).isEqualTo(-1);
        assertThat(RecordBatchLayout.magic(out, 0)).isEqualTo((byte) 1);
        assertThat(RecordBatchLayout.attributes(out, 0)).isZero();
        assertThat(RecordBatchLayout.lastOffsetDelta(out, 0)).isEqualTo(1);
        assertThat(RecordBatchLayout.baseTimestamp(out, 0)).isEqualTo(500);
        assertThat(RecordBatchLayout.maxTimestamp(out, 0)).isEqualTo(700);
        assertThat(RecordBatchLayout.producerId(out, 0)).isEqualTo(-1);
        assertThat(RecordBatchLayout.producerEpoch(out, 0)).isEqualTo((short) -1);
        assertThat(RecordBatchLayout.baseSequence(out, 0)).isEqualTo(-1);
        assertThat(RecordBatchLayout.recordCount(out, 0)).isEqualTo(2);
        assertThat(RecordBatchLayout.batchSize(out, 0))
                .isEqualTo(out.readableBytes())
                .isEqualTo(b.sizeInBytes());
        assertThat(RecordBatchValidator.validate(out, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchReader.decode(out, 0))
                .extracting(DecodedRecord::timestampMs)
                .containsExactly(700L, 600L);
    }

    @Test
    void recordSizeInBytesPredictsTheGrowthOfTheBatch() {
        ByteBuf out = bufs.heap();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 0);
        assertThat(b.sizeInBytes()).isEqualTo(RecordBatchBuilder.batchOverheadBytes());
        List<Header> headers = List.of(new Header("é-key", new byte[3]), new Header(null, null));
        int predicted = RecordBatchBuilder.recordSizeInBytes(4, 0, headers);
        b.append(0, "abcd".getBytes(UTF_8), new byte[0], headers);
        assertThat(b.sizeInBytes()).isEqualTo(57 + predicted);
        assertThat(RecordBatchBuilder.recordSizeInBytes(-1, -1, null)).isEqualTo(29);
    }

    @Test
    void appendsFromBuffersWithoutConsumingThem() {
        ByteBuf key = bufs.hex("0102");
        ByteBuf value = bufs.hex("030405");
        ByteBuf out = bufs.direct();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 0);
        b.append(0, key, value, null);
        b.close();
        assertThat(key.readableBytes()).isEqualTo(2);
        DecodedRecord r = RecordBatchReader.decode(out, 0).get(0);
        assertThat(r.key()).containsExactly(1, 2);
        assertThat(r.value()).containsExactly(3, 4, 5);
    }

    @Test
    void closingAnEmptyBatchRemovesItsHeader() {
        ByteBuf out = bufs.heap().writeByte(7);
        RecordBatchBuilder b = new RecordBatchBuilder(out, 0);
        b.close();
        assertThat(out.writerIndex()).isEqualTo(1);
        assertThat(b.sizeInBytes()).isZero();
        assertThat(b.isClosed()).isTrue();
    }

    @Test
    void appendAfterCloseIsABug() {
        RecordBatchBuilder b = new RecordBatchBuilder(bufs.heap(), 0);
        b.append(0, new byte[0], new byte[0]);
        b.close();
        b.close();
        assertThatThrownBy(() -> b.append(0, new byte[0], new byte[0])).isInstanceOf(IllegalStateException.class);
    }

    /**
     * Records from arrays without headers go through the builder's NIO view, records from buffers the
     * ByteBuf way: the same records must give the same bytes, in every kind of buffer, also when the
     * buffer grows (and moves) between records and when a ByteBuf-way record grew it.
     */
    @Test
    void theViewWritesTheBytesTheByteBufWayWrites() {
        Random random = new Random(7);
        byte[][] keys = new byte[40][];
        byte[][] values = new byte[40][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = i % 5 == 0 ? null : bytes(random, random.nextInt(20));
            values[i] = i % 7 == 3 ? null : bytes(random, random.nextInt(i % 3 == 0 ? 3000 : 50));
        }
        ByteBuf expected = bufs.heap();
        RecordBatchBuilder reference = new RecordBatchBuilder(expected, 1000);
        for (int i = 0; i < keys.length; i++) {
            reference.append(1000 + i, wrapOrNull(keys[i]), wrapOrNull(values[i]), null);
        }
        reference.close();

        ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        List<ByteBuf> outs =
                List.of(bufs.heap(), bufs.direct(), pooled, Unpooled.buffer(64), bufs.composite(bufs.hex("00"), 0));
        try {
            for (ByteBuf out : outs) {
                out.clear();
                RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
                for (int i = 0; i < keys.length; i++) {
                    b.append(1000 + i, keys[i], values[i]);
                }
                b.close();
                assertThat(Bufs.hexOf(out)).as(out.getClass().getSimpleName()).isEqualTo(Bufs.hexOf(expected));
                assertThat(RecordBatchValidator.validate(out, Integer.MAX_VALUE))
                        .isEqualTo(Errors.NONE);
            }
        } finally {
            pooled.release();
            outs.get(3).release();
        }
    }

    @Test
    void aRecordWithHeadersThatGrowsTheBufferDoesNotLeaveTheViewBehind() {
        ByteBuf out = Unpooled.directBuffer(100);
        try {
            RecordBatchBuilder b = new RecordBatchBuilder(out, 0);
            b.append(1, new byte[] {1}, new byte[] {2});
            b.append(2, null, new byte[500], List.of(new Header("h", new byte[300]))); // grows out
            b.append(3, new byte[] {3}, new byte[] {4});
            b.close();
            List<DecodedRecord> records = RecordBatchReader.decode(out, 0);
            assertThat(records).extracting(DecodedRecord::timestampMs).containsExactly(1L, 2L, 3L);
            assertThat(records.get(2).key()).containsExactly(3);
            assertThat(records.get(2).value()).containsExactly(4);
            assertThat(RecordBatchValidator.validate(out, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
        } finally {
            out.release();
        }
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private ByteBuf wrapOrNull(byte[] b) {
        return b == null ? null : bufs.wrap(b);
    }
}
