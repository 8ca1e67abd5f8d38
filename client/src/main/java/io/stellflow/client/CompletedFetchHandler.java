package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import io.stellflow.protocol.record.RecordBatchReader;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Applies the completed Fetches of a {@link StellflowConsumer} to its partitions' states, in the
 * two steps of a poll: {@link #advance} settles each answer (errors, the next fetch position from
 * the batch headers) without decoding, so the consumer can send the next Fetches; then {@link
 * #decodeAll} validates and decodes the records. Stale answers (the partition unassigned, or seeked
 * since) lose their records.
 *
 * <p>Thread-safety: NOT thread-safe; confined to the consumer's application thread.
 */
final class CompletedFetchHandler {
    private final ConsumerConfig config;
    private final ConsumerPositions positions;
    private final FetchIsolation isolation;
    private final RecordBatchDecompressor decompressor;
    private final ClientMetrics metrics;
    /** The consumer's metadata refresh (rate-limited): a retriable error's leader may have moved. */
    private final Runnable refreshMetadata;

    /**
     * A bad batch's error held back by {@link #decodeAll} because records before it were handed
     * out: thrown by the next {@link #throwDeferred} if its partition is still at {@code
     * deferredPosition} in fetch epoch {@code deferredEpoch}; null when none.
     */
    private StellflowException deferred;

    private TopicPartition deferredTp;
    private int deferredEpoch;
    private long deferredPosition;

    CompletedFetchHandler(
            ConsumerConfig config,
            ConsumerPositions positions,
            FetchIsolation isolation,
            RecordBatchDecompressor decompressor,
            ClientMetrics metrics,
            Runnable refreshMetadata) {
        this.config = config;
        this.positions = positions;
        this.isolation = isolation;
        this.decompressor = decompressor;
        this.metrics = metrics;
        this.refreshMetadata = refreshMetadata;
    }

    /**
     * Settles one completed Fetch's partition state (errors, the next fetch position from the batch
     * headers) without decoding records; stale answers (unassigned, or seeked since) lose their
     * records here.
     */
    void advance(CompletedFetch f) {
        ConsumerPartitionState s = positions.get(f.tp);
        if (s == null || s.epoch != f.epoch) {
            f.release(); // unassigned or seeked meanwhile: stale data
            return;
        }
        s.fetchInFlight = false;
        short code;
        if (f.failure != null) {
            Throwable cause = NetworkClient.unwrap(f.failure);
            if (cause instanceof StellflowException se) {
                code = se.errorCode();
                if (!se.retriable()) {
                    throw se;
                }
            } else if (cause instanceof ProtocolException pe) {
                throw new StellflowException(pe.errorCode(), "bad Fetch response for " + f.tp, pe);
            } else {
                throw new StellflowException(Errors.UNKNOWN_SERVER_ERROR, "fetch " + f.tp + " failed", cause);
            }
        } else {
            code = f.result.errorCode();
        }
        if (code == Errors.NONE) {
            s.visibleEnd = isolation.visibleEnd(f.result);
            if (f.result.records() != null) {
                metrics.fetched(f.result.records().readableBytes());
            }
            f.nextOffset = isolation.nextOffset(f);
            if (f.result.records() == null && s.position == f.fetchOffset && f.nextOffset > s.position) {
                // Only markers up to the readable bound: move past them. Sound because each Fetch
                // carries this one partition, whose first batch no size limit holds back (9.g).
                s.position = f.nextOffset;
            }
            if (f.nextOffset > s.fetchPosition) {
                s.fetchPosition = f.nextOffset;
            }
        } else if (code == Errors.OFFSET_OUT_OF_RANGE) {
            if (config.autoOffsetReset().equals("none")) {
                throw new StellflowException(code, "position " + s.position + " of " + f.tp + " is out of range");
            }
            s.moveTo(-1);
        } else if (StellflowException.isRetriable(code)) {
            s.retryAfterNs = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs());
            refreshMetadata.run();
        } else {
            throw new StellflowException(code, "fetch " + f.tp + " at " + s.fetchPosition + " failed");
        }
    }

    /**
     * Throws the error {@link #decodeAll} held back for a bad batch behind records it handed out,
     * if its partition is still where that poll left it (assigned, not seeked since, its position
     * the bad batch's); otherwise forgets it (a refetch meets the batch again, or the application
     * moved past it). Called at the start of each poll, before anything is fetched or decoded.
     */
    void throwDeferred() {
        StellflowException e = deferred;
        if (e == null) {
            return;
        }
        deferred = null;
        ConsumerPartitionState s = positions.get(deferredTp);
        if (s != null && s.epoch == deferredEpoch && s.position == deferredPosition) {
            throw e;
        }
    }

    /**
     * Validates and decodes the record sets in order into {@code out}, skipping offsets below each
     * partition's position. On a bad batch, as Kafka's consumer: the records decoded before it in
     * this poll are handed out, and the error is thrown when the application reaches the bad batch.
     *
     * <ul>
     *   <li>Some records decoded: they are kept, the bad partition and the ones not decoded yet
     *       fetch again from their positions (the bad one's is the bad batch's offset, or past the
     *       last record handed out), and the error is held back for the next poll ({@link
     *       #throwDeferred}).
     *   <li>Nothing decoded: every partition of this poll goes back to where it was (its Fetch in
     *       flight is discarded, so the next poll fetches the bad batch again and fails again instead
     *       of skipping it), then the error is thrown.
     * </ul>
     *
     * Batches are validated whole before their records are handed out, so the position a bad batch
     * leaves is never inside a batch that was partly delivered.
     */
    void decodeAll(List<CompletedFetch> ready, List<ConsumerRecord> out) {
        int outBefore = out.size();
        long[] positionsBefore = new long[ready.size()];
        int decoded = 0;
        try {
            for (; decoded < ready.size(); decoded++) {
                CompletedFetch f = ready.get(decoded);
                FetchResult r = f.result;
                ConsumerPartitionState s = positions.get(f.tp);
                positionsBefore[decoded] = s == null ? -1 : s.position;
                if (r == null || r.records() == null || s == null || s.epoch != f.epoch) {
                    continue;
                }
                String topic = f.tp.topic();
                int partition = f.tp.partition();
                RecordBatchReader.RecordSink sink = (offset, ts, key, value, headers) -> {
                    if (offset >= s.position) {
                        out.add(new ConsumerRecord(topic, partition, offset, ts, key, value, headers));
                        s.position = offset + 1;
                    }
                };
                // Expanded ahead (FetchExpander): CRCs were checked on the bytes as sent and every
                // batch's records as they were expanded, so they are not walked again here. An answer
                // the expanding thread refused (a bad batch among them) is decoded lazily below, which
                // reports the error as before.
                ByteBuf expanded = f.expander == null ? null : f.expander.await(f);
                if (expanded != null) {
                    RecordBatchReader.decodeExpanded(expanded, r.baseOffset(), isolation.gate(f), sink);
                } else {
                    RecordBatchReader.decode(
                            r.records(), r.baseOffset(), config.checkCrcs(), decompressor, isolation.gate(f), sink);
                }
                if (f.nextOffset > s.position) {
                    s.position = f.nextOffset; // past aborted batches and a compacted tail
                }
                f.release();
            }
        } catch (ProtocolException e) {
            CompletedFetch bad = ready.get(decoded);
            StellflowException error =
                    new StellflowException(e.errorCode(), "bad record batch from " + bad.tp + ": " + e.getMessage(), e);
            if (out.size() > outBefore) {
                // The partitions decoded whole keep their positions and Fetches in flight; the rest
                // fetch again from their positions.
                for (int i = decoded; i < ready.size(); i++) {
                    positions.refetch(ready.get(i), -1);
                }
                ConsumerPartitionState s = positions.get(bad.tp);
                deferred = error;
                deferredTp = bad.tp;
                deferredEpoch = s.epoch;
                deferredPosition = s.position;
                return;
            }
            // Every partition of this poll goes back to what the application has seen: the ones
            // decoded so far (and the bad one) to their position before this poll, the ones not
            // decoded yet stay where they are; all refetch from there.
            for (int i = 0; i < ready.size(); i++) {
                positions.refetch(ready.get(i), i <= decoded ? positionsBefore[i] : -1);
            }
            throw error;
        }
    }
}
