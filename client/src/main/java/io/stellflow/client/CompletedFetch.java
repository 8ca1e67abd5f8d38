package io.stellflow.client;

import io.netty.buffer.ByteBuf;

/**
 * One completed Fetch of {@link StellflowConsumer}, or {@link #WAKE}; thread-confined to the
 * consumer's application thread once taken off its queue. Holds one reference on the response frame
 * until {@link #release}.
 */
final class CompletedFetch {
    /** Put on the consumer's queue when a group response arrives: wakes a waiting consumer call. */
    static final CompletedFetch WAKE = new CompletedFetch(null, 0, -1, null, null);

    final TopicPartition tp;
    final int epoch;
    /** The fetchOffset the request asked for. */
    final long fetchOffset;

    final Throwable failure;
    FetchResult result;
    /**
     * Set when the answer is settled: the offset the partition's next Fetch starts at ({@link
     * FetchIsolation#nextOffset}), -1 when the answer moved nothing.
     */
    long nextOffset = -1;

    /** Set by {@link FetchExpander#offer} when it took this answer; the next two fields are its (under its lock). */
    FetchExpander expander;
    /** {@link FetchExpander}'s state for this answer. */
    int expandState;
    /** The expanded records once {@link FetchExpander} is done; its buffer, given back by {@link #release}. */
    ByteBuf expanded;

    CompletedFetch(TopicPartition tp, int epoch, long fetchOffset, FetchResult result, Throwable failure) {
        this.tp = tp;
        this.epoch = epoch;
        this.fetchOffset = fetchOffset;
        this.result = result;
        this.failure = failure;
    }

    /** Drops the record bytes and their expanded copy (idempotent). */
    void release() {
        if (expander != null) {
            expander.release(this);
        }
        FetchResult r = result;
        if (r != null && r.records() != null) {
            result = r.withoutRecords();
            r.records().release();
        }
    }
}
