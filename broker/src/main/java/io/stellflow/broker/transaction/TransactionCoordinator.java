package io.stellflow.broker.transaction;

import io.stellflow.broker.config.TransactionCoordinatorConfig;
import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.CoordinatorRuntimeConfig;
import io.stellflow.broker.coordinator.CoordinatorShardFactory;
import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.broker.transaction.TransactionStateMachine.InitResult;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.protocol.Errors;
import java.time.InstantSource;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transaction coordinator of this broker: a {@link CoordinatorRuntime} over {@code
 * __transaction_state} whose shards are {@link TransactionStateMachine}s, the {@link
 * TransactionMarkerWriter} that ends transactions in their partitions, and a sweeper thread ({@code
 * sf-txn-sweeper}) that re-sends markers of transactions left in PREPARE (after a load, a timeout
 * abort or a failed write) every {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}
 * and right after each load, and {@value #CLAIM_RETRY_MS} ms after a command that claimed markers
 * failed before its answer (its write not committed).
 *
 * <p>Requests of one transactional id are serialized: they run one after the other on the thread of
 * its partition. A request whose connection closed before it ran is dropped (its future completes
 * with null, nothing written), so a delayed Begin or End cannot act on a later transaction.
 *
 * <p>Futures complete on a runtime or writer thread: dependents must be short. Failures complete
 * them with a {@link CoordinatorException} ({@code NOT_COORDINATOR}, {@code COORDINATOR_NOT_AVAILABLE}).
 *
 * <p>Thread-safety: every public method from any thread.
 */
public final class TransactionCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionCoordinator.class);

    /**
     * A marker write not completed within this long counts as failed (released, sent again by the
     * sweeper), so a writer that never answers cannot leave a transaction in PREPARE for good: 30 s is
     * the clients' default Produce request timeout, the longest a partition leader should need.
     */
    static final long MARKER_WRITE_TIMEOUT_MS = 30_000;

    /**
     * Longest pause before a partition whose claim was released is swept again: a claim is released
     * when its command's write was not committed (the ISR below {@code min.insync.replicas}, or the
     * high watermark stalled for {@code offsets.commit.timeout.ms}), as after a restart of every
     * broker, and the markers should go out within about a second of the partition committing again,
     * not at the next cleanup interval (10 s by default). Each try writes one record per transaction
     * in PREPARE, so a partition that cannot commit for minutes gets about one small batch a second.
     */
    static final long CLAIM_RETRY_MS = 1_000;

    /** Completions before InitProducerId gives up with CONCURRENT_TRANSACTIONS (another instance raced). */
    private static final int MAX_INIT_ATTEMPTS = 3;

    private final CoordinatorRuntime<TransactionStateMachine> runtime;
    private final IntSupplier partitionCount;
    private volatile TransactionMarkerWriter writer;
    private final LongSupplier producerIds;
    private final TransactionCoordinatorConfig config;
    private final ScheduledExecutorService sweeper;
    /** Claim ids ({@link TransactionStateMachine#claimAs}), unique for this coordinator's life. */
    private final AtomicLong claimIds = new AtomicLong();
    /** Partitions with a sweep scheduled after a released claim: at most one each, however many failed. */
    private final Set<Integer> retrying = ConcurrentHashMap.newKeySet();
    /** The last positive partition count of {@code __transaction_state} seen ({@link #coordinatesNow}); 0 before. */
    private volatile int knownPartitionCount;

    /**
     * Builds the coordinator; {@link #start} starts its threads.
     *
     * @param partitionCount the partition count of {@code __transaction_state}, creating it when
     *     missing; &lt;= 0 while it cannot be had (answered COORDINATOR_NOT_AVAILABLE)
     * @param producerIds a fresh producer id, or -1 when the controller gave none ({@code
     *     ProducerIdBlocks::nextProducerId}); may block for a controller round trip, so it is never
     *     called on a runtime thread
     */
    public TransactionCoordinator(
            TransactionCoordinatorConfig config,
            CoordinatorRuntimeConfig runtimeConfig,
            InstantSource clock,
            IntSupplier partitionCount,
            TransactionMarkerWriter writer,
            LongSupplier producerIds) {
        this.config = config;
        this.partitionCount = partitionCount;
        this.writer = writer;
        this.producerIds = producerIds;
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sf-txn-sweeper");
            t.setDaemon(true);
            return t;
        });
        CoordinatorShardFactory<TransactionStateMachine> factory = new CoordinatorShardFactory<>() {
            @Override
            public TransactionStateMachine create(int partition) {
                return create(partition, -1);
            }

            @Override
            public TransactionStateMachine create(int partition, int leaderEpoch) {
                return new TransactionStateMachine(config, leaderEpoch, TransactionCoordinator.this::transactionalIds);
            }
        };
        this.runtime = new CoordinatorRuntime<>(
                TransactionStateTopic.NAME,
                factory,
                runtimeConfig,
                clock,
                (partition, records, durationMs) -> sweepSoon(partition));
    }

    /**
     * Replaces the marker writer: the broker installs its {@link BrokerMarkerWriter}, tests a fake.
     * Markers handed out before the call go to the old writer.
     */
    public void markerWriter(TransactionMarkerWriter writer) {
        this.writer = writer;
    }

    /** The runtime, to register for leadership changes of {@code __transaction_state}. */
    public CoordinatorRuntime<TransactionStateMachine> runtime() {
        return runtime;
    }

    /** Starts the runtime and the sweeper. */
    public void start() {
        runtime.start();
        long every = config.cleanupIntervalMs();
        sweeper.scheduleWithFixedDelay(this::sweepAll, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * The transactional ids of the {@code __transaction_state} partitions loaded here, what {@code
     * transactional.id.max.per.broker} bounds (and {@code stellflow.coordinator.transactional_id.count}
     * reports): read now, so exact on the runtime thread. Any thread.
     */
    public long transactionalIds() {
        return runtime.loadedSum(TransactionStateMachine::entryCount);
    }

    /** The partition of {@code transactionalId}, or the negated code when the topic cannot be had. */
    public int partitionOf(String transactionalId) {
        int count = partitionCount.getAsInt();
        if (count <= 0) {
            return -Errors.COORDINATOR_NOT_AVAILABLE;
        }
        knownPartitionCount = count;
        return GroupPartitioner.partitionFor(transactionalId, count);
    }

    /**
     * Whether {@code transactionalId} is coordinated by a loaded shard here now, as far as can be
     * told without blocking (the partition count {@link #partitionOf} last saw, no topic creation):
     * then a command for it only queues on a runtime thread, which an event loop may do. A hint: it
     * may change at once, and the command itself routes again.
     */
    public boolean coordinatesNow(String transactionalId) {
        int count = knownPartitionCount;
        return count > 0 && runtime.status(GroupPartitioner.partitionFor(transactionalId, count)) == Errors.NONE;
    }

    /**
     * InitProducerId with a transactional id: the id's producer id and its new epoch. An open
     * transaction is aborted first (its markers written and COMPLETE_ABORT committed).
     *
     * @param open whether the request's connection is still open when the command runs
     * @return the response to send, or null when the connection had closed
     */
    public CompletableFuture<InitResult> initProducerId(String transactionalId, BooleanSupplier open) {
        return initProducerId(transactionalId, -1, open);
    }

    /**
     * As {@link #initProducerId(String, BooleanSupplier)} with the producer's transaction timeout
     * (InitProducerId v1; -1: {@code transaction.default.timeout.ms}).
     */
    public CompletableFuture<InitResult> initProducerId(
            String transactionalId, int transactionTimeoutMs, BooleanSupplier open) {
        int p = partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.completedFuture(InitResult.error((short) -p));
        }
        return init(p, transactionalId, transactionTimeoutMs, open, 1);
    }

    private CompletableFuture<InitResult> init(
            int p, String transactionalId, int timeoutMs, BooleanSupplier open, int attempt) {
        long candidate = producerIds.getAsLong();
        return claiming(
                        p,
                        (TransactionStateMachine s, long now) -> open.getAsBoolean()
                                ? s.initProducerId(transactionalId, candidate, timeoutMs, now)
                                : CoordinatorResult.<InitResult>of(null))
                .thenCompose(r -> {
                    if (r == null || r.completeFirst() == null) {
                        return CompletableFuture.completedFuture(r);
                    }
                    if (attempt >= MAX_INIT_ATTEMPTS) {
                        // The markers were claimed by this attempt: they are still written (a failure
                        // releases them for the sweeper), only the client is told to try again.
                        complete(p, r.completeFirst()).exceptionally(x -> null);
                        return CompletableFuture.completedFuture(InitResult.error(Errors.CONCURRENT_TRANSACTIONS));
                    }
                    // The next attempt may ask the controller for a producer id: off the runtime thread.
                    return complete(p, r.completeFirst())
                            .thenComposeAsync(done -> init(p, transactionalId, timeoutMs, open, attempt + 1), sweeper);
                });
    }

    /** BeginTransaction; null when the connection had closed. */
    public CompletableFuture<TxnResult> beginTransaction(
            String transactionalId, long producerId, short epoch, BooleanSupplier open) {
        int p = partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.completedFuture(TxnResult.error((short) -p));
        }
        return runtime.submit(
                p,
                (TransactionStateMachine s, long now) -> open.getAsBoolean()
                        ? s.beginTransaction(transactionalId, producerId, epoch, now)
                        : CoordinatorResult.<TxnResult>of(null));
    }

    /**
     * EndTransaction: answered once the transaction is COMPLETE_COMMIT or COMPLETE_ABORT (its markers
     * written), so the next Begin never meets CONCURRENT_TRANSACTIONS; null when the connection had
     * closed. A marker write that fails answers COORDINATOR_NOT_AVAILABLE and is retried by the
     * sweeper. So does an End whose PREPARE record is not committed in time: its markers are sent
     * once the partition commits again ({@link #claiming}).
     */
    public CompletableFuture<TxnResult> endTransaction(
            String transactionalId, long producerId, short epoch, boolean commit, BooleanSupplier open) {
        return endTransaction(transactionalId, producerId, epoch, commit, -1L, open);
    }

    /**
     * EndTransaction v1: as above, for the transaction of {@code transactionSequence} only (-1: v0, not
     * checked); another sequence is {@code INVALID_TXN_STATE}.
     *
     * <p>v1 is answered once every marker is written (committed in its partition) and the COMPLETE_*
     * command is queued on the id's runtime thread, without waiting for that command to run or for
     * its record to commit (v0 waits for the commit, as before). Safe because: the outcome is final
     * once the PREPARE record and the markers are committed (COMPLETE_* only records that nothing is
     * left to do; a coordinator that loads PREPARE_* sends the same markers again, which is harmless);
     * the producer's next request (Begin, Init, End) arrives after this answer, so it is queued
     * behind the COMPLETE command on the same thread and sees COMPLETE_*, and its own record is
     * appended after COMPLETE's, so its commit implies COMPLETE's. Only if COMPLETE's write fails
     * (the shard reloads PREPARE_*, the sweeper completes it) can that request meet PREPARE_* and get
     * {@code CONCURRENT_TRANSACTIONS}, which our producer retries; the Go SDK (v0) does not, so v0
     * keeps waiting.
     */
    public CompletableFuture<TxnResult> endTransaction(
            String transactionalId,
            long producerId,
            short epoch,
            boolean commit,
            long transactionSequence,
            BooleanSupplier open) {
        int p = partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.completedFuture(TxnResult.error((short) -p));
        }
        return claiming(
                        p,
                        (TransactionStateMachine s, long now) -> open.getAsBoolean()
                                ? s.endTransaction(transactionalId, producerId, epoch, commit, transactionSequence, now)
                                : CoordinatorResult.<TxnResult>of(null))
                .thenCompose(r -> {
                    if (r == null || r.markers() == null) {
                        return CompletableFuture.completedFuture(r);
                    }
                    TransactionState done = commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
                    TxnResult answer = new TxnResult(Errors.NONE, done, r.transactionSequence(), null);
                    if (transactionSequence < 0) {
                        return complete(p, r.markers()).thenApply(c -> answer); // v0: after COMPLETE commits
                    }
                    return completeQueued(p, r.markers()).thenApply(completed -> answer);
                });
    }

    /** The partition leader's registration before a transactional append ({@link TransactionStateMachine#registerPartition}). */
    public CompletableFuture<TxnResult> registerPartition(
            String transactionalId,
            long producerId,
            short epoch,
            long transactionSequence,
            TransactionPartition partition) {
        int p = partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.completedFuture(TxnResult.error((short) -p));
        }
        return runtime.submit(
                p,
                (TransactionStateMachine s, long now) ->
                        s.registerPartition(transactionalId, producerId, epoch, transactionSequence, partition, now));
    }

    /**
     * Every transactional id of the {@code __transaction_state} partitions loaded here (ListTransactions).
     * A partition that moves away meanwhile is left out (its new coordinator lists it).
     *
     * @return the ids, in no particular order (a partition still loading is not listed yet)
     */
    public CompletableFuture<List<TransactionView>> listTransactions() {
        int[] partitions = runtime.loadedPartitions();
        List<CompletableFuture<List<TransactionView>>> parts = new java.util.ArrayList<>(partitions.length);
        for (int p : partitions) {
            parts.add(runtime.read(p, TransactionStateMachine::transactions));
        }
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).handle((v, e) -> {
            List<TransactionView> all = new java.util.ArrayList<>();
            for (CompletableFuture<List<TransactionView>> f : parts) {
                if (!f.isCompletedExceptionally()) {
                    all.addAll(f.join());
                }
            }
            return all;
        });
    }

    /**
     * {@code transactionalId}'s state at this coordinator (DescribeTransactions): null when its
     * coordinator has no such id; fails with a {@link CoordinatorException} ({@code NOT_COORDINATOR},
     * {@code COORDINATOR_NOT_AVAILABLE}) when it is not coordinated here.
     */
    public CompletableFuture<TransactionView> describeTransaction(String transactionalId) {
        int p = partitionOf(transactionalId);
        if (p < 0) {
            return CompletableFuture.failedFuture(
                    new CoordinatorException((short) -p, "no " + TransactionStateTopic.NAME + " yet"));
        }
        return runtime.read(p, s -> s.transactionView(transactionalId));
    }

    /**
     * Writes {@code markers} and then records COMPLETE_*. A failed write releases the claim (the
     * sweeper sends them again) and fails the future with COORDINATOR_NOT_AVAILABLE.
     */
    CompletableFuture<TxnResult> complete(int p, TransactionMarkerRequest markers) {
        return completeQueued(p, markers).thenCompose(committed -> committed);
    }

    /**
     * As {@link #complete}, but completes as soon as the markers are written and the COMPLETE_*
     * command is queued on the runtime thread of {@code p}, with the future of that command's commit
     * (a COMPLETE that fails leaves PREPARE_* in the log: the reload's sweep, or the next coordinator's,
     * completes it). A failed marker write fails it as {@link #complete}.
     */
    private CompletableFuture<CompletableFuture<TxnResult>> completeQueued(int p, TransactionMarkerRequest markers) {
        CompletableFuture<Void> written;
        try {
            written = writer.writeMarkers(markers);
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        return written.copy() // the timeout must not complete the writer's own future
                .orTimeout(MARKER_WRITE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .handle((v, e) -> e)
                .thenCompose(e -> {
                    if (e != null) {
                        LOG.warn(
                                "Markers of transactional id {} (producer {}, sequence {}) not written, retried later: {}",
                                markers.transactionalId(),
                                markers.producerId(),
                                markers.transactionSequence(),
                                e.toString());
                        runtime.submit(
                                p,
                                s -> s.releaseCompletion(
                                        markers.transactionalId(),
                                        markers.producerId(),
                                        markers.transactionSequence()));
                        return CompletableFuture.<CompletableFuture<TxnResult>>failedFuture(new CoordinatorException(
                                Errors.COORDINATOR_NOT_AVAILABLE, "transaction markers not written"));
                    }
                    return CompletableFuture.completedFuture(runtime.submit(
                            p,
                            (TransactionStateMachine s, long now) -> s.completeTransaction(
                                    markers.transactionalId(),
                                    markers.producerId(),
                                    markers.transactionSequence(),
                                    now)));
                });
    }

    /**
     * Submits {@code command}, one that may claim transactions (hand out their markers: End,
     * InitProducerId, a sweep), under a fresh claim id. When its answer is lost (it failed: its write
     * not committed within {@code offsets.commit.timeout.ms}, the ISR below {@code
     * min.insync.replicas}, the shard reloaded), nobody will write the markers it claimed: they are
     * released ({@link TransactionStateMachine#releaseClaim}) and the partition is swept again after
     * {@link #CLAIM_RETRY_MS}. Without this such a transaction stayed in PREPARE, refused to its
     * producer as CONCURRENT_TRANSACTIONS and skipped by every sweep, with the last stable offset of
     * each of its partitions pinned until the coordinator moved (the LSO held after a restart of all
     * brokers, issue #20).
     */
    private <T> CompletableFuture<T> claiming(int p, CoordinatorRuntime.Command<TransactionStateMachine, T> command) {
        long id = claimIds.incrementAndGet();
        CompletableFuture<T> answer = runtime.submit(p, (TransactionStateMachine s, long now) -> {
            s.claimAs(id);
            try {
                return command.apply(s, now);
            } finally {
                s.claimAs(0);
            }
        });
        answer.whenComplete((r, e) -> {
            if (e != null) {
                releaseClaim(p, id, e);
            }
        });
        return answer;
    }

    private void releaseClaim(int p, long id, Throwable why) {
        runtime.submit(p, s -> s.releaseClaim(id)).whenComplete((Integer released, Throwable e) -> {
            if (e != null || released == 0) {
                return; // not coordinated here any more (its next coordinator loads them), or nothing claimed
            }
            LOG.warn(
                    "Markers of {} transaction(s) of {}-{} claimed by a command that failed ({}); swept again in {} ms",
                    released,
                    TransactionStateTopic.NAME,
                    p,
                    why.toString(),
                    CLAIM_RETRY_MS);
            if (!retrying.add(p)) {
                return; // a sweep is already due: it claims these too
            }
            try {
                sweeper.schedule(
                        () -> {
                            retrying.remove(p);
                            sweep(p);
                        },
                        CLAIM_RETRY_MS,
                        TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException x) {
                retrying.remove(p);
                LOG.debug("No sweep of {}-{}: closing", TransactionStateTopic.NAME, p);
            }
        });
    }

    /** Sweeps {@code partition} on the sweeper thread (called on the runtime thread after a load). */
    private void sweepSoon(int partition) {
        try {
            sweeper.execute(() -> sweep(partition));
        } catch (RejectedExecutionException e) {
            LOG.debug("No sweep of {}-{}: closing", TransactionStateTopic.NAME, partition);
        }
    }

    /** Re-sends the markers of every PREPARE transaction of the partitions loaded here. */
    void sweepAll() {
        try {
            for (int p : runtime.loadedPartitions()) {
                sweep(p);
            }
        } catch (RuntimeException e) {
            LOG.error("Transaction sweep failed; the next one runs as scheduled", e); // a bug: keep sweeping
        }
    }

    /** Claims the PREPARE transactions of {@code p} nobody is completing and completes them. */
    void sweep(int p) {
        claiming(p, (TransactionStateMachine s, long now) -> s.claimCompletions())
                .whenComplete((List<TransactionMarkerRequest> list, Throwable e) -> {
                    if (e != null) {
                        return; // not (or no longer) coordinated here, or released by claiming()
                    }
                    for (TransactionMarkerRequest m : list) {
                        complete(p, m).exceptionally(x -> null); // logged in complete; claimed again next sweep
                    }
                });
    }

    /** Stops the sweeper and the runtime (waiting commands fail with COORDINATOR_NOT_AVAILABLE). Idempotent. */
    @Override
    public void close() {
        sweeper.shutdownNow();
        runtime.close();
    }
}
