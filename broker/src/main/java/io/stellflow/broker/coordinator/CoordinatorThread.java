package io.stellflow.broker.coordinator;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.stellflow.broker.append.IdempotentBatches;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.ControlRecordLayout;
import io.stellflow.protocol.record.RecordBatchBuilder;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.protocol.record.RecordBatchReader;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One runtime thread and the shards pinned to it: it runs their commands, loads and timers one at a
 * time from its queue, so a shard needs no locks ({@code ../shared/DESIGN.md} §7).
 *
 * <p>Load: in steps of {@code loadBufferBytes} read from the partition's log (from its log start to
 * its end), each step a task of its own so the thread's other shards are served in between. Write:
 * the command's records become ONE batch appended through {@link Partition#appendAsLeader} (the
 * leader append, with its role check under the log's write lock); the answer waits in the slot's
 * pending writes until the partition's high watermark reaches the batch's end (acks=all), which the
 * partition's high-watermark listener reports here. Timers: after each round of tasks, due shards are
 * {@link CoordinatorShard#poll polled}, writes past {@code commitTimeoutMs} fail and failed loads
 * are tried again; the thread then waits for a task until the earliest deadline, at most {@value
 * #MAX_IDLE_WAIT_MS} ms (a test that moves an injected clock calls {@link CoordinatorRuntime#wakeup}).
 *
 * <p>Thread-safety: {@link #execute} from any thread; everything else on this thread.
 */
final class CoordinatorThread<S extends CoordinatorShard> implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorThread.class);
    /** A coordinator load that took at least this long is logged at INFO even when it read nothing. */
    private static final long NOTABLE_LOAD_MS = 100;

    /** Longest idle wait, ms: bounds how late a deadline set by a moved test clock is seen. */
    static final long MAX_IDLE_WAIT_MS = 1_000;

    /** Wait before a failed load is tried again, ms: an I/O error is rarely gone sooner. */
    static final long LOAD_RETRY_MS = 1_000;

    /**
     * How often the shards' entry counts are published for the gauge, ns (monotonic time, not the
     * runtime clock: a test's frozen clock must not freeze the gauge). A count is O(entries), so it is
     * not taken per command.
     */
    static final long PUBLISH_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);

    /** A queued unit of work: run it, or, when the runtime closed first, answer it with a code. */
    interface Task {
        void run();

        default void reject(short errorCode) {}
    }

    private final String name;
    private final ConcurrentHashMap<Integer, ShardSlot<S>> slots;
    private final CoordinatorShardFactory<S> factory;
    private final InstantSource clock;
    private final CoordinatorRuntimeConfig config;
    private final CoordinatorRuntime.LoadListener loadListener;
    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean started;
    private ByteBuf loadBuffer;
    private long nextPublishNs;

    CoordinatorThread(
            String name,
            ConcurrentHashMap<Integer, ShardSlot<S>> slots,
            CoordinatorShardFactory<S> factory,
            InstantSource clock,
            CoordinatorRuntimeConfig config,
            CoordinatorRuntime.LoadListener loadListener) {
        this.name = name;
        this.slots = slots;
        this.factory = factory;
        this.clock = clock;
        this.config = config;
        this.loadListener = loadListener;
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this);
    }

    void start() {
        started = true;
        thread.start();
    }

    /** Queues {@code task}; after {@link #close} it is rejected with COORDINATOR_NOT_AVAILABLE at once. */
    void execute(Task task) {
        if (!running) {
            task.reject(Errors.COORDINATOR_NOT_AVAILABLE);
            return;
        }
        queue.add(task);
        if (!running && queue.remove(task)) {
            task.reject(Errors.COORDINATOR_NOT_AVAILABLE); // raced with close
        }
    }

    /** Wakes the thread to look at its timers now. */
    void wakeup() {
        execute(() -> {});
    }

    @Override
    public void run() {
        loadBuffer = Unpooled.buffer(Math.min(config.loadBufferBytes(), 1 << 20));
        try {
            while (running) {
                Task task;
                while ((task = queue.poll()) != null) {
                    runTask(task);
                }
                long now = clock.millis();
                long next = runTimers(now);
                publishEntryCounts();
                long waitMs = Math.min(Math.max(next - now, 0), MAX_IDLE_WAIT_MS);
                if (waitMs > 0 && running) {
                    task = queue.poll(waitMs, TimeUnit.MILLISECONDS);
                    if (task != null) {
                        runTask(task);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            shutDown();
        }
    }

    private static void runTask(Task task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("Coordinator task failed", e); // a bug: the task answers its own failures
        }
    }

    /** Stops the loop; queued commands and pending writes are answered COORDINATOR_NOT_AVAILABLE. */
    void close() {
        running = false;
        if (!started) {
            shutDown(); // never started
            return;
        }
        thread.interrupt();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void shutDown() {
        Task t;
        while ((t = queue.poll()) != null) {
            t.reject(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        for (ShardSlot<S> s : slots.values()) {
            if (owns(s)) {
                drop(s, Errors.COORDINATOR_NOT_AVAILABLE, "runtime closed");
            }
        }
        if (loadBuffer != null) {
            loadBuffer.release();
        }
    }

    private boolean owns(ShardSlot<S> s) {
        return s.owner == this;
    }

    // ---------------------------------------------------------------- leadership

    /** This broker now leads {@code partition} at {@code leaderEpoch}: a new shard, loaded from the log. */
    void becomeLeader(int index, Partition partition, int leaderEpoch) {
        ShardSlot<S> old = slots.get(index);
        if (old != null) {
            drop(old, Errors.NOT_COORDINATOR, "leader epoch " + leaderEpoch);
        }
        if (!partition.isLeader() || partition.leaderEpoch() != leaderEpoch) {
            return; // already moved on; a later event says where to
        }
        ShardSlot<S> s = new ShardSlot<>(index, partition, leaderEpoch, factory.create(index, leaderEpoch), this);
        slots.put(index, s);
        startLoad(s);
    }

    /** {@code partition} is no longer led here: its shard (if it is the one for this Partition) goes. */
    void resign(int index, Partition partition) {
        ShardSlot<S> s = slots.get(index);
        if (s != null && s.partition == partition) {
            drop(s, Errors.NOT_COORDINATOR, "not the leader any more");
        }
    }

    private void drop(ShardSlot<S> s, short code, String why) {
        slots.remove(s.partitionIndex, s);
        boolean wasLoaded = s.loaded;
        s.loaded = false;
        unregister(s);
        failPending(s, code, why);
        LOG.info(
                "COORDINATOR_SHARD_DROPPED partition={} leaderEpoch={} loaded={} reason={}",
                s,
                s.leaderEpoch,
                wasLoaded,
                why);
    }

    private void unregister(ShardSlot<S> s) {
        if (s.highWatermarkListener != null) {
            s.partition.removeHighWatermarkListener(s.highWatermarkListener);
            s.highWatermarkListener = null;
        }
    }

    private void failPending(ShardSlot<S> s, short code, String why) {
        ShardSlot.PendingWrite w;
        while ((w = s.pending.pollFirst()) != null) {
            if (w.future() != null) {
                w.future().completeExceptionally(new CoordinatorException(code, s + ": " + why));
            }
        }
    }

    /** Drops the shard's memory (it may hold what the log does not) and loads it again. */
    private void reload(ShardSlot<S> s, String why) {
        s.loaded = false;
        unregister(s);
        failPending(s, Errors.COORDINATOR_NOT_AVAILABLE, why);
        LOG.warn("COORDINATOR_SHARD_RELOAD partition={} reason={}", s, why);
        if (!s.stillLeading()) {
            drop(s, Errors.NOT_COORDINATOR, "not the leader any more");
            return;
        }
        s.shard = factory.create(s.partitionIndex, s.leaderEpoch);
        startLoad(s);
    }

    // ---------------------------------------------------------------- load

    private void startLoad(ShardSlot<S> s) {
        s.loadNextOffset = s.partition.log().logStartOffset();
        s.loadStartNs = System.nanoTime();
        s.loadedRecords = 0;
        s.skippedRecords = 0;
        s.retryLoadAtMs = Long.MAX_VALUE;
        execute(() -> loadStep(s));
    }

    private void loadStep(ShardSlot<S> s) {
        if (slots.get(s.partitionIndex) != s || s.loaded) {
            return; // dropped or replaced meanwhile
        }
        if (!s.stillLeading()) {
            drop(s, Errors.NOT_COORDINATOR, "leadership moved during the load");
            return;
        }
        UnifiedLog log = s.partition.log();
        long from = Math.max(s.loadNextOffset, log.logStartOffset());
        loadBuffer.clear();
        int bytes;
        try {
            bytes = log.readInto(from, config.loadBufferBytes(), Long.MAX_VALUE, true, loadBuffer);
            if (bytes > 0) {
                replayBatches(s, loadBuffer, from);
                s.loadNextOffset = RecordBatchReader.nextOffset(loadBuffer, from);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("COORDINATOR_LOAD_FAILED partition={} offset={}; retrying in {} ms", s, from, LOAD_RETRY_MS, e);
            s.shard = factory.create(s.partitionIndex, s.leaderEpoch); // it may hold part of the load
            s.loadNextOffset = log.logStartOffset();
            s.loadedRecords = 0;
            s.retryLoadAtMs = clock.millis() + LOAD_RETRY_MS;
            return;
        }
        if (bytes > 0) {
            execute(() -> loadStep(s));
            return;
        }
        finishLoad(s);
    }

    /**
     * Replays the whole batches of {@code buf} (as {@link UnifiedLog#readInto} filled it from {@code
     * from}): a transaction marker goes to {@link CoordinatorShard#replayMarker}, the records of a
     * batch with a producer id to {@link CoordinatorShard#replayTransactional}, the others to {@link
     * CoordinatorShard#replay}. A data batch is validated (CRC) before its records are replayed.
     */
    private void replayBatches(ShardSlot<S> s, ByteBuf buf, long from) {
        int end = buf.writerIndex();
        for (int pos = buf.readerIndex(); pos + RecordBatchLayout.RECORDS_OFFSET <= end; ) {
            int size = RecordBatchLayout.batchSize(buf, pos);
            if (size < RecordBatchLayout.RECORDS_OFFSET || pos + size > end) {
                break; // a partial batch at the end of the read: nextOffset stops before it too
            }
            long producerId = RecordBatchLayout.producerId(buf, pos);
            short epoch = RecordBatchLayout.producerEpoch(buf, pos);
            if (ControlRecordLayout.isControl(buf, pos)) {
                s.shard.replayMarker(
                        from + RecordBatchLayout.baseOffsetDelta(buf, pos),
                        producerId,
                        epoch,
                        ControlRecordLayout.type(buf, pos),
                        ControlRecordLayout.transactionSequence(buf, pos));
            } else {
                RecordBatchReader.decode(
                        buf.slice(pos, size),
                        from,
                        (offset, timestampMs, key, value, headers) -> replay(s, offset, producerId, epoch, key, value));
            }
            pos += size;
        }
    }

    private void replay(ShardSlot<S> s, long offset, long producerId, short epoch, byte[] key, byte[] value) {
        if (key == null) {
            s.skippedRecords++;
            return;
        }
        try {
            if (producerId >= 0) {
                s.shard.replayTransactional(offset, producerId, epoch, key, value);
            } else {
                s.shard.replay(offset, key, value);
            }
            s.loadedRecords++;
        } catch (IllegalArgumentException e) {
            if (s.skippedRecords++ == 0) {
                LOG.warn("COORDINATOR_RECORD_SKIPPED partition={} offset={}: {}", s, offset, e.getMessage());
            }
        }
    }

    private void finishLoad(ShardSlot<S> s) {
        if (!s.stillLeading()) {
            drop(s, Errors.NOT_COORDINATOR, "leadership moved during the load");
            return;
        }
        long now = clock.millis();
        s.shard.onLoaded(now);
        s.highWatermarkListener = () -> {
            if (s.commitCheckQueued.compareAndSet(false, true)) {
                execute(() -> {
                    s.commitCheckQueued.set(false);
                    checkCommitted(s);
                });
            }
        };
        s.partition.addHighWatermarkListener(s.highWatermarkListener);
        s.publishedEntryCount = s.shard.entryCount();
        s.loaded = true;
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s.loadStartNs);
        // An empty partition's load says nothing an operator needs: a restart would print one line per
        // __consumer_offsets partition (50 by default). Loads that read records or took time stay INFO.
        boolean notable = s.loadedRecords > 0 || s.skippedRecords > 0 || ms >= NOTABLE_LOAD_MS;
        LOG.atLevel(notable ? org.slf4j.event.Level.INFO : org.slf4j.event.Level.DEBUG)
                .log(
                        "COORDINATOR_LOADED partition={} leaderEpoch={} records={} skipped={} endOffset={} ms={}",
                        s,
                        s.leaderEpoch,
                        s.loadedRecords,
                        s.skippedRecords,
                        s.loadNextOffset,
                        ms);
        loadListener.loaded(s.partitionIndex, s.loadedRecords, ms);
    }

    // ---------------------------------------------------------------- commands

    /** Runs a writing command on the shard of {@code index} and answers {@code future} once committed. */
    @SuppressWarnings("unchecked")
    <T> void write(int index, CoordinatorRuntime.Command<S, T> command, CompletableFuture<T> future) {
        ShardSlot<S> s = usable(index, future);
        if (s == null) {
            return;
        }
        if (s.partition.failure() != null) {
            // Its appends fail until it recovers in place: refuse before the command changes memory
            // (each failed append would reload the shard from the log).
            future.completeExceptionally(new CoordinatorException(
                    Errors.COORDINATOR_NOT_AVAILABLE,
                    s + " failed: " + s.partition.failure().reason()));
            return;
        }
        CoordinatorResult<T> r;
        try {
            r = command.apply(s.shard, clock.millis());
        } catch (RuntimeException e) {
            reload(s, "command failed: " + e); // it may have changed part of the state
            future.completeExceptionally(e);
            return;
        }
        appendAndAwait(
                s,
                r.records(),
                r.transaction(),
                (CompletableFuture<Object>) (CompletableFuture<?>) future,
                r.response());
    }

    /** Runs a read-only query on the shard of {@code index}, without waiting for anything. */
    <T> void read(int index, java.util.function.Function<S, T> query, CompletableFuture<T> future) {
        ShardSlot<S> s = usable(index, future);
        if (s == null) {
            return;
        }
        try {
            future.complete(query.apply(s.shard));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
    }

    private ShardSlot<S> usable(int index, CompletableFuture<?> future) {
        ShardSlot<S> s = slots.get(index);
        if (s == null || s.owner != this) {
            future.completeExceptionally(
                    new CoordinatorException(Errors.NOT_COORDINATOR, "partition " + index + " is not led here"));
            return null;
        }
        if (!s.loaded) {
            future.completeExceptionally(new CoordinatorException(Errors.COORDINATOR_NOT_AVAILABLE, s + " is loading"));
            return null;
        }
        return s;
    }

    private void appendAndAwait(
            ShardSlot<S> s,
            List<CoordinatorRecord> records,
            CoordinatorResult.Transaction transaction,
            CompletableFuture<Object> future,
            Object response) {
        long now = clock.millis();
        long deadlineMs = now + config.commitTimeoutMs();
        if (records.isEmpty()) {
            if (s.pending.isEmpty()) {
                if (future != null) {
                    future.complete(response);
                }
            } else {
                // Its answer may rest on state of earlier writes: it waits for them.
                s.pending.addLast(
                        new ShardSlot.PendingWrite(s.pending.peekLast().endOffset(), deadlineMs, future, response));
            }
            return;
        }
        ByteBuf batch = batchOf(records, now);
        long base;
        try {
            if (transaction == null) {
                base = s.partition.appendAsLeader(batch);
            } else {
                // The log stamps the sequence; the producer id and epoch make it the producer's batch.
                RecordBatchLayout.setProducerFields(
                        batch, batch.readerIndex(), transaction.producerId(), transaction.producerEpoch(), 0);
                base = s.partition.appendCoordinatorTransactionalAsLeader(batch, transaction.transactionSequence());
            }
        } catch (IOException | RuntimeException e) {
            // As the append agents do: the partition is failed (logged once per episode) until it
            // recovers in place; then the shard is loaded again before anyone learns of the failure.
            PartitionFailures.writeFailed(s.partition, "append", e, clock.millis());
            reload(s, "append failed: " + e);
            if (future != null) {
                future.completeExceptionally(
                        new CoordinatorException(Errors.COORDINATOR_NOT_AVAILABLE, s + ": append failed: " + e));
            }
            return;
        } finally {
            batch.release();
        }
        if (base == Partition.NOT_LEADER) {
            drop(s, Errors.NOT_COORDINATOR, "not the leader at append");
            if (future != null) {
                future.completeExceptionally(new CoordinatorException(Errors.NOT_COORDINATOR, s + ": not the leader"));
            }
            return;
        }
        if (base < 0) {
            // The log refused a transactional batch (a fenced epoch, another transaction): nothing was
            // written, but the shard applied it in memory.
            short code = IdempotentBatches.error(base, s.partition, now);
            reload(s, "transactional append refused: " + Errors.name(code));
            if (future != null) {
                future.completeExceptionally(
                        new CoordinatorException(code, s + ": transactional append refused: " + Errors.name(code)));
            }
            return;
        }
        s.pending.addLast(new ShardSlot.PendingWrite(base + records.size(), deadlineMs, future, response));
        checkCommitted(s);
    }

    /** One uncompressed batch of {@code records} (offsetDelta = index), timestamps {@code nowMs}. */
    static ByteBuf batchOf(List<CoordinatorRecord> records, long nowMs) {
        int size = RecordBatchBuilder.batchOverheadBytes();
        for (CoordinatorRecord r : records) {
            size += RecordBatchBuilder.recordSizeInBytes(
                    r.key().length, r.value() == null ? -1 : r.value().length, List.of());
        }
        ByteBuf out = Unpooled.buffer(size);
        RecordBatchBuilder b = new RecordBatchBuilder(out, nowMs);
        for (CoordinatorRecord r : records) {
            b.append(nowMs, r.key(), r.value());
        }
        b.close();
        return out;
    }

    /** Answers the pending writes the high watermark passed; fails them all when leadership moved. */
    private void checkCommitted(ShardSlot<S> s) {
        if (slots.get(s.partitionIndex) != s || !s.loaded) {
            return;
        }
        if (!s.stillLeading()) {
            drop(s, Errors.NOT_COORDINATOR, "leadership moved");
            return;
        }
        Partition p = s.partition;
        if (!s.pending.isEmpty() && p.inSyncReplicaCount() < p.minInsyncReplicas()) {
            failPending(s, Errors.COORDINATOR_NOT_AVAILABLE, "ISR below min.insync.replicas");
            return;
        }
        long hw = p.highWatermark();
        ShardSlot.PendingWrite w;
        while ((w = s.pending.peekFirst()) != null && w.endOffset() <= hw) {
            s.pending.pollFirst();
            if (w.future() != null) {
                w.future().complete(w.response());
            }
        }
    }

    // ---------------------------------------------------------------- timers

    /** Publishes each loaded shard's entry count, at most once per {@link #PUBLISH_INTERVAL_NS}. */
    private void publishEntryCounts() {
        long nowNs = System.nanoTime();
        if (nowNs - nextPublishNs < 0) {
            return;
        }
        nextPublishNs = nowNs + PUBLISH_INTERVAL_NS;
        for (ShardSlot<S> s : slots.values()) {
            if (owns(s) && s.loaded) {
                s.publishedEntryCount = s.shard.entryCount();
            }
        }
    }

    /** Runs what is due at {@code nowMs}; returns the earliest next deadline (Long.MAX_VALUE: none). */
    private long runTimers(long nowMs) {
        long next = Long.MAX_VALUE;
        for (ShardSlot<S> s : slots.values()) {
            if (!owns(s)) {
                continue;
            }
            if (!s.loaded) {
                if (s.retryLoadAtMs <= nowMs) {
                    s.retryLoadAtMs = Long.MAX_VALUE;
                    execute(() -> loadStep(s));
                }
                next = Math.min(next, s.retryLoadAtMs);
                continue;
            }
            ShardSlot.PendingWrite w;
            while ((w = s.pending.peekFirst()) != null && w.deadlineMs() <= nowMs) {
                s.pending.pollFirst();
                if (w.future() != null) {
                    w.future()
                            .completeExceptionally(new CoordinatorException(
                                    Errors.COORDINATOR_NOT_AVAILABLE,
                                    s + ": not committed within " + config.commitTimeoutMs() + " ms"));
                }
            }
            if (w != null) {
                next = Math.min(next, w.deadlineMs());
            }
            if (s.shard.nextDeadlineMs() <= nowMs) {
                CoordinatorResult<Void> r;
                try {
                    r = s.shard.poll(nowMs);
                } catch (RuntimeException e) {
                    LOG.error("Coordinator shard {} poll failed", s, e);
                    reload(s, "poll failed: " + e);
                    continue;
                }
                appendAndAwait(s, r.records(), null, null, null);
                if (!s.loaded) {
                    continue;
                }
            }
            next = Math.min(next, s.shard.nextDeadlineMs());
        }
        return next;
    }

    @Override
    public String toString() {
        return name;
    }
}
