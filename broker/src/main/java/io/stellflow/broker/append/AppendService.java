package io.stellflow.broker.append;

import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.broker.topic.Partition;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock-free append path (DESIGN §3): per-partition bounded MPSC queues ({@link
 * PartitionAppender}) drained by {@code num.append.agents} {@link AppendAgent}s; partition i of
 * the broker (in first-use order) belongs to agent i mod n, so each log has one writer.
 *
 * <p>Back-pressure instead of unbounded buffering: when a partition's queue is full, or the bytes
 * queued over all partitions pass {@code queued.max.request.bytes}, the submitting connection's
 * {@link ReadGate} pauses ({@link ReadGate#APPEND_BACKLOG}); agents resume every paused connection
 * once the queued bytes are back under the limit. A request that meets a full queue waits on its
 * request thread (parking 50 us at a time) until the agent makes room; no request is dropped.
 *
 * <p>Buffer ownership at the hand-off: {@link #submit} takes a request whose {@code records} the
 * caller has already retained; from then on the agent owns that reference (released after append).
 *
 * <p>Thread-safety: {@link #submit} from any thread; {@link #close} once, after the request threads
 * have stopped.
 */
public final class AppendService implements AutoCloseable {
    private static final long FULL_QUEUE_PARK_NS = 50_000;

    private final AppendAgent[] agents;
    private final int queueCapacity;
    private final long queuedMaxBytes;
    private final int messageMaxBytes;
    private final ConcurrentHashMap<Partition, PartitionAppender> appenders = new ConcurrentHashMap<>();
    private final AtomicInteger nextAgent = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final ConcurrentLinkedQueue<ReadGate> paused = new ConcurrentLinkedQueue<>();
    private final BrokerMetrics metrics;
    private volatile boolean closed;

    /**
     * @param agentCount {@code num.append.agents} (&gt;= 1)
     * @param idleStrategy {@code append.idle.strategy} name ({@link IdleStrategy#named})
     * @param queueCapacity {@code append.queue.capacity}: requests per partition queue
     * @param queuedMaxBytes {@code queued.max.request.bytes}: queued record bytes before reads pause
     * @param messageMaxBytes {@code message.max.bytes}
     */
    public AppendService(
            int agentCount, String idleStrategy, int queueCapacity, long queuedMaxBytes, int messageMaxBytes) {
        this(agentCount, idleStrategy, queueCapacity, queuedMaxBytes, messageMaxBytes, RequestTelemetry.NONE.metrics());
    }

    /**
     * As the other constructor, counting appended bytes and records into {@code metrics}
     * ({@code stellflow.produce.bytes}, {@code stellflow.produce.records}).
     */
    public AppendService(
            int agentCount,
            String idleStrategy,
            int queueCapacity,
            long queuedMaxBytes,
            int messageMaxBytes,
            BrokerMetrics metrics) {
        this.metrics = metrics;
        this.agents = new AppendAgent[agentCount];
        this.queueCapacity = queueCapacity;
        this.queuedMaxBytes = queuedMaxBytes;
        this.messageMaxBytes = messageMaxBytes;
        for (int i = 0; i < agentCount; i++) {
            agents[i] = new AppendAgent("sf-append-" + i, this, IdleStrategy.named(idleStrategy));
        }
    }

    /** Starts the agent threads. */
    public void start() {
        for (AppendAgent a : agents) {
            a.start();
        }
    }

    /**
     * Whether {@code partition}'s queue is at most half full, so that a {@link #submit} queues at once
     * instead of waiting for room (above {@code queued.max.request.bytes} it queues and pauses reads,
     * without waiting). The event-loop Produce path asks first; the half left free is the margin
     * for the other threads that may submit to the same queue between this check and the submit, so
     * that the event loop does not wait in practice (it would take more concurrent submitters than
     * half the capacity). Never blocks; any thread.
     */
    public boolean hasRoom(Partition partition) {
        PartitionAppender appender = appenders.get(partition);
        return appender == null || appender.atMostHalfFull();
    }

    /**
     * Hands one partition's batch set to its agent. The result arrives in {@code pending}.
     *
     * @param records already retained by the caller; ownership passes to the agent
     */
    public void submit(
            Partition partition,
            PendingProduce pending,
            int slot,
            io.netty.buffer.ByteBuf records,
            boolean transactional,
            ReadGate gate) {
        PartitionAppender appender = appenders.computeIfAbsent(partition, this::newAppender);
        AppendRequest request = new AppendRequest(pending, slot, partition.partition(), records, transactional, gate);
        int bytes = records.readableBytes();
        long queued = queuedBytes.addAndGet(bytes);
        if (!appender.offer(request)) {
            pauseReads(gate);
            do {
                if (closed) {
                    // Shutting down (a request thread that outlived the pool's grace period): the
                    // agents are gone, answer instead of waiting for room that never comes.
                    PartitionAppender.reject(this, request, partition);
                    return;
                }
                appender.agent.wake();
                LockSupport.parkNanos(FULL_QUEUE_PARK_NS);
            } while (!appender.offer(request));
        } else if (queued > queuedMaxBytes) {
            pauseReads(gate);
            if (queuedBytes.get() <= queuedMaxBytes) {
                // The agent drained below the limit between the offer and the pause, and its
                // released() found nothing to resume: resume here, or a lone producer stays paused.
                resumePaused();
            }
        }
        appender.agent.wake();
    }

    private void pauseReads(ReadGate gate) {
        if (gate != null) {
            gate.pause(ReadGate.APPEND_BACKLOG);
            paused.add(gate);
        }
    }

    /** An agent finished a request of {@code bytes}: resume paused connections when under the limit. */
    void released(int bytes) {
        long queued = queuedBytes.addAndGet(-bytes);
        if (queued <= queuedMaxBytes && !paused.isEmpty()) {
            resumePaused();
        }
    }

    private void resumePaused() {
        ReadGate g;
        while ((g = paused.poll()) != null) {
            g.resume(ReadGate.APPEND_BACKLOG);
        }
    }

    /** The broker's instruments (the agents count appended bytes and records). */
    BrokerMetrics metrics() {
        return metrics;
    }

    /** Record bytes queued and not yet appended (tests and metrics). */
    public long queuedBytes() {
        return queuedBytes.get();
    }

    private PartitionAppender newAppender(Partition partition) {
        AppendAgent agent = agents[Math.floorMod(nextAgent.getAndIncrement(), agents.length)];
        PartitionAppender appender = new PartitionAppender(partition, agent, queueCapacity, messageMaxBytes);
        agent.assign(appender);
        return appender;
    }

    /** Appends what is queued, stops the agents, fails and releases anything left. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (AppendAgent a : agents) {
            a.close();
        }
    }
}
