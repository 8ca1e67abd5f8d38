package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A stored batch's real max record timestamp, whatever its header says (spec decision 9.s). */
class RecordTimestampsTest {
    private static long maxOfBuffer(ByteBuf batch) {
        ByteBuffer copy = ByteBuffer.allocate(batch.readableBytes() + 3);
        copy.position(3);
        batch.getBytes(0, copy);
        return RecordTimestamps.maxOf(copy, 3, batch.readableBytes());
    }

    @Test
    void theMaximumComesFromTheRecordsNotTheHeader() {
        ByteBuf sdk = TestBatches.sdkBatch(1_000_000, 0, 5_000, 1_200);
        ByteBuf below = TestBatches.sdkBatch(2_000_000, -7, -3); // header max (the base) above every record
        try {
            assertThat(sdk.getLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET)).isEqualTo(1_000_000);
            assertThat(RecordTimestamps.maxOf(sdk, 0)).isEqualTo(1_005_000);
            assertThat(maxOfBuffer(sdk)).isEqualTo(1_005_000);
            assertThat(RecordTimestamps.maxOf(below, 0)).isEqualTo(1_999_997);
            assertThat(maxOfBuffer(below)).isEqualTo(1_999_997);
        } finally {
            sdk.release();
            below.release();
        }
    }

    @Test
    void recordsThatDoNotWalkFallBackToWhatIsKnown() {
        ByteBuf batch = TestBatches.sdkBatch(1_000_000, 4_000, 0, 9_000);
        try {
            int second = RecordBatchLayout.RECORDS_OFFSET + 4 + batch.getInt(RecordBatchLayout.RECORDS_OFFSET);
            batch.setInt(second, 1 << 20); // the second record's length runs past the batch
            assertThat(RecordTimestamps.maxOf(batch, 0)).isEqualTo(1_004_000); // first record beats the header
            assertThat(maxOfBuffer(batch)).isEqualTo(1_004_000);
            batch.setInt(RecordBatchLayout.RECORDS_OFFSET, 3); // the first record is broken: the header alone
            assertThat(RecordTimestamps.maxOf(batch, 0)).isEqualTo(1_000_000);
            assertThat(maxOfBuffer(batch)).isEqualTo(1_000_000);
        } finally {
            batch.release();
        }
    }
}
