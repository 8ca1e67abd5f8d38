package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.stellflow.protocol.GatheringBuffer;
import io.stellflow.protocol.message.ProduceRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The body of one Produce request of the producer: per partition its sealed batches back to back
 * (one RecordBatchSet; one batch with {@code enable.idempotence}), grouped by topic in drain order.
 * The batches' buffers are written as they are (a gathering write when a partition holds at least
 * {@link GatheringBuffer#MIN_APPEND_BYTES}); each is held by a reference of the write's own while
 * it is written (a forced close may give the batch back meanwhile, {@code StellflowProducer.close}),
 * and the batch's own reference is never released here.
 *
 * <p>Thread-safety: immutable; written once, on the connection's I/O thread.
 */
final class ProduceRequestBody implements BodyWriter {
    private final Map<TopicPartition, List<ProducerBatch>> batches;
    private final short acks;
    private final int timeoutMs;
    private final ByteBufAllocator alloc;
    private final int sizeHintBytes;
    private final boolean gathers;

    private final String transactionalId;
    private final long transactionSequence;
    private final short version;

    /** A v0/v1 body (no transactional id). */
    ProduceRequestBody(
            Map<TopicPartition, List<ProducerBatch>> batches, short acks, int timeoutMs, ByteBufAllocator alloc) {
        this(batches, acks, timeoutMs, alloc, null, -1L, (short) 1);
    }

    /**
     * A body of {@code version} with {@code transactionalId} (null: none) and, from v2 on, the
     * transaction's sequence.
     */
    ProduceRequestBody(
            Map<TopicPartition, List<ProducerBatch>> batches,
            short acks,
            int timeoutMs,
            ByteBufAllocator alloc,
            String transactionalId,
            long transactionSequence,
            int version) {
        this.transactionalId = transactionalId;
        this.transactionSequence = transactionSequence;
        this.version = (short) version;
        this.batches = batches;
        this.acks = acks;
        this.timeoutMs = timeoutMs;
        this.alloc = alloc;
        int bytes = 64;
        int largestRecordsBytes = 0;
        for (List<ProducerBatch> list : batches.values()) {
            bytes += 64;
            int recordsBytes = 0;
            for (ProducerBatch b : list) {
                bytes += b.sizeInBytes();
                recordsBytes += b.sizeInBytes();
            }
            largestRecordsBytes = Math.max(largestRecordsBytes, recordsBytes);
        }
        this.sizeHintBytes = bytes;
        this.gathers = largestRecordsBytes >= GatheringBuffer.MIN_APPEND_BYTES;
    }

    @Override
    public int sizeHintBytes() {
        return sizeHintBytes;
    }

    @Override
    public boolean gathers() {
        return gathers;
    }

    @Override
    public void write(ByteBuf out) {
        Map<String, List<ProduceRequest.PartitionData>> byTopic = new LinkedHashMap<>();
        List<ByteBuf> toRelease = new ArrayList<>();
        try {
            for (Map.Entry<TopicPartition, List<ProducerBatch>> e : batches.entrySet()) {
                List<ProducerBatch> list = e.getValue();
                ByteBuf records;
                if (list.size() == 1) {
                    // Held for the write: a forced close may give the batch's buffer back (and free it)
                    // on the sender thread while this I/O thread copies it; the reference keeps the
                    // memory until the copy is done, and a buffer already freed fails this write
                    // (IllegalReferenceCountException) instead of being read.
                    records = list.get(0).bytes().retain();
                    toRelease.add(records);
                } else {
                    CompositeByteBuf c = alloc.compositeDirectBuffer(list.size());
                    for (ProducerBatch b : list) {
                        c.addComponent(true, b.bytes().retain());
                    }
                    toRelease.add(c);
                    records = c;
                }
                byTopic.computeIfAbsent(e.getKey().topic(), t -> new ArrayList<>())
                        .add(new ProduceRequest.PartitionData(e.getKey().partition(), records));
            }
            List<ProduceRequest.TopicData> topics = new ArrayList<>(byTopic.size());
            byTopic.forEach((t, parts) -> topics.add(new ProduceRequest.TopicData(t, parts)));
            new ProduceRequest(transactionalId, transactionSequence, acks, timeoutMs, topics).write(out, version);
        } finally {
            toRelease.forEach(ByteBuf::release);
        }
    }
}
