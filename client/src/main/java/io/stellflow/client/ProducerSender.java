package io.stellflow.client;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer's sender thread: drains the ready batches of the accumulator ({@link
 * ProducerAccumulator}) into Produce requests, handles their responses (completion, retry, failure),
 * refreshes metadata for unknown or stale leaders and, with {@code enable.idempotence}, gets the
 * producer id.
 *
 * <p>The sender groups ready partitions by leader into Produce requests of at most {@code
 * max.request.size} record bytes (whole batches; several batches of a partition go back to back in
 * one RecordBatchSet), with at most {@code max.in.flight.requests.per.connection} requests
 * outstanding per broker; a partition may be in several of them (pipelined on one connection).
 *
 * <p>Ordering: requests go out on one connection per broker and the broker processes a
 * connection's Produce requests in order, so without errors a partition's batches are appended in
 * send order. A retried batch (codes 7, 8, 9, 10 or a network error; after a metadata refresh and
 * {@code retry.backoff.ms}, doubling per attempt up to {@code retry.backoff.max.ms}) goes back into its partition's queue at its place in the send order
 * (every batch has a per-partition sequence), and the partition sends nothing more until all of
 * its requests in flight have come back; then the queue is resent from the head, in order. So
 * order holds when every in-flight request of the partition fails together (a closed connection
 * fails them all; a leader change answers them all 6/9). What can reorder, exactly as Kafka without
 * idempotence with more than one request in flight: request N fails retriably while request N+1,
 * already sent, succeeds; batch N is then appended after N+1. And, as in Kafka without idempotence,
 * a request appended by the broker whose response was lost is appended again on retry (duplicate).
 * {@code max.in.flight.requests.per.connection=1} rules out the reordering.
 *
 * <p>A batch of several records that the broker refuses alone with {@code MESSAGE_TOO_LARGE} (above
 * the topic's {@code max.message.bytes}, else the broker's {@code message.max.bytes}, or above it
 * once the topic's {@code compression.type} recompressed it) is split in two by record count, as Kafka's producer does ({@link ProducerSplits}: the sender
 * thread builds the halves outside the lock, {@link ProducerAccumulator#splitLocked} puts them in
 * place; those of a transaction that began to abort meanwhile fail unsent): the halves take its place in the send order and, with
 * idempotence, its sequences; a half refused again is halved again, and a single record still
 * refused fails. When a refused request held several batches of the partition, they are sent again
 * one per request first, so that a refusal names its batch. Until they and their parts are
 * answered the partition has one request in flight at a time, so a part refused again is split
 * before any later record is appended (order holds without idempotence too, once the requests in
 * flight at the refusal are back, as for a retry). Each split counts in the retry metric but, as
 * in Kafka's producer, not against {@code retries}: halving ends at one record.
 *
 * <p>With {@code enable.idempotence} ({@link ProducerIdempotence}) neither can happen: nothing is
 * sent before InitProducerId gave a producer id, a request carries at most one batch per partition,
 * stamped with the id and its sequence when first drained and kept for retries; the broker refuses a
 * batch that arrives before an earlier one ({@code OUT_OF_ORDER_SEQUENCE_NUMBER}, retried here in
 * order behind it) and answers a retry of an appended batch with its original offset.
 *
 * <p>A transactional producer's records are drained only while its transaction can commit: from
 * the moment it aborts, becomes abortable or is fenced ({@link ProducerTransactions#unsentError},
 * read under the lock), every batch the sender still holds fails with that error instead (a retry,
 * one compressed meanwhile, one waiting to be split).
 *
 * <p>Close: {@link #initiateClose} lets the loop send everything and end once every batch is done;
 * {@link #forceClose} (the producer's close timeout passed) ends it at once, and this thread then
 * fails every batch left, those in flight included, with "producer is closed forcefully" ({@link
 * #failIncompleteAfterForcedClose}).
 *
 * <p>Owns: the accumulator, the requests in flight ({@link #inFlightRequests}, counted per broker),
 * the batches waiting to be split ({@link ProducerSplits}) and the metadata refresh state. The
 * producer's calls on the accumulator ({@link #append}, {@link #flush}, {@link #failUnsent} ...) go
 * through this class.
 *
 * <p>Thread-safety: its mutable fields are guarded by the accumulator's lock ({@link
 * ProducerAccumulator#lock}), one lock for both so the wake-ups stay one condition; the loop runs on
 * its own thread, responses arrive on the I/O thread, the other methods are called by application
 * threads.
 */
final class ProducerSender implements Runnable {
    /** Produce v1 (docs/protocol-additions.md): v0 bytes, responses may carry codes 32..34. */
    static final short PRODUCE_VERSION = 1;

    /** Produce v2 (docs/protocol-additions.md): v1 plus the transaction sequence; transactional producers only. */
    static final short TXN_PRODUCE_VERSION = 2;

    private static final Logger LOG = LoggerFactory.getLogger(ProducerSender.class);

    /**
     * At most one retry WARN per partition this often. 5 s: a partition retrying NOT_ENOUGH_REPLICAS
     * every 1 s ({@code retry.backoff.max.ms}) for the default 120 s {@code delivery.timeout.ms}
     * logs 24 lines instead of 124, and the first one comes at the first retry.
     */
    static final long RETRY_WARN_INTERVAL_NS = TimeUnit.SECONDS.toNanos(5);

    private final ProducerConfig config;
    /** The per-partition queues, and the lock that guards them and this sender's state. */
    private final ProducerAccumulator accumulator;
    /** {@code enable.idempotence}: the producer id and sequences (shared with the accumulator); null when off. */
    private final ProducerIdempotence idempotence;

    /**
     * With {@code transactional.id}: told of every batch that fails (the transaction can then only
     * abort), and the source of the transaction sequence Produce v2 carries; null otherwise.
     */
    private volatile ProducerTransactions transactions;

    private final NetworkClient network;
    private final MetadataCache metadata;
    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

    /** {@link ProducerAccumulator#lock}: guards the accumulator and the three fields below. */
    private final ReentrantLock lock;
    /** {@link ProducerAccumulator#wakeSender}: the loop waits on it for work. */
    private final Condition wakeSender;

    private final Map<HostPort, Integer> inFlightPerBroker = new HashMap<>();

    /**
     * The Produce requests sent and not answered yet (each its batches by partition, the map {@link
     * #onResponse} gets back): a forced close fails their batches, and an answer that comes after
     * that finds its request gone and changes nothing (each batch completes once).
     */
    private final Set<Map<TopicPartition, List<ProducerBatch>>> inFlightRequests =
            Collections.newSetFromMap(new IdentityHashMap<>());
    /** Batches refused as too large whose halves the loop builds next ({@link ProducerSplits}). */
    private final ProducerSplits splits;

    private boolean metadataRefreshInFlight;
    private long lastMetadataRefreshNs;

    /** Tests only ({@link #forcedCloseHook(Runnable)}); a no-op otherwise. */
    private volatile Runnable forcedCloseHook = () -> {};

    ProducerSender(ProducerConfig config, NetworkClient network, MetadataCache metadata) {
        this(config, network, metadata, ProducerCompression.of(config));
    }

    /** With {@code compression} instead of the config's (tests give one whose codec fails); null for none. */
    ProducerSender(
            ProducerConfig config, NetworkClient network, MetadataCache metadata, ProducerCompression compression) {
        this.config = config;
        this.network = network;
        this.metadata = metadata;
        this.idempotence = config.enableIdempotence() ? new ProducerIdempotence() : null;
        this.accumulator = new ProducerAccumulator(config, network.metrics(), compression, idempotence);
        this.lock = accumulator.lock;
        this.wakeSender = accumulator.wakeSender;
        this.splits = new ProducerSplits(config, accumulator, idempotence, network.metrics());
    }

    /** Tests only: {@link ProducerSplits#builtHook}, to hold a split in flight. */
    void splitBuiltHook(Consumer<TopicPartition> hook) {
        splits.builtHook(hook);
    }

    /**
     * Tests only: {@code hook} runs on this thread after a forced close ended the loop and freed the
     * codecs, before the batches left are failed ({@link #failIncompleteAfterForcedClose}), so a test
     * can let other threads run in that window.
     */
    void forcedCloseHook(Runnable hook) {
        this.forcedCloseHook = hook;
    }

    /** Where the batches get their (uncompressed) buffers ({@link ProducerAccumulator#batchBuffers}). */
    ProducerBufferPool batchBuffers() {
        return accumulator.batchBuffers();
    }

    /**
     * The compressor thread's work (compresses sealed batches until the sender ends), or null without
     * compression; the producer runs it on a thread of its own.
     */
    Runnable compressor() {
        return accumulator.compressor();
    }

    /** Appends one record to the accumulator ({@link ProducerAccumulator#append}, which may block). */
    ProducerAccumulator.AppendResult append(
            TopicPartition tp, long timestampMs, byte[] key, byte[] value, Callback callback, boolean abortOnNewBatch)
            throws InterruptedException {
        return accumulator.append(tp, timestampMs, key, value, callback, abortOnNewBatch);
    }

    /** Sends everything accumulated now and waits for it ({@link ProducerAccumulator#flush}). */
    void flush() throws InterruptedException {
        accumulator.flush();
    }

    /** Stops accepting records; the loop exits once everything is acknowledged or failed. */
    void initiateClose() {
        accumulator.initiateClose();
    }

    /**
     * A forced close (the close's timeout passed, or was 0): the loop ends at once and the sender
     * thread fails every batch not acknowledged or failed yet ({@link #failIncompleteAfterForcedClose}),
     * after stopping the compressor thread. Called by the closing thread; idempotent.
     */
    void forceClose() {
        accumulator.forceClose();
    }

    @Override
    public void run() {
        try {
            loop();
        } finally {
            // Stops the compressor thread. From here a buffer given back is freed, not kept for reuse:
            // a request still waiting for its connection whose batch a forced close fails below then
            // fails to encode, rather than send a buffer emptied for reuse.
            accumulator.closeCompressionAndBuffers();
        }
        failIncompleteAfterForcedClose();
    }

    /**
     * After a forced close ended the loop: fails with "producer is closed forcefully" ({@link
     * ProduceErrors#closedForcefully}), on this thread, every batch queued (sealed, waiting for a
     * codec, waiting for a retry), waiting to be split, or in flight (its answer, should it come, is
     * then ignored: {@link #inFlightRequests}). A batch being compressed stays with the thread
     * compressing it, which fails it once its codec returns ({@link ProducerAccumulator#forceClose}).
     * A transaction with a record lost this way can only abort, so a commit waiting in its flush
     * throws instead of committing without them. Each batch fails once: taken under the lock, as
     * every other path that completes a batch takes it.
     */
    private void failIncompleteAfterForcedClose() {
        lock.lock();
        try {
            if (!accumulator.forcedCloseLocked()) {
                return; // a graceful close: every batch is done
            }
        } finally {
            lock.unlock();
        }
        forcedCloseHook.run();
        List<ProducerBatch> unsent = new ArrayList<>();
        List<ProducerBatch> inFlight = new ArrayList<>();
        boolean recordsLost;
        lock.lock();
        try {
            takeUnsentLocked(unsent);
            for (Map<TopicPartition, List<ProducerBatch>> request : inFlightRequests) {
                request.values().forEach(inFlight::addAll);
            }
            inFlightRequests.clear();
            recordsLost = accumulator.hasIncompleteLocked(); // those taken, and any being compressed
        } finally {
            lock.unlock();
        }
        if (recordsLost) {
            batchFailed(StellflowException.NETWORK_ERROR); // before any completes: a commit's flush returns then
        }
        if (!unsent.isEmpty() || !inFlight.isEmpty()) {
            LOG.warn(
                    "producer closed forcefully: {} batch(es) failed, {} of them in flight (their outcome is"
                            + " unknown)",
                    unsent.size() + inFlight.size(),
                    inFlight.size());
        }
        List<ProducerBatch> done = new ArrayList<>(unsent);
        done.addAll(inFlight);
        try {
            for (int i = 0; i < done.size(); i++) {
                ProducerBatch b = done.get(i);
                StellflowException error = ProduceErrors.closedForcefully(b, i >= unsent.size());
                network.metrics().sendFailed(ClientMetrics.result(error.errorCode(), false));
                b.fail(error);
            }
        } finally {
            accumulator.finish(done);
        }
    }

    private void loop() {
        while (true) {
            ProducerTransactions txn = transactions;
            StellflowException unsentError;
            List<ProducerBatch> unsent = new ArrayList<>();
            Map<HostPort, Map<TopicPartition, List<ProducerBatch>>> requests;
            Set<String> unknownLeaders = new HashSet<>();
            List<ProducerBatch> expired = new ArrayList<>();
            List<ProducerBatch> maybeAppended = new ArrayList<>(0);
            List<ProducerSplits.Pending> toSplit = List.of();
            boolean initProducerId = false;
            long wakeupsSeen;
            lock.lock();
            try {
                wakeupsSeen = accumulator.senderWakeupsLocked();
                if (accumulator.closedAndDoneLocked()) {
                    return; // run() stops the compressor thread
                }
                long nowNs = System.nanoTime();
                // Read under the lock, as the abort's failUnsent takes it: a round that saw no error
                // drains only batches queued before the abort began (in flight at its start, which
                // it waits for); from the abort on, nothing of the transaction is drained again.
                unsentError = txn == null ? null : txn.unsentError();
                if (unsentError != null) {
                    takeUnsentLocked(unsent); // the transaction can only abort: nothing more of it goes out
                } else {
                    toSplit = splits.takeLocked();
                }
                accumulator.expire(nowNs, expired);
                accumulator.sealLingeredTails(nowNs);
                requests = unsentError != null
                        ? Map.of()
                        : accumulator.drain(metadata, inFlightPerBroker, nowNs, unknownLeaders, maybeAppended);
                for (Map<TopicPartition, List<ProducerBatch>> request : requests.values()) {
                    inFlightRequests.add(request);
                }
                initProducerId = idempotence != null
                        && !config.transactional() // initTransactions() sets the id
                        && accumulator.hasIncompleteLocked()
                        // A batch waiting to be split holds its stamp: no new id until it is in place.
                        && idempotence.startInit(nowNs, requestsInFlight() + toSplit.size() + splits.waitingLocked());
                if (requests.isEmpty()
                        && expired.isEmpty()
                        && maybeAppended.isEmpty()
                        && unknownLeaders.isEmpty()
                        && !initProducerId
                        && toSplit.isEmpty()
                        && unsent.isEmpty()) {
                    try {
                        wakeSender.awaitNanos(accumulator.nextWakeNs(nowNs, metadata, inFlightPerBroker));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    continue;
                }
            } finally {
                lock.unlock();
            }
            failTaken(unsent, unsentError);
            accumulator.failMaybeAppended(maybeAppended);
            try {
                for (ProducerBatch b : expired) {
                    StellflowException timeout = ProduceErrors.deliveryTimeout(b, config);
                    batchFailed(timeout.errorCode());
                    b.fail(timeout);
                }
            } finally {
                accumulator.finish(expired);
            }
            if (initProducerId) {
                initProducerId();
            }
            if (!unknownLeaders.isEmpty()) {
                refreshMetadata(unknownLeaders);
            }
            requests.forEach(this::sendProduce);
            if (!toSplit.isEmpty()) {
                splits.complete(toSplit, txn); // after the round's sends; their halves go out in the next round
            }
            if (requests.isEmpty()
                    && expired.isEmpty()
                    && maybeAppended.isEmpty()
                    && toSplit.isEmpty()
                    && unsent.isEmpty()) {
                // Only waiting for leaders or a producer id: do not spin while the metadata refresh
                // or InitProducerId is running. Their answer may have come since this round read the
                // state, its wake-up given while no one waited: then go round at once, rather than
                // sleep up to retry.backoff.ms with the answer there (an idempotent producer with a
                // 10 s back-off held its first Produce past a test's 5 s deadline on a loaded machine).
                lock.lock();
                try {
                    if (accumulator.senderWakeupsLocked() == wakeupsSeen) {
                        wakeSender.awaitNanos(TimeUnit.MILLISECONDS.toNanos(
                                Math.max(1, config.common().retryBackoffMs())));
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /** Produce requests in flight to all brokers. Called under {@code lock}. */
    private int requestsInFlight() {
        int n = 0;
        for (int i : inFlightPerBroker.values()) {
            n += i;
        }
        return n;
    }

    /**
     * Sends InitProducerId (null transactionalId) to a broker of the metadata (passing over ones that
     * refuse the connection, {@link MetadataCache#sendToAnyBroker}); the answer sets the producer id
     * or schedules another attempt after {@code retry.backoff.ms} (doubling). Batches wait meanwhile
     * and expire by {@code delivery.timeout.ms}, whose message then names the InitProducerId error. A
     * non-retriable answer (a broker without idempotence) fails the queued batches with it.
     */
    private void initProducerId() {
        metadata.sendToAnyBroker(to -> network.send(
                        to,
                        ApiKeys.INIT_PRODUCER_ID,
                        new InitProducerIdRequest(null)::write,
                        InitProducerIdResponse::read))
                .whenComplete(this::onInitProducerId);
    }

    private void onInitProducerId(InitProducerIdResponse resp, Throwable err) {
        short code = err != null ? ProduceErrors.errorCode(err, null) : resp.errorCode();
        StellflowException failure = null;
        List<ProducerBatch> failed = new ArrayList<>();
        List<ProducerBatch> maybeAppended = List.of();
        lock.lock();
        try {
            if (code == Errors.NONE) {
                maybeAppended = accumulator.initializedLocked(resp.producerId(), resp.producerEpoch());
                LOG.info("idempotent producer id {} epoch {}", resp.producerId(), resp.producerEpoch());
            } else {
                StellflowException cause = ProduceErrors.cause(err, code, "InitProducerId failed");
                idempotence.initFailed(
                        System.nanoTime(),
                        TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs(idempotence.initAttempts() + 1)));
                if (ProducerIdempotence.initRetriable(code)) {
                    accumulator.lastErrorLocked(cause);
                } else {
                    failure = new StellflowException(
                            code,
                            "enable.idempotence=true: InitProducerId failed with " + ProduceErrors.codeName(code)
                                    + " (does the broker offer idempotent producers?)",
                            cause);
                    accumulator.takeAllUnlessCompressingLocked(failed);
                }
            }
            accumulator.wakeSenderLocked();
        } finally {
            lock.unlock();
        }
        accumulator.failMaybeAppended(maybeAppended);
        try {
            for (ProducerBatch b : failed) {
                network.metrics().sendFailed(ClientMetrics.result(code, false));
                b.fail(failure);
            }
        } finally {
            accumulator.finish(failed);
        }
    }

    private void refreshMetadata(Set<String> topics) {
        lock.lock();
        try {
            long nowNs = System.nanoTime();
            if (metadataRefreshInFlight
                    || nowNs - lastMetadataRefreshNs
                            < TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs())) {
                return;
            }
            metadataRefreshInFlight = true;
            lastMetadataRefreshNs = nowNs;
        } finally {
            lock.unlock();
        }
        metadata.refresh(topics).whenComplete((r, err) -> {
            lock.lock();
            try {
                metadataRefreshInFlight = false;
                accumulator.wakeSenderLocked();
            } finally {
                lock.unlock();
            }
        });
    }

    private void sendProduce(HostPort leader, Map<TopicPartition, List<ProducerBatch>> batches) {
        ClientMetrics metrics = network.metrics();
        for (List<ProducerBatch> list : batches.values()) {
            for (ProducerBatch b : list) {
                metrics.batchSent(b.sizeInBytes(), b.recordCount());
            }
        }
        ProducerTransactions txn = transactions;
        if (txn != null) {
            // Produce v2: the transactional id and the transaction's sequence, so a delayed request
            // of this transaction can never join the next one (docs/exactly-once.md).
            String id = config.transactionalId();
            long sequence = txn.transactionSequence();
            network.sendVersioned(
                            leader,
                            ApiKeys.PRODUCE,
                            TXN_PRODUCE_VERSION,
                            v -> new ProduceRequestBody(
                                    batches, config.acks(), config.requestTimeoutMsOnBroker(), alloc, id, sequence, v),
                            v -> ProduceResponse::read)
                    .whenComplete((resp, err) -> onResponse(leader, batches, resp, err));
            return;
        }
        BodyWriter body = new ProduceRequestBody(batches, config.acks(), config.requestTimeoutMsOnBroker(), alloc);
        // v1 when the broker offers it: same bytes, but acks=-1 outcomes arrive as NOT_ENOUGH_REPLICAS,
        // NOT_ENOUGH_REPLICAS_AFTER_APPEND and REQUEST_TIMED_OUT instead of v0's BROKER_NOT_AVAILABLE.
        network.sendNegotiated(leader, ApiKeys.PRODUCE, PRODUCE_VERSION, body, v -> ProduceResponse::read)
                .whenComplete((resp, err) -> onResponse(leader, batches, resp, err));
    }

    // ---------------------------------------------------------------- transactions

    /** Makes this the sender of a transactional producer ({@code transactional.id}). */
    void transactions(ProducerTransactions transactions) {
        this.transactions = transactions;
        accumulator.transactions(transactions);
    }

    private void batchFailed(short code) {
        ProducerTransactions txn = transactions;
        if (txn != null) {
            txn.batchFailed(code);
        }
    }

    /**
     * The producer id and epoch InitProducerId gave a transactional producer: every partition
     * starts again at sequence 0, and waiting batches may go out.
     */
    void producerId(long producerId, short epoch) {
        List<ProducerBatch> maybeAppended;
        lock.lock();
        try {
            maybeAppended = accumulator.initializedLocked(producerId, epoch);
            accumulator.wakeSenderLocked();
        } finally {
            lock.unlock();
        }
        accumulator.failMaybeAppended(maybeAppended);
    }

    /** Whether a failed batch left a hole in the sequences, so the producer needs a new epoch. */
    boolean producerIdResetNeeded() {
        lock.lock();
        try {
            return idempotence.resetNeeded();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Fails with {@code error} every batch not in flight ({@link ProducerAccumulator#takeUnsentLocked};
     * one being compressed is failed by the loop once READY) and those refused as too large that wait
     * to be split ({@link ProducerSplits#takeUnsentLocked}); a split being built fails when it is
     * done ({@link ProducerSplits#complete}). The first step of a transaction's abort; callbacks run
     * on the caller.
     *
     * @return the batches failed
     */
    int failUnsent(StellflowException error) {
        List<ProducerBatch> unsent = new ArrayList<>();
        lock.lock();
        try {
            takeUnsentLocked(unsent);
        } finally {
            lock.unlock();
        }
        failTaken(unsent, error);
        return unsent.size();
    }

    /**
     * Moves to {@code out} every batch not in flight ({@link ProducerAccumulator#takeUnsentLocked})
     * and every batch refused as too large that waits to be split; a stamped one leaves a hole in
     * its partition's sequences. Called under {@code lock}.
     */
    private void takeUnsentLocked(List<ProducerBatch> out) {
        accumulator.takeUnsentLocked(out);
        splits.takeUnsentLocked(out);
        accumulator.wakeSenderLocked();
    }

    /**
     * Fails {@code batches}, taken unsent, with {@code error} and counts them out; the callbacks run on
     * the caller, an application thread in an abort ({@link ProducerAccumulator#completing}). Not under
     * {@code lock}.
     */
    private void failTaken(List<ProducerBatch> batches, StellflowException error) {
        if (batches.isEmpty()) {
            return;
        }
        accumulator.completing.enter();
        try {
            for (ProducerBatch b : batches) {
                network.metrics().sendFailed(ClientMetrics.result(error.errorCode(), false));
                b.fail(error);
            }
        } finally {
            accumulator.completing.exit();
            accumulator.finish(batches);
        }
    }

    /**
     * Whether the calling thread is running callbacks of batches this producer still counts as
     * incomplete (a codec failure on the thread that compressed, an abort failing unsent records): a
     * close from there would wait for itself.
     */
    boolean completingOnThisThread() {
        return accumulator.completing.currentThreadCompleting();
    }

    private void onResponse(
            HostPort leader, Map<TopicPartition, List<ProducerBatch>> sent, ProduceResponse resp, Throwable err) {
        Map<TopicPartition, ProduceResponse.PartitionResponse> results = new HashMap<>();
        if (resp != null) {
            for (ProduceResponse.TopicResponse t : resp.responses()) {
                for (ProduceResponse.PartitionResponse p : t.partitions()) {
                    results.put(new TopicPartition(t.topic(), p.partition()), p);
                }
            }
        }
        List<Runnable> completions = new ArrayList<>();
        List<ProducerBatch> done = new ArrayList<>();
        Set<String> refresh = new HashSet<>();
        lock.lock();
        try {
            if (!inFlightRequests.remove(sent)) {
                return; // a forced close failed its batches already
            }
            inFlightPerBroker.merge(leader, -1, Integer::sum);
            long nowNs = System.nanoTime();
            for (Map.Entry<TopicPartition, List<ProducerBatch>> e : sent.entrySet()) {
                TopicPartition tp = e.getKey();
                List<ProducerBatch> batches = e.getValue();
                ProducerPartitionQueue q = accumulator.queueLocked(tp);
                q.inFlight--;
                q.soloInFlight = false; // a solo request is the partition's only one in flight
                short code = ProduceErrors.errorCode(err, results.get(tp));
                if (idempotence != null) {
                    ProducerBatch b = batches.get(0);
                    if (code == Errors.MESSAGE_TOO_LARGE && splits.splittable(b, nowNs)) {
                        splits.deferLocked(q, tp, b, code, err);
                        continue;
                    }
                    ProducerIdempotence.Outcome outcome = idempotence.onResult(
                            b, q.sequences, code, b.attempts < config.common().retries());
                    switch (outcome) {
                        case COMPLETE -> {
                            long base = results.get(tp).baseOffset();
                            completions.add(() -> b.complete(base));
                            done.add(b);
                        }
                        case RETRY, RESTAMP -> {
                            if (Errors.isStaleMetadata(code) || code == StellflowException.NETWORK_ERROR) {
                                refresh.add(tp.topic());
                            }
                            retry(q, tp, batches, code, err, nowNs);
                        }
                        case FAIL -> fail(tp, batches, code, err, completions, done);
                    }
                    continue;
                }
                if (code == Errors.NONE) {
                    long offset = results.get(tp).baseOffset();
                    for (ProducerBatch b : batches) {
                        long base = offset;
                        completions.add(() -> b.complete(base));
                        offset += b.recordCount();
                        done.add(b);
                    }
                } else if (code == Errors.MESSAGE_TOO_LARGE && batches.size() > 1) {
                    isolate(q, tp, batches, code, err, nowNs);
                } else if (code == Errors.MESSAGE_TOO_LARGE && splits.splittable(batches.get(0), nowNs)) {
                    splits.deferLocked(q, tp, batches.get(0), code, err);
                } else if (StellflowException.isRetriable(code)
                        && batches.get(0).attempts < config.common().retries()) {
                    refresh.add(tp.topic());
                    retry(q, tp, batches, code, err, nowNs);
                } else {
                    fail(tp, batches, code, err, completions, done);
                }
            }
            accumulator.wakeSenderLocked();
        } finally {
            lock.unlock();
        }
        if (!refresh.isEmpty()) {
            refreshMetadata(refresh);
        }
        try {
            completions.forEach(Runnable::run);
        } finally {
            accumulator.finish(done);
        }
    }

    /**
     * Puts {@code batches} back into their partition's queue in send order after their back-off; the
     * partition sends nothing more until its requests in flight are back. Called under {@code lock}.
     */
    private void retry(
            ProducerPartitionQueue q,
            TopicPartition tp,
            List<ProducerBatch> batches,
            short code,
            Throwable err,
            long nowNs) {
        q.retrying = true;
        StellflowException cause = ProduceErrors.cause(err, code, "produce to " + tp + " failed");
        for (ProducerBatch b : batches) {
            network.metrics().retried();
            b.lastError = cause;
            b.attempts++;
            b.retryAfterNs =
                    nowNs + TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs(b.attempts));
            q.requeue(b);
        }
        warnRetry(q, tp, code, batches.get(0), nowNs);
    }

    /**
     * MESSAGE_TOO_LARGE for a request holding several batches of the partition: the answer does not
     * say which one is too large, so they go back to the queue as they are (no back-off; not counted
     * against {@code retries}, like a split) and are sent one per request from now on ({@link
     * ProducerPartitionQueue#soloThroughSequence}), where a refusal names its batch. Without
     * idempotence only (an idempotent Produce carries one batch per partition). Called under {@code
     * lock}.
     */
    private void isolate(
            ProducerPartitionQueue q,
            TopicPartition tp,
            List<ProducerBatch> batches,
            short code,
            Throwable err,
            long nowNs) {
        q.retrying = true;
        StellflowException cause = ProduceErrors.cause(
                err, code, "produce to " + tp + " refused: a request of " + batches.size() + " batches was too large");
        for (ProducerBatch b : batches) {
            network.metrics().retried();
            b.lastError = cause;
            q.requeue(b);
        }
        q.soloThroughSequence = Math.max(q.soloThroughSequence, batches.getLast().sequence);
        if (warnDue(q, nowNs)) {
            LOG.warn(
                    "produce to {} refused with {} for a request of {} batches; sending them one per request to"
                            + " split the one too large",
                    tp,
                    ProduceErrors.codeName(code),
                    batches.size());
        }
    }

    /** Fails {@code batches} with {@code code}; their callbacks run later, outside the lock. */
    private void fail(
            TopicPartition tp,
            List<ProducerBatch> batches,
            short code,
            Throwable err,
            List<Runnable> completions,
            List<ProducerBatch> done) {
        StellflowException failure =
                ProduceErrors.cause(err, code, ProduceErrors.produceFailure(tp, code, batches.get(0)));
        batchFailed(code);
        int result = ClientMetrics.result(code, false);
        for (ProducerBatch b : batches) {
            network.metrics().sendFailed(result);
            completions.add(() -> b.fail(failure));
            done.add(b);
        }
    }

    /**
     * Logs one WARN for a retried partition, at most once per {@link #RETRY_WARN_INTERVAL_NS} per
     * partition: the code, the attempt and how long the retries may go on. Called under {@code lock}.
     */
    private void warnRetry(ProducerPartitionQueue q, TopicPartition tp, short code, ProducerBatch first, long nowNs) {
        if (!warnDue(q, nowNs)) {
            return;
        }
        long leftMs = config.deliveryTimeoutMs() - TimeUnit.NANOSECONDS.toMillis(nowNs - first.createdNs);
        LOG.warn(
                "produce to {} failed with {} (attempt {}); retrying for up to {} ms more (delivery.timeout.ms={})",
                tp,
                ProduceErrors.codeName(code),
                first.attempts,
                Math.max(0, leftMs),
                config.deliveryTimeoutMs());
    }

    /**
     * Whether a retry or split WARN of {@code q} is due: at most one per {@link
     * #RETRY_WARN_INTERVAL_NS} per partition (then noted as logged). Called under {@code lock}.
     */
    static boolean warnDue(ProducerPartitionQueue q, long nowNs) {
        if (q.lastRetryWarnNs != 0 && nowNs - q.lastRetryWarnNs < RETRY_WARN_INTERVAL_NS) {
            return false;
        }
        q.lastRetryWarnNs = nowNs;
        return true;
    }
}
