package io.stellflow.client;

import io.stellflow.protocol.message.FetchResponse.AbortedTransaction;
import io.stellflow.protocol.record.RecordBatchReader.BatchGate;
import java.util.Arrays;
import java.util.List;

/**
 * The read_committed filter of one Fetch answer: decides per batch, from its header, whether its
 * records belong to an aborted transaction ({@code docs/exactly-once.md}, "read_committed
 * consumers").
 *
 * <p>What the answer says: {@code abortedTransactions} lists every aborted transaction whose offsets
 * {@code [firstOffset, abortMarker]} overlap {@code [fetchOffset, last returned offset]}, as
 * (producerId, firstOffset), where firstOffset is the transaction's BEGIN marker. Markers never
 * reach consumers, so the ABORT marker's offset {@code m} is not known; what is known:
 *
 * <ul>
 *   <li>{@code m >= fetchOffset} (the entry was listed) and {@code m > firstOffset};
 *   <li>{@code m} is a control batch, so it is not an offset of any returned batch.
 * </ul>
 *
 * <p>Hence the rule: a batch of producer P at {@code [base, last]} is aborted iff P has a listed
 * entry with {@code firstOffset <= base} (the one with the greatest firstOffset; a producer's
 * transactions never overlap) and {@code m > last}. That holds for sure when every offset from the
 * lowest bound known for {@code m} (above) up to {@code base} belongs to returned batches: then no
 * marker lies there, so {@code m} is past the batch. Each batch found aborted raises the bound to
 * its {@code last + 1}. A batch of P with no such entry is delivered (an aborted batch's
 * transaction overlaps the returned range, so it would be listed). A batch where the bound is
 * below a hole in the returned offsets (skipped markers of any producer, or compacted batches) is
 * undecidable from this answer: the walk {@link BatchGate#STOP stops} before it and the consumer
 * fetches again from its base offset, where it is decidable (with {@code fetchOffset = base} the
 * bound is {@code base}). So the filter is exact and never stalls: every answer delivers or skips
 * at least its first undecided batch or moves the fetch offset forward.
 *
 * <p>Cost: per answer, one pass over its listed entries; per batch, a scan of the entries (a
 * handful: only aborts overlapping the answer are listed); nothing allocated per batch or record
 * (arrays grow only when an answer lists more entries than ever before). One extra round trip
 * when an aborting producer's batch follows a hole; a broker that also sent each entry's marker
 * offset would remove it (proposed in {@code docs/exactly-once.md}).
 *
 * <p>Thread-safety: confined to the consumer's application thread; {@link #reset} before each
 * walk of an answer's batches (the same answer may be walked twice: once for the next fetch
 * offset, once to decode, with the same verdicts).
 */
final class AbortedTransactionFilter implements BatchGate {
    private long[] producerIds = new long[4];
    private long[] firstOffsets = new long[4];
    /** Per entry: the lowest offset its ABORT marker may be at, from what the walk has seen. */
    private long[] markerAtLeast = new long[4];

    private int count;
    /** The offset after the last batch walked (the fetch offset before the first). */
    private long expectedNext;
    /** Start of the gap-free run of returned offsets that ends at the batch being walked. */
    private long runStart;

    /**
     * Starts the walk of an answer to a Fetch at {@code fetchOffset} that listed {@code aborted}
     * (empty: every batch is delivered).
     */
    void reset(long fetchOffset, List<AbortedTransaction> aborted) {
        int n = aborted.size();
        if (n > producerIds.length) {
            int cap = Math.max(n, producerIds.length * 2);
            producerIds = Arrays.copyOf(producerIds, cap);
            firstOffsets = Arrays.copyOf(firstOffsets, cap);
            markerAtLeast = Arrays.copyOf(markerAtLeast, cap);
        }
        for (int i = 0; i < n; i++) {
            AbortedTransaction a = aborted.get(i);
            producerIds[i] = a.producerId();
            firstOffsets[i] = a.firstOffset();
            markerAtLeast[i] = Math.max(fetchOffset, a.firstOffset() + 1);
        }
        count = n;
        expectedNext = fetchOffset;
        runStart = fetchOffset;
    }

    /** Whether the current answer listed any aborted transaction. */
    boolean active() {
        return count > 0;
    }

    @Override
    public int admit(long producerId, long baseOffset, long lastOffset) {
        if (baseOffset > expectedNext) {
            runStart = baseOffset; // a hole: offsets the answer does not hold (markers, compaction)
        }
        int entry = producerId < 0 ? -1 : entryFor(producerId, baseOffset);
        int verdict;
        if (entry < 0) {
            verdict = DELIVER;
        } else if (runStart <= markerAtLeast[entry]) {
            verdict = SKIP;
            markerAtLeast[entry] = Math.max(markerAtLeast[entry], lastOffset + 1);
        } else {
            return STOP;
        }
        expectedNext = Math.max(expectedNext, lastOffset + 1);
        return verdict;
    }

    /** The listed entry of {@code producerId} with the greatest firstOffset at or below {@code base}. */
    private int entryFor(long producerId, long base) {
        int best = -1;
        for (int i = 0; i < count; i++) {
            if (producerIds[i] == producerId
                    && firstOffsets[i] <= base
                    && (best < 0 || firstOffsets[i] > firstOffsets[best])) {
                best = i;
            }
        }
        return best;
    }
}
