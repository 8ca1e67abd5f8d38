package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.support.Bufs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RecordBatchReaderTest {
    private static final long TS = 1_000_000L;
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    private static void appendBatch(ByteBuf out, int n, int baseOffsetDelta) {
        int start = out.writerIndex();
        RecordBatchBuilder b = new RecordBatchBuilder(out, TS);
        for (int i = 0; i < n; i++) {
            b.append(TS + 10L * i, null, ("v" + i).getBytes(UTF_8));
        }
        b.close();
        RecordBatchLayout.setBaseOffsetDelta(out, start, baseOffsetDelta);
    }

    private static void assertThrowsCode(Runnable r, short code) {
        assertThatThrownBy(r::run)
                .isInstanceOfSatisfying(
                        ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(code));
    }

    @Test
    void offsetsAreFetchOffsetPlusBaseOffsetDeltaPlusOffsetDelta() {
        // docs/spec/wire-protocol.md §6.4 last example: fetchOffset 105, stored bases 103 (4
        // records) and 107.
        ByteBuf set = bufs.heap();
        appendBatch(set, 4, -2);
        appendBatch(set, 2, 2);
        List<DecodedRecord> records = RecordBatchReader.decode(set, 105);
        assertThat(records).extracting(DecodedRecord::offset).containsExactly(103L, 104L, 105L, 106L, 107L, 108L);
        assertThat(records.get(2).timestampMs()).isEqualTo(TS + 20);
        assertThat(records.get(2).key()).isNull();
        assertThat(records.get(2).value()).isEqualTo("v2".getBytes(UTF_8));
        assertThat(records.get(2).headers()).isEmpty();
        assertThat(set.readerIndex()).isZero();
    }

    @Test
    void aGateSkipsBatchesUnreadAndStopsBeforeOne() {
        // Batches at 10 (2 records), 12 (1), 14 (3, after a hole at 13), 17 (1); fetchOffset 10.
        ByteBuf set = bufs.heap();
        appendBatch(set, 2, 0);
        appendBatch(set, 1, 2);
        appendBatch(set, 3, 4);
        appendBatch(set, 1, 7);
        List<String> seen = new ArrayList<>();
        RecordBatchReader.BatchGate gate = (producerId, base, last) -> {
            seen.add(producerId + "@" + base + "-" + last);
            return base == 12
                    ? RecordBatchReader.BatchGate.SKIP
                    : base == 14 ? RecordBatchReader.BatchGate.STOP : RecordBatchReader.BatchGate.DELIVER;
        };
        List<Long> offsets = new ArrayList<>();
        RecordBatchReader.decode(set, 10, true, null, gate, (offset, ts, key, value, headers) -> offsets.add(offset));
        assertThat(offsets).containsExactly(10L, 11L);
        assertThat(seen).containsExactly("-1@10-11", "-1@12-12", "-1@14-16");
        assertThat(RecordBatchReader.nextOffset(set, 10, gate))
                .as("the stopped batch's base")
                .isEqualTo(14);
        assertThat(RecordBatchReader.nextOffset(set, 10, (pid, base, last) -> RecordBatchReader.BatchGate.SKIP))
                .as("skipped batches count as read")
                .isEqualTo(18);
        assertThat(RecordBatchReader.nextOffset(set, 10, null)).isEqualTo(18);
    }

    @Test
    void emptyOrNullSetGivesNoRecords() {
        assertThat(RecordBatchReader.decode(bufs.heap(), 0)).isEmpty();
        assertThat(RecordBatchReader.decode(null, 0)).isEmpty();
    }

    @Test
    void truncatedTrailingBatchIsInvalidRecord() {
        ByteBuf set = bufs.heap();
        appendBatch(set, 2, 0);
        appendBatch(set, 2, 2);
        ByteBuf truncated = set.slice(0, set.readableBytes() - 3);
        assertThrowsCode(() -> RecordBatchReader.decode(truncated, 0), Errors.INVALID_RECORD);
    }

    @Test
    void badCrcIsCorruptMessage() {
        ByteBuf set = bufs.heap();
        appendBatch(set, 2, 0);
        set.setByte(set.writerIndex() - 1, set.getByte(set.writerIndex() - 1) ^ 1);
        assertThrowsCode(() -> RecordBatchReader.decode(set, 0), Errors.CORRUPT_MESSAGE);
    }

    @Test
    void withoutTheCrcCheckADamagedValueIsDecodedButBrokenStructureIsStillInvalid() {
        ByteBuf set = bufs.heap();
        appendBatch(set, 2, 0);
        int lastValueByte = set.writerIndex() - 4 - 1; // before the record's headerCount
        set.setByte(lastValueByte, '7');
        assertThrowsCode(() -> RecordBatchReader.decode(set, 0, true, (o, t, k, v, h) -> {}), Errors.CORRUPT_MESSAGE);
        List<String> values = new ArrayList<>();
        RecordBatchReader.decode(set, 0, false, (o, t, k, v, h) -> values.add(new String(v, UTF_8)));
        assertThat(values).containsExactly("v0", "v7");
        set.setInt(set.writerIndex() - 4, 5); // headerCount 5 with no header bytes
        assertThrowsCode(() -> RecordBatchReader.decode(set, 0, false, (o, t, k, v, h) -> {}), Errors.INVALID_RECORD);
    }

    @Test
    void compressedBatchIsFeatureNotEnabled() {
        ByteBuf set = bufs.heap();
        appendBatch(set, 1, 0);
        set.setShort(RecordBatchLayout.ATTRIBUTES_OFFSET, 1);
        set.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(set, 0));
        assertThrowsCode(() -> RecordBatchReader.decode(set, 0), Errors.FEATURE_NOT_ENABLED);
    }

    @Test
    void decodesFromDirectAndCompositeBuffersAtANonZeroReaderIndex() {
        ByteBuf set = bufs.heap().writeInt(0xdeadbeef);
        appendBatch(set, 3, 0);
        set.readerIndex(4);
        List<DecodedRecord> expected = RecordBatchReader.decode(set, 7);
        assertThat(expected).hasSize(3);
        assertThat(RecordBatchReader.decode(bufs.directCopy(set), 7)).isEqualTo(expected);
        assertThat(RecordBatchReader.decode(bufs.composite(set, 61), 7)).isEqualTo(expected);
    }
}
