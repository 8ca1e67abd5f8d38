package io.stellflow.broker.fetch;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.stellflow.broker.fetch.FetchPlan.PartitionPlan;
import io.stellflow.broker.fetch.FetchPlan.TopicPlan;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponse.FetchableTopicResponse;
import io.stellflow.protocol.message.FetchResponse.PartitionData;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the records of a {@link FetchPlan} (spec §6.4 steps 2-5, decisions 9.d, 9.f, 9.g).
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
 * </ul>
 *
 * <p>Thread-safety: stateless; runs on request handler threads (it does file I/O).
 */
public final class FetchReader {
    private static final Logger LOG = LoggerFactory.getLogger(FetchReader.class);

    private FetchReader() {}

    /** Reads every partition of the plan now. The caller owns the result's buffers. */
    public static FetchResult read(FetchPlan plan, ByteBufAllocator alloc) {
        FetchRequest request = plan.request();
        long remaining = Math.min(request.maxBytes(), plan.recordsBudgetBytes());
        long frameBudget = plan.recordsBudgetBytes();
        long total = 0;
        boolean hasError = false;
        List<ByteBuf> buffers = new ArrayList<>();
        List<Long> bounds = new ArrayList<>();
        List<FetchableTopicResponse> topics = new ArrayList<>(plan.topics().size());
        try {
            for (TopicPlan topic : plan.topics()) {
                List<PartitionData> partitions =
                        new ArrayList<>(topic.partitions().size());
                for (PartitionPlan p : topic.partitions()) {
                    if (p.partition() == null) {
                        hasError = true;
                        partitions.add(error(p.request().partition(), p.errorCode(), -1L, -1L, -1L));
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
                    bounds.add(bound);
                    long fetchOffset = p.request().fetchOffset();
                    int id = p.request().partition();
                    if (fetchOffset < logStart || fetchOffset > logEnd) {
                        hasError = true;
                        partitions.add(error(id, Errors.OFFSET_OUT_OF_RANGE, highWatermark, logStart, lastStable));
                        continue;
                    }
                    ByteBuf records = alloc.ioBuffer(0);
                    buffers.add(records);
                    short errorCode = Errors.NONE;
                    if (fetchOffset < bound && remaining > 0) {
                        try {
                            int bytes = readPartition(
                                    partition,
                                    fetchOffset,
                                    bound,
                                    p.request().partitionMaxBytes(),
                                    remaining,
                                    total == 0,
                                    frameBudget - total,
                                    records);
                            remaining -= bytes;
                            total += bytes;
                        } catch (IOException e) {
                            LOG.error("Fetch read on {} at offset {} failed", partition, fetchOffset, e);
                            records.clear();
                            errorCode = Errors.BROKER_NOT_AVAILABLE;
                            hasError = true;
                        }
                    }
                    partitions.add(
                            new PartitionData(id, errorCode, highWatermark, logStart, lastStable, List.of(), records));
                }
                topics.add(new FetchableTopicResponse(topic.topic(), partitions));
            }
        } catch (RuntimeException e) {
            for (ByteBuf buffer : buffers) {
                buffer.release();
            }
            throw e;
        }
        long[] boundArray = new long[bounds.size()];
        for (int i = 0; i < boundArray.length; i++) {
            boundArray[i] = bounds.get(i);
        }
        return new FetchResult(new FetchResponse(0, topics), total, hasError, boundArray, buffers);
    }

    /**
     * Copies whole batches of one partition into {@code out} and returns the bytes copied.
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
            ByteBuf out)
            throws IOException {
        int limit = (int) Math.min(partitionMaxBytes, remaining);
        if (first) {
            // First partition with data: its first batch is exempt from both limits (decision 9.g).
            int bytes = partition.log().readInto(fetchOffset, limit, bound, true, out);
            return dropIfAbove(out, bytes, frameBudget);
        }
        if (partitionMaxBytes >= remaining) {
            return partition.log().readInto(fetchOffset, limit, bound, false, out);
        }
        // The first batch may exceed partitionMaxBytes but not what is left of maxBytes.
        int bytes = partition.log().readInto(fetchOffset, limit, bound, true, out);
        return dropIfAbove(out, bytes, Math.min(remaining, frameBudget));
    }

    private static int dropIfAbove(ByteBuf out, int bytes, long max) {
        if (bytes > max) {
            out.clear();
            return 0;
        }
        return bytes;
    }

    private static PartitionData error(
            int partition, short errorCode, long highWatermark, long logStart, long lastStable) {
        return new PartitionData(partition, errorCode, highWatermark, logStart, lastStable, List.of(), null);
    }
}
