package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.config.ReplicaFetcherConfig;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.RequestHeader;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replicates every partition this broker follows from ONE leader broker over one TCP connection.
 *
 * <p>Per partition: first <b>truncating</b> (OffsetForLeaderEpoch with the log's latest epoch,
 * {@link FollowerTruncation}, repeated until reconciled), then <b>fetching</b>: Fetch v1 with
 * {@code replicaId} = this broker, {@code currentLeaderEpoch} = the epoch the metadata gave, the log
 * end offset as fetch offset; each response is appended ({@link FollowerAppend}) and sets the
 * follower's high watermark. Up to {@code replica.fetch.max.in.flight} Fetches are outstanding, the
 * ready partitions split across them, each partition in at most one.
 *
 * <p>Errors: {@code NOT_LEADER_OR_FOLLOWER}, {@code UNKNOWN_TOPIC_OR_PARTITION}, {@code
 * LEADER_NOT_AVAILABLE}, {@code FENCED_LEADER_EPOCH}, {@code UNKNOWN_LEADER_EPOCH}: the partition
 * backs off {@code replica.fetch.backoff.ms} and retries (new metadata re-adds it with its new
 * leader and epoch through the {@link ReplicaFetcherManager}). {@code OFFSET_OUT_OF_RANGE}: when
 * the leader's log start offset is above this log's end, the log is emptied and restarts there
 * ({@link UnifiedLog#truncateFullyAndStartAt}; the HW becomes that offset), else the partition goes
 * back to truncating. A lost connection, an unanswered request ({@code replica.socket.timeout.ms})
 * or an undecodable response closes the connection; it is re-established after the backoff, with
 * ApiVersions first (the leader must offer Fetch v1 and OffsetForLeaderEpoch).
 *
 * <p>Threads: one thread of its own ({@code sf-replica-fetcher-<leader>}) owns all state and makes
 * the follower-side writes of the logs it carries (appends, truncations, log start offsets), each
 * inside {@link Partition#runIfFollowing}; the Netty event loop only frames bytes and hands each
 * response over. Allocation per request and response, none per record.
 *
 * <p>Thread-safety: {@link #add}, {@link #remove} and {@link #close} may be called from any thread
 * (they queue to the fetcher thread; {@link #remove} waits for it).
 */
public final class ReplicaFetcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);

    /** Longest wait in {@link #remove} and {@link #close} for the fetcher thread. */
    private static final long WAIT_MS = 30_000;

    private final int leaderId;
    private final int brokerId;
    private final ReplicaFetcherConfig config;
    private final IntFunction<InetSocketAddress> addresses;
    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelClass;
    private final ReplicationMetrics metrics;
    private final String clientId;
    private final ScheduledThreadPoolExecutor thread;
    private final LeaderConnection.Sink sink = new LeaderConnection.Sink() {
        @Override
        public void onPayload(Channel channel, ByteBuf payload) {
            try {
                thread.execute(() -> handlePayload(channel, payload));
            } catch (RejectedExecutionException e) {
                payload.release(); // closed
            }
        }

        @Override
        public void onClosed(Channel channel) {
            run(() -> handleClosed(channel));
        }
    };

    // Confined to the fetcher thread.
    private final Map<Partition, PartitionState> partitions = new LinkedHashMap<>();
    private final Map<Integer, InFlight> inFlight = new HashMap<>();
    private Channel channel;
    private boolean connecting;
    private boolean ready;
    private boolean closed;
    private long reconnectAtNanos;
    private boolean wakeScheduled;
    private long wakeAtNanos;
    private int nextCorrelationId;
    private int fetchesInFlight;
    private int connectFailures;

    /** One followed partition; confined to the fetcher thread. */
    static final class PartitionState {
        final Partition partition;
        final int leaderEpoch;
        boolean truncating = true;
        boolean inFlight;
        boolean removed;
        boolean outOfRangeBefore;
        long notBeforeNanos;

        PartitionState(Partition partition, int leaderEpoch) {
            this.partition = partition;
            this.leaderEpoch = leaderEpoch;
            this.notBeforeNanos = System.nanoTime(); // ready now (nanoTime may be negative: no 0 sentinel)
        }
    }

    /** An outstanding request and the partitions it carries, in request order. */
    private static final class InFlight {
        final short apiKey;
        final List<PartitionState> states;
        final long sentNanos = System.nanoTime();
        ScheduledFuture<?> timeout;

        InFlight(short apiKey, List<PartitionState> states) {
            this.apiKey = apiKey;
            this.states = states;
        }
    }

    /**
     * @param leaderId the leader broker this fetcher copies from
     * @param brokerId this broker (the Fetch replicaId)
     * @param config {@code replica.fetch.max.bytes} (per partition), {@code
     *     replica.fetch.response.max.bytes}, {@code replica.fetch.wait.max.ms}, {@code
     *     replica.fetch.min.bytes}, {@code replica.fetch.backoff.ms}, {@code replica.fetch.max.in.flight}
     *     and {@code replica.socket.timeout.ms}
     * @param addresses the leader's data-plane address from the latest metadata, or null while unknown
     * @param group event loops for the connection
     * @param channelClass the broker transport's socket channel class
     * @param metrics told about each fetch round trip ({@code stellflow.replica.fetch.*})
     */
    ReplicaFetcher(
            int leaderId,
            int brokerId,
            ReplicaFetcherConfig config,
            IntFunction<InetSocketAddress> addresses,
            EventLoopGroup group,
            Class<? extends SocketChannel> channelClass,
            ReplicationMetrics metrics) {
        this.leaderId = leaderId;
        this.brokerId = brokerId;
        this.config = config;
        this.addresses = addresses;
        this.group = group;
        this.channelClass = channelClass;
        this.metrics = metrics;
        this.clientId = "stellflow-replica-fetcher-" + brokerId;
        this.reconnectAtNanos = System.nanoTime();
        this.thread =
                new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("sf-replica-fetcher-" + leaderId, true));
        this.thread.setRemoveOnCancelPolicy(true);
        // Pending wake-ups and request timeouts must not keep the thread alive after close.
        this.thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** The leader this fetcher copies from. */
    public int leaderId() {
        return leaderId;
    }

    /**
     * Starts following {@code partition} at {@code leaderEpoch}: truncation by epoch first, then
     * fetching. Replaces an earlier state of the same partition (its in-flight answers are ignored).
     */
    public void add(Partition partition, int leaderEpoch) {
        run(() -> {
            PartitionState old = partitions.put(partition, new PartitionState(partition, leaderEpoch));
            if (old != null) {
                old.removed = true;
            }
            pumpLogged();
        });
    }

    /**
     * Stops following {@code partition}; returns once the fetcher thread will not touch its log again
     * (waits up to 30 s for a response being applied).
     */
    public void remove(Partition partition) {
        try {
            thread.submit(() -> {
                        PartitionState s = partitions.remove(partition);
                        if (s != null) {
                            s.removed = true;
                        }
                    })
                    .get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed: the thread is gone or finishing its last task
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("Removing {} from the fetcher of leader {} failed", partition, leaderId, e);
        }
    }

    private void run(Runnable task) {
        try {
            thread.execute(task);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** {@link #pump} from a task whose exceptions the executor would swallow. */
    private void pumpLogged() {
        try {
            pump();
        } catch (RuntimeException e) {
            LOG.error("Replica fetcher of leader {} failed to send; reconnecting", leaderId, e);
            if (channel != null) {
                channel.close();
            }
        }
    }

    /** Sends whatever is ready: connects, asks for epochs, fetches; schedules the next wake-up. */
    private void pump() {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        if (channel == null) {
            if (!connecting) {
                if (now - reconnectAtNanos >= 0) {
                    connect(now);
                } else {
                    wakeAt(reconnectAtNanos, now);
                }
            }
            return;
        }
        if (!ready) {
            return;
        }
        long earliest = Long.MAX_VALUE;
        List<PartitionState> truncating = null;
        List<PartitionState> fetching = null;
        for (PartitionState s : partitions.values()) {
            if (s.inFlight) {
                continue;
            }
            if (s.notBeforeNanos - now > 0) {
                earliest = Math.min(earliest, s.notBeforeNanos);
                continue;
            }
            if (s.truncating) {
                if (s.partition.log().latestLeaderEpoch() < 0) {
                    truncateLocally(s); // no epoch history: nothing to ask, fall back to the HW
                }
            }
            if (s.truncating) {
                truncating = add(truncating, s);
            } else {
                fetching = add(fetching, s);
            }
        }
        if (truncating != null) {
            sendEpochRequest(truncating);
        }
        if (fetching != null && fetchesInFlight < config.maxInFlight()) {
            sendFetches(fetching);
        }
        if (earliest != Long.MAX_VALUE) {
            wakeAt(earliest, now);
        }
    }

    private static List<PartitionState> add(List<PartitionState> list, PartitionState s) {
        List<PartitionState> l = list == null ? new ArrayList<>() : list;
        l.add(s);
        return l;
    }

    /** Schedules a {@link #pump} at {@code atNanos} unless one is due at or before it. */
    private void wakeAt(long atNanos, long now) {
        if (wakeScheduled && atNanos - wakeAtNanos >= 0) {
            return;
        }
        try {
            thread.schedule(
                    () -> {
                        if (wakeAtNanos == atNanos) {
                            wakeScheduled = false; // the latest wake-up ran (earlier ones may come: harmless)
                        }
                        pumpLogged();
                    },
                    Math.max(0, atNanos - now),
                    TimeUnit.NANOSECONDS);
            wakeScheduled = true;
            wakeAtNanos = atNanos;
        } catch (RejectedExecutionException e) {
            // close() is running
        }
    }

    private void backoff(PartitionState s) {
        s.notBeforeNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
    }

    // ---- connection ----

    private void connect(long now) {
        InetSocketAddress address = addresses.apply(leaderId);
        if (address == null) {
            LOG.debug("Leader {} has no known endpoint yet; retrying in {} ms", leaderId, config.backoffMs());
            reconnectAtNanos = now + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            wakeAt(reconnectAtNanos, now);
            return;
        }
        connecting = true;
        int connectTimeoutMs = (int) Math.min(config.socketTimeoutMs(), 10_000);
        ChannelFuture future = LeaderConnection.connect(
                group, channelClass, address.getHostString(), address.getPort(), connectTimeoutMs, sink);
        future.addListener(f -> run(() -> onConnect(future, address)));
    }

    private void onConnect(ChannelFuture future, InetSocketAddress address) {
        connecting = false;
        Channel ch = future.channel();
        if (closed) {
            ch.close();
            return;
        }
        if (!future.isSuccess() || !ch.isActive()) {
            connectFailures++;
            if (connectFailures == 1) {
                LOG.warn(
                        "REPLICA_FETCHER_CONNECT_FAILED leader={} address={}:{} retryMs={}: {}",
                        leaderId,
                        address.getHostString(),
                        address.getPort(),
                        config.backoffMs(),
                        String.valueOf(future.cause()));
            }
            long now = System.nanoTime();
            reconnectAtNanos = now + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            wakeAt(reconnectAtNanos, now);
            return;
        }
        connectFailures = 0;
        channel = ch;
        ready = false;
        LOG.info(
                "REPLICA_FETCHER_CONNECTED leader={} address={}:{}",
                leaderId,
                address.getHostString(),
                address.getPort());
        send(
                ApiKeys.API_VERSIONS,
                (short) 0,
                new ApiVersionsRequest("stellflow-replica-fetcher", null, List.of()),
                List.of());
    }

    private void handleClosed(Channel ch) {
        if (ch != channel) {
            return;
        }
        channel = null;
        ready = false;
        for (InFlight f : inFlight.values()) {
            f.timeout.cancel(false);
            for (PartitionState s : f.states) {
                s.inFlight = false;
            }
        }
        inFlight.clear();
        fetchesInFlight = 0;
        if (!closed) {
            LOG.info("REPLICA_FETCHER_DISCONNECTED leader={} retryMs={}", leaderId, config.backoffMs());
            reconnectAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
            pumpLogged();
        }
    }

    private void send(short apiKey, short version, ApiMessage body, List<PartitionState> states) {
        Channel ch = channel;
        int correlationId = nextCorrelationId++;
        ScheduledFuture<?> timeout;
        try {
            timeout = thread.schedule(
                    () -> onTimeout(ch, correlationId), config.socketTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            return; // close() is running: nothing more is sent
        }
        ByteBuf frame = ch.alloc().buffer(256);
        try {
            Frames.writeRequest(frame, RequestHeader.of(apiKey, version, correlationId, clientId), body);
        } catch (RuntimeException e) {
            frame.release();
            timeout.cancel(false);
            throw e;
        }
        InFlight f = new InFlight(apiKey, states);
        f.timeout = timeout;
        for (PartitionState s : states) {
            s.inFlight = true;
        }
        if (apiKey == ApiKeys.FETCH) {
            fetchesInFlight++;
        }
        inFlight.put(correlationId, f);
        ch.writeAndFlush(frame).addListener(w -> {
            if (!w.isSuccess()) {
                ch.close();
            }
        });
    }

    private void onTimeout(Channel ch, int correlationId) {
        if (ch == channel && inFlight.containsKey(correlationId)) {
            LOG.warn(
                    "REPLICA_FETCHER_TIMEOUT leader={}: no answer in replica.socket.timeout.ms={}; reconnecting",
                    leaderId,
                    config.socketTimeoutMs());
            ch.close();
        }
    }

    // ---- responses ----

    private void handlePayload(Channel ch, ByteBuf payload) {
        try {
            if (ch != channel || closed) {
                return;
            }
            ResponseHeader header = ResponseHeader.read(payload);
            InFlight f = inFlight.remove(header.correlationId());
            if (f == null) {
                LOG.warn("Leader {} answered unknown correlationId {}", leaderId, header.correlationId());
                return;
            }
            f.timeout.cancel(false);
            if (f.apiKey == ApiKeys.FETCH) {
                fetchesInFlight--;
                metrics.replicaFetch(System.nanoTime() - f.sentNanos);
            }
            for (PartitionState s : f.states) {
                s.inFlight = false;
            }
            if (header.errorCode() != Errors.NONE) {
                LOG.warn("Leader {} refused {}: {}", leaderId, ApiKeys.name(f.apiKey), Errors.name(header.errorCode()));
                f.states.forEach(this::backoff);
                if (f.apiKey == ApiKeys.API_VERSIONS) {
                    ch.close();
                }
                return;
            }
            switch (f.apiKey) {
                case ApiKeys.API_VERSIONS -> onApiVersions(ch, ApiVersionsResponse.read(payload));
                case ApiKeys.FETCH -> onFetch(f.states, FetchResponseV1.read(payload));
                case ApiKeys.OFFSET_FOR_LEADER_EPOCH -> onEpochs(f.states, OffsetForLeaderEpochResponse.read(payload));
                default -> throw new IllegalStateException("unexpected apiKey " + f.apiKey);
            }
        } catch (RuntimeException e) {
            LOG.error("REPLICA_FETCHER_BAD_RESPONSE leader={}; reconnecting", leaderId, e);
            ch.close();
        } finally {
            payload.release();
            pumpLogged();
        }
    }

    private void onApiVersions(Channel ch, ApiVersionsResponse response) {
        short fetchMax = -1;
        boolean epochs = false;
        for (ApiVersionsResponse.ApiVersionRange r : response.apiVersions()) {
            if (r.apiKey() == ApiKeys.FETCH) {
                fetchMax = r.maxVersion();
            } else if (r.apiKey() == ApiKeys.OFFSET_FOR_LEADER_EPOCH) {
                epochs = r.minVersion() <= OffsetForLeaderEpochRequest.VERSION;
            }
        }
        if (fetchMax < FetchResponseV1.VERSION || !epochs) {
            LOG.error(
                    "REPLICA_FETCHER_UNSUPPORTED leader={}: it offers Fetch up to v{} and {}OffsetForLeaderEpoch; "
                            + "retrying in {} ms",
                    leaderId,
                    fetchMax,
                    epochs ? "" : "no ",
                    config.backoffMs());
            ch.close();
            return;
        }
        ready = true;
    }

    private void onFetch(List<PartitionState> states, FetchResponseV1 response) {
        int i = 0;
        for (FetchResponseV1.Topic t : response.responses()) {
            for (FetchResponseV1.PartitionData d : t.partitions()) {
                PartitionState s = matching(states, i++, t.topic(), d.partition());
                if (!s.removed) {
                    s.partition.runIfFollowing(s.leaderEpoch, () -> onFetched(s, d));
                }
            }
        }
        if (i != states.size()) {
            throw new IllegalStateException("Fetch response has " + i + " partitions, the request " + states.size());
        }
    }

    private static PartitionState matching(List<PartitionState> states, int i, String topic, int partition) {
        if (i >= states.size()
                || states.get(i).partition.partition() != partition
                || !states.get(i).partition.topic().equals(topic)) {
            throw new IllegalStateException(
                    "response entry " + i + " (" + topic + "-" + partition + ") does not match the request");
        }
        return states.get(i);
    }

    private void onFetched(PartitionState s, FetchResponseV1.PartitionData d) {
        Partition p = s.partition;
        try {
            switch (d.errorCode()) {
                case Errors.NONE -> {
                    int result = FollowerAppend.apply(p, d.records(), d.recordsBaseOffset(), d.highWatermark());
                    if (result == FollowerAppend.CORRUPT) {
                        LOG.warn(
                                "REPLICA_FETCH_CORRUPT partition={} leader={}: a fetched batch fails its checks",
                                p,
                                leaderId);
                        backoff(s);
                    } else if (result == FollowerAppend.OFFSET_MISMATCH) {
                        onDiverged(s, d);
                        return;
                    }
                    s.outOfRangeBefore = false;
                    UnifiedLog log = p.log();
                    if (d.logStartOffset() > log.logStartOffset()) {
                        log.maybeIncrementLogStartOffset(d.logStartOffset(), p.highWatermark());
                    }
                }
                case Errors.OFFSET_OUT_OF_RANGE -> onOutOfRange(s, d.logStartOffset());
                default -> {
                    // The error table decides: a leadership or epoch change in flight is expected
                    // (the metadata catches up, then the fetch succeeds); anything else is worth a WARN.
                    if (Errors.isStaleMetadata(d.errorCode())) {
                        LOG.debug(
                                "Fetch of {} from leader {}: {}; waiting for metadata",
                                p,
                                leaderId,
                                Errors.name(d.errorCode()));
                    } else {
                        LOG.warn("Fetch of {} from leader {} failed: {}", p, leaderId, Errors.name(d.errorCode()));
                    }
                    backoff(s);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            // Fails the partition (one event per episode, then counted), never the fetcher thread.
            if (PartitionFailures.writeFailed(p, "follower-append", e, System.currentTimeMillis())) {
                LOG.error("REPLICA_APPEND_FAILED partition={} leader={}: {}", p, leaderId, e.toString());
            }
            metrics.logWriteFailed();
            backoff(s);
        }
    }

    /**
     * The leader's batches do not continue this log: the log end offset falls inside one of the
     * leader's batches, so this log holds a batch the leader does not have although epoch-based
     * truncation found nothing to remove (a leader epoch history that disagrees with the batches).
     * The log is truncated to the base offset of that leader batch (where the two logs part; the
     * records below it are the leader's at the same offsets as far as this fetch shows), then
     * reconciled by epoch again after the backoff. Never to the high watermark: records between this
     * follower's HW and the leader's may be committed and this replica may be elected (KIP-101). Each
     * occurrence is logged at WARN; the fetcher never refetches the same offset in a loop.
     */
    private void onDiverged(PartitionState s, FetchResponseV1.PartitionData d) throws IOException {
        Partition p = s.partition;
        UnifiedLog log = p.log();
        long leo = log.logEndOffset();
        // Only called after FollowerAppend found a well-framed batch reaching the LEO.
        int pos = FollowerAppend.batchHolding(d.records(), d.recordsBaseOffset(), leo);
        long leaderBatchBase =
                pos < 0 ? leo : d.recordsBaseOffset() + RecordBatchLayout.baseOffsetDelta(d.records(), pos);
        long target = Math.min(leaderBatchBase, leo);
        FollowerTruncation.apply(p, new FollowerTruncation.Decision(target, true));
        s.truncating = true;
        backoff(s);
        LOG.warn(
                "REPLICA_FETCH_DIVERGED partition={} leader={} leaderEpoch={}: the leader's batch from offset {}"
                        + " does not continue logEndOffset {}; truncated to {} and reconciling again",
                p,
                leaderId,
                s.leaderEpoch,
                leaderBatchBase,
                leo,
                log.logEndOffset());
    }

    /**
     * The fetch offset is outside the leader's log: below its log start (this log is emptied and
     * restarts at the leader's log start) or above its end (this log has a tail the leader does not:
     * reconcile by epoch again). Out of range above the end a second time in a row, right after
     * reconciling, means the epochs could not find where the logs part (the fallback to this log's own
     * high watermark, when the leader knows none of its epochs, can stay above the leader's end after
     * an unclean election or a leader that lost its unflushed tail): this log is emptied and restarts
     * at the leader's log start too. Kafka cuts to the leader's end offset there; starting over costs
     * a refetch but keeps no prefix that nothing compared.
     */
    private void onOutOfRange(PartitionState s, long leaderLogStart) throws IOException {
        Partition p = s.partition;
        UnifiedLog log = p.log();
        long leo = log.logEndOffset();
        boolean unreconcilable = s.outOfRangeBefore && leaderLogStart >= 0;
        if (leaderLogStart > leo || unreconcilable) {
            log.truncateFullyAndStartAt(leaderLogStart);
            p.onFollowerTruncated();
            p.updateFollowerHighWatermark(leaderLogStart);
            if (unreconcilable && leaderLogStart <= leo) {
                LOG.warn(
                        "REPLICA_TRUNCATED_FULLY partition={} leader={} oldLogEndOffset={} logStartOffset={}: still"
                                + " above the leader's log end after reconciling by epoch",
                        p,
                        leaderId,
                        leo,
                        leaderLogStart);
            } else {
                LOG.info(
                        "REPLICA_TRUNCATED_FULLY partition={} leader={} oldLogEndOffset={} logStartOffset={}",
                        p,
                        leaderId,
                        leo,
                        leaderLogStart);
            }
            s.outOfRangeBefore = false;
            return;
        }
        s.truncating = true;
        if (s.outOfRangeBefore || leaderLogStart < 0) {
            backoff(s);
        }
        s.outOfRangeBefore = true;
    }

    private void onEpochs(List<PartitionState> states, OffsetForLeaderEpochResponse response) {
        int i = 0;
        for (OffsetForLeaderEpochResponse.Topic t : response.topics()) {
            for (OffsetForLeaderEpochResponse.EpochEndOffset e : t.partitions()) {
                PartitionState s = matching(states, i++, t.topic(), e.partition());
                if (!s.removed) {
                    s.partition.runIfFollowing(s.leaderEpoch, () -> onEpochEnd(s, e));
                }
            }
        }
        if (i != states.size()) {
            throw new IllegalStateException(
                    "OffsetForLeaderEpoch response has " + i + " partitions, the request " + states.size());
        }
    }

    private void onEpochEnd(PartitionState s, OffsetForLeaderEpochResponse.EpochEndOffset e) {
        Partition p = s.partition;
        if (e.errorCode() != Errors.NONE) {
            LOG.debug("OffsetForLeaderEpoch of {} from leader {}: {}", p, leaderId, Errors.name(e.errorCode()));
            backoff(s);
            return;
        }
        UnifiedLog log = p.log();
        long before = log.logEndOffset();
        int askedEpoch = log.latestLeaderEpoch();
        try {
            FollowerTruncation.Decision d =
                    FollowerTruncation.decide(log, p.highWatermark(), e.leaderEpoch(), e.endOffset());
            s.truncating = !FollowerTruncation.apply(p, d);
            if (log.logEndOffset() != before || !s.truncating) {
                LOG.info(
                        "REPLICA_TRUNCATED partition={} leader={} leaderEpoch={} askedEpoch={} answer=({}, {}) "
                                + "logEndOffset {} -> {} complete={}",
                        p,
                        leaderId,
                        s.leaderEpoch,
                        askedEpoch,
                        e.leaderEpoch(),
                        e.endOffset(),
                        before,
                        log.logEndOffset(),
                        !s.truncating);
            }
        } catch (IOException | RuntimeException ex) {
            LOG.error("REPLICA_TRUNCATION_FAILED partition={} leader={}", p, leaderId, ex);
            backoff(s);
        }
    }

    /**
     * A log without epoch history has nothing to ask: truncate to the HW (a no-op when empty), only
     * while still following at the fetcher's epoch (as every follower write).
     */
    private void truncateLocally(PartitionState s) {
        s.partition.runIfFollowing(s.leaderEpoch, () -> {
            Partition p = s.partition;
            try {
                FollowerTruncation.apply(p, new FollowerTruncation.Decision(p.highWatermark(), true));
                s.truncating = false;
            } catch (IOException | RuntimeException e) {
                LOG.error("REPLICA_TRUNCATION_FAILED partition={} leader={}", p, leaderId, e);
                backoff(s);
            }
        });
    }

    // ---- requests ----

    private void sendEpochRequest(List<PartitionState> states) {
        Map<String, List<PartitionState>> byTopic = byTopic(states);
        List<OffsetForLeaderEpochRequest.Topic> topics = new ArrayList<>(byTopic.size());
        List<PartitionState> ordered = new ArrayList<>(states.size());
        for (Map.Entry<String, List<PartitionState>> e : byTopic.entrySet()) {
            List<OffsetForLeaderEpochRequest.PartitionEpoch> ps =
                    new ArrayList<>(e.getValue().size());
            for (PartitionState s : e.getValue()) {
                ps.add(new OffsetForLeaderEpochRequest.PartitionEpoch(
                        s.partition.partition(),
                        s.leaderEpoch,
                        s.partition.log().latestLeaderEpoch()));
                ordered.add(s);
            }
            topics.add(new OffsetForLeaderEpochRequest.Topic(e.getKey(), ps));
        }
        send(
                ApiKeys.OFFSET_FOR_LEADER_EPOCH,
                OffsetForLeaderEpochRequest.VERSION,
                new OffsetForLeaderEpochRequest(brokerId, topics),
                ordered);
    }

    /** Splits the ready partitions round-robin over the free in-flight slots, one Fetch each. */
    private void sendFetches(List<PartitionState> ready) {
        int groups = Math.min(config.maxInFlight() - fetchesInFlight, ready.size());
        List<List<PartitionState>> split = new ArrayList<>(groups);
        for (int g = 0; g < groups; g++) {
            split.add(new ArrayList<>(ready.size() / groups + 1));
        }
        for (int i = 0; i < ready.size(); i++) {
            split.get(i % groups).add(ready.get(i));
        }
        for (List<PartitionState> group : split) {
            sendFetch(group);
        }
    }

    private void sendFetch(List<PartitionState> states) {
        Map<String, List<PartitionState>> byTopic = byTopic(states);
        List<FetchRequest.FetchTopic> topics = new ArrayList<>(byTopic.size());
        List<PartitionState> ordered = new ArrayList<>(states.size());
        for (Map.Entry<String, List<PartitionState>> e : byTopic.entrySet()) {
            List<FetchRequest.FetchPartition> ps = new ArrayList<>(e.getValue().size());
            for (PartitionState s : e.getValue()) {
                UnifiedLog log = s.partition.log();
                ps.add(new FetchRequest.FetchPartition(
                        s.partition.partition(),
                        s.leaderEpoch,
                        log.logEndOffset(),
                        log.logStartOffset(),
                        config.fetchMaxBytes()));
                ordered.add(s);
            }
            topics.add(new FetchRequest.FetchTopic(e.getKey(), ps));
        }
        FetchRequest request = new FetchRequest(
                brokerId,
                config.waitMaxMs(),
                config.minBytes(),
                config.responseMaxBytes(),
                FetchRequest.READ_UNCOMMITTED,
                0,
                topics);
        send(ApiKeys.FETCH, FetchResponseV1.VERSION, request, ordered);
    }

    private static Map<String, List<PartitionState>> byTopic(List<PartitionState> states) {
        Map<String, List<PartitionState>> byTopic = new LinkedHashMap<>();
        for (PartitionState s : states) {
            byTopic.computeIfAbsent(s.partition.topic(), k -> new ArrayList<>()).add(s);
        }
        return byTopic;
    }

    /** Closes the connection and stops the fetcher thread (waits up to 30 s). Idempotent. */
    @Override
    public void close() {
        run(() -> {
            closed = true;
            for (PartitionState s : partitions.values()) {
                s.removed = true;
            }
            partitions.clear();
            if (channel != null) {
                channel.close();
            }
        });
        thread.shutdown();
        try {
            if (!thread.awaitTermination(WAIT_MS, TimeUnit.MILLISECONDS)) {
                LOG.warn("Replica fetcher of leader {} still busy after {} ms", leaderId, WAIT_MS);
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thread.shutdownNow();
        }
    }
}
