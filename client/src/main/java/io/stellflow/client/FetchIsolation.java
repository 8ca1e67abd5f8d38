package io.stellflow.client;

import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.protocol.record.RecordBatchReader.BatchGate;

/**
 * The consumer's {@code isolation.level} applied to Fetch answers: where a partition's next Fetch
 * starts, which batches are handed out, and the end its lag counts to ({@code docs/exactly-once.md},
 * "read_committed consumers").
 *
 * <ul>
 *   <li>read_committed: the batches of aborted transactions are left out ({@link
 *       AbortedTransactionFilter}); the visible end is the last stable offset.
 *   <li>Both levels: an error-free answer with no records to a Fetch at {@code F} below the answer's
 *       readable bound (the HW, or the LSO at read_committed) means that every offset in {@code [F,
 *       bound)} is a control batch (the broker reads on past markers it leaves out, and a partition's
 *       first batch is exempt from the size limits: {@code docs/spec/wire-protocol.md} §6.4), so the
 *       position moves to the bound instead of staying on a marker.
 * </ul>
 *
 * <p>Thread-safety: confined to the consumer's application thread (one filter, reused).
 */
final class FetchIsolation {
    private final boolean readCommitted;
    private final AbortedTransactionFilter filter = new AbortedTransactionFilter();

    FetchIsolation(boolean readCommitted) {
        this.readCommitted = readCommitted;
    }

    /**
     * The gate for one walk of {@code f}'s batches (reset for it), or null when nothing is left out
     * (read_uncommitted, or no aborted transaction listed).
     */
    BatchGate gate(CompletedFetch f) {
        if (!readCommitted || f.result.aborted().isEmpty()) {
            return null;
        }
        filter.reset(f.fetchOffset, f.result.aborted());
        return filter;
    }

    /**
     * The offset the partition's next Fetch starts at after the error-free answer {@code f}: after
     * its last batch, at a batch the filter could not decide, or (no records) the readable bound;
     * -1 when the answer moves nothing.
     */
    long nextOffset(CompletedFetch f) {
        FetchResult r = f.result;
        if (r.records() == null) {
            long end = visibleEnd(r);
            return end > f.fetchOffset ? end : -1L;
        }
        return RecordBatchReader.nextOffset(r.records(), r.baseOffset(), gate(f));
    }

    /** The end a consumer at this level reads up to: the LSO at read_committed (when known), else the HW. */
    long visibleEnd(FetchResult r) {
        return readCommitted && r.lastStableOffset() >= 0 ? r.lastStableOffset() : r.highWatermark();
    }
}
