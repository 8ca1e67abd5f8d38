package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.fetch.FetchPlan.PartitionPlan;
import io.stellflow.broker.fetch.FetchPlan.TopicPlan;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.WireWriter;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the records of a {@link FetchPlan} straight into the response frame (spec §6.4 steps 2-5,
 * decisions 9.d, 9.f, 9.g). Batches are copied once, from the segment file into the frame.
 *
 * <ul>
 *   <li>Readable bound: the high watermark for consumers at isolationLevel 0, the last stable offset at
 *       isolationLevel 1, the log end offset for followers ({@code replicaId >= 0}).
 *   <li>{@code fetchOffset} below logStartOffset or above the log end offset:
 *       {@code OFFSET_OUT_OF_RANGE}; from the bound up to the log end offset: no records, no error.
 *   <li>Whole batches only; each partition stops before exceeding {@code partitionMaxBytes} and the
 *       response before exceeding {@code maxBytes}, except that a partition's first batch ignores
 *       {@code partitionMaxBytes} and the first batch of the first partition with data also ignores
 *       {@code maxBytes}. The response never exceeds the frame limit.
 *   <li>Each returned batch's baseOffsetDelta is rewritten to {@code batchBaseOffset - fetchOffset}
 *       by {@link io.stellflow.storage.PartitionLog#readInto}.
 *   <li>A read failure answers that partition {@code BROKER_NOT_AVAILABLE} (STORAGE_ERROR's v0
 *       fallback) with no records.
 * </ul>
 *
 * <p>Thread-safety: stateless; runs on request handler threads (it does file I/O).
 */
public final class FetchReader {
    private static final Logger LOG = LoggerFactory.getLogger(FetchReader.class);

    /** Frame offset of a partition entry's errorCode, relative to the entry start (after partition id). */
    private static final int ERROR_CODE_DELTA = 4;

    private FetchReader() {}

    /** Reads every partition of the plan now into a new response frame owned by the result. */
    public static FetchResult read(FetchPlan plan, RequestContext context) {
        ByteBuf frame = context.newResponseFrame(sizeHint(plan));
        try {
            return readInto(plan, frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    /**
     * The envelope alone when no partition has records to return (an idle long-poll check costs one
     * small buffer), else the envelope plus maxBytes capped at 1 MiB (the SDKs' maxBytes; the buffer
     * grows past that).
     */
    private static int sizeHint(FetchPlan plan) {
        long hint = plan.envelopeBytes() + 4L;
        for (TopicPlan topic : plan.topics()) {
            for (PartitionPlan p : topic.partitions()) {
                if (p.partition() != null
                        && p.request().fetchOffset() < p.partition().logEndOffset()) {
                    return (int) Math.min(hint + plan.request().maxBytes(), Math.max(hint, 1 << 20));
                }
            }
        }
        return (int) Math.min(hint, 1 << 20);
    }

    private static FetchResult readInto(FetchPlan plan, ByteBuf out) {
        FetchRequest request = plan.request();
        long frameBudget = plan.recordsBudgetBytes();
        long remaining = Math.min(request.maxBytes(), frameBudget);
        long total = 0;
        boolean hasError = false;
        long[] bounds = new long[plan.partitions().size()];
        int resolved = 0;
        out.writeInt(0); // sessionId: no fetch sessions in v0
        out.writeInt(plan.topics().size());
        for (TopicPlan topic : plan.topics()) {
            WireWriter.writeString(out, topic.topic(), "topic");
            out.writeInt(topic.partitions().size());
            for (PartitionPlan p : topic.partitions()) {
                int id = p.request().partition();
                if (p.partition() == null) {
                    hasError = true;
                    writeEntry(out, id, p.errorCode(), -1L, -1L, -1L);
                    continue;
                }
                Partition partition = p.partition();
                long logEnd = partition.logEndOffset();
                long highWatermark = partition.highWatermark();
                long lastStable = partition.lastStableOffset();
                long logStart = partition.logStartOffset();
                long bound = request.replicaId() >= 0
                        ? logEnd
                        : request.isolationLevel() == FetchRequest.READ_COMMITTED ? lastStable : highWatermark;
                bounds[resolved++] = bound;
                long fetchOffset = p.request().fetchOffset();
                if (fetchOffset < logStart || fetchOffset > logEnd) {
                    hasError = true;
                    writeEntry(out, id, Errors.OFFSET_OUT_OF_RANGE, highWatermark, logStart, lastStable);
                    continue;
                }
                int entryStart = out.writerIndex();
                int lengthIndex = writeEntry(out, id, Errors.NONE, highWatermark, logStart, lastStable);
                if (fetchOffset >= bound || remaining <= 0) {
                    continue;
                }
                int recordsStart = out.writerIndex();
                try {
                    int bytes = readPartition(
                            partition,
                            fetchOffset,
                            bound,
                            p.request().partitionMaxBytes(),
                            remaining,
                            total == 0,
                            frameBudget - total,
                            out,
                            recordsStart);
                    out.setInt(lengthIndex, bytes);
                    remaining -= bytes;
                    total += bytes;
                } catch (IOException e) {
                    LOG.error("Fetch read on {} at offset {} failed", partition, fetchOffset, e);
                    out.writerIndex(recordsStart);
                    out.setShort(entryStart + ERROR_CODE_DELTA, Errors.BROKER_NOT_AVAILABLE);
                    hasError = true;
                }
            }
        }
        return new FetchResult(out, total, hasError, bounds);
    }

    /** Writes a partition entry with an empty records field; returns the index of its records length. */
    private static int writeEntry(
            ByteBuf out, int partition, short errorCode, long highWatermark, long logStart, long lastStable) {
        FetchResponse.writePartitionHeader(
                out, new PartitionData(partition, errorCode, highWatermark, logStart, lastStable, List.of(), null), 0);
        return out.writerIndex() - 4;
    }

    /**
     * Appends whole batches of one partition to {@code out} and returns the bytes appended.
     *
     * @param first whether no earlier partition returned data (its first batch may exceed maxBytes)
     * @param frameBudget records bytes left before the response would exceed the frame limit
     */
    private static int readPartition(
            Partition partition,
            long fetchOffset,
            long bound,
            int partitionMaxBytes,
            long remaining,
            boolean first,
            long frameBudget,
            ByteBuf out,
            int recordsStart)
            throws IOException {
        int limit = (int) Math.min(partitionMaxBytes, remaining);
        if (first) {
            // First partition with data: its first batch is exempt from both limits (decision 9.g).
            int bytes = partition.log().readInto(fetchOffset, limit, bound, true, out);
            return dropIfAbove(out, recordsStart, bytes, frameBudget);
        }
        if (partitionMaxBytes >= remaining) {
            return partition.log().readInto(fetchOffset, limit, bound, false, out);
        }
        // The first batch may exceed partitionMaxBytes but not what is left of maxBytes.
        int bytes = partition.log().readInto(fetchOffset, limit, bound, true, out);
        return dropIfAbove(out, recordsStart, bytes, Math.min(remaining, frameBudget));
    }

    private static int dropIfAbove(ByteBuf out, int recordsStart, int bytes, long max) {
        if (bytes > max) {
            out.writerIndex(recordsStart);
            return 0;
        }
        return bytes;
    }
}
