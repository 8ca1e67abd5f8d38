package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.record.RecordBatchLayout;

/** Checks on record sets handed to the log for appending. Stateless, thread-safe. */
final class RecordSets {
    private RecordSets() {}

    /**
     * Checks the framing the append relies on before anything is changed, so a bad set is rejected
     * whole: whole batches back to back, batchLength and lastOffsetDelta in range. The full
     * validation (CRC, records) is the caller's (RecordBatchValidator). Returns the number of batches.
     */
    static int checkWholeBatches(ByteBuf records, int start, int end) {
        if (start >= end) {
            throw new IllegalArgumentException("empty record set");
        }
        int p = start;
        int batches = 0;
        while (p < end) {
            if (end - p < RecordBatchLayout.HEADER_SIZE) {
                throw new IllegalArgumentException("partial batch at " + (p - start) + " of the record set");
            }
            int batchLength = records.getInt(p + RecordBatchLayout.BATCH_LENGTH_OFFSET);
            int lastOffsetDelta = records.getInt(p + RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
            if (batchLength < RecordBatchLayout.MIN_BATCH_LENGTH
                    || batchLength > end - p - RecordBatchLayout.LOG_OVERHEAD
                    || lastOffsetDelta < 0) {
                throw new IllegalArgumentException("record set not validated: batch at " + (p - start)
                        + " has batchLength " + batchLength + ", lastOffsetDelta " + lastOffsetDelta);
            }
            p += RecordBatchLayout.LOG_OVERHEAD + batchLength;
            batches++;
        }
        return batches;
    }
}
