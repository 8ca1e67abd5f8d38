package io.stellflow.protocol.record;

import java.util.Arrays;

/**
 * The real largest record timestamp of each batch of a RecordBatchSet, in batch order: what {@link
 * RecordBatchValidator#validate(io.netty.buffer.ByteBuf, int, boolean, BatchMaxTimestamps)} computes
 * from {@code baseTimestamp + timestampDelta} of every record while it validates them, so the log can
 * index batches by it without walking the records a second time. A batch header's {@code
 * maxTimestamp} is only a hint: both public SDKs send it equal to {@code baseTimestamp} ({@code
 * docs/spec/wire-protocol.md} decision 9.s).
 *
 * <p>Shape: a growable array of int64 ms since the epoch, index i = the i-th batch appended since the
 * last {@link #clear}. Reused from pass to pass by its owner: it allocates only when a pass holds more
 * batches than any before (amortised, never per record).
 *
 * <p>Thread-safety: confined to one thread (an append agent, or one request's thread).
 */
public final class BatchMaxTimestamps {
    private long[] maxTimestampsMs;
    private int size;

    /** An empty list with room for {@code initialCapacity} batches (&gt;= 1). */
    public BatchMaxTimestamps(int initialCapacity) {
        if (initialCapacity < 1) {
            throw new IllegalArgumentException("initialCapacity " + initialCapacity + " < 1");
        }
        maxTimestampsMs = new long[initialCapacity];
    }

    /** Number of batches held. */
    public int size() {
        return size;
    }

    /**
     * The largest record timestamp (ms) of batch {@code index}.
     *
     * @throws IndexOutOfBoundsException {@code index} is not in {@code [0, size)}
     */
    public long get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("batch " + index + " of " + size);
        }
        return maxTimestampsMs[index];
    }

    /** Appends the largest record timestamp (ms) of the next batch. */
    public void add(long maxTimestampMs) {
        if (size == maxTimestampsMs.length) {
            maxTimestampsMs = Arrays.copyOf(maxTimestampsMs, 2 * size);
        }
        maxTimestampsMs[size++] = maxTimestampMs;
    }

    /** Drops every batch from {@code newSize} on (a refused request's batches); no-op if not smaller. */
    public void truncate(int newSize) {
        if (newSize < 0) {
            throw new IllegalArgumentException("newSize " + newSize + " < 0");
        }
        size = Math.min(size, newSize);
    }

    /** Empties the list, keeping its capacity. */
    public void clear() {
        size = 0;
    }
}
