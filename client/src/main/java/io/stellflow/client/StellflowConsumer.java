package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponse;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.record.RecordBatchReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads records from manually assigned partitions ({@link #assign}), Kafka style: {@link #poll}
 * returns the records that arrived, each partition's position moves past what was returned.
 *
 * <p>Fetching is pipelined: every assigned partition keeps one Fetch in flight (long-polling up
 * to {@code fetch.max.wait.ms} on the broker). The I/O thread only decodes a response's envelope
 * and hands the partition's record bytes, undecoded, to the application thread (a retained slice
 * of the received frame: no copy). {@link #poll} then reads the offset after the last batch from
 * the batch headers, sends the next Fetch from there, and only then validates and decodes the
 * records, so the broker and the network work on the next chunk while this one is decoded.
 * Fetch v1 is used when the broker advertises it (stored batches sent untouched, record offsets
 * {@code recordsBaseOffset + baseOffsetDelta + offsetDelta}, {@link FetchResponseV1}), else v0
 * (offsets {@code fetchOffset + baseOffsetDelta + offsetDelta}, {@code docs/spec/wire-protocol.md}
 * §6.4); records below the position (a Fetch that starts inside a batch) are skipped, so the
 * application sees each offset once.
 *
 * <p>Buffer ownership: a fetched record set holds one reference on its response frame from the
 * I/O thread until {@link #poll} has decoded it (or dropped it as stale, or {@link #close}
 * released it).
 *
 * <p>A partition without a position starts at {@code auto.offset.reset} (earliest or latest; with
 * {@code none}, {@link #poll} throws). Retriable errors (7, 8, 9, 10, network) refresh metadata
 * and retry after {@code retry.backoff.ms}; other error codes and corrupt batches throw {@link
 * StellflowException} from {@link #poll}.
 *
 * <p>Thread-safety: NOT thread-safe; use one consumer from one thread (responses are handed over
 * through an internal queue).
 */
public final class StellflowConsumer implements AutoCloseable {
    private final ConsumerConfig config;
    private final NetworkClient network;
    private final MetadataCache metadata;
    private final OffsetLookup offsets;
    private final ClientMetrics metrics;
    private final Map<TopicPartition, PartitionState> assigned = new LinkedHashMap<>();
    private final LinkedBlockingQueue<CompletedFetch> completed = new LinkedBlockingQueue<>();
    private long lastMetadataRefreshNs;

    private volatile boolean closed;

    private static final class PartitionState {
        /** The next offset {@link #poll} returns; -1 when unknown. */
        long position = -1;
        /** The offset the next Fetch asks for: at or past {@link #position}. */
        long fetchPosition = -1;
        /** The high watermark of the last Fetch answer; -1 before one (metrics: consumer lag). */
        long highWatermark = -1;

        int epoch;
        boolean fetchInFlight;
        long retryAfterNs;

        void moveTo(long offset) {
            position = offset;
            fetchPosition = offset;
        }
    }

    /**
     * A partition's Fetch answer with the envelope decoded; {@code records} (null when empty) is a
     * retained slice of the response frame, owned by whoever holds this object.
     *
     * @param baseOffset what the batches' baseOffsetDelta counts from (v0: the fetch offset; v1:
     *     recordsBaseOffset)
     */
    private record FetchResult(short errorCode, long highWatermark, long baseOffset, ByteBuf records) {
        static FetchResult retaining(short errorCode, long highWatermark, long baseOffset, ByteBuf records) {
            boolean any = errorCode == Errors.NONE && records != null && records.isReadable();
            return new FetchResult(errorCode, highWatermark, baseOffset, any ? records.retain() : null);
        }
    }

    /** One completed Fetch; thread-confined to {@link #poll} once taken off the queue. */
    private static final class CompletedFetch {
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

    public StellflowConsumer(Properties props) {
        this(ConsumerConfig.from(props));
    }

    public StellflowConsumer(ConsumerConfig config) {
        this(config, null);
    }

    /**
     * A consumer that registers the client metrics of {@code docs/spec/metrics.md} ({@code
     * client.type} consumer, {@link ClientMetrics}) on {@code openTelemetry}.
     *
     * @param openTelemetry the application's OpenTelemetry, or null for no metrics
     */
    public StellflowConsumer(Properties props, io.opentelemetry.api.OpenTelemetry openTelemetry) {
        this(ConsumerConfig.from(props), openTelemetry);
    }

    /** As {@link #StellflowConsumer(Properties, io.opentelemetry.api.OpenTelemetry)}. */
    public StellflowConsumer(ConsumerConfig config, io.opentelemetry.api.OpenTelemetry openTelemetry) {
        this.config = config;
        this.metrics = new ClientMetrics(openTelemetry, "consumer");
        this.network = new NetworkClient(config.common(), metrics);
        this.metadata = new MetadataCache(network);
        this.offsets = new OffsetLookup(network, metadata);
    }

    /** Replaces the assignment; positions of partitions that stay assigned are kept. */
    public void assign(Collection<TopicPartition> partitions) {
        Map<TopicPartition, PartitionState> next = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            PartitionState s = assigned.get(tp);
            next.put(tp, s != null ? s : new PartitionState());
        }
        assigned.clear();
        assigned.putAll(next);
    }

    /** The currently assigned partitions, in assignment order. */
    public Set<TopicPartition> assignment() {
        return new LinkedHashSet<>(assigned.keySet());
    }

    /** Sets the next offset to return for {@code tp}; a Fetch already in flight is discarded. */
    public void seek(TopicPartition tp, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: " + offset);
        }
        PartitionState s = state(tp);
        s.moveTo(offset);
        s.epoch++;
        s.fetchInFlight = false;
    }

    /** Seeks each partition to its log start offset (ListOffsets -2). */
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, offsets.lookup(tp, OffsetLookup.EARLIEST));
        }
    }

    /** Seeks each partition to its end (ListOffsets -1: the high watermark). */
    public void seekToEnd(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, offsets.lookup(tp, OffsetLookup.LATEST));
        }
    }

    /** The next offset {@link #poll} returns for {@code tp}, resolving it first if unknown. */
    public long position(TopicPartition tp) {
        PartitionState s = state(tp);
        if (s.position < 0) {
            resetPosition(tp, s);
        }
        return s.position;
    }

    /** The current end (high watermark) of each partition, from ListOffsets -1. */
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, offsets.lookup(tp, OffsetLookup.LATEST));
        }
        return out;
    }

    /** The log start offset of each partition, from ListOffsets -2. */
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            out.put(tp, offsets.lookup(tp, OffsetLookup.EARLIEST));
        }
        return out;
    }

    /**
     * Returns the records that arrived, waiting up to {@code timeout} for at least one. Returns an
     * empty list when nothing arrived in time.
     *
     * @throws StellflowException for non-retriable fetch errors, corrupt batches, or an
     *     out-of-range position with {@code auto.offset.reset=none}
     */
    public List<ConsumerRecord> poll(Duration timeout) {
        long startNs = System.nanoTime();
        List<ConsumerRecord> out = null;
        try {
            out = pollRecords(timeout);
            return out;
        } finally {
            metrics.polled(System.nanoTime() - startNs, out == null ? 0 : out.size());
            long lag = 0;
            for (PartitionState s : assigned.values()) {
                if (s.highWatermark >= 0 && s.position >= 0) {
                    lag += Math.max(0, s.highWatermark - s.position);
                }
            }
            metrics.consumerLag(lag);
        }
    }

    private List<ConsumerRecord> pollRecords(Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        List<ConsumerRecord> out = new ArrayList<>();
        List<CompletedFetch> ready = new ArrayList<>();
        while (true) {
            resolvePositions();
            sendFetches();
            long leftNs = deadlineNs - System.nanoTime();
            CompletedFetch f;
            try {
                f = leftNs > 0
                        ? completed.poll(Math.min(leftNs, nextRetryWaitNs()), TimeUnit.NANOSECONDS)
                        : completed.poll();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return out;
            }
            while (f != null) {
                ready.add(f);
                f = completed.poll();
            }
            if (!ready.isEmpty()) {
                try {
                    // Next fetch positions from the batch headers, the next Fetches out, then decode.
                    for (int i = 0; i < ready.size(); i++) {
                        try {
                            advance(ready.get(i));
                        } catch (RuntimeException e) {
                            // The answers after the failing one are dropped unread: fetch them again.
                            for (int j = i + 1; j < ready.size(); j++) {
                                refetch(ready.get(j), -1);
                            }
                            throw e;
                        }
                    }
                    sendFetches();
                    decodeAll(ready, out);
                } finally {
                    for (CompletedFetch c : ready) {
                        c.release();
                    }
                    ready.clear();
                }
            }
            if (!out.isEmpty()) {
                return out;
            }
            if (System.nanoTime() - deadlineNs >= 0) {
                return out;
            }
        }
    }

    private long nextRetryWaitNs() {
        long now = System.nanoTime();
        long wait = Long.MAX_VALUE;
        for (PartitionState s : assigned.values()) {
            if (!s.fetchInFlight && s.retryAfterNs - now > 0) {
                wait = Math.min(wait, s.retryAfterNs - now);
            }
        }
        return wait;
    }

    private PartitionState state(TopicPartition tp) {
        PartitionState s = assigned.get(tp);
        if (s == null) {
            throw new IllegalStateException(tp + " is not assigned");
        }
        return s;
    }

    private void resolvePositions() {
        for (Map.Entry<TopicPartition, PartitionState> e : assigned.entrySet()) {
            if (e.getValue().position < 0) {
                resetPosition(e.getKey(), e.getValue());
            }
        }
    }

    private void resetPosition(TopicPartition tp, PartitionState s) {
        switch (config.autoOffsetReset()) {
            case "earliest" -> s.moveTo(offsets.lookup(tp, OffsetLookup.EARLIEST));
            case "latest" -> s.moveTo(offsets.lookup(tp, OffsetLookup.LATEST));
            default ->
                throw new StellflowException(
                        Errors.OFFSET_OUT_OF_RANGE, "no valid position for " + tp + " and auto.offset.reset=none");
        }
        s.epoch++;
        s.fetchInFlight = false;
    }

    private void sendFetches() {
        long nowNs = System.nanoTime();
        boolean needMetadata = false;
        for (Map.Entry<TopicPartition, PartitionState> e : assigned.entrySet()) {
            TopicPartition tp = e.getKey();
            PartitionState s = e.getValue();
            if (s.fetchInFlight || s.position < 0 || nowNs - s.retryAfterNs < 0) {
                continue;
            }
            HostPort leader = metadata.leader(tp);
            if (leader == null) {
                needMetadata = true;
                s.retryAfterNs =
                        nowNs + TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs());
                continue;
            }
            s.fetchInFlight = true;
            int epoch = s.epoch;
            long fetchOffset = s.fetchPosition;
            FetchRequest req = new FetchRequest(
                    -1,
                    config.fetchMaxWaitMs(),
                    config.fetchMinBytes(),
                    config.fetchMaxBytes(),
                    (byte) 0,
                    0,
                    List.of(new FetchRequest.FetchTopic(
                            tp.topic(),
                            List.of(new FetchRequest.FetchPartition(
                                    tp.partition(), -1, fetchOffset, -1L, config.maxPartitionFetchBytes())))));
            network.sendNegotiated(
                            leader,
                            ApiKeys.FETCH,
                            FetchResponseV1.VERSION,
                            req::write,
                            version -> version >= 1 ? StellflowConsumer::readV1 : body -> readV0(body, fetchOffset))
                    .whenComplete((r, err) -> {
                        CompletedFetch c = new CompletedFetch(tp, epoch, r, err);
                        completed.add(c);
                        if (closed && completed.remove(c)) {
                            c.release(); // close() has drained the queue already
                        }
                    });
        }
        if (needMetadata) {
            refreshMetadata();
        }
    }

    /** I/O thread: the v0 envelope; the records stay undecoded (retained). */
    private static FetchResult readV0(ByteBuf body, long fetchOffset) {
        FetchResponse.PartitionData p =
                FetchResponse.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(p.errorCode(), p.highWatermark(), fetchOffset, p.records());
    }

    /** I/O thread: the v1 envelope (stored batches; offsets count from recordsBaseOffset). */
    private static FetchResult readV1(ByteBuf body) {
        FetchResponseV1.PartitionData p =
                FetchResponseV1.read(body).responses().get(0).partitions().get(0);
        return FetchResult.retaining(p.errorCode(), p.highWatermark(), p.recordsBaseOffset(), p.records());
    }

    private void refreshMetadata() {
        long nowNs = System.nanoTime();
        if (nowNs - lastMetadataRefreshNs
                < TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs())) {
            return;
        }
        lastMetadataRefreshNs = nowNs;
        Set<String> topics = new LinkedHashSet<>();
        assigned.keySet().forEach(tp -> topics.add(tp.topic()));
        metadata.refresh(topics);
    }

    /**
     * Settles one completed Fetch's partition state (errors, the next fetch position from the batch
     * headers) without decoding records; stale answers (unassigned, or seeked since) lose their
     * records here.
     */
    private void advance(CompletedFetch f) {
        PartitionState s = assigned.get(f.tp);
        if (s == null || s.epoch != f.epoch) {
            f.release(); // unassigned or seeked meanwhile: stale data
            return;
        }
        s.fetchInFlight = false;
        short code;
        if (f.failure != null) {
            Throwable cause = f.failure instanceof CompletionException && f.failure.getCause() != null
                    ? f.failure.getCause()
                    : f.failure;
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
            s.highWatermark = f.result.highWatermark();
            if (f.result.records() != null) {
                metrics.fetched(f.result.records().readableBytes());
            }
            long next = RecordBatchReader.nextOffset(f.result.records(), f.result.baseOffset());
            if (next > s.fetchPosition) {
                s.fetchPosition = next;
            }
        } else if (code == Errors.OFFSET_OUT_OF_RANGE) {
            if (config.autoOffsetReset().equals("none")) {
                throw new StellflowException(code, "position " + s.position + " of " + f.tp + " is out of range");
            }
            s.moveTo(-1);
        } else if (StellflowException.isRetriable(code)) {
            s.retryAfterNs = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs());
            refreshMetadata();
        } else {
            throw new StellflowException(code, "fetch " + f.tp + " at " + s.fetchPosition + " failed");
        }
    }

    /**
     * Validates and decodes the record sets in order into {@code out}, skipping offsets below each
     * partition's position. On a bad batch nothing of this poll is handed out: every partition
     * decoded so far goes back to where it was (its Fetch in flight is discarded, so the next poll
     * fetches the bad batch again and fails again instead of skipping it), then the error is thrown.
     */
    private void decodeAll(List<CompletedFetch> ready, List<ConsumerRecord> out) {
        int outBefore = out.size();
        long[] positionsBefore = new long[ready.size()];
        int decoded = 0;
        try {
            for (; decoded < ready.size(); decoded++) {
                CompletedFetch f = ready.get(decoded);
                FetchResult r = f.result;
                PartitionState s = assigned.get(f.tp);
                positionsBefore[decoded] = s == null ? -1 : s.position;
                if (r == null || r.records() == null || s == null || s.epoch != f.epoch) {
                    continue;
                }
                String topic = f.tp.topic();
                int partition = f.tp.partition();
                RecordBatchReader.decode(
                        r.records(), r.baseOffset(), config.checkCrcs(), (offset, ts, key, value, headers) -> {
                            if (offset >= s.position) {
                                out.add(new ConsumerRecord(topic, partition, offset, ts, key, value, headers));
                                s.position = offset + 1;
                            }
                        });
                f.release();
            }
        } catch (ProtocolException e) {
            // Every partition of this poll goes back to what the application has seen: the ones
            // decoded so far (and the bad one) to their position before this poll, the ones not
            // decoded yet stay where they are; all refetch from there.
            for (int i = 0; i < ready.size(); i++) {
                refetch(ready.get(i), i <= decoded ? positionsBefore[i] : -1);
            }
            out.subList(outBefore, out.size()).clear();
            throw new StellflowException(
                    e.errorCode(), "bad record batch from " + ready.get(decoded).tp + ": " + e.getMessage(), e);
        }
    }

    /**
     * Forgets a completed Fetch whose records will not be handed out: its partition (if the answer is
     * still current) fetches again from {@code position} (-1: its current position), and a Fetch
     * already sent past it is discarded.
     */
    private void refetch(CompletedFetch f, long position) {
        PartitionState s = assigned.get(f.tp);
        if (s != null && s.epoch == f.epoch) {
            s.moveTo(position >= 0 ? position : s.position);
            s.epoch++;
            s.fetchInFlight = false;
        }
    }

    /** Closes the connections; fetches in flight are abandoned. */
    @Override
    public void close() {
        closed = true;
        network.close();
        for (CompletedFetch c = completed.poll(); c != null; c = completed.poll()) {
            c.release();
        }
    }
}
