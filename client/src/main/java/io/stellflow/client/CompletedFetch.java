package io.stellflow.client;

/**
 * One completed Fetch of {@link StellflowConsumer}, or {@link #WAKE}; thread-confined to the
 * consumer's application thread once taken off its queue. Holds one reference on the response frame
 * until {@link #release}.
 */
final class CompletedFetch {
    /** Put on the consumer's queue when a group response arrives: wakes a waiting consumer call. */
    static final CompletedFetch WAKE = new CompletedFetch(null, 0, null, null);

    final TopicPartition tp;
    final int epoch;
    final Throwable failure;
    FetchResult result;

    CompletedFetch(TopicPartition tp, int epoch, FetchResult result, Throwable failure) {
        this.tp = tp;
        this.epoch = epoch;
        this.result = result;
        this.failure = failure;
    }

    /** Drops the record bytes (idempotent). */
    void release() {
        FetchResult r = result;
        if (r != null && r.records() != null) {
            result = new FetchResult(r.errorCode(), r.highWatermark(), r.baseOffset(), null);
            r.records().release();
        }
    }
}
