package io.stellflow.protocol.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.support.Bufs;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * RecordBatchBuilder -> RecordBatchValidator (NONE) -> RecordBatchReader round trips over random
 * records split into random batches, plus corruption and truncation properties.
 */
class RecordBatchPropertyTest {

    /** What a producer appends: timestamp offset from the batch base, key, value, headers. */
    record Input(long timestampDeltaMs, byte[] key, byte[] value, List<Header> headers) {}

    @Provide
    Arbitrary<List<Input>> inputs() {
        Arbitrary<byte[]> bytes =
                Arbitraries.bytes().array(byte[].class).ofMaxSize(50).injectNull(0.15);
        Arbitrary<String> keys = Arbitraries.strings()
                .withCharRange(' ', '~')
                .withCharRange('\u00a0', '\ud7ff')
                .ofMaxLength(10)
                .injectNull(0.1);
        Arbitrary<Header> header = Combinators.combine(keys, bytes).as(Header::new);
        Arbitrary<Input> input = Combinators.combine(
                        Arbitraries.longs().between(-1000, 1_000_000),
                        bytes,
                        bytes,
                        header.list().ofMaxSize(3))
                .as(Input::new);
        return input.list().ofMinSize(1).ofMaxSize(20);
    }

    /**
     * Writes {@code inputs} as batches of at most {@code perBatch} records and rewrites each
     * baseOffsetDelta as a Fetch v0 broker would for {@code fetchOffset} == first offset.
     */
    private static ByteBuf build(Bufs bufs, List<Input> inputs, int perBatch, long baseTimestampMs, boolean direct) {
        ByteBuf out = direct ? bufs.direct() : bufs.heap();
        int written = 0;
        while (written < inputs.size()) {
            int batchStart = out.writerIndex();
            RecordBatchBuilder builder = new RecordBatchBuilder(out, baseTimestampMs);
            for (int i = 0; i < perBatch && written < inputs.size(); i++, written++) {
                Input in = inputs.get(written);
                builder.append(baseTimestampMs + in.timestampDeltaMs(), in.key(), in.value(), in.headers());
            }
            builder.close();
            RecordBatchLayout.setBaseOffsetDelta(out, batchStart, written - builder.recordCount());
            assertThat(builder.sizeInBytes()).isEqualTo(out.writerIndex() - batchStart);
        }
        return out;
    }

    @Property(tries = 300)
    void builtBatchesValidateAndDecodeToWhatWasAppended(
            @ForAll("inputs") List<Input> inputs,
            @ForAll @IntRange(min = 1, max = 8) int perBatch,
            @ForAll @LongRange(min = 0, max = 4_000_000_000_000L) long baseTimestampMs,
            @ForAll @LongRange(min = 0, max = 1L << 40) long fetchOffset,
            @ForAll boolean direct) {
        try (Bufs bufs = new Bufs()) {
            ByteBuf set = build(bufs, inputs, perBatch, baseTimestampMs, direct);
            assertThat(RecordBatchValidator.validate(set, Integer.MAX_VALUE)).isEqualTo(Errors.NONE);
            assertThat(RecordBatchValidator.totalRecordCount(set)).isEqualTo(inputs.size());
            assertThat(RecordBatchValidator.batchCount(set)).isEqualTo((inputs.size() + perBatch - 1) / perBatch);

            List<DecodedRecord> expected = new ArrayList<>();
            for (int i = 0; i < inputs.size(); i++) {
                Input in = inputs.get(i);
                List<Header> headers = in.headers();
                expected.add(new DecodedRecord(
                        fetchOffset + i, baseTimestampMs + in.timestampDeltaMs(), in.key(), in.value(), headers));
            }
            assertThat(RecordBatchReader.decode(set, fetchOffset)).isEqualTo(expected);
            assertThat(set.readerIndex()).isZero();
        }
    }

    @Property(tries = 300)
    void anySingleByteChangeFromOffset17IsCorruptMessage(
            @ForAll("inputs") List<Input> inputs,
            @ForAll @IntRange(min = 17, max = 100_000) int position,
            @ForAll @IntRange(min = 1, max = 255) int xor) {
        try (Bufs bufs = new Bufs()) {
            ByteBuf set = build(bufs, inputs, Integer.MAX_VALUE, 1000, false);
            int index = RecordBatchLayout.CRC_START_OFFSET
                    + (position - 17) % (set.readableBytes() - RecordBatchLayout.CRC_START_OFFSET);
            set.setByte(index, set.getByte(index) ^ xor);
            assertThat(RecordBatchValidator.validate(set, Integer.MAX_VALUE)).isEqualTo(Errors.CORRUPT_MESSAGE);
            assertThatThrownBy(() -> RecordBatchReader.decode(set, 0))
                    .isInstanceOfSatisfying(
                            ProtocolException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE));
        }
    }

    @Property(tries = 300)
    void anyTruncationIsInvalidRecord(
            @ForAll("inputs") List<Input> inputs,
            @ForAll @IntRange(min = 1, max = 5) int perBatch,
            @ForAll @IntRange(min = 1, max = 100_000) int cut) {
        try (Bufs bufs = new Bufs()) {
            ByteBuf set = build(bufs, inputs, perBatch, 1000, false);
            int length = cut % set.readableBytes();
            ByteBuf truncated = set.slice(0, length);
            boolean endsOnABatchBoundary = false;
            for (int pos = 0; pos <= length; pos += RecordBatchLayout.batchSize(set, pos)) {
                endsOnABatchBoundary |= pos == length;
                if (pos == set.readableBytes()) {
                    break;
                }
            }
            short expected =
                    length == 0 ? Errors.INVALID_RECORD : endsOnABatchBoundary ? Errors.NONE : Errors.INVALID_RECORD;
            assertThat(RecordBatchValidator.validate(truncated, Integer.MAX_VALUE))
                    .isEqualTo(expected);
        }
    }
}
