package io.stellflow.protocol.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The per-batch real max record timestamps the validation computes (spec decision 9.s), and the
 * list that carries them.
 */
class BatchMaxTimestampsTest {
    private static final long TS = 1_746_768_000_000L;
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    /** A batch as the SDKs send it: header maxTimestamp = baseTimestamp, records at base + deltas. */
    private static void appendSdkBatch(ByteBuf out, long baseMs, long... deltasMs) {
        int start = out.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(out, baseMs);
        for (long d : deltasMs) {
            b.append(baseMs + d, null, new byte[] {1});
        }
        b.close();
        out.setLong(start + RecordBatchLayout.MAX_TIMESTAMP_OFFSET, baseMs);
        out.setInt(start + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, start));
    }

    @Test
    void validationGivesEachBatchItsRecordsMaximumNotTheHeaders() {
        ByteBuf set = bufs.heap();
        appendSdkBatch(set, TS, 0, 5_000, 1_200);
        appendSdkBatch(set, TS + 10, 0);
        appendSdkBatch(set, TS + 20, -7, -3); // records below the base: the max is below the header's
        BatchMaxTimestamps maxima = new BatchMaxTimestamps(1);
        maxima.add(42); // what an earlier request of the same pass left
        for (ByteBuf view : new ByteBuf[] {set, bufs.directCopy(set), bufs.composite(set, 100)}) {
            maxima.truncate(1);
            assertThat(RecordBatchValidator.validate(view, 1 << 20, false, maxima))
                    .isEqualTo(Errors.NONE);
            assertThat(maxima.size()).isEqualTo(4);
            assertThat(maxima.get(0)).isEqualTo(42);
            assertThat(maxima.get(1)).isEqualTo(TS + 5_000);
            assertThat(maxima.get(2)).isEqualTo(TS + 10);
            assertThat(maxima.get(3)).isEqualTo(TS + 20 - 3);
        }
    }

    @Test
    void aRefusedSetLeavesNoEntry() {
        ByteBuf set = bufs.heap();
        appendSdkBatch(set, TS, 0, 5_000);
        int second = set.writerIndex();
        appendSdkBatch(set, TS, 0, 1);
        set.setByte(second + RecordBatchLayout.RECORDS_OFFSET + 4, 1); // record attributes != 0, CRC kept stale
        BatchMaxTimestamps maxima = new BatchMaxTimestamps(2);
        maxima.add(7);
        assertThat(RecordBatchValidator.validate(set, 1 << 20, false, maxima)).isEqualTo(Errors.CORRUPT_MESSAGE);
        assertThat(maxima.size()).isEqualTo(1);
        set.setInt(second + RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(set, second));
        assertThat(RecordBatchValidator.validate(set, 1 << 20, false, maxima)).isEqualTo(Errors.INVALID_RECORD);
        assertThat(maxima.size()).isEqualTo(1); // the valid first batch's entry went too
        assertThat(maxima.get(0)).isEqualTo(7);
    }

    @Test
    void growsKeepsItsEntriesAndChecksIndexes() {
        BatchMaxTimestamps maxima = new BatchMaxTimestamps(1);
        for (int i = 0; i < 100; i++) {
            maxima.add(1000L + i);
        }
        assertThat(maxima.size()).isEqualTo(100);
        assertThat(maxima.get(99)).isEqualTo(1099);
        maxima.truncate(200); // not smaller: no-op
        assertThat(maxima.size()).isEqualTo(100);
        maxima.truncate(3);
        assertThat(maxima.get(2)).isEqualTo(1002);
        assertThatThrownBy(() -> maxima.get(3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> maxima.get(-1)).isInstanceOf(IndexOutOfBoundsException.class);
        maxima.clear();
        assertThat(maxima.size()).isZero();
        assertThatThrownBy(() -> new BatchMaxTimestamps(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> maxima.truncate(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
