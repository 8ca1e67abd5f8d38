package io.stellflow.broker.coordinator;

import io.stellflow.broker.cluster.ReplicaStateListener;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.watchdog.ThreadWatchdog;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.protocol.Errors;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The coordinator runtime of one internal topic ({@code __consumer_offsets}): one {@link
 * CoordinatorShard} per partition this broker leads, each owned by one of {@code threads} runtime
 * threads (partition {@code p} on thread {@code p % threads}), commands through that thread's queue
 * ({@code ../shared/DESIGN.md} §7).
 *
 * <p>Leadership (a {@link ReplicaStateListener}, told by the replica manager on the metadata thread):
 * on becoming leader of a partition at a leader epoch, a new shard is made by the factory and loaded
 * from the partition's log, log start to log end, in steps ({@link CoordinatorShard#replay} per
 * record, then {@link CoordinatorShard#onLoaded}); the load takes effect only if the broker still
 * leads at the same epoch when it ends, and it is logged ({@code COORDINATOR_LOADED} with records and
 * ms) and reported to the {@link LoadListener}. Meanwhile commands fail with {@code
 * COORDINATOR_NOT_AVAILABLE}. On becoming follower or losing the replica, the shard is dropped:
 * commands fail with {@code NOT_COORDINATOR}, and so do writes still waiting.
 *
 * <p>Writes ({@link #submit}): the command runs on the shard's thread and applies its records to the
 * shard's memory; the records are appended as one batch through the partition's leader append, and
 * the future completes with the response once the high watermark has passed the batch (acks=all), in
 * the order of the writes. A command that writes nothing completes once the writes before it did. A
 * failed append reloads the shard from the log (memory must not hold what the log does not); losing
 * leadership drops it. Reads ({@link #read}) run on the shard's thread without waiting: they may see
 * state not yet committed.
 *
 * <p>Futures complete on the runtime thread: their dependents must be short (encode and send a
 * response). Failures are {@link CoordinatorException}s; an exception thrown by the command itself
 * (a bug) completes the future with it and reloads the shard.
 *
 * <p>Thread-safety: every public method from any thread.
 *
 * @param <S> the shard type
 */
public final class CoordinatorRuntime<S extends CoordinatorShard> implements ReplicaStateListener, AutoCloseable {
    /** Told once per completed load, on the runtime thread. */
    @FunctionalInterface
    public interface LoadListener {
        /**
         * @param partition the loaded partition
         * @param records records replayed
         * @param durationMs wall time from becoming leader (or the reload) to loaded
         */
        void loaded(int partition, long records, long durationMs);

        LoadListener NONE = (partition, records, durationMs) -> {};
    }

    /**
     * A writing command given the runtime clock's time when it runs.
     *
     * @param <S> the shard type
     * @param <T> the response type
     */
    @FunctionalInterface
    public interface Command<S, T> {
        /** Runs on the shard's thread; {@code nowMs} is the runtime clock's time. */
        CoordinatorResult<T> apply(S shard, long nowMs);
    }

    private final String topic;
    private final ConcurrentHashMap<Integer, ShardSlot<S>> slots = new ConcurrentHashMap<>();
    private final CoordinatorThread<S>[] threads;
    private volatile boolean closed;

    /**
     * Builds the runtime; {@link #start} starts its threads.
     *
     * @param topic the coordinator topic; transitions of other topics' partitions are ignored
     * @param factory makes a partition's empty shard
     * @param config threads, commit timeout, load step size
     * @param clock the shards' time ({@code nowMs} of commands, polls and deadlines)
     * @param loadListener told of each completed load (a histogram)
     */
    @SuppressWarnings("unchecked")
    public CoordinatorRuntime(
            String topic,
            CoordinatorShardFactory<S> factory,
            CoordinatorRuntimeConfig config,
            InstantSource clock,
            LoadListener loadListener) {
        this.topic = topic;
        this.threads = new CoordinatorThread[config.threads()];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = new CoordinatorThread<>(
                    "sf-coordinator-" + topic + "-" + i, slots, factory, clock, config, loadListener);
        }
    }

    /** Starts the runtime threads. */
    public void start() {
        for (CoordinatorThread<S> t : threads) {
            t.start();
        }
    }

    /**
     * Puts the runtime threads under {@code watchdog} ({@code broker.thread.stall.timeout.ms}): a
     * probe task goes through each thread's queue at every check, so a thread stuck in a command or a
     * load step is reported and the broker asks to be fenced (its partitions then move to another
     * coordinator). A runtime thread only ends at {@link #close}, so none is restarted.
     */
    public void watch(ThreadWatchdog watchdog) {
        for (CoordinatorThread<S> t : threads) {
            watchdog.watchExecutor(
                    t.toString(), "CoordinatorRuntime", task -> t.execute(task::run), false, () -> closed);
        }
    }

    /** The coordinator topic. */
    public String topic() {
        return topic;
    }

    private CoordinatorThread<S> threadOf(int partition) {
        return threads[partition % threads.length];
    }

    /**
     * Runs {@code command} on the shard of {@code partition}; its records are appended as one batch.
     *
     * @return completes with the command's response once its records are below the high watermark,
     *     or exceptionally with a {@link CoordinatorException} ({@code NOT_COORDINATOR}: not led here;
     *     {@code COORDINATOR_NOT_AVAILABLE}: loading, append failed, not committed in time, closing)
     */
    public <T> CompletableFuture<T> submit(int partition, Function<S, CoordinatorResult<T>> command) {
        return submit(partition, (Command<S, T>) (shard, nowMs) -> command.apply(shard));
    }

    /** As {@link #submit(int, Function)}, for a command that needs the runtime clock's time. */
    public <T> CompletableFuture<T> submit(int partition, Command<S, T> command) {
        CompletableFuture<T> f = new CompletableFuture<>();
        threadOf(partition).execute(new CoordinatorThread.Task() {
            @Override
            public void run() {
                threadOf(partition).write(partition, command, f);
            }

            @Override
            public void reject(short errorCode) {
                f.completeExceptionally(new CoordinatorException(errorCode, "coordinator runtime closed"));
            }
        });
        return f;
    }

    /**
     * Runs the read-only {@code query} on the shard of {@code partition} (it must not change the
     * shard: nothing is written).
     *
     * @return completes with the query's result, or exceptionally as {@link #submit}
     */
    public <T> CompletableFuture<T> read(int partition, Function<S, T> query) {
        CompletableFuture<T> f = new CompletableFuture<>();
        threadOf(partition).execute(new CoordinatorThread.Task() {
            @Override
            public void run() {
                threadOf(partition).read(partition, query, f);
            }

            @Override
            public void reject(short errorCode) {
                f.completeExceptionally(new CoordinatorException(errorCode, "coordinator runtime closed"));
            }
        });
        return f;
    }

    /**
     * Whether this broker coordinates {@code partition} now (a hint: it may change at once).
     *
     * @return {@link Errors#NONE} loaded here, {@link Errors#COORDINATOR_NOT_AVAILABLE} led here and
     *     loading, {@link Errors#NOT_COORDINATOR} not led here (as far as the runtime knows)
     */
    public short status(int partition) {
        ShardSlot<S> s = slots.get(partition);
        if (s == null) {
            return Errors.NOT_COORDINATOR;
        }
        return s.loaded ? Errors.NONE : Errors.COORDINATOR_NOT_AVAILABLE;
    }

    /** The partitions loaded here now, ascending (a snapshot: it may change at once). */
    public int[] loadedPartitions() {
        return slots.values().stream()
                .filter(s -> s.loaded)
                .mapToInt(s -> s.partitionIndex)
                .sorted()
                .toArray();
    }

    /**
     * The sum of {@link CoordinatorShard#entryCount} over the shards loaded here (for groups: {@code
     * stellflow.coordinator.group.count}), as their threads last published it: at the end of each
     * load and then about once a second, so up to about two seconds old. Any thread; no allocation
     * and never touches shard state.
     */
    public long loadedEntryCount() {
        long n = 0;
        for (ShardSlot<S> s : slots.values()) {
            if (s.loaded) {
                n += s.publishedEntryCount;
            }
        }
        return n;
    }

    /**
     * The sum of {@code count} over the shards loaded here, read now (not as published): exact for
     * the shards of the calling runtime thread, possibly a moment old for those of other threads.
     * Any thread; {@code count} must be cheap and safe to call on a shard another thread owns (a
     * field read), and must not allocate.
     */
    public long loadedSum(ToLongFunction<S> count) {
        long n = 0;
        for (ShardSlot<S> s : slots.values()) {
            if (s.loaded) {
                n += count.applyAsLong(s.shard);
            }
        }
        return n;
    }

    /** Wakes every runtime thread to look at its timers (after a test moved the injected clock). */
    public void wakeup() {
        for (CoordinatorThread<S> t : threads) {
            t.wakeup();
        }
    }

    @Override
    public void onBecomeLeader(Partition partition, PartitionImage state) {
        if (!partition.topic().equals(topic)) {
            return;
        }
        int index = partition.partition();
        int epoch = state.leaderEpoch();
        threadOf(index).execute(() -> threadOf(index).becomeLeader(index, partition, epoch));
    }

    @Override
    public void onBecomeFollower(Partition partition, PartitionImage state) {
        resign(partition);
    }

    @Override
    public void onStopReplica(Partition partition) {
        resign(partition);
    }

    private void resign(Partition partition) {
        if (!partition.topic().equals(topic)) {
            return;
        }
        int index = partition.partition();
        threadOf(index).execute(() -> threadOf(index).resign(index, partition));
    }

    /** Stops the threads; waiting and queued commands fail with COORDINATOR_NOT_AVAILABLE. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (CoordinatorThread<S> t : threads) {
            t.close();
        }
    }
}
