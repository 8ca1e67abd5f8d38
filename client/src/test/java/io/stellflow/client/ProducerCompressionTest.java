package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** How full a compressed batch gets, how the ratio estimate moves, and one batch compressed. */
class ProducerCompressionTest {
    private static ProducerConfig config(String... kv) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:9092");
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return ProducerConfig.from(p);
    }

    @Test
    void noneHasNoCompression() {
        assertThat(ProducerCompression.of(config())).isNull();
        assertThat(ProducerCompression.of(config("compression.type", "none"))).isNull();
    }

    @Test
    void aBatchFillsToBatchSizeOverTheRatioWithinItsBounds() {
        try (ProducerCompression c = ProducerCompression.of(config("compression.type", "lz4", "batch.size", "16384"))) {
            assertThat(c.type()).isEqualTo(CompressionType.LZ4);
            assertThat(c.fillLimitBytes(1.0)).isEqualTo(16_384);
            assertThat(c.fillLimitBytes(0.25)).as("16384 / (0.25 x 1.1)").isEqualTo(59_578);
            assertThat(c.fillLimitBytes(1e-6))
                    .as("at most 32x batch.size / 1.1")
                    .isEqualTo((int) (32 * 16_384 / 1.1));
            assertThat(c.fillLimitBytes(2.0)).as("never below batch.size").isEqualTo(16_384);
        }
        try (ProducerCompression c =
                ProducerCompression.of(config("compression.type", "zstd", "batch.size", "1048576"))) {
            assertThat(c.fillLimitBytes(0.05)).isEqualTo(ProducerCompression.MAX_UNCOMPRESSED_BATCH_BYTES);
        }
    }

    @Test
    void theRatioEstimateJumpsUpAtOnceAndComesDownByHalfTheGap() {
        assertThat(ProducerCompression.nextCompressionRatio(0.2, 0.5, 1.0)).isCloseTo(0.525, within(1e-9));
        assertThat(ProducerCompression.nextCompressionRatio(1.0, 0.2, 1.0)).isCloseTo(0.6, within(1e-9));
        double e = 1.0;
        for (int i = 0; i < 6; i++) {
            e = ProducerCompression.nextCompressionRatio(e, 0.2, 1.0);
        }
        assertThat(e).isBetween(0.2, 0.2 * 1.07);
        // Incompressible data: capped at 1 (a batch never reserves less than batch.size).
        assertThat(ProducerCompression.nextCompressionRatio(1.0, 1.02, 1.0)).isEqualTo(1.0);
        // Extremely compressible data: floored at MIN_COMPRESSION_RATIO.
        assertThat(ProducerCompression.nextCompressionRatio(0.04, 0.0001, 1.0))
                .isEqualTo(ProducerCompression.MIN_COMPRESSION_RATIO);
    }

    @Test
    void aSmallBatchMovesTheEstimateInProportionToItsFill() {
        // A flushed tail of a few records compressing to 0.55 while full batches settle at 0.2: with
        // the full step the next batches would be sized for 0.58 (a third of what fits).
        assertThat(ProducerCompression.nextCompressionRatio(0.2, 0.55, 0.01)).isCloseTo(0.203775, within(1e-9));
        assertThat(ProducerCompression.nextCompressionRatio(0.2, 0.55, 0.5)).isCloseTo(0.38875, within(1e-9));
        assertThat(ProducerCompression.nextCompressionRatio(0.2, 0.1, 0.5)).isCloseTo(0.175, within(1e-9));
        // An overfull batch counts as full; a weight of 0 (an empty batch) changes nothing.
        assertThat(ProducerCompression.nextCompressionRatio(0.2, 0.5, 3.0)).isCloseTo(0.525, within(1e-9));
        assertThat(ProducerCompression.nextCompressionRatio(0.3, 0.9, 0.0)).isEqualTo(0.3);
    }

    @Test
    void aSealedBatchIsCompressedOnceIntoANewBufferAndTheOldOneReleased() {
        TopicPartition tp = new TopicPartition("t", 0);
        ProducerBatch batch = new ProducerBatch(tp, PooledByteBufAllocator.DEFAULT, 65_536, 0.3, 100, 1000L, 0L, 0L);
        byte[] value = "{\"level\":\"INFO\",\"msg\":\"order served from cache\"}".getBytes();
        int appended = 0;
        while (batch.tryAppend(1000L + appended, null, value, null)) {
            appended++;
        }
        assertThat(appended).as("filled to the 65,536-byte limit").isGreaterThan(800);
        batch.close(false); // as the accumulator seals a batch it will compress: no CRC summed yet
        assertThat(RecordBatchLayout.crc(batch.bytes(), 0)).isZero();
        int plainBytes = batch.sizeInBytes();
        assertThat(batch.wireSizeEstimateBytes()).isEqualTo((int) Math.ceil(plainBytes * 0.3));
        try (ProducerCompression c = ProducerCompression.of(config("compression.type", "zstd"))) {
            double ratio = c.compress(batch, PooledByteBufAllocator.DEFAULT);
            assertThat(batch.isCompressed()).isTrue();
            assertThat(batch.uncompressedBytes()).isEqualTo(plainBytes);
            assertThat(ratio)
                    .isCloseTo((double) batch.sizeInBytes() / plainBytes, within(1e-9))
                    .isLessThan(0.1);
            assertThat(batch.wireSizeEstimateBytes()).isEqualTo(batch.sizeInBytes());
            ByteBuf bytes = batch.bytes();
            assertThat(RecordBatchLayout.attributes(bytes, 0) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                    .isEqualTo(CompressionType.ZSTD.id());
            assertThat(RecordBatchLayout.recordCount(bytes, 0)).isEqualTo(appended);
            assertThat(RecordBatchLayout.crc(bytes, 0)).isEqualTo(RecordBatchLayout.computeCrc(bytes, 0));
            // A retried batch is sent as it was compressed: compressing again changes nothing.
            int size = batch.sizeInBytes();
            assertThat(c.compress(batch, PooledByteBufAllocator.DEFAULT)).isCloseTo(ratio, within(1e-12));
            assertThat(batch.sizeInBytes()).isEqualTo(size);
        } finally {
            batch.release();
        }
    }

    @Test
    void aBatchThatCompressesOverBatchSizeIsSentAsSeveralBatchesWithinIt() {
        // The estimate says 0.05 but the values are random (incompressible): 16 times batch.size of
        // records, which cannot compress to batch.size; they go out as consecutive batches (a
        // non-idempotent producer's split: an idempotent one never splits a batch).
        TopicPartition tp = new TopicPartition("t", 0);
        int batchSize = 16_384;
        ProducerBatch batch =
                new ProducerBatch(tp, PooledByteBufAllocator.DEFAULT, 16 * batchSize, 0.05, 600, 1000L, 0L, 0L);
        java.util.SplittableRandom random = new java.util.SplittableRandom(3);
        List<byte[]> values = new ArrayList<>();
        while (true) {
            byte[] value = new byte[500];
            random.nextBytes(value);
            if (!batch.tryAppend(1000L + values.size(), ("k" + values.size()).getBytes(), value, null)) {
                break;
            }
            values.add(value);
        }
        batch.close(false); // sealed without a CRC, as the accumulator seals a batch it compresses
        try (ProducerCompression c = ProducerCompression.of(config(
                        "compression.type",
                        "lz4",
                        "batch.size",
                        Integer.toString(batchSize),
                        "enable.idempotence",
                        "false"));
                RecordBatchDecompressor d = new RecordBatchDecompressor(1 << 20)) {
            double ratio = c.compress(batch, PooledByteBufAllocator.DEFAULT);
            assertThat(ratio).isGreaterThan(0.9);
            ByteBuf set = batch.bytes();
            int batches = 0;
            for (int pos = 0; pos < set.writerIndex(); pos += RecordBatchLayout.batchSize(set, pos)) {
                assertThat(RecordBatchLayout.batchSize(set, pos)).isLessThanOrEqualTo(batchSize);
                assertThat(RecordBatchLayout.attributes(set, pos) & RecordBatchLayout.COMPRESSION_CODEC_MASK)
                        .isEqualTo(CompressionType.LZ4.id());
                assertThat(RecordBatchLayout.crc(set, pos)).isEqualTo(RecordBatchLayout.computeCrc(set, pos));
                batches++;
            }
            assertThat(batches).isGreaterThanOrEqualTo(16);
            assertThat(RecordBatchValidator.totalRecordCount(set)).isEqualTo(values.size());
            List<Long> offsets = new ArrayList<>();
            List<byte[]> got = new ArrayList<>();
            // As the broker stores them: each batch's offsets continue from the previous one.
            long base = 0;
            for (int pos = 0; pos < set.writerIndex(); pos += RecordBatchLayout.batchSize(set, pos)) {
                RecordBatchLayout.setBaseOffsetDelta(set, pos, (int) base);
                base += RecordBatchLayout.recordCount(set, pos);
            }
            RecordBatchReader.decode(set, 0, true, d, (o, ts, k, v, h) -> {
                offsets.add(o);
                got.add(v);
            });
            assertThat(offsets).hasSize(values.size()).isSorted().doesNotHaveDuplicates();
            assertThat(offsets.get(values.size() - 1)).isEqualTo(values.size() - 1L);
            for (int i = 0; i < values.size(); i++) {
                assertThat(got.get(i)).isEqualTo(values.get(i));
            }
        } finally {
            batch.release();
        }
    }
}
