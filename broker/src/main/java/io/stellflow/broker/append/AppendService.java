package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The append path (DESIGN §3): per-partition bounded MPSC queues ({@link PartitionAppender})
 * drained by {@code num.append.agents} {@link AppendAgent}s, so each log has one leader-side writer.
 * A partition gets its queue on its first Produce while it leads here, on the agent with the fewest
 * queues (partition i in first-use order on agent i mod n while none is removed), and loses it with
 * its leadership ({@link #remove}: it became a follower, or left this broker) or at {@link #close}.
 *
 * <p>Back-pressure instead of unbounded buffering or waiting: {@link #submit} never blocks. When a
 * partition's queue is full it returns {@link #BACK_PRESSURED}; when the bytes queued over all
 * partitions pass {@code queued.max.request.bytes} it queues and returns {@link #QUEUED}. Both pause
 * the submitting connection's {@link ReadGate} ({@link ReadGate#APPEND_BACKLOG}); agents resume
 * every paused connection once the queued bytes are back under the limit.
 *
 * <p>Buffer ownership at the hand-off: {@link #submit} takes a request whose {@code records} the
 * caller has already retained; on {@link #QUEUED} the agent owns that reference (released after the
 * append), on any other code the caller still does.
 *
 * <p>Thread-safety: {@link #submit}, {@link #hasRoom} and {@link #remove} from any thread; {@link
 * #close} once, after the request threads have stopped. Creating and removing a queue take this
 * service's lock (once per partition leadership, never per request).
 */
public final class AppendService implements AutoCloseable {
    /** {@link #submit}: handed to the partition's agent, which answers the slot and releases the records. */
    public static final int QUEUED = 0;

    /**
     * {@link #submit}: the partition's queue is full; nothing was queued and the caller still owns the
     * records. The connection's reads are paused ({@link ReadGate#APPEND_BACKLOG}) until the agent
     * made room. A request thread submits again after {@link #BACK_PRESSURE_PARK_NS}; the event loop
     * never waits: it hands the rest of the request to the request pool, in the connection's order.
     */
    public static final int BACK_PRESSURED = 1;

    /**
     * {@link #submit}: the partition is not led here (any more): nothing was queued; answer {@code
     * NOT_LEADER_OR_FOLLOWER} and release the records.
     */
    public static final int NOT_LEADER = 2;

    /**
     * {@link #submit}: the service is closed (the broker is stopping): nothing was queued; answer
     * {@code BROKER_NOT_AVAILABLE} and release the records.
     */
    public static final int CLOSED = 3;

    /**
     * {@link #submit}: the partition's append agent is stuck (the thread watchdog found its heartbeat
     * older than {@code broker.thread.stall.timeout.ms}): nothing was queued, so nothing waits for an
     * agent that may never answer; answer {@code BROKER_NOT_AVAILABLE} and release the records.
     * Requests queued before the agent stalled are answered when it moves again (or at close).
     */
    public static final int AGENT_STUCK = 4;

    /**
     * How long a request thread parks after {@link #BACK_PRESSURED} before it submits again: 50 us
     * (the wait this service did itself before it returned a code), so a waiting thread offers at
     * most 20,000 times a second, each time one small request object; a Produce round trip is 1 ms or
     * more, so the wait adds at most 5% to a request that met a full queue.
     */
    public static final long BACK_PRESSURE_PARK_NS = 50_000;

    private final AppendAgent[] agents;
    private final int[] queuesPerAgent;
    private final int queueCapacity;
    private final long queuedMaxBytes;
    private final int messageMaxBytes;
    /** Written under its own monitor (creation and removal); read lock-free by {@link #submit}. */
    private final ConcurrentHashMap<Partition, PartitionAppender> appenders = new ConcurrentHashMap<>();

    private final AtomicLong queuedBytes = new AtomicLong();
    private final ConcurrentLinkedQueue<ReadGate> paused = new ConcurrentLinkedQueue<>();
    private final BrokerMetrics metrics;
    private final long compressionMaxDecompressedBytes;
    private final CompressionRefusals compressionRefusals = new CompressionRefusals(System::nanoTime);
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
        this(
                agentCount,
                idleStrategy,
                queueCapacity,
                queuedMaxBytes,
                messageMaxBytes,
                metrics,
                CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES);
    }

    /**
     * As the other constructors; each agent validates compressed batches (decision 9.o) with its own
     * {@link CompressedRecordsValidator} capped at {@code compressionMaxDecompressedBytes} ({@code
     * compression.max.decompressed.bytes}).
     */
    public AppendService(
            int agentCount,
            String idleStrategy,
            int queueCapacity,
            long queuedMaxBytes,
            int messageMaxBytes,
            BrokerMetrics metrics,
            long compressionMaxDecompressedBytes) {
        this.metrics = metrics;
        this.compressionMaxDecompressedBytes = compressionMaxDecompressedBytes;
        this.agents = new AppendAgent[agentCount];
        this.queuesPerAgent = new int[agentCount];
        this.queueCapacity = queueCapacity;
        this.queuedMaxBytes = queuedMaxBytes;
        this.messageMaxBytes = messageMaxBytes;
        for (int i = 0; i < agentCount; i++) {
            agents[i] = new AppendAgent("sf-append-" + i, this, IdleStrategy.named(idleStrategy));
        }
    }

    /** The rate-limited log of refused compressed batches, shared by the agents. */
    CompressionRefusals compressionRefusals() {
        return compressionRefusals;
    }

    /** {@code compression.max.decompressed.bytes} of the agents' validators. */
    long compressionMaxDecompressedBytes() {
        return compressionMaxDecompressedBytes;
    }

    /**
     * Registers every agent thread with {@code watchdog}: a thread that ends is restarted on the same
     * queues; one that is stuck makes {@link #submit} answer {@link #AGENT_STUCK} for its partitions.
     */
    public void watch(ThreadWatchdog watchdog) {
        for (AppendAgent a : agents) {
            watchdog.watch(a.heartbeat(), a);
        }
    }

    /** Test seam ({@link AppendAgent#endThreadForTest}): agent {@code i}'s loop returns as if its thread died. */
    void endAgentThreadForTest(int i) {
        agents[i].endThreadForTest();
    }

    /** Starts the agent threads. */
    public void start() {
        for (AppendAgent a : agents) {
            a.start();
        }
    }

    /**
     * Whether {@code partition}'s queue is at most half full, so that a {@link #submit} queues at once
     * (above {@code queued.max.request.bytes} it queues and pauses reads). The event-loop Produce path
     * asks first; the half left free is the margin for the other threads that may submit to the same
     * queue between this check and the submit (it would take more concurrent submitters than half the
     * capacity to fill it; if they do, the submit says {@link #BACK_PRESSURED}). Any thread.
     */
    public boolean hasRoom(Partition partition) {
        PartitionAppender appender = appenders.get(partition);
        return appender == null || appender.atMostHalfFull();
    }

    /**
     * Hands one partition's batch set to its agent, which fills slot {@code slot} of {@code pending}.
     * Never blocks.
     *
     * @param records already retained by the caller; on {@link #QUEUED} ownership passes to the agent
     * @param gate the connection's back-pressure switch (null: none)
     * @return {@link #QUEUED}, {@link #BACK_PRESSURED}, {@link #NOT_LEADER}, {@link #CLOSED} or {@link
     *     #AGENT_STUCK}; each says what the caller does next
     */
    public int submit(
            Partition partition,
            PendingProduce pending,
            int slot,
            ByteBuf records,
            boolean transactional,
            ReadGate gate) {
        return submit(partition, new AppendRequest(pending, slot, partition.partition(), records, transactional), gate);
    }

    /**
     * As {@link #submit(Partition, PendingProduce, int, ByteBuf, boolean, ReadGate)} for one
     * transactional batch set whose partition the coordinator registered in the transaction of
     * sequence {@code txnSequence} (&gt;= 0): the agent appends it with {@link
     * Partition#appendTransactionalAsLeader}.
     */
    public int submitTransactional(
            Partition partition, PendingProduce pending, int slot, ByteBuf records, long txnSequence, ReadGate gate) {
        return submit(
                partition,
                new AppendRequest(pending, slot, partition.partition(), records, true, txnSequence, null),
                gate);
    }

    /**
     * Queues a transaction marker behind the partition's queued batches; its agent appends it
     * ({@link Partition#appendTransactionMarker}) and fills slot {@code slot} of {@code pending}
     * (the marker's offset, or the refusal). Never blocks; the codes as {@link #submit}.
     */
    public int submitMarker(Partition partition, PendingProduce pending, int slot, TxnMarker marker) {
        return submit(
                partition,
                new AppendRequest(pending, slot, partition.partition(), Unpooled.EMPTY_BUFFER, true, -1, marker),
                null);
    }

    private int submit(Partition partition, AppendRequest request, ReadGate gate) {
        ByteBuf records = request.records();
        if (closed) {
            return CLOSED;
        }
        PartitionAppender appender = appenders.get(partition);
        if (appender == null && (appender = newAppender(partition)) == null) {
            return closed ? CLOSED : NOT_LEADER;
        }
        if (appender.agent.refusing()) {
            return AGENT_STUCK; // before the offer: a full queue must not make the caller wait for it
        }
        int bytes = records.readableBytes();
        if (!appender.offer(request)) {
            pauseReads(gate);
            if (!appender.isFull() && queuedBytes.get() <= queuedMaxBytes) {
                // The agent made room between the offer and the pause, and its released() found
                // nothing to resume: resume here, or the connection waits for a release that may not come.
                resumePaused();
            }
            appender.agent.wake();
            return BACK_PRESSURED;
        }
        long queued = queuedBytes.addAndGet(bytes); // after the offer: what the agent will release
        if (appender.isRetired()) {
            // Removed (or closed) since the lookup: the request is answered with the queue, by the
            // agent when it lets go of it, or here when it already has.
            appender.sweepIfLetGo(this);
            return QUEUED;
        }
        if (queued > queuedMaxBytes) {
            pauseReads(gate);
            if (queuedBytes.get() <= queuedMaxBytes) {
                // The agent drained below the limit between the offer and the pause, and its
                // released() found nothing to resume: resume here, or a lone producer stays paused.
                resumePaused();
            }
        }
        appender.agent.wake();
        return QUEUED;
    }

    /** The partition's appender, created on the least loaded agent; null when it does not lead or the service closed. */
    private PartitionAppender newAppender(Partition partition) {
        synchronized (appenders) {
            PartitionAppender existing = appenders.get(partition);
            if (existing != null) {
                return existing;
            }
            // Under the lock remove() takes: a partition that stopped leading before its remove()
            // gets no new queue (its role change happened before that call).
            if (closed || !partition.isLeader()) {
                return null;
            }
            int agent = 0;
            for (int i = 1; i < agents.length; i++) {
                if (queuesPerAgent[i] < queuesPerAgent[agent]) {
                    agent = i;
                }
            }
            PartitionAppender appender =
                    new PartitionAppender(partition, agents[agent], queueCapacity, messageMaxBytes);
            queuesPerAgent[agent]++;
            appenders.put(partition, appender);
            agents[agent].command(appender);
            return appender;
        }
    }

    /**
     * Stops appending to {@code partition} here: its queue leaves the service and its agent (on the
     * agent's next pass), and requests still queued are answered {@code NOT_LEADER_OR_FOLLOWER}. Call
     * after the partition stopped leading ({@link Partition#becomeFollower}), when it becomes a
     * follower or leaves this broker, so that no submit creates a new queue for it. A later
     * leadership gets a new queue. No-op for a partition without one. Any thread; does not wait.
     */
    public void remove(Partition partition) {
        PartitionAppender appender;
        synchronized (appenders) {
            appender = appenders.remove(partition);
            if (appender == null) {
                return;
            }
            for (int i = 0; i < agents.length; i++) {
                if (agents[i] == appender.agent) {
                    queuesPerAgent[i]--;
                }
            }
        }
        appender.retire(Errors.NOT_LEADER_OR_FOLLOWER);
        appender.agent.command(appender);
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

    /** Partitions with an append queue now (tests and diagnostics). */
    public int appenderCount() {
        return appenders.size();
    }

    /**
     * Queues the agents poll on each pass, as of their last applied command (tests and diagnostics):
     * lags {@link #appenderCount} until each agent's next pass.
     */
    public int polledQueueCount() {
        int n = 0;
        for (AppendAgent a : agents) {
            n += a.polledQueues();
        }
        return n;
    }

    /**
     * Appends what is queued, stops the agents, answers anything left {@code BROKER_NOT_AVAILABLE}
     * and drops every queue. Idempotent.
     */
    @Override
    public void close() {
        synchronized (appenders) {
            if (closed) {
                return;
            }
            closed = true; // no queue is created from now on
        }
        for (AppendAgent a : agents) {
            a.close();
        }
        synchronized (appenders) {
            appenders.clear();
            Arrays.fill(queuesPerAgent, 0);
        }
    }
}
