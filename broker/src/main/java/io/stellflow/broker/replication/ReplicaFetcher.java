package io.stellflow.broker.replication;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.stellflow.broker.config.ReplicaFetcherConfig;
import io.stellflow.broker.telemetry.ReplicationMetrics;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.BodyWriter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchResponseV1;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.storage.UnifiedLog;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
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
 * <p>A partition whose writes failed ({@link Partition#failure}: a full disk, an offline log dir) is
 * not fetched until it recovers; it is looked at every {@code replica.fetch.backoff.ms}.
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
 * <p>Parts: the per-partition state (epoch, truncating or fetching, backoff, out-of-range memory) is
 * a {@link FetchState}; the connection, ApiVersions check, correlation ids and request timeouts are
 * the {@link LeaderChannel}; this class decides what to send and applies the answers. Backoffs,
 * reconnect delays and fetch latencies read an injected nano clock ({@link System#nanoTime} outside
 * tests).
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
    private final LongSupplier brokerEpoch;
    private final ReplicaFetcherConfig config;
    private final ReplicationMetrics metrics;
    private final LongSupplier nanoClock;
    private final long backoffNanos;
    private final ScheduledThreadPoolExecutor thread;
    private final LeaderChannel<List<FetchState>> leader;
    private final FollowerResponses responses;

    // Confined to the fetcher thread.
    private final Map<Partition, FetchState> partitions = new LinkedHashMap<>();
    private boolean closed;
    private boolean wakeScheduled;
    private long wakeAtNanos;
    private int fetchesInFlight;

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
        this(leaderId, brokerId, () -> -1L, config, addresses, group, channelClass, metrics, System::nanoTime);
    }

    /**
     * As above, with this broker's epoch for Fetch v2 and the clock that backoffs, reconnect delays
     * and fetch latencies read.
     *
     * @param brokerEpoch this broker's current broker epoch (-1 while unregistered), sent in each
     *     Fetch v2 so that the leader can tell this process from an earlier one of the same broker
     * @param nanoClock a {@link System#nanoTime}-style clock (ns, compared by difference); the
     *     thread's timers (wake-ups, request timeouts) still wait in real time
     */
    ReplicaFetcher(
            int leaderId,
            int brokerId,
            LongSupplier brokerEpoch,
            ReplicaFetcherConfig config,
            IntFunction<InetSocketAddress> addresses,
            EventLoopGroup group,
            Class<? extends SocketChannel> channelClass,
            ReplicationMetrics metrics,
            LongSupplier nanoClock) {
        this.leaderId = leaderId;
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.config = config;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
        this.backoffNanos = TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
        this.thread =
                new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("sf-replica-fetcher-" + leaderId, true));
        this.thread.setRemoveOnCancelPolicy(true);
        // Pending wake-ups and request timeouts must not keep the thread alive after close.
        this.thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.responses = new FollowerResponses(leaderId, nanoClock, backoffNanos, metrics);
        this.leader = new LeaderChannel<>(
                leaderId,
                brokerId,
                config,
                addresses,
                group,
                channelClass,
                thread,
                nanoClock,
                new LeaderChannel.Handler<>() {
                    @Override
                    public void pump() {
                        pumpLogged();
                    }

                    @Override
                    public void wakeAt(long atNanos, long nowNanos) {
                        ReplicaFetcher.this.wakeAt(atNanos, nowNanos);
                    }

                    @Override
                    public void onResponse(
                            short apiKey,
                            List<FetchState> states,
                            short headerErrorCode,
                            long sentNanos,
                            ByteBuf body) {
                        handleResponse(apiKey, states, headerErrorCode, sentNanos, body);
                    }

                    @Override
                    public void onAbandoned(short apiKey, List<FetchState> states) {
                        sentRequestDone(apiKey, states);
                    }
                });
    }

    /**
     * Registers the fetcher thread with {@code watchdog}: a probe task beats for it, so a response
     * whose application blocks for longer than the stall timeout makes it stuck (the broker asks to
     * be fenced). Dropped by the watchdog once this fetcher is closed.
     */
    void watch(ThreadWatchdog watchdog) {
        watchdog.watchExecutor("sf-replica-fetcher-" + leaderId, "ReplicaFetcher", thread, true, thread::isShutdown);
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
            FetchState old = partitions.put(partition, new FetchState(partition, leaderEpoch, nanoClock.getAsLong()));
            if (old != null) {
                old.markRemoved();
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
                        FetchState s = partitions.remove(partition);
                        if (s != null) {
                            s.markRemoved();
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
            leader.reconnect();
        }
    }

    /** Sends whatever is ready: connects, asks for epochs, fetches; schedules the next wake-up. */
    private void pump() {
        if (closed) {
            return;
        }
        long now = nanoClock.getAsLong();
        if (!leader.readyToSend(now)) {
            return;
        }
        long earliest = Long.MAX_VALUE;
        List<FetchState> truncating = null;
        List<FetchState> fetching = null;
        for (FetchState s : partitions.values()) {
            if (s.inFlight()) {
                continue;
            }
            if (!s.readyAt(now)) {
                earliest = Math.min(earliest, s.notBeforeNanos());
                continue;
            }
            if (s.partition().failure() != null) {
                // A replica that cannot write (a full disk, an offline log dir) does not fetch: its
                // fetch offset would make it look caught up, and the leader would keep proposing it
                // for the ISR. Looked at again after the backoff; fetches resume once it recovered.
                backoff(s);
                earliest = Math.min(earliest, s.notBeforeNanos());
                continue;
            }
            if (s.truncating()) {
                if (s.partition().log().latestLeaderEpoch() < 0) {
                    responses.truncateLocally(s); // no epoch history: nothing to ask, fall back to the HW
                }
            }
            if (s.truncating()) {
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

    private static List<FetchState> add(List<FetchState> list, FetchState s) {
        List<FetchState> l = list == null ? new ArrayList<>() : list;
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

    private void backoff(FetchState s) {
        s.backoff(nanoClock.getAsLong(), backoffNanos);
    }

    /** Sends one request carrying {@code states}; marks them in flight once it is out. */
    private void send(short apiKey, short version, BodyWriter body, List<FetchState> states) {
        if (!leader.send(apiKey, version, body, states)) {
            return;
        }
        for (FetchState s : states) {
            s.inFlight(true);
        }
        if (apiKey == ApiKeys.FETCH) {
            fetchesInFlight++;
        }
    }

    /** A request carrying {@code states} was answered or abandoned: they may be sent again. */
    private void sentRequestDone(short apiKey, List<FetchState> states) {
        if (apiKey == ApiKeys.FETCH) {
            fetchesInFlight--;
        }
        for (FetchState s : states) {
            s.inFlight(false);
        }
    }

    // ---- responses ----

    private void handleResponse(
            short apiKey, List<FetchState> states, short headerErrorCode, long sentNanos, ByteBuf body) {
        sentRequestDone(apiKey, states);
        if (apiKey == ApiKeys.FETCH) {
            metrics.replicaFetch(nanoClock.getAsLong() - sentNanos);
        }
        if (headerErrorCode != Errors.NONE) {
            LOG.warn("Leader {} refused {}: {}", leaderId, ApiKeys.name(apiKey), Errors.name(headerErrorCode));
            states.forEach(this::backoff);
            return;
        }
        switch (apiKey) {
            case ApiKeys.FETCH -> responses.onFetch(states, FetchResponseV1.read(body));
            case ApiKeys.OFFSET_FOR_LEADER_EPOCH -> responses.onEpochs(states, OffsetForLeaderEpochResponse.read(body));
            default -> throw new IllegalStateException("unexpected apiKey " + apiKey);
        }
    }

    // ---- requests ----

    private void sendEpochRequest(List<FetchState> states) {
        Map<String, List<FetchState>> byTopic = byTopic(states);
        List<OffsetForLeaderEpochRequest.Topic> topics = new ArrayList<>(byTopic.size());
        List<FetchState> ordered = new ArrayList<>(states.size());
        for (Map.Entry<String, List<FetchState>> e : byTopic.entrySet()) {
            List<OffsetForLeaderEpochRequest.PartitionEpoch> ps =
                    new ArrayList<>(e.getValue().size());
            for (FetchState s : e.getValue()) {
                ps.add(new OffsetForLeaderEpochRequest.PartitionEpoch(
                        s.partition().partition(),
                        s.leaderEpoch(),
                        s.partition().log().latestLeaderEpoch()));
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
    private void sendFetches(List<FetchState> ready) {
        int groups = Math.min(config.maxInFlight() - fetchesInFlight, ready.size());
        List<List<FetchState>> split = new ArrayList<>(groups);
        for (int g = 0; g < groups; g++) {
            split.add(new ArrayList<>(ready.size() / groups + 1));
        }
        for (int i = 0; i < ready.size(); i++) {
            split.get(i % groups).add(ready.get(i));
        }
        for (List<FetchState> group : split) {
            sendFetch(group);
        }
    }

    private void sendFetch(List<FetchState> states) {
        Map<String, List<FetchState>> byTopic = byTopic(states);
        List<FetchRequest.FetchTopic> topics = new ArrayList<>(byTopic.size());
        List<FetchState> ordered = new ArrayList<>(states.size());
        for (Map.Entry<String, List<FetchState>> e : byTopic.entrySet()) {
            List<FetchRequest.FetchPartition> ps = new ArrayList<>(e.getValue().size());
            for (FetchState s : e.getValue()) {
                UnifiedLog log = s.partition().log();
                ps.add(new FetchRequest.FetchPartition(
                        s.partition().partition(),
                        s.leaderEpoch(),
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
                topics,
                brokerEpoch.getAsLong());
        short version = leader.fetchVersion();
        send(ApiKeys.FETCH, version, out -> request.write(out, version), ordered);
    }

    private static Map<String, List<FetchState>> byTopic(List<FetchState> states) {
        Map<String, List<FetchState>> byTopic = new LinkedHashMap<>();
        for (FetchState s : states) {
            byTopic.computeIfAbsent(s.partition().topic(), k -> new ArrayList<>())
                    .add(s);
        }
        return byTopic;
    }

    /** Closes the connection and stops the fetcher thread (waits up to 30 s). Idempotent. */
    @Override
    public void close() {
        run(() -> {
            closed = true;
            for (FetchState s : partitions.values()) {
                s.markRemoved();
            }
            partitions.clear();
            leader.close();
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
