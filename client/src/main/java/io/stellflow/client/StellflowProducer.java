package io.stellflow.client;

import io.opentelemetry.api.OpenTelemetry;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends records to Stellflow partitions leaders, batched per partition (see {@link
 * ProducerConfig}: {@code batch.size}, {@code linger.ms}, {@code acks}, {@code
 * max.in.flight.requests.per.connection}, {@code retries}).
 *
 * <p>{@link #send(ProducerRecord)} returns a future that completes with the record's offset once the
 * broker acknowledged its batch (with {@code acks=0} the broker still answers, {@code
 * docs/spec/wire-protocol.md} decision 9.i, so the offset is known too), or fails with a {@link
 * StellflowException} carrying the error code; {@link #send(ProducerRecord, Callback)} calls a
 * {@link Callback} with the same outcome instead. Records sent to one partition are written in
 * {@code send} order, retries included (with more than one request in flight, strictly so only when
 * idempotent, the default with {@code acks=all}, which also keeps a retry after a lost ack from
 * writing a batch twice: {@code enable.idempotence} in {@link ProducerConfig}, {@code
 * docs/exactly-once.md}).
 *
 * <p>With {@code transactional.id} the producer is transactional ({@link #initTransactions}, {@link
 * #beginTransaction}, {@link #commitTransaction}, {@link #abortTransaction}; {@code
 * docs/exactly-once.md}, "Our producer: transactions"): records are sent only inside a transaction
 * and become visible to {@code read_committed} consumers all at once when it commits.
 *
 * <p>Thread-safety: thread-safe; many threads may send concurrently. Futures complete and callbacks
 * run on the client's I/O thread (or on the sender thread when the answer came back before the
 * sender had attached its completion to the request). Those of a batch that expired or that a forced
 * {@link #close(Duration)} failed run on the sender thread; those of a batch whose compression
 * failed, or that such a close failed while it was compressed, on the thread that was compressing
 * it (the compressor thread, or one in {@code send} or {@link #flush}); those of records an {@link
 * #abortTransaction} fails unsent on the aborting thread. They must be short and must not block (and
 * must not call {@link #flush}); a {@link #close} from one of them does not wait ({@link
 * #close(Duration)}). With {@code compression.type} set, a {@code send} that seals a batch or finds
 * one waiting for a codec may compress it before returning ({@code docs/compression.md}).
 */
public final class StellflowProducer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StellflowProducer.class);
    private final ProducerConfig config;
    private final NetworkClient network;
    private final MetadataCache metadata;
    private final Partitioner partitioner = new Partitioner();
    /** Per topic, its TopicPartition keys by partition (grows when the partition count grows). */
    private final Map<String, TopicPartition[]> topicPartitions = new ConcurrentHashMap<>();

    private final ProducerSender sender;
    /** With {@code transactional.id}: the transaction state machine; null otherwise. */
    private final ProducerTransactions transactions;

    private final Thread senderThread;
    /** The compressor thread with {@code compression.type} set ({@link ProducerCompressionQueue}); null without. */
    private final Thread compressorThread;
    /** Set by the first {@link #close(Duration)}; {@code send} refuses records from then on. */
    private final AtomicBoolean closed = new AtomicBoolean();

    public StellflowProducer(Properties props) {
        this(ProducerConfig.from(props));
    }

    public StellflowProducer(ProducerConfig config) {
        this(config, null);
    }

    /**
     * A producer that registers the client metrics of {@code docs/spec/metrics.md} ({@code
     * client.type} producer, {@link ClientMetrics}) on {@code openTelemetry}.
     *
     * @param openTelemetry the application's OpenTelemetry, or null for no metrics
     */
    public StellflowProducer(Properties props, OpenTelemetry openTelemetry) {
        this(ProducerConfig.from(props), openTelemetry);
    }

    /** As {@link #StellflowProducer(Properties, OpenTelemetry)}. */
    public StellflowProducer(ProducerConfig config, OpenTelemetry openTelemetry) {
        this(config, openTelemetry, ProducerCompression.of(config));
    }

    /**
     * With {@code compression} instead of the config's (null for none): tests give one whose codec
     * fails. With compression a second thread, the compressor, compresses sealed batches beside the
     * sender ({@link ProducerCompressionQueue}); it ends after the sender.
     */
    StellflowProducer(ProducerConfig config, OpenTelemetry openTelemetry, ProducerCompression compression) {
        this.config = config;
        this.network = new NetworkClient(config.common(), new ClientMetrics(openTelemetry, "producer"));
        this.metadata = new MetadataCache(network);
        this.sender = new ProducerSender(config, network, metadata, compression);
        this.transactions = config.transactional()
                ? new ProducerTransactions(
                        config.transactionalId(),
                        config.transactionTimeoutMs(),
                        new TransactionCoordinatorCalls(network, metadata, config),
                        new SenderBatches(sender),
                        transactionalOffsets(new TxnOffsetCommitCall(network, metadata), config.maxBlockMs()))
                : null;
        sender.transactions(transactions);
        Runnable compressor = sender.compressor();
        this.compressorThread = compressor == null
                ? null
                : Thread.ofPlatform()
                        .name("stellflow-producer-compressor-" + config.common().clientId())
                        .daemon(true)
                        .start(compressor);
        this.senderThread = Thread.ofPlatform()
                .name("stellflow-producer-sender-" + config.common().clientId())
                .daemon(true)
                .start(sender);
    }

    /**
     * Queues one record. Blocks only while waiting for the topic's metadata on first use or for
     * {@code buffer.memory} (at most {@code max.block.ms}); failures of that wait fail the future. A
     * record larger than {@code max.request.size} or {@code buffer.memory} when serialized fails the
     * future at once with a {@link RecordTooLargeException}.
     *
     * @throws IllegalStateException when the producer is closed
     */
    public CompletableFuture<RecordMetadata> send(ProducerRecord record) {
        RecordFuture future = new RecordFuture();
        send(record, future);
        return future;
    }

    /**
     * Queues one record and calls {@code callback} once when it is acknowledged or has failed, without
     * a future: one object fewer per record than {@link #send(ProducerRecord)}. Blocks as that method
     * does; an error found before the record is queued (a record too large, unknown partition, {@code
     * max.block.ms} passed, interrupted) is given to {@code callback} on the calling thread. A null callback sends without
     * being told the outcome (as Kafka's {@code send(record, null)}).
     *
     * @throws IllegalStateException when the producer is closed
     */
    public void send(ProducerRecord record, Callback callback) {
        if (closed.get()) {
            throw new IllegalStateException("producer is closed");
        }
        if (transactions != null) {
            StellflowException refused = transactions.checkSend(); // outside a transaction: throws
            if (refused != null) {
                ProducerBatch.call(callback, null, refused);
                return;
            }
        }
        try {
            checkRecordSize(record);
            int numPartitions = partitionCount(record.topic());
            int partition;
            if (record.partition() != null) {
                partition = record.partition();
                if (partition >= numPartitions) {
                    throw new StellflowException(
                            Errors.UNKNOWN_TOPIC_OR_PARTITION,
                            "partition " + partition + " of " + record.topic() + " does not exist (" + numPartitions
                                    + " partitions)");
                }
            } else {
                partition = partitioner.partition(record.topic(), record.key(), numPartitions);
            }
            long ts = record.timestampMs() == ProducerRecord.NO_TIMESTAMP
                    ? System.currentTimeMillis()
                    : record.timestampMs();
            boolean sticky = record.partition() == null && record.key() == null;
            ProducerAccumulator.AppendResult r = sender.append(
                    topicPartition(record.topic(), partition, numPartitions),
                    ts,
                    record.key(),
                    record.value(),
                    callback,
                    sticky);
            if (r == ProducerAccumulator.AppendResult.ABORTED_NEW_BATCH) {
                // The sticky partition's batch is done: move on and open the new batch there instead.
                partitioner.onBatchFull(record.topic(), partition, numPartitions);
                partition = partitioner.partition(record.topic(), null, numPartitions);
                r = sender.append(
                        topicPartition(record.topic(), partition, numPartitions),
                        ts,
                        null,
                        record.value(),
                        callback,
                        false);
            }
            if (r == ProducerAccumulator.AppendResult.BATCH_FULL && sticky) {
                partitioner.onBatchFull(record.topic(), partition, numPartitions);
            }
        } catch (StellflowException e) {
            if (transactions != null) {
                transactions.batchFailed(e.errorCode()); // a record of the transaction is lost: abort only
            }
            ProducerBatch.call(callback, null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (transactions != null) {
                transactions.batchFailed(StellflowException.NETWORK_ERROR);
            }
            ProducerBatch.call(callback, null, e);
        }
    }

    /**
     * Kafka's {@code ensureValidRecordSize}: a record whose serialized size (the record and a batch
     * header: the smallest batch it can go in, uncompressed) is above {@code max.request.size} could
     * never be sent, and one above {@code buffer.memory} never be queued; its send fails at once,
     * before any wait for metadata or memory.
     *
     * @throws RecordTooLargeException naming the size, the topic and the limit's key and value
     */
    private void checkRecordSize(ProducerRecord record) {
        long bytes = serializedBytes(record.key(), record.value());
        if (bytes > config.maxRequestBytes()) {
            throw new RecordTooLargeException("record for topic " + record.topic() + " is " + bytes
                    + " bytes when serialized, larger than max.request.size=" + config.maxRequestBytes()
                    + ": nothing was sent; raise max.request.size or make the record smaller");
        }
        if (bytes > config.bufferMemoryBytes()) {
            throw new RecordTooLargeException("record for topic " + record.topic() + " is " + bytes
                    + " bytes when serialized, larger than buffer.memory=" + config.bufferMemoryBytes()
                    + " (the producer's memory for batches): nothing was sent; raise buffer.memory or make the"
                    + " record smaller");
        }
    }

    /** The bytes of a batch holding only this record, uncompressed (what {@link #checkRecordSize} judges). */
    static long serializedBytes(byte[] key, byte[] value) {
        return (long) RecordBatchLayout.HEADER_SIZE
                + ProducerBatch.RECORD_OVERHEAD
                + (key == null ? 0 : key.length)
                + (value == null ? 0 : value.length);
    }

    /** The partition's key, one instance per topic and partition (no allocation per record). */
    private TopicPartition topicPartition(String topic, int partition, int numPartitions) {
        TopicPartition[] tps = topicPartitions.get(topic);
        if (tps == null || tps.length < numPartitions) {
            TopicPartition[] grown = new TopicPartition[numPartitions];
            for (int p = 0; p < numPartitions; p++) {
                grown[p] = tps != null && p < tps.length ? tps[p] : new TopicPartition(topic, p);
            }
            topicPartitions.put(topic, grown);
            tps = grown;
        }
        return tps[partition];
    }

    /** The future of {@link #send(ProducerRecord)}: it is also the record's callback. */
    private static final class RecordFuture extends CompletableFuture<RecordMetadata> implements Callback {
        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            if (exception != null) {
                completeExceptionally(exception);
            } else {
                complete(metadata);
            }
        }
    }

    /** The partitions of {@code topic} from Metadata (refreshing it when needed). */
    public List<PartitionInfo> partitionsFor(String topic) {
        partitionCount(topic);
        return metadata.topic(topic).partitions();
    }

    private int partitionCount(String topic) {
        TopicDescription t = metadata.topic(topic);
        if (t != null && t.errorCode() == Errors.NONE && !t.partitions().isEmpty()) {
            return t.partitions().size();
        }
        long startNs = System.nanoTime();
        long deadlineNs = startNs + TimeUnit.MILLISECONDS.toNanos(config.maxBlockMs());
        int attempts = 0;
        long lastWarnNs = 0;
        StellflowException last = null;
        while (attempts++ <= config.common().retries() && System.nanoTime() < deadlineNs) {
            try {
                long leftMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime()));
                t = metadata.refresh(List.of(topic))
                        .get(leftMs, TimeUnit.MILLISECONDS)
                        .get(topic);
                if (t != null && t.errorCode() == Errors.NONE && !t.partitions().isEmpty()) {
                    return t.partitions().size();
                }
                last = new StellflowException(
                        t == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : t.errorCode(),
                        "no metadata for topic " + topic);
                if (!last.retriable()) {
                    throw last;
                }
            } catch (ExecutionException e) {
                last = e.getCause() instanceof StellflowException se
                        ? se
                        : new StellflowException(Errors.UNKNOWN_SERVER_ERROR, "metadata for " + topic + " failed", e);
                if (!last.retriable()) {
                    throw last;
                }
            } catch (TimeoutException e) {
                // The deadline cut the last request short: an earlier answer says more than that.
                if (last == null) {
                    last = new StellflowException(
                            StellflowException.NETWORK_ERROR, "metadata for " + topic + " timed out");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
            }
            long nowNs = System.nanoTime();
            if (lastWarnNs == 0 || nowNs - lastWarnNs >= ProducerSender.RETRY_WARN_INTERVAL_NS) {
                lastWarnNs = nowNs;
                LOG.warn(
                        "metadata for topic {}: {} (attempt {}); waiting up to max.block.ms={}: {}",
                        topic,
                        ProduceErrors.codeName(last.errorCode()),
                        attempts,
                        config.maxBlockMs(),
                        last.getMessage());
            }
            sleepQuietly(Math.min(
                    config.common().retryBackoffMs(attempts),
                    Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime()))));
        }
        throw metadataTimeout(topic, last, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs));
    }

    /**
     * The error of a send whose topic metadata did not come within {@code max.block.ms}: a topic the
     * brokers say does not exist, or no broker reachable; the code is the last attempt's.
     */
    private StellflowException metadataTimeout(String topic, StellflowException last, long waitedMs) {
        if (last == null) {
            return new StellflowException(
                    StellflowException.NETWORK_ERROR,
                    "topic " + topic + " not present in metadata after " + waitedMs + " ms (max.block.ms="
                            + config.maxBlockMs() + ")");
        }
        short code = last.errorCode();
        String what;
        if (code == Errors.UNKNOWN_TOPIC_OR_PARTITION) {
            what = "topic " + topic + " does not exist (the brokers answered UNKNOWN_TOPIC_OR_PARTITION;"
                    + " create it with stellflow-topics.sh --create, or enable auto.create.topics.enable on the"
                    + " brokers)";
        } else if (code == StellflowException.NETWORK_ERROR && metadata.neverAnswered()) {
            what = "no broker reachable at bootstrap.servers="
                    + joined(network.config().bootstrapServers()) + " (last error: " + last.getMessage()
                    + ")";
        } else {
            what = "no metadata for topic " + topic + "; last error " + ProduceErrors.codeName(code) + ": "
                    + last.getMessage();
        }
        return new StellflowException(
                code, what + "; gave up after " + waitedMs + " ms (max.block.ms=" + config.maxBlockMs() + ")", last);
    }

    private static String joined(List<HostPort> servers) {
        StringBuilder sb = new StringBuilder();
        for (HostPort hp : servers) {
            sb.append(sb.isEmpty() ? "" : ",").append(hp);
        }
        return sb.toString();
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- transactions (transactional.id)

    /**
     * Takes the producer id and a new epoch for {@code transactional.id} from its transaction
     * coordinator (InitProducerId v1 with {@code transaction.timeout.ms}), fencing every older producer
     * with the same id: their next transactional call throws {@link ProducerFencedException}. A
     * transaction the id left open is aborted first. Call once, before {@link #beginTransaction}.
     * Coordinator moves and {@code CONCURRENT_TRANSACTIONS} are retried for up to {@code
     * max.block.ms}.
     *
     * @throws IllegalStateException without {@code transactional.id}, or when already called
     * @throws StellflowException when the coordinator refused (its code; {@code INVALID_REQUEST} for a
     *     {@code transaction.timeout.ms} above the brokers' {@code transaction.max.timeout.ms}) or did not
     *     answer within {@code max.block.ms}; the call may be repeated
     */
    public void initTransactions() {
        transactions().initTransactions();
    }

    /**
     * Opens a transaction (BeginTransaction v1, which answers the transaction's sequence; every
     * Produce and the End of the transaction carry it). Records sent until {@link #commitTransaction}
     * or {@link #abortTransaction} belong to it; {@code send} outside a transaction throws {@link
     * IllegalStateException}.
     *
     * @throws IllegalStateException without {@code transactional.id}, before {@link
     *     #initTransactions}, or while a transaction is open
     * @throws ProducerFencedException when another producer took over the id (fatal: close this one)
     * @throws StellflowException when the coordinator refused or did not answer in {@code max.block.ms}
     */
    public void beginTransaction() {
        transactions().beginTransaction();
    }

    /**
     * Commits the open transaction: flushes its records, then EndTransaction v1 (commit), answered once
     * the COMMIT markers are in every partition of the transaction and replicated. Records of the
     * transaction then become visible to {@code read_committed} consumers, all at once.
     *
     * @throws IllegalStateException without an open transaction
     * @throws ProducerFencedException when another producer took over the id (fatal)
     * @throws StellflowException when a record of the transaction failed (its code; the cause says
     *     which) or the coordinator refused: the transaction can then only be aborted ({@link
     *     #abortTransaction}); or when the End was not answered within {@code max.block.ms}: call {@code
     *     commitTransaction} again
     */
    public void commitTransaction() {
        try {
            transactions().commitTransaction();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "commitTransaction interrupted", e);
        }
    }

    /**
     * Aborts the open transaction: records not sent yet fail at once with {@link
     * TransactionAbortedException} (their callbacks and futures), the records in flight are waited for,
     * then EndTransaction v1 (abort); nothing of the transaction is ever visible to {@code
     * read_committed} consumers. Also the way out of a failed commit or a failed record.
     *
     * @throws IllegalStateException without an open or failed transaction, or while a commit is under
     *     way or after one whose End was not answered (it may have committed: call {@code
     *     commitTransaction} again, as Kafka's producer requires)
     * @throws ProducerFencedException when another producer took over the id (fatal)
     * @throws StellflowException when the coordinator refused or did not answer within {@code
     *     max.block.ms}: call {@code abortTransaction} again
     */
    public void abortTransaction() {
        try {
            transactions().abortTransaction();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "abortTransaction interrupted", e);
        }
    }

    /**
     * Commits a consumer group's offsets (per partition, the next offset to read) as part of the open
     * transaction: they take effect only if it commits (consume-transform-produce).
     *
     * @throws IllegalStateException without an open transaction
     * @throws IllegalArgumentException for null offsets or a null or empty group id
     * @throws StellflowException when the group coordinator refuses the offsets (a fenced producer,
     *     an unknown transaction) or does not answer within {@code max.block.ms}; the transaction is
     *     then abortable
     */
    public void sendOffsetsToTransaction(Map<TopicPartition, Long> offsets, String groupId) {
        transactions().sendOffsetsToTransaction(offsets, groupId);
    }

    /**
     * The producer's TxnOffsetCommit (apiKey 31, {@code docs/exactly-once.md}, "Transactional offset
     * commits"): no member id, so the producer epoch fences (Kafka before KIP-447).
     */
    private static ProducerTransactions.TransactionalOffsetSender transactionalOffsets(
            TxnOffsetCommitCall call, long maxBlockMs) {
        return (id, producerId, epoch, sequence, groupId, offsets) ->
                call.commit(id, producerId, epoch, sequence, groupId, null, -1, offsets, maxBlockMs);
    }

    /** The transaction state machine (tests drive it as the I/O thread would). */
    ProducerTransactions transactions() {
        if (transactions == null) {
            throw new IllegalStateException("the producer has no transactional.id: transactions need one");
        }
        return transactions;
    }

    /** The sender as the transactions see it. */
    private record SenderBatches(ProducerSender sender) implements ProducerTransactions.Batches {
        @Override
        public void producerId(long producerId, short epoch) {
            sender.producerId(producerId, epoch);
        }

        @Override
        public void flush() throws InterruptedException {
            sender.flush();
        }

        @Override
        public int failUnsent(StellflowException error) {
            return sender.failUnsent(error);
        }

        @Override
        public boolean producerIdResetNeeded() {
            return sender.producerIdResetNeeded();
        }
    }

    /**
     * Sends every accumulated record now and blocks until each is acknowledged or failed.
     *
     * @throws InterruptedException when interrupted while waiting
     */
    public void flush() throws InterruptedException {
        sender.flush();
    }

    /** The sender; tests reach its seams ({@link ProducerSender#splitBuiltHook}). */
    ProducerSender sender() {
        return sender;
    }

    /** Where the batches get their (uncompressed) buffers; tests count its allocations. */
    ProducerBufferPool batchBuffers() {
        return sender.batchBuffers();
    }

    /**
     * Closes the producer, gracefully for up to {@code delivery.timeout.ms}, then forcefully: {@link
     * #close(Duration)}. Unlike Kafka's {@code close()}, which waits without a bound, this one is
     * bounded: a record in flight to a broker that does not answer (a request is not expired while it
     * is in flight) is failed by the forced close rather than waited for.
     */
    @Override
    public void close() {
        close(Duration.ofMillis(config.deliveryTimeoutMs()));
    }

    /**
     * Closes the producer, gracefully for at most {@code timeout} in all, then forcefully, as Kafka's
     * producer:
     *
     * <ul>
     *   <li>Graceful: {@code send} refuses records from now on ({@link IllegalStateException}, also
     *       for one waiting for {@code buffer.memory}); everything accumulated is sent, and close
     *       returns once each record is acknowledged or has failed. A transactional producer first
     *       aborts a transaction left open (as Kafka's does), so its partitions' last stable offsets
     *       do not wait for {@code transaction.timeout.ms}; a failed abort is logged, not thrown, and
     *       one not finished in time goes on and fails with the connections.
     *   <li>Forced, once {@code timeout} passed with records outstanding, at once for a zero
     *       timeout: the sender stops, and every record not acknowledged yet (queued, in flight,
     *       waiting to be split) fails with a {@link ProducerClosedException} saying "producer is
     *       closed forcefully" (code {@link StellflowException#NETWORK_ERROR}, not retriable; one that
     *       was in flight may be stored all the same). Their callbacks and futures complete on the producer's sender
     *       thread before close returns, except those of a batch being compressed: it fails on the
     *       thread compressing it as soon as its codec returns (its bytes are that thread's until
     *       then). A {@link #flush} waiting in another thread returns; a {@link #commitTransaction}
     *       waiting in its flush throws (records of the transaction are lost: it can only abort). An
     *       open transaction is not aborted: the coordinator aborts it after {@code
     *       transaction.timeout.ms}.
     * </ul>
     *
     * <p>Called from a send's callback or future stage the timeout is 0 (with a WARN saying why), and
     * close does not wait for the sender to fail the records outstanding: it does so right after, on
     * its thread. That holds on the producer's own threads (the I/O thread, the sender, the
     * compressor) and on any thread while it runs callbacks of records still outstanding: an
     * application thread whose compression of a batch failed (in {@code send} or {@link #flush}), or
     * whose {@link #abortTransaction} fails the records not sent. Those records complete only once
     * the callback returns, so waiting for them could only last the whole timeout. Idempotent; a close called
     * while another waits closes as its own timeout says, so {@code close(Duration.ZERO)} forces a
     * close that is waiting (as in Kafka).
     *
     * @param timeout how long to wait for the records outstanding; zero: not at all
     * @throws IllegalArgumentException when {@code timeout} is negative (as Kafka's)
     */
    public void close(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("close timeout must not be negative: " + timeout);
        }
        boolean ownThread = Thread.currentThread() == senderThread
                || Thread.currentThread() == compressorThread
                || network.inIoThread();
        // An application thread running callbacks of batches still outstanding (their codec failed
        // on it, or its abort fails them): they complete once this callback returns.
        boolean completing = !ownThread && sender.completingOnThisThread();
        if ((ownThread || completing) && timeout.isPositive()) {
            // A send's callback or future stage runs on the client's I/O thread (or the sender's, or
            // the compressor's, or a thread completing batches): waiting there for the sender, an
            // abort or this thread itself could only time out or deadlock. Kafka's producer closes
            // with timeout 0 from a callback too.
            LOG.warn(
                    ownThread
                            ? "close() called from a send callback (the producer's own thread {}): closing"
                                    + " without waiting (timeout 0)"
                            : "close() called from a send callback on thread {}, which completes the producer's"
                                    + " batches (a codec failure there, or an abort's unsent records) that"
                                    + " the close would wait for: closing without waiting (timeout 0)",
                    Thread.currentThread().getName());
            timeout = Duration.ZERO;
        }
        long startNs = System.nanoTime();
        if (closed.compareAndSet(false, true) && transactions != null && timeout.isPositive()) {
            abortWithin(timeout); // the sender still runs: the abort flushes and sends End
        }
        sender.initiateClose();
        boolean interrupted = false;
        boolean senderDone;
        try {
            senderDone = senderThread.join(timeout.minusNanos(System.nanoTime() - startNs)); // none left: no wait
        } catch (InterruptedException e) {
            interrupted = true;
            senderDone = false;
        }
        if (!senderDone) {
            LOG.info(
                    "close: records still outstanding after the close timeout of {} ms; closing forcefully"
                            + " (they fail with \"producer is closed forcefully\")",
                    Math.max(0, timeout.toMillis()));
            sender.forceClose();
            if (!ownThread && !completing) {
                interrupted |= joinUninterruptibly(senderThread); // it fails what is left, then ends
            }
        }
        network.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits for {@code thread} to end whatever interrupts come (a forced close's sender: failing the
     * records left takes it a few ms); returns whether the caller was interrupted meanwhile.
     */
    private static boolean joinUninterruptibly(Thread thread) {
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                return interrupted;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
    }

    /**
     * Aborts a transaction left open, waiting at most {@code timeout} (the abort's own calls may take
     * up to {@code max.block.ms}): one that has not finished by then goes on while the producer closes
     * and fails with the connections (logged; the coordinator aborts at {@code transaction.timeout.ms}).
     */
    private void abortWithin(Duration timeout) {
        Thread abort = Thread.ofVirtual()
                .name("stellflow-producer-close-abort-" + config.common().clientId())
                .start(transactions::abortOnClose);
        try {
            if (!abort.join(timeout)) {
                LOG.warn(
                        "close: the abort of the open transaction did not finish within {} ms; closing anyway"
                                + " (the coordinator aborts it after transaction.timeout.ms)",
                        timeout.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
