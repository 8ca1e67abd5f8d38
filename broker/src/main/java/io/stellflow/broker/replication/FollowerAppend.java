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
 * <p>Thread-safety: stateless; called by the partition's fetcher inside {@link
 * Partition#runIfFollowing} (the log's write lock held).
 */
final class FollowerAppend {
    /** {@link #apply} result: records appended (or none to append). */
    static final int APPLIED = 0;

    /** {@link #apply} result: the records do not continue the log end offset; refetch from it. */
    static final int OFFSET_MISMATCH = 1;

    /** {@link #apply} result: a batch is malformed or fails its CRC; nothing appended. */
    static final int CORRUPT = 2;

    private FollowerAppend() {}

    /** {@link #batchHolding}: no batch reaches the offset. */
    static final int NO_BATCH = -1;

    /** {@link #batchHolding}: the batch framing is broken (a size or a header overruns the bytes). */
    static final int BROKEN_FRAMING = -2;

    /**
     * Where in {@code records} the first batch whose last offset is at or above {@code offset} starts
     * (the batch holding it, or the next one): its reader position, {@link #NO_BATCH} or {@link
     * #BROKEN_FRAMING}. Reads batch headers only, checking the framing of the batches it passes.
     */
    static int batchHolding(ByteBuf records, long recordsBaseOffset, long offset) {
        int end = records.writerIndex();
        for (int p = records.readerIndex(); p < end; ) {
            if (end - p < RecordBatchLayout.HEADER_SIZE) {
                return BROKEN_FRAMING;
            }
            int size = RecordBatchLayout.batchSize(records, p);
            if (size < RecordBatchLayout.HEADER_SIZE || size > end - p) {
                return BROKEN_FRAMING;
            }
            long last = recordsBaseOffset
                    + RecordBatchLayout.baseOffsetDelta(records, p)
                    + RecordBatchLayout.lastOffsetDelta(records, p);
            if (last >= offset) {
                return p;
            }
            p += size;
        }
        return NO_BATCH;
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
            int first = batchHolding(records, recordsBaseOffset, log.logEndOffset());
            if (first == BROKEN_FRAMING) {
                return CORRUPT;
            }
            int end = records.writerIndex();
            for (int p = first; p >= 0 && p < end; ) {
                if (end - p < RecordBatchLayout.HEADER_SIZE) {
                    return CORRUPT;
                }
                int size = RecordBatchLayout.batchSize(records, p);
                if (size < RecordBatchLayout.HEADER_SIZE
                        || size > end - p
                        || RecordBatchLayout.magic(records, p) != RecordBatchLayout.MAGIC
                        || RecordBatchLayout.crc(records, p) != RecordBatchLayout.computeCrc(records, p)) {
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
