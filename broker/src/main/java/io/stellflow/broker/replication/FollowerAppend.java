package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;

/**
 * Applies one partition of a Fetch v1 response to the follower's log: skips the batches that end
 * below the log end offset (the leader sends whole batches, so the first may start before the fetch
 * offset), checks the rest batch by batch (framing, magic, CRC-32C: per batch, never per record),
 * appends them with their offsets and leader epochs ({@link UnifiedLog#appendAsFollower} with {@code
 * recordsBaseOffset}, {@code docs/protocol-additions.md} Fetch v1), then sets the follower's high
 * watermark from the leader's ({@link Partition#updateFollowerHighWatermark}: never above what this
 * log holds).
 *
 * <p>Buffer ownership: the records bytes are modified in place (bytes 0-3 of each appended batch,
 * as the log's append does) and neither released nor retained.
 *
 * <p>Thread-safety: stateless; the caller is the partition's only follower-side writer.
 */
final class FollowerAppend {
    /** {@link #apply} result: records appended (or none to append). */
    static final int APPLIED = 0;

    /** {@link #apply} result: the records do not continue the log end offset; refetch from it. */
    static final int OFFSET_MISMATCH = 1;

    /** {@link #apply} result: a batch is malformed or fails its CRC; nothing appended. */
    static final int CORRUPT = 2;

    private FollowerAppend() {}

    /**
     * The base offset of the first batch in {@code records} whose last offset is at or above {@code
     * offset} (the batch holding it, or the next one), or -1 when there is none or the framing is
     * broken. Reads batch headers only.
     */
    static long baseOfBatchHolding(ByteBuf records, long recordsBaseOffset, long offset) {
        if (records == null) {
            return -1;
        }
        int end = records.writerIndex();
        for (int p = records.readerIndex(); end - p >= RecordBatchLayout.HEADER_SIZE; ) {
            int size = RecordBatchLayout.batchSize(records, p);
            if (size < RecordBatchLayout.HEADER_SIZE || size > end - p) {
                return -1;
            }
            long base = recordsBaseOffset + RecordBatchLayout.baseOffsetDelta(records, p);
            if (base + RecordBatchLayout.lastOffsetDelta(records, p) >= offset) {
                return base;
            }
            p += size;
        }
        return -1;
    }

    /**
     * @param records whole stored batches as Fetch v1 sends them (may be empty or null)
     * @param recordsBaseOffset what the batches' baseOffsetDelta count from
     * @param leaderHighWatermark the leader's HW from the same response
     * @return {@link #APPLIED}, {@link #OFFSET_MISMATCH} or {@link #CORRUPT}
     * @throws IOException the append failed (the log refuses writes until reopened)
     */
    static int apply(Partition partition, ByteBuf records, long recordsBaseOffset, long leaderHighWatermark)
            throws IOException {
        UnifiedLog log = partition.log();
        if (records != null && records.isReadable()) {
            long leo = log.logEndOffset();
            int end = records.writerIndex();
            int first = -1;
            for (int p = records.readerIndex(); p < end; ) {
                if (end - p < RecordBatchLayout.HEADER_SIZE) {
                    return CORRUPT;
                }
                int size = RecordBatchLayout.batchSize(records, p);
                if (size < RecordBatchLayout.HEADER_SIZE || size > end - p) {
                    return CORRUPT;
                }
                long last = recordsBaseOffset
                        + RecordBatchLayout.baseOffsetDelta(records, p)
                        + RecordBatchLayout.lastOffsetDelta(records, p);
                if (first < 0 && last >= leo) {
                    first = p;
                }
                if (first >= 0
                        && (RecordBatchLayout.magic(records, p) != RecordBatchLayout.MAGIC
                                || RecordBatchLayout.crc(records, p) != RecordBatchLayout.computeCrc(records, p))) {
                    return CORRUPT;
                }
                p += size;
            }
            if (first >= 0
                    && log.appendAsFollower(records.slice(first, end - first), recordsBaseOffset)
                            == UnifiedLog.OFFSET_MISMATCH) {
                return OFFSET_MISMATCH;
            }
        }
        partition.updateFollowerHighWatermark(leaderHighWatermark);
        return APPLIED;
    }
}
