package io.stellflow.client;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer's record accumulator and its sender thread.
 *
 * <p>Records are appended to the open batch of their partition. A partition is ready when its
 * first batch is full ({@code batch.size}), older than {@code linger.ms}, or a flush or close is
 * in progress. The sender groups ready partitions by leader into Produce requests of at most
 * {@code max.request.size} record bytes (whole batches; several batches of a partition go back to
 * back in one RecordBatchSet), with at most {@code max.in.flight.requests.per.connection} requests
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
 * <p>With {@code enable.idempotence} ({@link ProducerIdempotence}) neither can happen: nothing is
 * sent before InitProducerId gave a producer id, a request carries at most one batch per partition,
 * stamped with the id and its sequence when first drained and kept for retries; the broker refuses a
 * batch that arrives before an earlier one ({@code OUT_OF_ORDER_SEQUENCE_NUMBER}, retried here in
 * order behind it) and answers a retry of an appended batch with its original offset.
 *
 * <p>With {@code compression.type} set, a sealed batch (full, or sealed by the sender at {@code
 * linger.ms}, a flush or close) is compressed before the sender may take it, by the producer's
 * compressor thread or the application thread that finds it waiting ({@link
 * ProducerCompressionQueue}); the sender only sends, and takes a partition's batches in sequence
 * order once each is READY.
 *
 * <p>Thread-safety: every field is guarded by {@code lock}; {@link #append} is called by
 * application threads, responses arrive on the I/O thread, the loop runs on its own thread.
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
    /** {@code compression.type} and its codecs; null for none. */
    private final ProducerCompression compression;
    /** Sealed batches waiting to be compressed (off the sender thread); null without compression. */
    private final ProducerCompressionQueue compressionQueue;
    /** {@code enable.idempotence}: the producer id and sequences; null when off. */
    private final ProducerIdempotence idempotence;

    /**
     * With {@code transactional.id}: told of every batch that fails (the transaction can then only
     * abort), and the source of the transaction sequence Produce v2 carries; null otherwise.
     */
    private volatile ProducerTransactions transactions;

    private final NetworkClient network;
    private final MetadataCache metadata;
    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    /** The batches' buffers: the compression's recycling pool, else straight from {@link #alloc}. */
    private final ProducerBufferPool batchBuffers;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wakeSender = lock.newCondition();
    private final Condition stateChanged = lock.newCondition();
    private final Map<TopicPartition, ProducerPartitionQueue> queues = new LinkedHashMap<>();
    private final Map<HostPort, Integer> inFlightPerBroker = new HashMap<>();
    private final long lingerNs;
    private long usedBytes;
    private int incompleteBatches;
    private int flushes;
    private boolean closing;
    private boolean metadataRefreshInFlight;
    private long lastMetadataRefreshNs;

    /** What append did: whether the partition's open batch is now full (the sticky partitioner moves on). */
    enum AppendResult {
        APPENDED,
        BATCH_FULL,
        /** Not appended: the record needs a new batch and the caller asked to choose again first. */
        ABORTED_NEW_BATCH
    }

    ProducerSender(ProducerConfig config, NetworkClient network, MetadataCache metadata) {
        this(config, network, metadata, ProducerCompression.of(config));
    }

    /** With {@code compression} instead of the config's (tests give one whose codec fails); null for none. */
    ProducerSender(
            ProducerConfig config, NetworkClient network, MetadataCache metadata, ProducerCompression compression) {
        this.config = config;
        this.network = network;
        this.metadata = metadata;
        this.lingerNs = TimeUnit.MILLISECONDS.toNanos(config.lingerMs());
        this.compression = compression;
        this.compressionQueue = compression == null
                ? null
                : new ProducerCompressionQueue(lock, compression, network.metrics(), new CompressionOutcomes());
        this.idempotence = config.enableIdempotence() ? new ProducerIdempotence() : null;
        this.batchBuffers = compression == null ? ProducerBufferPool.of(alloc) : compression.plainBuffers();
    }

    /**
     * The compressor thread's work (compresses sealed batches until the sender ends), or null without
     * compression; the producer runs it on a thread of its own.
     */
    Runnable compressor() {
        return compressionQueue;
    }

    /**
     * Appends one record. Blocks up to {@code max.block.ms} while {@code buffer.memory} is used up.
     *
     * @throws StellflowException when memory did not free up in time or the producer is closing
     */
    AppendResult append(
            TopicPartition tp, long timestampMs, byte[] key, byte[] value, Callback callback, boolean abortOnNewBatch)
            throws InterruptedException {
        AppendResult result = appendLocked(tp, timestampMs, key, value, callback, abortOnNewBatch);
        if (compressionQueue != null && compressionQueue.hasWaiting()) {
            // A batch waits for a codec (this send sealed it, or the sender sealed one at linger.ms)
            // and the compressor thread has not taken it: compress it here, outside the lock, so the
            // work waiting for a codec does not grow (docs/compression.md, "Producer").
            compressionQueue.help();
        }
        return result;
    }

    private AppendResult appendLocked(
            TopicPartition tp, long timestampMs, byte[] key, byte[] value, Callback callback, boolean abortOnNewBatch)
            throws InterruptedException {
        lock.lock();
        try {
            if (closing) {
                throw new IllegalStateException("producer is closed");
            }
            ProducerPartitionQueue q = queues.computeIfAbsent(tp, k -> new ProducerPartitionQueue(idempotence != null));
            ProducerBatch last = q.batches.peekLast();
            if (last != null
                    && last.stage == ProducerBatch.Stage.OPEN
                    && last.tryAppend(timestampMs, key, value, callback)) {
                if (last.isFull()) {
                    if (compressionQueue != null) {
                        seal(last);
                    }
                    wakeSender.signal();
                    return AppendResult.BATCH_FULL;
                }
                return AppendResult.APPENDED;
            }
            if (last != null && abortOnNewBatch) {
                return AppendResult.ABORTED_NEW_BATCH;
            }
            int recordBytes = ProducerBatch.recordBytes(key, value);
            int fillLimitBytes =
                    compression == null ? config.batchSizeBytes() : compression.fillLimitBytes(q.compressionRatio);
            long need = Math.max(fillLimitBytes, recordBytes + 64L);
            long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.maxBlockMs());
            while (usedBytes > 0 && usedBytes + need > config.bufferMemoryBytes()) {
                long leftNs = deadlineNs - System.nanoTime();
                if (leftNs <= 0) {
                    throw new StellflowException(
                            StellflowException.NETWORK_ERROR,
                            "buffer.memory exhausted for " + config.maxBlockMs() + " ms (brokers too slow or down)");
                }
                stateChanged.awaitNanos(leftNs);
            }
            ProducerBatch batch = new ProducerBatch(
                    tp,
                    batchBuffers,
                    fillLimitBytes,
                    compression == null ? 1.0 : q.compressionRatio,
                    recordBytes,
                    timestampMs,
                    System.nanoTime(),
                    q.nextSequence++);
            usedBytes += batch.reservedBytes;
            incompleteBatches++;
            if (last != null) {
                seal(last);
            }
            batch.tryAppend(timestampMs, key, value, callback);
            q.batches.addLast(batch);
            if (batch.isFull() && compressionQueue != null) {
                seal(batch);
            }
            if (last != null || batch.isFull() || lingerNs == 0) {
                wakeSender.signal();
            }
            return batch.isFull() ? AppendResult.BATCH_FULL : AppendResult.APPENDED;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends everything accumulated now and waits until every batch is acknowledged or failed. With
     * compression the calling thread seals the open batches and helps compress them.
     */
    void flush() throws InterruptedException {
        lock.lock();
        try {
            flushes++;
            if (compressionQueue != null) {
                for (ProducerPartitionQueue q : queues.values()) {
                    ProducerBatch tail = q.batches.peekLast();
                    if (tail != null) {
                        seal(tail);
                    }
                }
            }
            wakeSender.signal();
            if (compressionQueue != null) {
                lock.unlock();
                try {
                    compressionQueue.help();
                } finally {
                    lock.lock();
                }
            }
            while (incompleteBatches > 0) {
                stateChanged.await();
            }
        } finally {
            flushes--;
            lock.unlock();
        }
    }

    /** Stops accepting records; the loop exits once everything is acknowledged or failed. */
    void initiateClose() {
        lock.lock();
        try {
            closing = true;
            wakeSender.signal();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void run() {
        try {
            loop();
        } finally {
            if (compression != null) {
                lock.lock();
                try {
                    compressionQueue.stop();
                } finally {
                    lock.unlock();
                }
                // Codecs in use by a thread still compressing are freed when it is done.
                compression.close();
            }
        }
    }

    private void loop() {
        while (true) {
            ProducerTransactions txn = transactions;
            StellflowException unsent = txn == null ? null : txn.unsentError();
            if (unsent != null) {
                failUnsent(unsent); // the transaction can only abort: nothing more of it goes out
            }
            Map<HostPort, Map<TopicPartition, List<ProducerBatch>>> requests;
            Set<String> unknownLeaders = new HashSet<>();
            List<ProducerBatch> expired = new ArrayList<>();
            boolean initProducerId = false;
            lock.lock();
            try {
                if (closing && incompleteBatches == 0) {
                    return; // run() stops the compressor thread
                }
                long nowNs = System.nanoTime();
                expire(nowNs, expired);
                if (compressionQueue != null) {
                    sealLingeredTails(nowNs);
                }
                requests = drain(nowNs, unknownLeaders);
                initProducerId = idempotence != null
                        && !config.transactional() // initTransactions() sets the id
                        && incompleteBatches > 0
                        && idempotence.startInit(nowNs, requestsInFlight());
                if (requests.isEmpty() && expired.isEmpty() && unknownLeaders.isEmpty() && !initProducerId) {
                    try {
                        wakeSender.awaitNanos(nextWakeNs(nowNs));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    continue;
                }
            } finally {
                lock.unlock();
            }
            try {
                for (ProducerBatch b : expired) {
                    StellflowException timeout = ProduceErrors.deliveryTimeout(b, config);
                    batchFailed(timeout.errorCode());
                    b.fail(timeout);
                }
            } finally {
                finish(expired);
            }
            if (initProducerId) {
                initProducerId();
            }
            if (!unknownLeaders.isEmpty()) {
                refreshMetadata(unknownLeaders);
            }
            requests.forEach(this::sendProduce);
            if (requests.isEmpty() && expired.isEmpty()) {
                // Only waiting for leaders: do not spin while the metadata refresh is running.
                lock.lock();
                try {
                    wakeSender.awaitNanos(TimeUnit.MILLISECONDS.toNanos(
                            Math.max(1, config.common().retryBackoffMs())));
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
     * Sends InitProducerId (null transactionalId) to a broker of the metadata; the answer sets the
     * producer id or schedules another attempt after {@code retry.backoff.ms} (doubling). Batches
     * wait meanwhile and expire by {@code delivery.timeout.ms}, whose message then names the
     * InitProducerId error. A non-retriable answer (a broker without idempotence) fails the queued
     * batches with it.
     */
    private void initProducerId() {
        HostPort broker = metadata.anyBroker();
        if (broker == null) {
            broker = config.common().bootstrapServers().get(0);
        }
        network.send(
                        broker,
                        ApiKeys.INIT_PRODUCER_ID,
                        new InitProducerIdRequest(null)::write,
                        InitProducerIdResponse::read)
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
                maybeAppended = initializedLocked(resp.producerId(), resp.producerEpoch());
                LOG.info("idempotent producer id {} epoch {}", resp.producerId(), resp.producerEpoch());
            } else {
                StellflowException cause = ProduceErrors.cause(err, code, "InitProducerId failed");
                idempotence.initFailed(
                        System.nanoTime(),
                        TimeUnit.MILLISECONDS.toNanos(config.common().retryBackoffMs(idempotence.initAttempts() + 1)));
                if (ProducerIdempotence.initRetriable(code)) {
                    for (ProducerPartitionQueue q : queues.values()) {
                        for (ProducerBatch b : q.batches) {
                            b.lastError = cause;
                        }
                    }
                } else {
                    failure = new StellflowException(
                            code,
                            "enable.idempotence=true: InitProducerId failed with " + ProduceErrors.codeName(code)
                                    + " (does the broker offer idempotent producers?)",
                            cause);
                    for (ProducerPartitionQueue q : queues.values()) {
                        takeUnlessCompressing(q, failed);
                    }
                }
            }
            wakeSender.signal();
        } finally {
            lock.unlock();
        }
        failMaybeAppended(maybeAppended);
        try {
            for (ProducerBatch b : failed) {
                network.metrics().sendFailed(ClientMetrics.result(code, false));
                b.fail(failure);
            }
        } finally {
            finish(failed);
        }
    }

    /**
     * Moves the batches of {@code q} to {@code out}, except one being compressed (it stays, and is
     * sent or failed once READY). Called under {@code lock}.
     */
    private void takeUnlessCompressing(ProducerPartitionQueue q, List<ProducerBatch> out) {
        Iterator<ProducerBatch> it = q.batches.iterator();
        while (it.hasNext()) {
            ProducerBatch b = it.next();
            if (b.stage == ProducerBatch.Stage.COMPRESSING) {
                continue;
            }
            if (b.stage == ProducerBatch.Stage.AWAITING_COMPRESSION) {
                compressionQueue.remove(b);
            }
            it.remove();
            out.add(b);
        }
    }

    /**
     * Seals {@code b} if it is open: without compression it is READY at once, with compression it goes
     * to the compression queue (the compressor thread or an application thread compresses it, never
     * the sender). Called under {@code lock}.
     *
     * @return whether the sender may send {@code b} now (READY)
     */
    private boolean seal(ProducerBatch b) {
        if (b.stage == ProducerBatch.Stage.OPEN) {
            b.close();
            if (compressionQueue == null) {
                b.stage = ProducerBatch.Stage.READY;
            } else {
                compressionQueue.add(b);
            }
        }
        return b.stage == ProducerBatch.Stage.READY;
    }

    /**
     * With compression: seals every open batch whose {@code linger.ms} is over, even when its
     * partition cannot send now (all its requests in flight, no producer id yet), so that it is
     * compressed while it waits, and stays about {@code linger.ms} of records instead of filling to the
     * fill limit behind a busy connection. Measured in the lab (zstd, 1 MiB batches): left open, the
     * batches behind 5 requests in flight filled to ~4.5 MB, and {@code buffer.memory} held ~7 of them,
     * ~165 ms of records at 190 MB/s. Called under {@code lock}.
     */
    private void sealLingeredTails(long nowNs) {
        for (ProducerPartitionQueue q : queues.values()) {
            ProducerBatch tail = q.batches.peekLast();
            if (tail != null && tail.stage == ProducerBatch.Stage.OPEN && lingerDone(tail, nowNs)) {
                seal(tail);
            }
        }
    }

    private void expire(long nowNs, List<ProducerBatch> expired) {
        long limitNs = TimeUnit.MILLISECONDS.toNanos(config.deliveryTimeoutMs());
        for (ProducerPartitionQueue q : queues.values()) {
            if (q.inFlight > 0) {
                continue;
            }
            Iterator<ProducerBatch> it = q.batches.iterator();
            while (it.hasNext()) {
                ProducerBatch b = it.next();
                if (nowNs - b.createdNs < limitNs
                        || b.stage == ProducerBatch.Stage.AWAITING_COMPRESSION
                        || b.stage == ProducerBatch.Stage.COMPRESSING) {
                    break; // a batch being compressed expires once it is READY
                }
                it.remove();
                expired.add(b);
                if (idempotence != null) {
                    idempotence.failed(b, q.sequences);
                }
            }
        }
    }

    private boolean ready(ProducerBatch first, ProducerPartitionQueue q, long nowNs) {
        if (nowNs < first.retryAfterNs) {
            return false;
        }
        return q.batches.size() > 1 || lingerDone(first, nowNs);
    }

    /** A batch may go on its own: full, lingered long enough, a retry, or a flush/close is waiting. */
    private boolean lingerDone(ProducerBatch b, long nowNs) {
        return b.isFull() || nowNs - b.createdNs >= lingerNs || flushes > 0 || closing || b.attempts > 0;
    }

    private Map<HostPort, Map<TopicPartition, List<ProducerBatch>>> drain(long nowNs, Set<String> unknownLeaders) {
        Map<HostPort, Map<TopicPartition, List<ProducerBatch>>> out = new LinkedHashMap<>();
        if (idempotence != null && !idempotence.ready()) {
            return out; // no id yet, or a reset waits for the requests in flight
        }
        Map<HostPort, Integer> requestBytes = new HashMap<>();
        for (Map.Entry<TopicPartition, ProducerPartitionQueue> e : queues.entrySet()) {
            ProducerPartitionQueue q = e.getValue();
            ProducerBatch first = q.batches.peekFirst();
            if (first == null || !sendable(q) || !ready(first, q, nowNs)) {
                continue;
            }
            if (idempotence != null && !idempotence.maySend(first, q.sequences)) {
                continue; // an earlier batch is unresolved and the broker keeps only 5 per producer
            }
            HostPort leader = metadata.leader(e.getKey());
            if (leader == null) {
                unknownLeaders.add(e.getKey().topic());
                continue;
            }
            if (compressionQueue != null && !seal(first)) {
                continue; // being compressed: the compressing thread wakes the sender when it is READY
            }
            Map<TopicPartition, List<ProducerBatch>> req = out.get(leader);
            if (req == null) {
                if (inFlightPerBroker.getOrDefault(leader, 0) >= config.maxInFlightPerConnection()) {
                    continue;
                }
                req = new LinkedHashMap<>();
                out.put(leader, req);
                inFlightPerBroker.merge(leader, 1, Integer::sum);
            }
            int bytes = requestBytes.getOrDefault(leader, 0);
            List<ProducerBatch> taken = new ArrayList<>();
            while (!q.batches.isEmpty()) {
                ProducerBatch b = q.batches.peekFirst();
                if (!taken.isEmpty() && q.batches.size() == 1 && !lingerDone(b, nowNs)) {
                    break; // the open tail batch keeps lingering
                }
                if (idempotence != null && !taken.isEmpty()) {
                    break; // one batch per partition in an idempotent Produce (spec §6.12)
                }
                if (!seal(b)) {
                    break; // compressed batches go in sequence order: this one first
                }
                if (!taken.isEmpty() || bytes > 0) {
                    if (bytes + b.wireSizeEstimateBytes() > config.maxRequestBytes()) {
                        break;
                    }
                }
                q.batches.pollFirst();
                if (idempotence != null) {
                    idempotence.stamp(b, q.sequences);
                }
                taken.add(b);
                bytes += b.wireSizeEstimateBytes();
            }
            requestBytes.put(leader, bytes);
            if (!taken.isEmpty()) {
                q.inFlight++;
                q.retrying = false;
                req.put(e.getKey(), taken);
            }
        }
        out.values().removeIf(Map::isEmpty);
        return out;
    }

    /** Whether the partition may put batches into one more request now. */
    private boolean sendable(ProducerPartitionQueue q) {
        return q.retrying ? q.inFlight == 0 : q.inFlight < config.maxInFlightPerConnection();
    }

    private long nextWakeNs(long nowNs) {
        long wait = TimeUnit.MILLISECONDS.toNanos(100);
        for (ProducerPartitionQueue q : queues.values()) {
            ProducerBatch first = q.batches.peekFirst();
            if (sendable(q)
                    && first != null
                    && first.stage != ProducerBatch.Stage.AWAITING_COMPRESSION
                    && first.stage != ProducerBatch.Stage.COMPRESSING) {
                long at = Math.max(first.createdNs + lingerNs, first.retryAfterNs);
                wait = Math.min(wait, Math.max(at - nowNs, 1));
            }
            ProducerBatch tail = q.batches.peekLast();
            if (compressionQueue != null && tail != null && tail.stage == ProducerBatch.Stage.OPEN) {
                wait = Math.min(wait, Math.max(tail.createdNs + lingerNs - nowNs, 1)); // sealLingeredTails
            }
        }
        return wait;
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
                wakeSender.signal();
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
            maybeAppended = initializedLocked(producerId, epoch);
            wakeSender.signal();
        } finally {
            lock.unlock();
        }
        failMaybeAppended(maybeAppended);
    }

    /**
     * A new producer id and epoch: every partition starts again at sequence 0. The waiting batches
     * that may already be in the log under their old stamp ({@link
     * ProducerIdempotence#mustFailAfterReset}) leave their queues: the caller fails them ({@link
     * #failMaybeAppended}) once the lock is released. Called under {@code lock}.
     */
    private List<ProducerBatch> initializedLocked(long producerId, short epoch) {
        List<ProducerIdempotence.Partition> partitions = new ArrayList<>(queues.size());
        for (ProducerPartitionQueue q : queues.values()) {
            partitions.add(q.sequences);
        }
        idempotence.initialized(producerId, epoch, partitions);
        List<ProducerBatch> maybeAppended = new ArrayList<>(0);
        for (ProducerPartitionQueue q : queues.values()) {
            Iterator<ProducerBatch> it = q.batches.iterator();
            while (it.hasNext()) {
                ProducerBatch b = it.next();
                if (idempotence.mustFailAfterReset(b)) {
                    it.remove();
                    maybeAppended.add(b);
                }
            }
        }
        return maybeAppended;
    }

    /**
     * Fails batches that may already be in the log under an older producer id (their records are
     * stored once or not at all; sent again under the new id they could be stored twice). Not under
     * {@code lock}: the callbacks run here.
     */
    private void failMaybeAppended(List<ProducerBatch> batches) {
        if (batches.isEmpty()) {
            return;
        }
        try {
            for (ProducerBatch b : batches) {
                StellflowException failure = ProduceErrors.outcomeUnknown(b);
                network.metrics().sendFailed(ClientMetrics.result(failure.errorCode(), false));
                b.fail(failure);
            }
        } finally {
            finish(batches);
        }
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
     * Fails with {@code error} every batch not in flight, except one being compressed (it goes out or
     * fails once compressed); batches in flight keep their course ({@link #flush} waits for them). A
     * failed batch that was already stamped (waiting for a retry) leaves a hole in its partition's
     * sequences: the transactional producer then takes a new epoch after its abort.
     *
     * @return the batches failed
     */
    int failUnsent(StellflowException error) {
        List<ProducerBatch> failed = new ArrayList<>();
        lock.lock();
        try {
            for (ProducerPartitionQueue q : queues.values()) {
                Iterator<ProducerBatch> it = q.batches.iterator();
                while (it.hasNext()) {
                    ProducerBatch b = it.next();
                    if (b.stage == ProducerBatch.Stage.COMPRESSING) {
                        continue;
                    }
                    if (b.producerId != RecordBatchLayout.NO_PRODUCER_ID) {
                        idempotence.failed(b, q.sequences); // a retry that will not happen: a hole
                    }
                    if (b.stage == ProducerBatch.Stage.AWAITING_COMPRESSION) {
                        compressionQueue.remove(b);
                    } else if (b.stage == ProducerBatch.Stage.OPEN) {
                        b.close();
                    }
                    it.remove();
                    failed.add(b);
                }
            }
        } finally {
            lock.unlock();
        }
        try {
            for (ProducerBatch b : failed) {
                network.metrics().sendFailed(ClientMetrics.result(error.errorCode(), false));
                b.fail(error);
            }
        } finally {
            finish(failed);
        }
        return failed.size();
    }

    /** The compression queue's outcomes for the partition queues. */
    private final class CompressionOutcomes implements ProducerCompressionQueue.Listener {
        @Override
        public void compressed(ProducerBatch batch, double ratio) {
            ProducerPartitionQueue q = queues.get(batch.tp);
            q.compressionRatio = ProducerCompression.nextCompressionRatio(
                    q.compressionRatio, ratio, (double) batch.uncompressedBytes() / batch.fillLimitBytes());
            wakeSender.signal();
        }

        @Override
        public void compressionFailed(ProducerBatch batch, StellflowException error) {
            lock.lock();
            try {
                queues.get(batch.tp).batches.remove(batch);
            } finally {
                lock.unlock();
            }
            network.metrics().sendFailed(ClientMetrics.result(error.errorCode(), false));
            try {
                batch.fail(error);
            } finally {
                finish(List.of(batch));
            }
        }
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
            inFlightPerBroker.merge(leader, -1, Integer::sum);
            long nowNs = System.nanoTime();
            for (Map.Entry<TopicPartition, List<ProducerBatch>> e : sent.entrySet()) {
                TopicPartition tp = e.getKey();
                List<ProducerBatch> batches = e.getValue();
                ProducerPartitionQueue q = queues.get(tp);
                q.inFlight--;
                short code = ProduceErrors.errorCode(err, results.get(tp));
                if (idempotence != null) {
                    ProducerBatch b = batches.get(0);
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
                } else if (StellflowException.isRetriable(code)
                        && batches.get(0).attempts < config.common().retries()) {
                    refresh.add(tp.topic());
                    retry(q, tp, batches, code, err, nowNs);
                } else {
                    fail(tp, batches, code, err, completions, done);
                }
            }
            wakeSender.signal();
        } finally {
            lock.unlock();
        }
        if (!refresh.isEmpty()) {
            refreshMetadata(refresh);
        }
        try {
            completions.forEach(Runnable::run);
        } finally {
            finish(done);
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
        if (q.lastRetryWarnNs != 0 && nowNs - q.lastRetryWarnNs < RETRY_WARN_INTERVAL_NS) {
            return;
        }
        q.lastRetryWarnNs = nowNs;
        long leftMs = config.deliveryTimeoutMs() - TimeUnit.NANOSECONDS.toMillis(nowNs - first.createdNs);
        LOG.warn(
                "produce to {} failed with {} (attempt {}); retrying for up to {} ms more (delivery.timeout.ms={})",
                tp,
                ProduceErrors.codeName(code),
                first.attempts,
                Math.max(0, leftMs),
                config.deliveryTimeoutMs());
    }

    /** Counts batches out after their callbacks ran, so flush() returns with every record completed. */
    private void finish(List<ProducerBatch> done) {
        if (done.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            for (ProducerBatch b : done) {
                usedBytes -= b.reservedBytes;
                incompleteBatches--;
            }
            stateChanged.signalAll();
            wakeSender.signal();
        } finally {
            lock.unlock();
        }
    }
}
