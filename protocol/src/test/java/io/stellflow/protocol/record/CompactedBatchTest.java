package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Batches as a compacted log stores and serves them: records removed, the survivors keep their
 * original offsetDelta, recordCount below lastOffsetDelta + 1, CRC recomputed.
 */
class CompactedBatchTest {
    private static final long TS = 1_000_000L;

    /** A 5-record batch (keys k0..k4) reduced to the records at {@code keep} (indexes, in order). */
    private static ByteBuf compacted(int... keep) {
        ByteBuf full = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(full, TS);
        for (int i = 0; i < 5; i++) {
            b.append(TS + i, ("k" + i).getBytes(UTF_8), ("v" + i).getBytes(UTF_8));
        }
        b.close();
        int[] starts = new int[6];
        int p = RecordBatchLayout.RECORDS_OFFSET;
        for (int i = 0; i < 5; i++) {
            starts[i] = p;
            p += RecordBatchLayout.RECORD_LENGTH_SIZE + full.getInt(p);
        }
        starts[5] = p;
        ByteBuf out = Unpooled.buffer();
        out.writeBytes(full, 0, RecordBatchLayout.RECORDS_OFFSET);
        for (int i : keep) {
            out.writeBytes(full, starts[i], starts[i + 1] - starts[i]);
        }
        out.setInt(RecordBatchLayout.BATCH_LENGTH_OFFSET, out.writerIndex() - RecordBatchLayout.LOG_OVERHEAD);
        out.setInt(RecordBatchLayout.RECORD_COUNT_OFFSET, keep.length);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        full.release();
        return out;
    }

    @Test
    void fetchedCompactedBatchIsAcceptedAndKeepsOriginalOffsets() {
        ByteBuf batch = compacted(1, 4);
        assertThat(RecordBatchLayout.lastOffsetDelta(batch, 0)).isEqualTo(4);
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.NONE);
        RecordBatchLayout.setBaseOffsetDelta(batch, 0, 10);
        List<DecodedRecord> records = RecordBatchReader.decode(batch, 100);
        assertThat(records).extracting(DecodedRecord::offset).containsExactly(111L, 114L);
        assertThat(records).extracting(r -> new String(r.key(), UTF_8)).containsExactly("k1", "k4");
        assertThat(records).extracting(DecodedRecord::timestampMs).containsExactly(TS + 1, TS + 4);
        batch.release();
    }

    @Test
    void produceValidationStillRejectsACompactedBatch() {
        ByteBuf batch = compacted(0, 2, 3);
        assertThat(RecordBatchValidator.validate(batch, 1 << 20)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.NONE);
        batch.release();
    }

    @Test
    void anUncompactedBatchPassesBothValidations() {
        ByteBuf batch = compacted(0, 1, 2, 3, 4);
        assertThat(RecordBatchValidator.validate(batch, 1 << 20)).isEqualTo(Errors.NONE);
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.NONE);
        batch.release();
    }

    @Test
    void offsetDeltasOutOfOrderAreRejectedEvenWhenFetched() {
        ByteBuf batch = compacted(3, 1);
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.INVALID_RECORD);
        assertThatThrownBy(() -> RecordBatchReader.decode(batch, 0))
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(Errors.INVALID_RECORD));
        batch.release();
    }

    @Test
    void anOffsetDeltaPastLastOffsetDeltaIsRejectedWhenFetched() {
        ByteBuf batch = compacted(1, 4);
        batch.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 3); // record k4 has offsetDelta 4
        batch.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(batch, 0));
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.INVALID_RECORD);
        batch.release();
    }

    @Test
    void moreRecordsThanTheOffsetRangeIsRejectedWhenFetched() {
        ByteBuf batch = compacted(0, 1, 2);
        batch.setInt(RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET, 1); // 3 records in 2 offsets
        batch.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(batch, 0));
        assertThat(RecordBatchValidator.validateFetched(batch, 1 << 20)).isEqualTo(Errors.INVALID_RECORD);
        batch.release();
    }
}
