package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RecordBatch being filled for one partition, with the callbacks of its records (the future of
 * {@code send(record)} is its own callback). The batch bytes live in a pooled direct buffer that is
 * released exactly once, when the batch completes or fails.
 *
 * <p>Thread-safety: guarded by the producer's accumulator lock; callbacks are called outside it.
 */
final class ProducerBatch {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatch.class);
    /** Record framing without key/value bytes: length 4, attributes 1, timestampDelta 8, offsetDelta 4, key len 4, value len 4, header count 4. */
    static final int RECORD_OVERHEAD = 29;

    final TopicPartition tp;
    final long createdNs;
    /** Position of this batch in its partition's send order (0, 1, 2, ... per partition). */
    final long sequence;

    final int reservedBytes;
    private final ByteBuf buffer;
    private final RecordBatchBuilder builder;
    /** Per record (the first {@link #recordCount} entries): its callback and timestamp; grown by doubling. */
    private Callback[] callbacks = new Callback[64];

    private long[] timestamps = new long[64];
    private int recordCount;

    private final int batchSizeBytes;
    private boolean closed;
    private boolean released;
    int attempts;
    long retryAfterNs;
    /** The retriable error of the latest failed attempt (for the delivery timeout's message), or null. */
    StellflowException lastError;

    ProducerBatch(
            TopicPartition tp,
            ByteBufAllocator alloc,
            int batchSizeBytes,
            int firstRecordBytes,
            long baseTimestampMs,
            long nowNs,
            long sequence) {
        this.tp = tp;
        this.sequence = sequence;
        this.createdNs = nowNs;
        this.batchSizeBytes = batchSizeBytes;
        this.reservedBytes = Math.max(batchSizeBytes, RecordBatchLayout.HEADER_SIZE + firstRecordBytes);
        this.buffer = alloc.directBuffer(reservedBytes);
        this.builder = new RecordBatchBuilder(buffer, baseTimestampMs);
    }

    static int recordBytes(byte[] key, byte[] value) {
        return RECORD_OVERHEAD + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
    }

    /** Appends if the record fits in {@code batch.size} (the first record always fits); else false. */
    boolean tryAppend(long timestampMs, byte[] key, byte[] value, Callback callback) {
        if (closed) {
            return false;
        }
        int size = recordBytes(key, value);
        if (builder.recordCount() > 0 && builder.sizeInBytes() + size > batchSizeBytes) {
            return false;
        }
        builder.append(timestampMs, key, value, List.of());
        int i = recordCount++;
        if (i == timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, i * 2);
            callbacks = Arrays.copyOf(callbacks, i * 2);
        }
        timestamps[i] = timestampMs;
        callbacks[i] = callback;
        return true;
    }

    boolean isFull() {
        return closed || builder.sizeInBytes() + RECORD_OVERHEAD > batchSizeBytes;
    }

    int recordCount() {
        return recordCount;
    }

    /** Seals the batch (fills length, counts and CRC); idempotent. */
    void close() {
        if (!closed) {
            builder.close();
            closed = true;
        }
    }

    int sizeInBytes() {
        return buffer.readableBytes();
    }

    /** The sealed batch bytes; the view does not change the batch's indexes or reference count. */
    ByteBuf bytes() {
        return buffer.duplicate();
    }

    /** Completes record i with offset {@code baseOffset + i}; called outside the lock. */
    void complete(long baseOffset) {
        release();
        for (int i = 0; i < recordCount; i++) {
            call(callbacks[i], new RecordMetadata(tp.topic(), tp.partition(), baseOffset + i, timestamps[i]), null);
        }
    }

    void fail(RuntimeException e) {
        release();
        for (int i = 0; i < recordCount; i++) {
            call(callbacks[i], null, e);
        }
    }

    /**
     * Calls one record's callback (none when null); what it throws, an Error such as a failed
     * assertion included, is logged and the other records still complete. Only a {@link
     * VirtualMachineError} (out of memory, stack overflow) is thrown on.
     */
    static void call(Callback callback, RecordMetadata metadata, Exception exception) {
        if (callback == null) {
            return;
        }
        try {
            callback.onCompletion(metadata, exception);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable t) {
            LOG.warn("A send callback threw; the other records of the batch are completed anyway", t);
        }
    }

    void release() {
        if (!released) {
            released = true;
            buffer.release();
        }
    }
}
