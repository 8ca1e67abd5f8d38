package io.stellflow.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.record.DecodedRecord;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Builds client-style record batches for tests and decodes what the log returns. */
final class TestBatches {
    private TestBatches() {}

    /** One batch with one record per timestamp; values are {@code "v<timestamp>"}. */
    static ByteBuf batch(long... timestampsMs) {
        ByteBuf out = Unpooled.buffer();
        appendBatch(out, timestampsMs);
        return out;
    }

    /** Appends one batch with one record per timestamp to {@code out}. */
    static void appendBatch(ByteBuf out, long... timestampsMs) {
        RecordBatchBuilder b = new RecordBatchBuilder(out, timestampsMs[0]);
        for (long ts : timestampsMs) {
            b.append(ts, null, ("v" + ts).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
    }

    /**
     * One batch built as both public SDKs build it (spec decision 9.s): record i has timestamp {@code
     * baseTimestampMs + timestampDeltasMs[i]}, but the header's maxTimestamp equals baseTimestamp
     * whatever the deltas say (the CRC is computed over that header, so the batch is valid).
     */
    static ByteBuf sdkBatch(long baseTimestampMs, long... timestampDeltasMs) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, baseTimestampMs);
        for (long delta : timestampDeltasMs) {
            long ts = baseTimestampMs + delta;
            b.append(ts, null, ("v" + ts).getBytes(StandardCharsets.UTF_8));
        }
        b.close();
        out.setLong(RecordBatchLayout.MAX_TIMESTAMP_OFFSET, baseTimestampMs);
        out.setInt(RecordBatchLayout.CRC_OFFSET, RecordBatchLayout.computeCrc(out, 0));
        return out;
    }

    /** One batch whose records carry the given values (timestamp 1000). */
    static void appendValues(ByteBuf out, List<String> values) {
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
        for (String v : values) {
            b.append(1000, null, v.getBytes(StandardCharsets.UTF_8));
        }
        b.close();
    }

    /** A batch of {@code records} records with a value of {@code valueBytes} bytes each. */
    static ByteBuf sized(int records, int valueBytes) {
        ByteBuf out = Unpooled.buffer();
        RecordBatchBuilder b = new RecordBatchBuilder(out, 1000);
        for (int i = 0; i < records; i++) {
            b.append(1000 + i, null, new byte[valueBytes]);
        }
        b.close();
        return out;
    }

    /** Decodes a Fetch v0 style record set (CRC checked by the reader). */
    static List<DecodedRecord> decode(ByteBuf fetched, long fetchOffset) {
        return RecordBatchReader.decode(fetched, fetchOffset);
    }

    /** Values of the decoded records as strings. */
    static List<String> values(List<DecodedRecord> records) {
        List<String> out = new ArrayList<>();
        for (DecodedRecord r : records) {
            out.add(new String(r.value(), StandardCharsets.UTF_8));
        }
        return out;
    }

    /** Offsets of the decoded records. */
    static List<Long> offsets(List<DecodedRecord> records) {
        List<Long> out = new ArrayList<>();
        for (DecodedRecord r : records) {
            out.add(r.offset());
        }
        return out;
    }
}
