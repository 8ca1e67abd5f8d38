package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.BatchCompression;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.testsupport.IntegrationTest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue #21, "no corrupted log": a broker takes a seeded stream of compressed batches, most of them
 * damaged after compression (bytes flipped in the container, the container cut short or followed by
 * garbage, the record count or the codec bits changed, a bomb over the cap), each with its CRC
 * stamped again so the damage reaches the decoders. Every answer is {@code NONE}, {@code
 * CORRUPT_MESSAGE} or {@code INVALID_RECORD}; a refused batch moves nothing; an accepted one is
 * stored byte for byte as sent. At the end the whole log reads back through Fetch v0 (which
 * decompresses every stored batch on the broker) as contiguous offsets from 0 to the log end, and
 * the broker still takes a good batch. The decoders' own fuzzing is {@code DecompressorFuzzTest}
 * and {@code CompressedRecordsValidatorTest} (protocol); this one is the broker's path around them.
 *
 * <p>The seed is fixed ({@value #SEED}) so a failure repeats; {@code -Dstellflow.fuzz.seed=N} runs
 * another stream. Each message names the seed, the step and the damage.
 */
@IntegrationTest
class CompressedProduceFuzzTest {
    private static final long SEED = 20261207L;
    private static final int STEPS = 200;
    private static final long CAP = 1 << 20;

    @RegisterExtension
    static final TestBroker.Own NODES = new TestBroker.Own();

    private enum Damage {
        NONE,
        FLIP,
        TRUNCATE,
        GARBAGE_AFTER,
        RECORD_COUNT,
        CODEC_BITS,
        BOMB
    }

    @ParameterizedTest
    @EnumSource(
            value = CompressionType.class,
            names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void damagedBatchesAreRefusedOrStoredWholeAndTheLogReadsBack(CompressionType type) throws Exception {
        long seed = Long.getLong("stellflow.fuzz.seed", SEED) * 31 + type.id();
        Random random = new Random(seed);
        Properties props = TestBroker.props(NODES.dir(), "nio");
        props.setProperty("compression.max.decompressed.bytes", Long.toString(CAP));
        StellflowServer server = NODES.start(props);
        String topic = "fuzz-" + type.name().toLowerCase();
        int refused = 0;
        int accepted = 0;
        try (RawClient client = new RawClient(server.port())) {
            Requests.createTopic(client, topic, 1);
            List<byte[]> stored = new ArrayList<>();
            long logEnd = 0;
            for (int step = 0; step < STEPS; step++) {
                // About a third undamaged, so good batches sit between the damaged ones in the log.
                Damage damage = random.nextInt(3) == 0
                        ? Damage.NONE
                        : Damage.values()[1 + random.nextInt(Damage.values().length - 1)];
                int count = 1 + random.nextInt(60);
                byte[] batch = damaged(type, damage, count, step * 1000, random);
                String what = "seed " + seed + " step " + step + " " + damage + " " + type;

                PartitionResponse r = Requests.produceOne(client, topic, 0, batch);
                assertThat(r.errorCode()).as(what).isIn(Errors.NONE, Errors.CORRUPT_MESSAGE, Errors.INVALID_RECORD);
                if (damage == Damage.NONE) {
                    assertThat(r.errorCode()).as(what).isEqualTo(Errors.NONE);
                }
                if (damage == Damage.BOMB
                        || damage == Damage.TRUNCATE
                        || damage == Damage.GARBAGE_AFTER
                        || damage == Damage.RECORD_COUNT) {
                    assertThat(r.errorCode()).as(what).isNotEqualTo(Errors.NONE);
                }
                if (r.errorCode() == Errors.NONE) {
                    assertThat(r.baseOffset()).as(what).isEqualTo(logEnd);
                    logEnd += RecordBatchLayout.recordCount(Unpooled.wrappedBuffer(batch), 0);
                    stored.add(batch);
                    accepted++;
                } else {
                    refused++;
                }
                assertThat(TestBroker.partition(server, topic, 0).logEndOffset())
                        .as(what)
                        .isEqualTo(logEnd);
            }
            assertThat(refused).as("damaged batches refused").isGreaterThan(STEPS / 3);
            assertThat(accepted).as("good batches taken").isGreaterThan(STEPS / 5);

            assertStoredAsSent(client, topic, stored);
            assertReadsBackFromZero(client, topic, logEnd);

            byte[] good = CompressedProduceTest.compress(CompressedProduceTest.plainBatch(7, 999_000), type);
            PartitionResponse last = Requests.produceOne(client, topic, 0, good);
            assertThat(last.errorCode()).isEqualTo(Errors.NONE);
            assertThat(last.baseOffset()).isEqualTo(logEnd);
        }
    }

    /** A batch of {@code count} records compressed with {@code type}, then damaged (CRC stamped again). */
    private static byte[] damaged(CompressionType type, Damage damage, int count, int firstId, Random random) {
        if (damage == Damage.BOMB) {
            return CompressedProduceTest.bomb(type, (int) CAP * (2 + random.nextInt(3)));
        }
        byte[] batch = CompressedProduceTest.compress(CompressedProduceTest.plainBatch(count, firstId), type);
        int payload = batch.length - RecordBatchLayout.RECORDS_OFFSET;
        switch (damage) {
            case NONE -> {
                return batch;
            }
            case FLIP -> {
                int flips = 1 + random.nextInt(3);
                for (int i = 0; i < flips; i++) {
                    batch[RecordBatchLayout.RECORDS_OFFSET + random.nextInt(payload)] ^=
                            (byte) (1 + random.nextInt(255));
                }
            }
            case TRUNCATE -> batch = Arrays.copyOf(batch, batch.length - 1 - random.nextInt(Math.max(1, payload - 1)));
            case GARBAGE_AFTER -> {
                int extra = 1 + random.nextInt(16);
                batch = Arrays.copyOf(batch, batch.length + extra);
                for (int i = batch.length - extra; i < batch.length; i++) {
                    batch[i] = (byte) random.nextInt(256);
                }
            }
            case RECORD_COUNT -> {
                ByteBuf b = Unpooled.wrappedBuffer(batch);
                // A count that disagrees with the records inside, the header otherwise consistent
                // (lastOffsetDelta follows it), so only the walk over the records can tell.
                int claimed = random.nextBoolean() || count == 1
                        ? count + 1 + random.nextInt(5)
                        : Math.max(1, count - 1 - random.nextInt(5));
                b.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, claimed);
                b.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, claimed - 1);
            }
            case CODEC_BITS -> {
                ByteBuf b = Unpooled.wrappedBuffer(batch);
                short attributes = b.getShort(RecordBatchLayout.ATTRIBUTES_OFFSET);
                int other = type.id() % 4 + 1; // another of gzip (1), snappy (2), lz4 (3), zstd (4)
                b.setShort(
                        RecordBatchLayout.ATTRIBUTES_OFFSET,
                        (attributes & ~RecordBatchLayout.COMPRESSION_CODEC_MASK) | other);
            }
            default -> throw new IllegalStateException(damage.name());
        }
        ByteBuf b = Unpooled.wrappedBuffer(batch);
        b.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, batch.length - RecordBatchLayout.LOG_OVERHEAD);
        b.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(b, 0));
        return batch;
    }

    /** Fetch v1 returns the stored batches: each is the accepted one from its magic byte on. */
    private static void assertStoredAsSent(RawClient client, String topic, List<byte[]> sent) throws Exception {
        ByteBuf records = CompressedProduceTest.fetchV1(client, topic);
        int pos = 0;
        for (byte[] batch : sent) {
            int size = RecordBatchLayout.batchSize(records, pos);
            assertThat(size).isEqualTo(batch.length);
            assertThat(RecordBatchLayout.crc(records, pos)).isEqualTo(RecordBatchLayout.computeCrc(records, pos));
            assertThat(ByteBufUtil.getBytes(
                            records, pos + RecordBatchLayout.MAGIC_OFFSET, size - RecordBatchLayout.MAGIC_OFFSET))
                    .isEqualTo(Arrays.copyOfRange(batch, RecordBatchLayout.MAGIC_OFFSET, batch.length));
            assertDecompressesToAValidBatch(records, pos);
            pos += size;
        }
        assertThat(pos).isEqualTo(records.readableBytes());
    }

    /**
     * The stored batch at {@code pos}, decompressed on its own and checked by the uncompressed walk
     * ({@link RecordBatchValidator}), a second implementation of the record rules beside the
     * compressed one the broker ran: the same count of records, nothing after the last.
     */
    private static void assertDecompressesToAValidBatch(ByteBuf records, int pos) {
        CompressionType type = CompressionType.fromAttributes((short) RecordBatchLayout.attributes(records, pos));
        ByteBuf plain = Unpooled.buffer();
        try (CompressionCodec codec = CompressionCodecs.codec(type);
                Decompressor decompressor = codec.newDecompressor()) {
            assertThat(BatchCompression.decompress(records, pos, decompressor, CAP, plain))
                    .as("decompressing the batch at %d", pos)
                    .isPositive();
            assertThat(RecordBatchValidator.validate(plain, Integer.MAX_VALUE))
                    .as("the batch at %d, decompressed", pos)
                    .isEqualTo(Errors.NONE);
        } finally {
            plain.release();
        }
    }

    /** Fetch v0 decompresses each stored batch on the broker: every offset from 0 to the end, once. */
    private static void assertReadsBackFromZero(RawClient client, String topic, long logEnd) throws Exception {
        long next = 0;
        while (next < logEnd) {
            FetchResponse.PartitionData p = Requests.fetchOne(client, Requests.fetch(topic, 0, next, 0, 32 << 20, -1));
            assertThat(p.errorCode()).as("fetch v0 from %d", next).isEqualTo(Errors.NONE);
            List<DecodedRecord> records = RecordBatchReader.decode(p.records(), next, true);
            assertThat(records).as("records from %d", next).isNotEmpty();
            for (DecodedRecord r : records) {
                if (r.offset() < next) {
                    continue; // the head of a batch that starts before the fetch offset
                }
                assertThat(r.offset()).isEqualTo(next);
                next++;
            }
        }
        assertThat(next).isEqualTo(logEnd);
    }
}
