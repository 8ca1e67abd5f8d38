package io.stellflow.protocol.record;

import static io.stellflow.protocol.record.RecordBatchLayout.ATTRIBUTES_OFFSET;
import static io.stellflow.protocol.record.RecordBatchLayout.RECORDS_OFFSET;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/spec/wire-protocol.md} §7.7 steps 1-7 and the one-batch size limit, one rule per
 * test.
 */
class RecordBatchValidatorTest {
    private static final int MAX = 1 << 20;
    private static final long TS = 1_746_768_000_000L;
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /** A batch of {@code n} records with keys, values and one header each. */
    private ByteBuf batch(int n) {
        ByteBuf out = bufs.heap();
        appendBatch(out, n);
        return out;
    }

    private static void appendBatch(ByteBuf out, int n) {
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        for (int i = 0; i < n; i++) {
            b.append(TS + i, ("k" + i).getBytes(UTF_8), ("value-" + i).getBytes(UTF_8), List.of(new Header("h", null)));
        }
        b.close();
    }

    /** Applies {@code change} to the batch at index 0, then re-stamps its CRC so only the change matters. */
    private static ByteBuf mutate(ByteBuf batch, Consumer<ByteBuf> change) {
        change.accept(batch);
        batch.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(batch, 0));
        return batch;
    }

    private static short validate(ByteBuf set) {
        return RecordBatchValidator.validate(set, MAX);
    }

    @Test
    void builtBatchesAreValidAloneAndBackToBack() {
        assertThat(validate(batch(1))).isEqualTo(Errors.NONE);
        ByteBuf set = batch(3);
        appendBatch(set, 5);
        appendBatch(set, 1);
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.totalRecordCount(set)).isEqualTo(9);
        assertThat(RecordBatchValidator.batchCount(set)).isEqualTo(3);
        assertThat(set.readerIndex()).isZero();
        assertThat(validate(bufs.directCopy(set))).isEqualTo(Errors.NONE);
        assertThat(validate(bufs.composite(set, 100))).isEqualTo(Errors.NONE);
    }

    @Test
    void validationRespectsTheReaderIndex() {
        ByteBuf set = bufs.heap().writeBytes(new byte[] {9, 9, 9});
        appendBatch(set, 2);
        set.readerIndex(3);
        assertThat(validate(set)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.totalRecordCount(set)).isEqualTo(2);
        ByteBuf direct = bufs.direct().writeBytes(set, 0, set.writerIndex()).readerIndex(3);
        assertThat(validate(direct)).isEqualTo(Errors.NONE);
        ByteBuf composite = bufs.composite(set.duplicate().readerIndex(0), 40).readerIndex(3);
        assertThat(validate(composite))
                .as("a composite is validated from a copy")
                .isEqualTo(Errors.NONE);
        composite.setByte(composite.writerIndex() - 2, composite.getByte(composite.writerIndex() - 2) ^ 1);
        assertThat(validate(composite)).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(composite.readerIndex()).isEqualTo(3);
    }

    @Test
    void step1NullOrEmptyIsInvalidRecord() {
        assertThat(validate(null)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(bufs.heap())).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step2FramingErrorsAreInvalidRecord() {
        assertThat(validate(bufs.hex("00000000000000")))
                .as("fewer than 8 bytes")
                .isEqualTo(Errors.INVALID_RECORD);
        ByteBuf whole = batch(2);
        assertThat(validate(whole.slice(0, whole.readableBytes() - 1)))
                .as("truncated batch")
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(batch(1).writeByte(0))).as("trailing byte").isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(batch(1).writeLong(0))).as("trailing 8 bytes").isEqualTo(Errors.INVALID_RECORD);
        ByteBuf tooShort = batch(1);
        tooShort.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, RecordBatchLayout.MIN_BATCH_LENGTH - 1);
        assertThat(validate(tooShort)).as("batchLength < 78").isEqualTo(Errors.INVALID_RECORD);
        ByteBuf negative = batch(1);
        negative.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, -1);
        assertThat(validate(negative)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step2ErrorInALaterBatchWinsOverACorruptFirstBatch() {
        ByteBuf set = batch(1);
        set.setByte(RecordBatchLayout.CRC_OFFSET, ~set.getByte(RecordBatchLayout.CRC_OFFSET));
        set.writeByte(1);
        assertThat(validate(set)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step3MagicOtherThan1IsInvalidRecord() {
        for (int magic : new int[] {0, 2, -1}) {
            ByteBuf b = batch(1);
            b.setByte(RecordBatchLayout.MAGIC_OFFSET, magic);
            assertThat(validate(b)).isEqualTo(Errors.INVALID_RECORD);
        }
    }

    @Test
    void step4AnyFlippedBitFromOffset17IsCorruptMessage() {
        ByteBuf b = batch(2);
        for (int i = ATTRIBUTES_OFFSET; i < b.readableBytes(); i += 7) {
            b.setByte(i, b.getByte(i) ^ 0x40);
            assertThat(validate(b)).as("byte %d", i).isEqualTo(Errors.CORRUPT_MESSAGE);
            b.setByte(i, b.getByte(i) ^ 0x40);
        }
        assertThat(validate(b)).isEqualTo(Errors.NONE);
    }

    @Test
    void bytesOutsideTheCrcMayBeRewritten() {
        ByteBuf b = batch(2);
        RecordBatchLayout.setBaseOffsetDelta(b, 0, -5);
        RecordBatchLayout.setPartitionLeaderEpoch(b, 0, 42);
        assertThat(validate(b)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchLayout.baseOffsetDelta(b, 0)).isEqualTo(-5);
        assertThat(RecordBatchLayout.partitionLeaderEpoch(b, 0)).isEqualTo(42);
    }

    @Test
    void step5CompressionCodecs1To4AreFeatureNotEnabledAnd5To7InvalidRecord() {
        for (int codec = 1; codec <= 4; codec++) {
            int c = codec;
            assertThat(validate(mutate(batch(1), b -> b.setShort(ATTRIBUTES_OFFSET, c))))
                    .as("codec %d", codec)
                    .isEqualTo(Errors.FEATURE_NOT_ENABLED);
        }
        for (int codec = 5; codec <= 7; codec++) {
            int c = codec;
            assertThat(validate(mutate(batch(1), b -> b.setShort(ATTRIBUTES_OFFSET, c))))
                    .as("codec %d", codec)
                    .isEqualTo(Errors.INVALID_RECORD);
        }
    }

    @Test
    void step5TimestampTypeControlAndReservedBitsAreInvalidRecord() {
        for (int bit : new int[] {3, 4, 6, 7, 8, 12, 15}) {
            int attrs = 1 << bit;
            assertThat(validate(mutate(batch(1), b -> b.setShort(ATTRIBUTES_OFFSET, attrs))))
                    .as("bit %d", bit)
                    .isEqualTo(Errors.INVALID_RECORD);
        }
    }

    @Test
    void step5TransactionalBitNeedsAProducerIdAndATransactionalId() {
        ByteBuf plain = mutate(batch(1), b -> b.setShort(ATTRIBUTES_OFFSET, RecordBatchLayout.TRANSACTIONAL_FLAG_MASK));
        assertThat(RecordBatchValidator.validate(plain, MAX, true)).isEqualTo(Errors.INVALID_RECORD);
        ByteBuf idempotent = mutate(batch(1), b -> {
            b.setShort(ATTRIBUTES_OFFSET, RecordBatchLayout.TRANSACTIONAL_FLAG_MASK);
            b.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, 7);
            b.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, 0);
            b.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, 0);
        });
        assertThat(RecordBatchValidator.validate(idempotent, MAX, true)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.validate(idempotent, MAX, false)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(idempotent)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step6CountsTimestampsAndProducerTripleAreChecked() {
        assertThat(validate(mutate(batch(3), b -> b.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 3))))
                .as("lastOffsetDelta mismatch")
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), b -> b.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, 0))))
                .as("recordCount 0")
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), b -> b.setLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET, TS - 1))))
                .as("maxTimestamp < baseTimestamp")
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), b -> b.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, 5))))
                .as("producerId set, epoch and sequence -1")
                .isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), b -> {
                    b.setLong(RecordBatchLayout.PRODUCER_ID_OFFSET, 5);
                    b.setShort(RecordBatchLayout.PRODUCER_EPOCH_OFFSET, 1);
                    b.setInt(RecordBatchLayout.BASE_SEQUENCE_OFFSET, 10);
                })))
                .as("idempotent triple")
                .isEqualTo(Errors.NONE);
    }

    @Test
    void step7RecordWhoseLengthRunsPastTheBatchEndIsInvalidRecord() {
        ByteBuf b = mutate(batch(1), x -> x.setInt(RECORDS_OFFSET, x.getInt(RECORDS_OFFSET) + 1));
        assertThat(validate(b)).isEqualTo(Errors.INVALID_RECORD);
        ByteBuf huge = mutate(batch(1), x -> x.setInt(RECORDS_OFFSET, Integer.MAX_VALUE));
        assertThat(validate(huge)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7RecordLengthBelow25OrNotMatchingItsFieldsIsInvalidRecord() {
        assertThat(validate(mutate(batch(1), x -> x.setInt(RECORDS_OFFSET, 24))))
                .isEqualTo(Errors.INVALID_RECORD);
        // Shrink the first of two records by one byte: its fields no longer end at its length.
        assertThat(validate(mutate(batch(2), x -> x.setInt(RECORDS_OFFSET, x.getInt(RECORDS_OFFSET) - 1))))
                .isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7OffsetDeltaMustEqualTheIndex() {
        ByteBuf b = batch(3);
        int second = RECORDS_OFFSET + 4 + b.getInt(RECORDS_OFFSET);
        assertThat(validate(mutate(b, x -> x.setInt(second + 4 + 1 + 8, 2)))).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), x -> x.setInt(RECORDS_OFFSET + 4 + 1 + 8, 1))))
                .isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7RecordAttributesMustBeZero() {
        assertThat(validate(mutate(batch(1), x -> x.setByte(RECORDS_OFFSET + 4, 1))))
                .isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7BadKeyValueAndHeaderLengthsAreInvalidRecord() {
        int keyLength = RECORDS_OFFSET + 4 + 1 + 8 + 4;
        assertThat(validate(mutate(batch(1), x -> x.setInt(keyLength, -2)))).isEqualTo(Errors.INVALID_RECORD);
        assertThat(validate(mutate(batch(1), x -> x.setInt(keyLength, 1000)))).isEqualTo(Errors.INVALID_RECORD);
        ByteBuf b = batch(1);
        int valueLength = keyLength + 4 + b.getInt(keyLength);
        int headerCount = valueLength + 4 + b.getInt(valueLength);
        assertThat(validate(mutate(bufs.directCopy(b), x -> x.setInt(valueLength, -3))))
                .isEqualTo(Errors.INVALID_RECORD);
        ByteBuf c1 = bufs.directCopy(b);
        assertThat(validate(mutate(c1, x -> x.setInt(headerCount, -1)))).isEqualTo(Errors.INVALID_RECORD);
        ByteBuf c2 = bufs.directCopy(b);
        assertThat(validate(mutate(c2, x -> x.setInt(headerCount, 2)))).isEqualTo(Errors.INVALID_RECORD);
        ByteBuf c3 = bufs.directCopy(b);
        assertThat(validate(mutate(c3, x -> x.setShort(headerCount + 4, -2)))).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7HeaderKeysMustBeValidUtf8() {
        ByteBuf b = batch(1);
        int headerKeyByte = b.readableBytes() - 4 - 1; // header "h" then value length -1
        assertThat(b.getByte(headerKeyByte)).isEqualTo((byte) 'h');
        assertThat(validate(mutate(b, x -> x.setByte(headerKeyByte, 0xC0)))).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void step7BytesLeftAfterTheLastRecordAreInvalidRecord() {
        ByteBuf b = batch(1);
        b.writeByte(0);
        assertThat(validate(mutate(
                        b,
                        x -> x.setInt(
                                RecordBatchLayout.BATCH_LENGTH_OFFSET,
                                x.getInt(RecordBatchLayout.BATCH_LENGTH_OFFSET) + 1))))
                .isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void recordCountLargerThanTheRecordsPresentIsInvalidRecord() {
        ByteBuf b = mutate(batch(2), x -> {
            x.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, 3);
            x.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 2);
        });
        assertThat(validate(b)).isEqualTo(Errors.INVALID_RECORD);
    }

    @Test
    void oneBatchAboveMaxBatchBytesIsMessageTooLargeAfterStructuralChecks() {
        ByteBuf set = batch(1);
        int size = set.readableBytes();
        appendBatch(set, 4);
        int largest = set.readableBytes() - size;
        assertThat(RecordBatchValidator.validate(set, largest)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.validate(set, largest - 1)).isEqualTo(Errors.MESSAGE_TOO_LARGE);
        set.setByte(size + RecordBatchLayout.MAGIC_OFFSET, 2);
        assertThat(RecordBatchValidator.validate(set, largest - 1)).isEqualTo(Errors.INVALID_RECORD);
    }
}
