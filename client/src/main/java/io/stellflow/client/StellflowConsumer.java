package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.record.RecordBatchDecompressor;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads records from manually assigned partitions ({@link #assign}) or, with {@code group.id}, from
 * the partitions the group coordinator assigns ({@link #subscribe(Collection,
 * ConsumerRebalanceListener)}, our group protocol, {@link ConsumerMembership}), Kafka style: {@link
 * #poll} returns the records that arrived, each partition's position moves past what was returned.
 * A group member's heartbeats, reconciliation steps, listener calls and auto commits run inside
 * {@link #poll} and the blocking group calls, on the application thread.
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
 * <p>Compressed batches (decision 9.o: gzip, snappy, lz4, zstd): a Fetch answer of gzip, snappy or
 * zstd is expanded as it arrives, on a thread of this consumer ({@code stellflow-expand-<client.id>},
 * started at the first such answer), into one of at most 3 reusable buffers, while {@link #poll}
 * decodes the answer before ({@link FetchExpander}); lz4 answers and any answer that thread cannot
 * take are expanded batch by batch by {@link #poll} into one reusable buffer ({@link
 * RecordBatchDecompressor}). Both read the result as uncompressed batches; a batch whose records
 * decompress to more than {@code compression.max.decompressed.bytes}, or whose stream is
 * malformed, fails {@link #poll} with a {@link StellflowException} naming the partition and the
 * batch's offset when the application reaches it, as for any bad batch: the records fetched before
 * it are handed out first ({@link CompletedFetchHandler#decodeAll}).
 *
 * <p>Buffer ownership: a fetched record set holds one reference on its response frame from the
 * I/O thread until {@link #poll} has decoded it (or dropped it as stale, or {@link #close}
 * released it).
 *
 * <p>{@code isolation.level=read_committed}: records up to the LSO, aborted transactions left out,
 * positions, lag and {@link #endOffsets} up to the LSO ({@link FetchIsolation}).
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
    /** Expands compressed batches; capped at {@code compression.max.decompressed.bytes} per batch. */
    private final RecordBatchDecompressor decompressor;
    /** Expands compressed answers as they arrive, ahead of {@link #poll} (its own decompressor). */
    private final FetchExpander expander;
    /** {@code isolation.level}: next fetch offsets, the aborted-transaction filter, the lag's end. */
    private final FetchIsolation isolation;

    /** The assigned partitions, their positions and fetch epochs. */
    private final ConsumerPositions assigned;
    /** Settles and decodes completed Fetches into {@link #assigned}. */
    private final CompletedFetchHandler fetches;

    private final LinkedBlockingQueue<CompletedFetch> completed = new LinkedBlockingQueue<>();
    /** Fetch answers taken off {@link #completed} while a blocking group call waited; handed out first. */
    private final ArrayDeque<CompletedFetch> stashed = new ArrayDeque<>();
    /** The group member when {@code group.id} is set, else null. */
    private final ConsumerMembership group;
    /** The blocking group calls (commitSync, committed, leave), null without {@code group.id}. */
    private final GroupCalls groupCalls;

    private boolean subscribed;

    private long lastMetadataRefreshNs;

    private volatile boolean closed;

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
        this(config, openTelemetry, null);
    }

    /** As above; {@code groupTransport} replaces the wire to the group coordinator (tests), null: the wire. */
    StellflowConsumer(
            ConsumerConfig config, io.opentelemetry.api.OpenTelemetry openTelemetry, GroupTransport groupTransport) {
        this.config = config;
        this.metrics = new ClientMetrics(openTelemetry, "consumer");
        this.decompressor = new RecordBatchDecompressor(config.compressionMaxDecompressedBytes(), metrics::compression);
        this.expander = new FetchExpander(
                config.common().clientId(),
                config.checkCrcs(),
                new RecordBatchDecompressor(config.compressionMaxDecompressedBytes(), metrics::compression));
        this.network = new NetworkClient(config.common(), metrics);
        this.metadata = new MetadataCache(network);
        this.offsets = new OffsetLookup(network, metadata, config.isolationLevel());
        this.isolation = new FetchIsolation(config.readCommitted());
        this.assigned = new ConsumerPositions(config, offsets);
        this.fetches =
                new CompletedFetchHandler(config, assigned, isolation, decompressor, metrics, this::refreshMetadata);
        this.group = config.groupId() == null
                ? null
                : new ConsumerMembership(
                        config,
                        groupTransport != null ? groupTransport : new NetworkGroupTransport(network, metadata),
                        new Owner(),
                        () -> completed.offer(CompletedFetch.WAKE));
        this.groupCalls = group == null ? null : new GroupCalls(group, config, this::awaitResponse);
    }

    /**
     * Replaces the assignment; positions of partitions that stay assigned are kept. With a {@code
     * group.id}, commits go to the group from outside it (member epoch -1) and auto commit runs.
     *
     * @throws IllegalStateException while subscribed
     */
    public void assign(Collection<TopicPartition> partitions) {
        if (subscribed) {
            throw new IllegalStateException("assign() while subscribed: call unsubscribe() first");
        }
        if (group != null) {
            group.startAutoCommit(nowMs());
        }
        assigned.assign(partitions);
    }

    /**
     * Joins the group ({@code group.id}) with these topics, or changes the subscription; the
     * coordinator assigns partitions, and {@code listener} hears of each change ({@link
     * ConsumerRebalanceListener} gives the order). Partitions arrive from inside {@link #poll}, which
     * also sends the heartbeats: call it at least once per session timeout (45 s by default).
     *
     * @throws IllegalStateException without {@code group.id}, or after {@link #assign} with
     *     partitions
     */
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
        if (group == null) {
            throw new IllegalStateException("subscribe() needs group.id");
        }
        if (!subscribed && !assigned.isEmpty()) {
            throw new IllegalStateException("subscribe() after assign(): call unsubscribe() first");
        }
        if (topics.isEmpty()) {
            unsubscribe();
            return;
        }
        for (String t : topics) {
            if (t == null || t.isBlank()) {
                throw new IllegalArgumentException("blank topic name in " + topics);
            }
        }
        group.subscribe(topics, listener, nowMs());
        subscribed = true;
    }

    /** As {@link #subscribe(Collection, ConsumerRebalanceListener)} with no listener. */
    public void subscribe(Collection<String> topics) {
        subscribe(topics, ConsumerRebalanceListener.NONE);
    }

    /**
     * Leaves the group (after committing positions with auto commit and {@link
     * ConsumerRebalanceListener#onPartitionsRevoked}; waits up to {@code default.api.timeout.ms} for
     * the coordinator to hear it), or drops a manual assignment.
     */
    public void unsubscribe() {
        if (subscribed) {
            leaveGroup(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.defaultApiTimeoutMs()));
        }
        assign(List.of());
    }

    private void leaveGroup(long deadlineNs) {
        subscribed = false;
        groupCalls.leave(deadlineNs);
    }

    /** Commits the position of every assigned partition; waits up to {@code default.api.timeout.ms}. */
    public void commitSync() {
        commitSync(positions(), Duration.ofMillis(config.defaultApiTimeoutMs()));
    }

    /** As {@link #commitSync()}, waiting at most {@code timeout}. */
    public void commitSync(Duration timeout) {
        commitSync(positions(), timeout);
    }

    /** Commits {@code offsets} (the next offset to read per partition). */
    public void commitSync(Map<TopicPartition, Long> offsets) {
        commitSync(offsets, Duration.ofMillis(config.defaultApiTimeoutMs()));
    }

    /**
     * Commits {@code offsets}, retrying coordinator errors (with FindCoordinator and a bounded
     * back-off) until {@code timeout}.
     *
     * @throws StellflowException with the code: FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID when the
     *     member lost a partition it commits (its new owner's offset is kept); STALE_MEMBER_EPOCH (sent
     *     again with the member's newer epoch meanwhile), NETWORK_ERROR or a coordinator code when the
     *     time ran out
     * @throws IllegalStateException without {@code group.id}
     */
    public void commitSync(Map<TopicPartition, Long> offsets, Duration timeout) {
        requireGroup("commitSync").commitSync(offsets, timeout);
    }

    /** Commits every assigned partition's position without waiting; errors are logged at debug. */
    public void commitAsync() {
        commitAsync(positions(), null);
    }

    /** As {@link #commitAsync()}; {@code callback} runs from a later consumer call. */
    public void commitAsync(OffsetCommitCallback callback) {
        commitAsync(positions(), callback);
    }

    /**
     * Sends a commit of {@code offsets} once (no retry: a later commit covers it); {@code callback}
     * (may be null) runs on this thread from a later {@link #poll} or blocking call.
     */
    public void commitAsync(Map<TopicPartition, Long> offsets, OffsetCommitCallback callback) {
        requireGroup("commitAsync").commitAsync(offsets, callback);
    }

    /**
     * The group's committed offsets (OffsetFetch v1) of {@code partitions}; a partition without a
     * commit is absent. Waits up to {@code default.api.timeout.ms}.
     */
    public Map<TopicPartition, Long> committed(Set<TopicPartition> partitions) {
        return committed(partitions, Duration.ofMillis(config.defaultApiTimeoutMs()));
    }

    /** As {@link #committed(Set)}, waiting at most {@code timeout}. */
    public Map<TopicPartition, Long> committed(Set<TopicPartition> partitions, Duration timeout) {
        return requireGroup("committed").committed(partitions, timeout);
    }

    /** The current subscription's member id (null when not a member); for tools and tests. */
    public String groupMemberId() {
        return group == null ? null : group.memberId();
    }

    private GroupCalls requireGroup(String what) {
        if (groupCalls == null) {
            throw new IllegalStateException(what + "() needs group.id");
        }
        return groupCalls;
    }

    private Map<TopicPartition, Long> positions() {
        return assigned.positions();
    }

    /** Waits up to {@code waitNs} for a response; fetch answers that arrive are kept for {@link #poll}. */
    private void awaitResponse(long waitNs) {
        try {
            CompletedFetch c = completed.poll(waitNs, TimeUnit.NANOSECONDS);
            while (c != null) {
                if (c != CompletedFetch.WAKE) {
                    stashed.add(c);
                }
                c = completed.poll();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }

    private static long nowMs() {
        return GroupCalls.nowMs();
    }

    /** The group member's view of this consumer's partitions (application thread only). */
    private final class Owner implements PartitionOwner {
        @Override
        public Map<TopicPartition, Long> positions() {
            return StellflowConsumer.this.positions();
        }

        @Override
        public void partitionsRevoked(Collection<TopicPartition> partitions) {
            assigned.revoke(partitions);
        }

        @Override
        public void partitionsAssigned(Map<TopicPartition, Long> committedOffsets) {
            assigned.assignCommitted(committedOffsets);
        }
    }

    /** The currently assigned partitions, in assignment order. */
    public Set<TopicPartition> assignment() {
        return assigned.assignment();
    }

    /** Sets the next offset to return for {@code tp}; a Fetch already in flight is discarded. */
    public void seek(TopicPartition tp, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: " + offset);
        }
        assigned.seek(tp, offset);
    }

    /**
     * Seeks each partition of {@code notConsumed} back to its lowest offset there: for a caller that
     * takes only the first records of a {@link #poll} (a record-count limit), so the next poll returns
     * the others again and the positions committed afterwards (auto commit, {@link #close}) cover only
     * the records it took. An empty list changes nothing.
     *
     * @throws IllegalStateException a record's partition is not assigned to this consumer
     */
    public void seekBack(Collection<ConsumerRecord> notConsumed) {
        Map<TopicPartition, Long> first = new LinkedHashMap<>();
        for (ConsumerRecord r : notConsumed) {
            first.merge(new TopicPartition(r.topic(), r.partition()), r.offset(), Math::min);
        }
        first.forEach(this::seek);
    }

    /** Seeks each partition to its log start offset (ListOffsets -2). */
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, offsets.lookup(tp, OffsetLookup.EARLIEST));
        }
    }

    /** Seeks each partition to its end (ListOffsets -1: the high watermark, the LSO at read_committed). */
    public void seekToEnd(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, offsets.lookup(tp, OffsetLookup.LATEST));
        }
    }

    /** The next offset {@link #poll} returns for {@code tp}, resolving it first if unknown. */
    public long position(TopicPartition tp) {
        return assigned.position(tp);
    }

    /** The current end of each partition, from ListOffsets -1: the HW (the LSO at read_committed). */
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
            metrics.consumerLag(assigned.lag());
        }
    }

    private List<ConsumerRecord> pollRecords(Duration timeout) {
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        List<ConsumerRecord> out = new ArrayList<>();
        List<CompletedFetch> ready = new ArrayList<>();
        boolean first = true;
        while (true) {
            long waitNs = assigned.nextRetryWaitNs();
            if (group != null) {
                group.poll(nowMs());
                waitNs = Math.min(waitNs, TimeUnit.MILLISECONDS.toNanos(group.timeToNextEventMs(nowMs()) + 1));
            }
            if (first) {
                // A bad batch behind the records the last poll handed out: thrown after the group's
                // work (its auto-commit of those records, a revocation that drops the error), as
                // Kafka's consumer surfaces a fetch error after its coordinator poll.
                fetches.throwDeferred();
                first = false;
            }
            assigned.resolvePositions();
            sendFetches();
            long leftNs = deadlineNs - System.nanoTime();
            CompletedFetch f = stashed.poll();
            try {
                if (f == null) {
                    f = leftNs > 0 ? completed.poll(Math.min(leftNs, waitNs), TimeUnit.NANOSECONDS) : completed.poll();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return out;
            }
            while (f != null) {
                if (f != CompletedFetch.WAKE) {
                    ready.add(f);
                }
                f = stashed.isEmpty() ? completed.poll() : stashed.poll();
            }
            if (!ready.isEmpty()) {
                try {
                    // Next fetch positions from the batch headers, the next Fetches out, then decode.
                    for (int i = 0; i < ready.size(); i++) {
                        try {
                            fetches.advance(ready.get(i));
                        } catch (RuntimeException e) {
                            // The answers after the failing one are dropped unread: fetch them again.
                            for (int j = i + 1; j < ready.size(); j++) {
                                assigned.refetch(ready.get(j), -1);
                            }
                            throw e;
                        }
                    }
                    sendFetches();
                    fetches.decodeAll(ready, out);
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

    private void sendFetches() {
        long nowNs = System.nanoTime();
        boolean needMetadata = false;
        for (Map.Entry<TopicPartition, ConsumerPartitionState> e :
                assigned.states().entrySet()) {
            TopicPartition tp = e.getKey();
            ConsumerPartitionState s = e.getValue();
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
                    config.isolationLevel(),
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
                            version ->
                                    version >= 1 ? FetchResult::readV1 : body -> FetchResult.readV0(body, fetchOffset))
                    .whenComplete((r, err) -> {
                        CompletedFetch c = new CompletedFetch(tp, epoch, fetchOffset, r, err);
                        expander.offer(c);
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

    private void refreshMetadata() {
        long nowNs = System.nanoTime();
        if (nowNs - lastMetadataRefreshNs
                < TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs())) {
            return;
        }
        lastMetadataRefreshNs = nowNs;
        Set<String> topics = new LinkedHashSet<>();
        assigned.states().keySet().forEach(tp -> topics.add(tp.topic()));
        metadata.refresh(topics);
    }

    /**
     * Leaves the group if subscribed (as {@link #unsubscribe}, auto commit first) or, with a manual
     * assignment and auto commit, commits the positions; waits up to {@code default.api.timeout.ms}
     * for that, then closes the connections; fetches in flight are abandoned.
     */
    @Override
    public void close() {
        close(Duration.ofMillis(config.defaultApiTimeoutMs()));
    }

    /** As {@link #close()}, waiting at most {@code timeout} for the group. */
    public void close(Duration timeout) {
        if (closed) {
            return;
        }
        long deadlineNs = System.nanoTime() + timeout.toNanos();
        try {
            if (group != null && subscribed) {
                leaveGroup(deadlineNs);
            } else if (group != null && config.enableAutoCommit()) {
                groupCalls.commitSync(positions(), Duration.ofNanos(Math.max(0, deadlineNs - System.nanoTime())));
            }
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(StellflowConsumer.class)
                    .warn("consumer close: leaving group {} failed: {}", config.groupId(), e.toString());
        } finally {
            closeNetwork();
        }
    }

    private void closeNetwork() {
        closed = true;
        network.close();
        expander.close();
        decompressor.close();
        for (CompletedFetch c = completed.poll(); c != null; c = completed.poll()) {
            c.release();
        }
        for (CompletedFetch c = stashed.poll(); c != null; c = stashed.poll()) {
            c.release();
        }
    }
}
