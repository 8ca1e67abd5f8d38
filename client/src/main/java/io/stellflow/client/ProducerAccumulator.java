package io.stellflow.client;

import io.stellflow.protocol.record.RecordBatchLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The producer's record accumulator: one queue of batches per partition ({@link
 * ProducerPartitionQueue}), filled by application threads and drained by the sender ({@link
 * ProducerSender}).
 *
 * <p>Records are appended to the open batch of their partition. A partition is ready when its
 * first batch is full ({@code batch.size}), older than {@code linger.ms}, or a flush or close is
 * in progress. {@link #drain} takes the ready batches grouped by leader, in send order, at most
 * {@code max.request.size} record bytes per request; a retried batch goes back at its place in its
 * partition's sequence order, and so do the halves of a batch the broker refused as too large
 * ({@link #splitLocked}). {@code buffer.memory} bounds the bytes reserved by batches not yet
 * completed; a flush waits until every batch is acknowledged or failed, and batches older than
 * {@code delivery.timeout.ms} expire from the queues.
 *
 * <p>With {@code compression.type} set, a sealed batch (full, or sealed by the sender at {@code
 * linger.ms}, a flush or close) is compressed before the sender may take it, by the producer's
 * compressor thread or the application thread that finds it waiting ({@link
 * ProducerCompressionQueue}); the sender only sends, and takes a partition's batches in sequence
 * order once each is READY.
 *
 * <p>Owns: the partition queues and their batches until drained, the {@code buffer.memory} and
 * incomplete-batch accounting, the flush and close state, the compression queue and the batches'
 * buffer pool.
 *
 * <p>Thread-safety: every field is guarded by {@link #lock}, which the sender shares for its own
 * state so that one wake-up ({@link #wakeSender}) covers both; {@link #append} and {@link #flush}
 * are called by application threads, {@code ...Locked} methods and {@link #drain} with the lock
 * held, {@link #finish} by whichever thread completed the batches, outside the lock.
 */
final class ProducerAccumulator {
    /** The lock of the accumulator and of the sender's state. */
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled when the sender may have work, only by {@link #wakeSenderLocked}. */
    final Condition wakeSender = lock.newCondition();
    /** Calls of {@link #wakeSenderLocked} so far. */
    private long senderWakeups;
    /** Signalled when batches complete: {@code buffer.memory} frees up, a flush may return. */
    final Condition stateChanged = lock.newCondition();

    private final ProducerConfig config;
    private final ClientMetrics metrics;
    /** {@code compression.type} and its codecs; null for none. */
    private final ProducerCompression compression;
    /** Sealed batches waiting to be compressed (off the sender thread); null without compression. */
    private final ProducerCompressionQueue compressionQueue;
    /** {@code enable.idempotence}: the producer id and sequences; null when off. */
    private final ProducerIdempotence idempotence;
    /**
     * Where the batches get their (uncompressed) buffers: the compression's pool of plain buffers,
     * else a recycling pool of its own keeping up to {@code buffer.memory} bytes of idle buffers
     * ({@link ProducerBufferPool}). Recycled because every {@link #flush} (every transaction commit)
     * completes all batches at once, and fresh direct memory for the next ones is zero-filled and
     * page-faulted in (docs/performance.md, "Where the 100 ms case lost"). Allocating only when no
     * idle buffer fits, it keeps the producer's batch memory about {@code buffer.memory}. Thread-safe;
     * freed by {@link #closeCompressionAndBuffers}.
     */
    private final ProducerBufferPool batchBuffers;

    private final Map<TopicPartition, ProducerPartitionQueue> queues = new LinkedHashMap<>();
    private final long lingerNs;
    private long usedBytes;
    private int incompleteBatches;
    private int flushes;
    private boolean closing;
    /** {@link #forceClose}: the sender fails what is left instead of sending it. */
    private boolean forcedClose;
    /**
     * A transactional producer's state ({@link #transactions}), told of a batch that fails here, off
     * the sender (a codec failure), so the transaction can only abort; null otherwise.
     */
    private volatile ProducerTransactions transactions;
    /** The threads running this producer's callbacks now, off its own threads too (a close must not wait for them). */
    final ProducerCompletingThreads completing = new ProducerCompletingThreads();

    /** What append did: whether the partition's open batch is now full (the sticky partitioner moves on). */
    enum AppendResult {
        APPENDED,
        BATCH_FULL,
        /** Not appended: the record needs a new batch and the caller asked to choose again first. */
        ABORTED_NEW_BATCH,
        /**
         * Not appended, never returned by {@link #append}: the record needs a new batch of a
         * compressing producer while a sealed batch waits for a codec and the compressor thread is
         * busy; {@code append} compresses the waiting batches first, then tries again.
         */
        HELP_FIRST
    }

    /**
     * @param compression {@code compression.type} and its codecs; null for none
     * @param idempotence the producer id and sequences with {@code enable.idempotence}; null when off
     */
    ProducerAccumulator(
            ProducerConfig config,
            ClientMetrics metrics,
            ProducerCompression compression,
            ProducerIdempotence idempotence) {
        this.config = config;
        this.metrics = metrics;
        this.lingerNs = TimeUnit.MILLISECONDS.toNanos(config.lingerMs());
        this.compression = compression;
        this.compressionQueue = compression == null
                ? null
                : new ProducerCompressionQueue(lock, compression, metrics, new ProducerCompressionOutcomes(this));
        this.idempotence = idempotence;
        this.batchBuffers = compression == null
                ? ProducerBufferPool.recycling(config.bufferMemoryBytes())
                : compression.plainBuffers();
    }

    /** Where the batches get their (uncompressed) buffers (tests count its allocations). */
    ProducerBufferPool batchBuffers() {
        return batchBuffers;
    }

    /** The compressor thread's work, or null without compression ({@link ProducerSender#compressor}). */
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
        AppendResult result;
        while ((result = appendLocked(tp, timestampMs, key, value, callback, abortOnNewBatch))
                == AppendResult.HELP_FIRST) {
            // The compressor thread is busy and a sealed batch waits: this thread compresses it,
            // outside the lock, beside the compressor, so the work waiting for a codec does not grow
            // (docs/compression.md, "Producer"). Only here, before the record opens its batch: a
            // batch opened first would linger out while this thread compressed (15 ms for 4.5 MB of
            // zstd, above the lab's linger.ms 5) and go with one record (issue #21). While the
            // compressor thread is free this thread leaves the batches to it and goes on appending.
            compressionQueue.helpIfWanted();
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
            ProducerPartitionQueue q = queues.get(tp);
            if (q == null) { // not computeIfAbsent: its capturing lambda is an allocation per record
                q = new ProducerPartitionQueue(idempotence != null);
                queues.put(tp, q);
            }
            ProducerBatch last = q.batches.peekLast();
            if (last != null
                    && last.stage == ProducerBatch.Stage.OPEN
                    && last.tryAppend(timestampMs, key, value, callback)) {
                if (last.isFull()) {
                    if (compressionQueue != null) {
                        seal(last);
                    }
                    wakeSenderLocked();
                    return AppendResult.BATCH_FULL;
                }
                return AppendResult.APPENDED;
            }
            if (last != null && last.stage == ProducerBatch.Stage.OPEN && compressionQueue != null) {
                seal(last); // full: to the compression queue, whether or not the record goes elsewhere
            }
            if (last != null && abortOnNewBatch) {
                return AppendResult.ABORTED_NEW_BATCH;
            }
            if (compressionQueue != null && compressionQueue.helpWanted()) {
                return AppendResult.HELP_FIRST;
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
                if (closing) {
                    // Closed while this thread waited for memory: the sender may be gone already
                    // (a forced close) and would never send or fail a batch opened now.
                    throw new IllegalStateException("producer is closed");
                }
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
                wakeSenderLocked();
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
            wakeSenderLocked();
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

    /**
     * Stops accepting records (an {@code append} waiting for {@code buffer.memory} throws, as Kafka's
     * does); the loop exits once everything is acknowledged or failed.
     */
    void initiateClose() {
        lock.lock();
        try {
            closing = true;
            wakeSenderLocked();
            stateChanged.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A forced close ({@code close(timeout)} whose timeout passed): closes as {@link #initiateClose}
     * and makes the sender's loop end now ({@link #closedAndDoneLocked}); the sender then fails every
     * batch it holds ({@link ProducerSender}), those waiting for a codec included: from here no thread
     * compresses a batch ({@link ProducerCompressionQueue#closeForcefully}), and a batch being
     * compressed fails on the thread compressing it once its codec returns ({@link
     * ProducerCompressionOutcomes}). Idempotent.
     */
    void forceClose() {
        lock.lock();
        try {
            closing = true;
            forcedClose = true;
            if (compressionQueue != null) {
                compressionQueue.closeForcefully();
            }
            wakeSenderLocked();
            stateChanged.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@link #forceClose} was called. Called under {@code lock}. */
    boolean forcedCloseLocked() {
        return forcedClose;
    }

    /**
     * After the sender's loop ended: stops the compressor thread, frees the codecs (those in use by a
     * thread still compressing are freed when it is done) and the idle batch buffers (a buffer of a
     * batch not yet done is freed when it is). Idempotent.
     */
    void closeCompressionAndBuffers() {
        if (compression != null) {
            lock.lock();
            try {
                compressionQueue.stop();
            } finally {
                lock.unlock();
            }
            compression.close(); // its pools, batchBuffers included
        }
        batchBuffers.close();
    }

    /**
     * Whether the sender's loop ends: close was called and every batch is acknowledged or failed, or
     * the close was forced ({@link #forceClose}). Called under {@code lock}.
     */
    boolean closedAndDoneLocked() {
        return closing && (incompleteBatches == 0 || forcedClose);
    }

    /** Whether some batch is neither acknowledged nor failed. Called under {@code lock}. */
    boolean hasIncompleteLocked() {
        return incompleteBatches > 0;
    }

    /**
     * Records {@code cause} as the last error of every queued batch (a retriable InitProducerId
     * failure: a batch that expires meanwhile names it). Called under {@code lock}.
     */
    void lastErrorLocked(StellflowException cause) {
        for (ProducerPartitionQueue q : queues.values()) {
            for (ProducerBatch b : q.batches) {
                b.lastError = cause;
            }
        }
    }

    /**
     * Moves every queued batch to {@code out}, except those being compressed (they stay, and are sent
     * or failed once READY). Called under {@code lock}.
     */
    void takeAllUnlessCompressingLocked(List<ProducerBatch> out) {
        for (ProducerPartitionQueue q : queues.values()) {
            takeUnlessCompressing(q, out);
        }
    }

    /** The queue of {@code tp}, which has batches in flight. Called under {@code lock}. */
    ProducerPartitionQueue queueLocked(TopicPartition tp) {
        return queues.get(tp);
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
            // The records are summed once, here where they are final and still in the cache: a
            // plain batch gets its whole CRC; an idempotent one its records' CRC, which the stamp
            // (new header, on the sender, under this lock) combines with its 40 header bytes. A
            // compressed batch is summed by the compression (a new batch) instead.
            if (compressionQueue != null) {
                b.close(false);
            } else if (idempotence != null) {
                b.closeSummingRecords();
            } else {
                b.close(true);
            }
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
     * ~165 ms of records at 190 MB/s. Without compression nothing to do. Called under {@code lock}.
     */
    void sealLingeredTails(long nowNs) {
        if (compressionQueue == null) {
            return;
        }
        for (ProducerPartitionQueue q : queues.values()) {
            ProducerBatch tail = q.batches.peekLast();
            if (tail != null && tail.stage == ProducerBatch.Stage.OPEN && lingerDone(tail, nowNs)) {
                seal(tail);
            }
        }
    }

    /**
     * Moves the batches older than {@code delivery.timeout.ms} of the partitions without requests in
     * flight to {@code expired}; the caller fails them and {@link #finish}es them. Called under {@code
     * lock}.
     */
    void expire(long nowNs, List<ProducerBatch> expired) {
        long limitNs = TimeUnit.MILLISECONDS.toNanos(config.deliveryTimeoutMs());
        for (ProducerPartitionQueue q : queues.values()) {
            if (q.inFlight > 0 || q.splitsPending > 0) { // a refused batch being split goes first
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

    /**
     * Takes the ready batches, grouped by leader into requests of at most {@code max.request.size}
     * record bytes, skipping brokers with {@code max.in.flight.requests.per.connection} requests in
     * flight ({@code inFlightPerBroker}, the sender's, counts each new request); with idempotence it
     * stamps them. The topics of partitions without a known leader go to {@code unknownLeaders}; a
     * head batch that must fail rather than be stamped anew ({@link
     * ProducerIdempotence#mustFailAfterReset}: a split's half that was being compressed at a reset,
     * {@link #initializedLocked}) goes to {@code maybeAppended}, for the caller to fail ({@link
     * #failMaybeAppended}). Called under {@code lock}.
     */
    Map<HostPort, Map<TopicPartition, List<ProducerBatch>>> drain(
            MetadataCache metadata,
            Map<HostPort, Integer> inFlightPerBroker,
            long nowNs,
            Set<String> unknownLeaders,
            List<ProducerBatch> maybeAppended) {
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
            if (idempotence != null
                    && first.stage == ProducerBatch.Stage.READY
                    && idempotence.mustFailAfterReset(first)) {
                q.batches.pollFirst(); // compressed after a reset found it compressing: never sent again
                maybeAppended.add(first);
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
                if (!taken.isEmpty() && taken.get(0).sequence <= q.soloThroughSequence) {
                    break; // a refused batch or its parts: alone, so a refusal names it
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
                q.soloInFlight = taken.get(0).sequence <= q.soloThroughSequence;
                req.put(e.getKey(), taken);
            }
        }
        out.values().removeIf(Map::isEmpty);
        return out;
    }

    /**
     * Replaces {@code b}, just refused alone by the broker as too large (MESSAGE_TOO_LARGE, nothing
     * appended), by its two halves ({@link ProducerBatch#halves}) at its place in {@code q}'s send
     * order, and releases {@code b}'s buffer (its callbacks go with the halves, so it never
     * completes). The halves come from the batches' buffer pool; sealed here, they are READY at once
     * without compression, else queued to be compressed off the sender like new batches (the
     * partition sends nothing past them meanwhile: they are its head). With idempotence they take
     * {@code b}'s sequences ({@link ProducerIdempotence#split}). They keep {@code b}'s attempts (a
     * split does not use up {@code retries}), go with no back-off (the broker's answer will not
     * change with time), keep its creation
     * time ({@code delivery.timeout.ms}) and go one per request ({@link
     * ProducerPartitionQueue#soloThroughSequence}). They start without a last error: the refusal was
     * {@code b}'s, not theirs, and a half that expires or ends in doubt must not report
     * MESSAGE_TOO_LARGE ({@link ProduceErrors#deliveryTimeout} names the split instead).
     *
     * <p>{@code buffer.memory}: the halves reserve exactly their bytes, {@code b}'s reservation is
     * given back; their sum is {@code b}'s records plus one batch header (57 bytes), which may pass
     * the limit by that much (a response is never held back for memory). The halves are built
     * before, outside the lock ({@link ProducerBatch#halves}, decoding and with compression
     * decompressing: the sender thread's work, not the I/O thread's), while the partition sends
     * nothing ({@link ProducerPartitionQueue#splitsPending}). Called under {@code lock}.
     *
     * @param halves {@code b.halves(batchBuffers())}
     * @return the records of the first half
     */
    int splitLocked(ProducerPartitionQueue q, ProducerBatch b, ProducerBatch[] halves) {
        for (ProducerBatch h : halves) {
            h.attempts = b.attempts; // a split is not a retry: it does not use up retries
            h.mayBeAppended = b.mayBeAppended;
            h.partOfMaybeAppended = b.mayBeAppended || b.partOfMaybeAppended;
            h.splitDepth = b.splitDepth + 1;
            usedBytes += h.reservedBytes;
            incompleteBatches++;
            seal(h);
        }
        if (idempotence != null) {
            idempotence.split(b, halves[0], halves[1], q.sequences);
        }
        q.requeue(halves[0]);
        q.requeue(halves[1]);
        q.soloThroughSequence = Math.max(q.soloThroughSequence, b.sequence);
        usedBytes -= b.reservedBytes;
        incompleteBatches--;
        b.release();
        stateChanged.signalAll();
        wakeSenderLocked();
        return halves[0].recordCount();
    }

    /**
     * Whether the partition may put batches into one more request now: never while a refused batch
     * of it waits to be split ({@link ProducerPartitionQueue#splitsPending}); after a retry, or while
     * batches refused as too large (or their parts) go one at a time ({@link
     * ProducerPartitionQueue#soloThroughSequence}), only once nothing of it is in flight.
     */
    private boolean sendable(ProducerPartitionQueue q) {
        if (q.splitsPending > 0) {
            return false; // the parts of a refused batch go first, once built
        }
        ProducerBatch first = q.batches.peekFirst();
        boolean solo = q.soloInFlight || (first != null && first.sequence <= q.soloThroughSequence);
        return q.retrying || solo ? q.inFlight == 0 : q.inFlight < config.maxInFlightPerConnection();
    }

    /**
     * How long the sender may sleep before a batch gets ready by time. An idempotent producer without
     * a usable id sends nothing ({@link #drain}): its ready batches do not count, the end of an
     * InitProducerId back-off does (an answer wakes the sender), so the sender does not spin through
     * the back-off. Nor does a ready batch whose leader already has {@code
     * max.in.flight.requests.per.connection} requests in flight ({@code inFlightPerBroker}, as {@link
     * #drain} reads it): the next answer wakes the sender. Called under {@code lock}.
     */
    long nextWakeNs(long nowNs, MetadataCache metadata, Map<HostPort, Integer> inFlightPerBroker) {
        long wait = TimeUnit.MILLISECONDS.toNanos(100);
        boolean sending = idempotence == null || idempotence.ready();
        if (!sending) {
            wait = Math.min(wait, idempotence.initWaitNs(nowNs));
        }
        for (Map.Entry<TopicPartition, ProducerPartitionQueue> e : queues.entrySet()) {
            ProducerPartitionQueue q = e.getValue();
            ProducerBatch first = q.batches.peekFirst();
            if (sending
                    && sendable(q)
                    && !leaderAtInFlightLimit(e.getKey(), metadata, inFlightPerBroker)
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

    private boolean leaderAtInFlightLimit(
            TopicPartition tp, MetadataCache metadata, Map<HostPort, Integer> inFlightPerBroker) {
        HostPort leader = metadata.leader(tp);
        return leader != null && inFlightPerBroker.getOrDefault(leader, 0) >= config.maxInFlightPerConnection();
    }

    /**
     * Wakes the sender (a batch is ready, came back or completed, an answer arrived) and counts it: a
     * signal reaches only a thread already waiting, so a sender about to wait compares the count
     * ({@link #senderWakeupsLocked}) with the one its round read. Called under {@code lock}.
     */
    void wakeSenderLocked() {
        senderWakeups++;
        wakeSender.signal();
    }

    /** The sender wake-ups given so far ({@link #wakeSenderLocked}). Called under {@code lock}. */
    long senderWakeupsLocked() {
        return senderWakeups;
    }

    /**
     * A new producer id and epoch: every partition starts again at sequence 0. The waiting batches
     * that may already be in the log under their old stamp ({@link
     * ProducerIdempotence#mustFailAfterReset}) leave their queues: the caller fails them ({@link
     * #failMaybeAppended}) once the lock is released. Only the halves of a split carry a stamp
     * before compression: one waiting for a codec leaves the compression queue too; one being
     * compressed stays (its thread owns its bytes) and {@link #drain} hands it to be failed once it
     * is READY. Called under {@code lock}.
     */
    List<ProducerBatch> initializedLocked(long producerId, short epoch) {
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
                if (!idempotence.mustFailAfterReset(b) || b.stage == ProducerBatch.Stage.COMPRESSING) {
                    continue;
                }
                if (b.stage == ProducerBatch.Stage.AWAITING_COMPRESSION) {
                    compressionQueue.remove(b);
                }
                it.remove();
                maybeAppended.add(b);
            }
        }
        return maybeAppended;
    }

    /**
     * Fails batches that may already be in the log under an older producer id (their records are
     * stored once or not at all; sent again under the new id they could be stored twice). Not under
     * {@code lock}: the callbacks run here ({@link #completing}).
     */
    void failMaybeAppended(List<ProducerBatch> batches) {
        if (batches.isEmpty()) {
            return;
        }
        completing.enter();
        try {
            for (ProducerBatch b : batches) {
                StellflowException failure = ProduceErrors.outcomeUnknown(b);
                metrics.sendFailed(ClientMetrics.result(failure.errorCode(), false));
                b.fail(failure);
            }
        } finally {
            completing.exit();
            finish(batches);
        }
    }

    /**
     * Moves to {@code out} every batch not in flight, except one being compressed (it stays, and is
     * taken once READY); batches in flight keep their course ({@link #flush} waits for them). The
     * caller fails those taken ({@link ProducerSender}, a transaction that can only abort) and
     * {@link #finish}es them. A batch taken that was already stamped (waiting for a retry, or a
     * stamped half of a split) leaves a hole in its partition's sequences: the transactional producer
     * then takes a new epoch after its abort. Called under {@code lock}.
     */
    void takeUnsentLocked(List<ProducerBatch> out) {
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
                out.add(b);
            }
        }
    }

    /**
     * Takes {@code batch} out of its partition's queue, if it is still there; a stamped one (a half of
     * a split batch, stamped before compression) leaves a hole in the sequences. Returns whether it
     * was there. Called under {@code lock}, off the sender ({@link ProducerCompressionOutcomes}).
     */
    boolean dropLocked(ProducerBatch batch) {
        ProducerPartitionQueue q = queues.get(batch.tp);
        boolean removed = q.batches.remove(batch);
        if (removed && batch.producerId != RecordBatchLayout.NO_PRODUCER_ID) {
            idempotence.failed(batch, q.sequences);
        }
        return removed;
    }

    /**
     * Fails {@code batch}, out of its queue already, on the thread that was compressing it: counts the
     * failure, makes a transaction abortable before the callbacks run (a commit after them must
     * fail), completes the callbacks ({@link #completing}: maybe on an application thread) and {@link
     * #finish}es it. Not under {@code lock}.
     */
    void failOffSender(ProducerBatch batch, StellflowException error) {
        metrics.sendFailed(ClientMetrics.result(error.errorCode(), false));
        ProducerTransactions txn = transactions;
        if (txn != null) {
            txn.batchFailed(error.errorCode());
        }
        completing.enter();
        try {
            batch.fail(error);
        } finally {
            completing.exit();
            finish(List.of(batch));
        }
    }

    /**
     * Makes this the accumulator of a transactional producer: a batch that fails while it is
     * compressed (a codec failure, or compressed after a forced close) makes the transaction
     * abortable before that batch's callbacks run, as a batch failed by the sender does. Any thread.
     */
    void transactions(ProducerTransactions transactions) {
        this.transactions = transactions;
    }

    /** Counts batches out after their callbacks ran, so flush() returns with every record completed. */
    void finish(List<ProducerBatch> done) {
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
            wakeSenderLocked();
        } finally {
            lock.unlock();
        }
    }
}
