package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.netty.util.Timer;
import io.stellflow.broker.append.AppendService;
import io.stellflow.broker.append.CompressionRefusals;
import io.stellflow.broker.append.CompressionRewriter;
import io.stellflow.broker.append.IdempotentBatches;
import io.stellflow.broker.append.PendingProduce;
import io.stellflow.broker.network.ConnectionHandler;
import io.stellflow.broker.network.EventLoopApiHandler;
import io.stellflow.broker.network.ReadGate;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.RequestTelemetry;
import io.stellflow.broker.telemetry.TopicThroughput;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.broker.transaction.TxnRegistrations;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.ProduceRequest;
import io.stellflow.protocol.message.ProduceRequest.PartitionData;
import io.stellflow.protocol.message.ProduceRequest.TopicData;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.storage.InvalidRecordException;
import io.stellflow.storage.LogCompression;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Produce (apiKey 2, {@code docs/spec/wire-protocol.md} §6.3). Request-level checks (acks,
 * timeoutMs, empty or duplicate entries) are done by {@link ProduceRequest#read}. Per partition, in
 * the spec's order:
 *
 * <ol>
 *   <li>unknown topic or partition: {@code UNKNOWN_TOPIC_OR_PARTITION} (unless auto-created); a
 *       partition another broker leads: {@code NOT_LEADER_OR_FOLLOWER}; no leader:
 *       {@code LEADER_NOT_AVAILABLE} ({@link PartitionRouter});
 *   <li>records null or empty, or invalid per §7.7: {@code INVALID_RECORD}, {@code CORRUPT_MESSAGE},
 *       {@code FEATURE_NOT_ENABLED} (compression), {@code MESSAGE_TOO_LARGE} (a batch above the
 *       topic's {@code max.message.bytes}, else the broker's {@code message.max.bytes}; also after
 *       the topic's {@code compression.type} rewrote it);
 *   <li>a compressed batch on a log with {@code compression.produce.policy=refuse}:
 *       {@code FEATURE_NOT_ENABLED}, nothing appended ({@code docs/compression.md}, "SDK policy");
 *   <li>transactional data (a transactionalId): the partition is registered with the transaction's
 *       coordinator first ({@link TxnRegistrations}; its refusal {@code INVALID_TXN_STATE} or {@code
 *       INVALID_PRODUCER_EPOCH} is the answer), then the one batch is appended with the transaction's
 *       sequence ({@link Partition#appendTransactionalAsLeader}: a BEGIN marker before the producer's
 *       first batch here); a Produce v2 carries the transaction's sequence, and one of another
 *       transaction than the id's ONGOING one is {@code INVALID_TXN_STATE}; without registrations,
 *       {@code FEATURE_NOT_ENABLED};
 *       idempotent data (producerId &gt;= 0): exactly one batch per partition ({@code INVALID_RECORD}
 *       otherwise), appended through the partition's producer state ({@link IdempotentBatches}:
 *       {@code OUT_OF_ORDER_SEQUENCE_NUMBER}, {@code INVALID_PRODUCER_EPOCH}; an exact retry gets its
 *       original offset);
 *   <li>acks=-1 and the partition's committed ISR smaller than its {@code min.insync.replicas}:
 *       {@code NOT_ENOUGH_REPLICAS}, nothing appended (checked before the hand-off);
 *   <li>append as leader; a write failure gives {@code BROKER_NOT_AVAILABLE} (STORAGE_ERROR's v0
 *       fallback) and nothing is acknowledged.
 * </ol>
 *
 * <p>With append agents ({@code num.append.agents} &gt; 0, {@link AppendService}) steps 2-5 run on
 * the partition's agent; otherwise on the request thread. With agents, a request whose topics are
 * all known here and whose partitions' queues are at most half full is decoded and handed off on
 * the event loop ({@link #decodeIfNonBlocking}, {@code produce.event.loop.handoff}); one that may
 * wait (a topic to auto-create, a queue filling up) goes through the request handler pool.
 *
 * <p>acks 0 and 1 are answered after the local append (decision 9.i). acks=-1 is answered once the
 * partition's high watermark passed the appended records ({@link PendingProduce#appended}: parked in
 * the timer wheel, no thread held), with {@code REQUEST_TIMED_OUT} after timeoutMs; on a single node
 * or with an ISR of the leader alone the HW moves with the append, so it answers at once.
 *
 * <p>Versions: v0 (spec §6.3) and v1 (same bytes; its responses may carry the codes 32..34 of
 * docs/protocol-additions.md, which v0 responses replace by 7 BROKER_NOT_AVAILABLE).
 *
 * <p>Back pressure: a full append queue ({@link AppendService#BACK_PRESSURED}) pauses the
 * connection's reads; a request thread waits for room, the event loop hands the rest of the request
 * to the pool in the connection's order. No request is dropped.
 *
 * <p>Thread-safety: stateless; a partition's appends are made by its append agent (without agents:
 * by request threads, one at a time under the log's write lock).
 */
public final class ProduceHandler implements EventLoopApiHandler<ProduceRequest> {
    private static final Logger LOG = LoggerFactory.getLogger(ProduceHandler.class);

    /** logAppendTimeMs is always -1 in v0 (CreateTime only). */
    static final long NO_LOG_APPEND_TIME = -1L;

    private final PartitionRouter topics;
    private final int messageMaxBytes;
    private final AppendService appends;
    private final BrokerMetrics metrics;
    private final Timer timer;
    private final ThreadLocal<CompressedRecordsValidator> compressedValidators;
    private final long compressionMaxDecompressedBytes;
    private final CompressionRefusals compressionRefusals = new CompressionRefusals(System::nanoTime);
    /** The transactional path; null: transactional Produce is FEATURE_NOT_ENABLED. */
    private final TransactionalProduce transactional;

    /**
     * Appends on the request thread (no append agents).
     *
     * @param topics topic lookups (with auto-creation policy)
     * @param messageMaxBytes {@code message.max.bytes}: largest whole batch in bytes (topics without {@code
     *     max.message.bytes})
     */
    public ProduceHandler(PartitionRouter topics, int messageMaxBytes) {
        this(topics, messageMaxBytes, null);
    }

    /**
     * @param topics topic lookups (with auto-creation policy)
     * @param messageMaxBytes {@code message.max.bytes}: largest whole batch in bytes (topics without {@code
     *     max.message.bytes})
     * @param appends the append agents, or null to append on the request thread
     */
    public ProduceHandler(PartitionRouter topics, int messageMaxBytes, AppendService appends) {
        this(topics, messageMaxBytes, appends, RequestTelemetry.NONE.metrics());
    }

    /**
     * @param topics topic lookups (with auto-creation policy)
     * @param messageMaxBytes {@code message.max.bytes}: largest whole batch in bytes (topics without {@code
     *     max.message.bytes})
     * @param appends the append agents, or null to append on the request thread
     * @param metrics where appends on the request thread count bytes and records (the agents count
     *     into their own)
     */
    public ProduceHandler(PartitionRouter topics, int messageMaxBytes, AppendService appends, BrokerMetrics metrics) {
        this(topics, messageMaxBytes, appends, metrics, null);
    }

    /**
     * @param topics topic lookups (with auto-creation policy)
     * @param messageMaxBytes {@code message.max.bytes}: largest whole batch in bytes (topics without {@code
     *     max.message.bytes})
     * @param appends the append agents, or null to append on the request thread
     * @param metrics where appends on the request thread count bytes and records
     * @param timer the timer wheel expiring acks=-1 waits; null: a shared daemon timer (tests)
     */
    public ProduceHandler(
            PartitionRouter topics, int messageMaxBytes, AppendService appends, BrokerMetrics metrics, Timer timer) {
        this(
                topics,
                messageMaxBytes,
                appends,
                metrics,
                timer,
                CompressedRecordsValidator.DEFAULT_MAX_DECOMPRESSED_BYTES);
    }

    /**
     * As the other constructors, with {@code compression.max.decompressed.bytes}, the cap of the
     * compressed-batch validators of the request threads (used without append agents; the agents
     * have their own).
     */
    public ProduceHandler(
            PartitionRouter topics,
            int messageMaxBytes,
            AppendService appends,
            BrokerMetrics metrics,
            Timer timer,
            long compressionMaxDecompressedBytes) {
        this(topics, messageMaxBytes, appends, metrics, timer, compressionMaxDecompressedBytes, null);
    }

    /**
     * As the other constructors, with the registrations of transactional batches ({@link
     * TxnRegistrations}); null refuses transactional Produce with {@code FEATURE_NOT_ENABLED}.
     */
    public ProduceHandler(
            PartitionRouter topics,
            int messageMaxBytes,
            AppendService appends,
            BrokerMetrics metrics,
            Timer timer,
            long compressionMaxDecompressedBytes,
            TxnRegistrations registrations) {
        this.transactional = registrations == null
                ? null
                : new TransactionalProduce(topics, registrations, new TransactionalProduce.Appender() {
                    @Override
                    public void append(
                            PendingProduce pending,
                            int slot,
                            Partition partition,
                            PartitionData data,
                            ByteBuf held,
                            long sequence) {
                        appendTransactional(pending, slot, partition, data, held, sequence);
                    }

                    @Override
                    public boolean appendWithoutWaiting(
                            PendingProduce pending,
                            int slot,
                            Partition partition,
                            PartitionData data,
                            ByteBuf held,
                            long sequence) {
                        return appendTransactionalWithoutWaiting(pending, slot, partition, data, held, sequence);
                    }
                });
        // Request threads live as long as the broker: one validator each, never closed (its native
        // codec state goes with the thread's end, as the JDK's Inflater in it does).
        this.compressedValidators = ThreadLocal.withInitial(
                () -> new CompressedRecordsValidator(compressionMaxDecompressedBytes, metrics.compression()));
        this.compressionMaxDecompressedBytes = compressionMaxDecompressedBytes;
        this.topics = topics;
        this.messageMaxBytes = messageMaxBytes;
        this.appends = appends;
        this.metrics = metrics;
        this.timer = timer != null ? timer : SharedTimer.TIMER;
    }

    /** The timer of handlers built without one, created on first use. */
    private static final class SharedTimer {
        static final Timer TIMER = new io.stellflow.broker.network.QuietTimer(
                new io.netty.util.concurrent.DefaultThreadFactory("sf-produce-timer", true), 10);
    }

    /**
     * Produce v0, v1 (the same layout, responses may carry codes 32..34) and v2 (the request carries
     * the transaction sequence; only transactional producers send it).
     */
    @Override
    public short maxVersion() {
        return ProduceRequest.VERSION_WITH_TXN_SEQUENCE;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        handle(context, ProduceRequest.read(body, context.header().apiVersion()), false);
    }

    /** v2 (our transactional producer's) always goes to the request pool; v0 and v1 as below. */
    @Override
    public ProduceRequest decodeIfNonBlocking(ByteBuf body, short apiVersion) {
        return apiVersion >= ProduceRequest.VERSION_WITH_TXN_SEQUENCE ? null : decodeIfNonBlocking(body);
    }

    /**
     * The request when append agents take it and nothing on its path can wait: every topic is known
     * here ({@link PartitionRouter#producibleWithoutWaiting}) and every partition led here has an
     * append queue at most half full ({@link AppendService#hasRoom}); else null (the request handler
     * pool takes it).
     */
    @Override
    public ProduceRequest decodeIfNonBlocking(ByteBuf body) {
        if (appends == null) {
            return null;
        }
        ProduceRequest request = ProduceRequest.read(body);
        if (request.transactionalId() != null) {
            return null; // registering a partition may wait for its coordinator: on the pool
        }
        for (TopicData t : request.topicData()) {
            if (!topics.producibleWithoutWaiting(t.topic())) {
                return null;
            }
            for (PartitionData p : t.partitions()) {
                Partition partition = topics.leaderPartition(t.topic(), p.partition());
                if (partition != null && !appends.hasRoom(partition)) {
                    return null;
                }
            }
        }
        return request;
    }

    @Override
    public void handleDecoded(RequestContext context, ProduceRequest request) {
        handle(context, request, true);
    }

    private void handle(RequestContext context, ProduceRequest request, boolean onEventLoop) {
        int partitionCount = 0;
        long bytes = 0;
        for (TopicData t : request.topicData()) {
            for (PartitionData p : t.partitions()) {
                partitionCount++;
                bytes += p.records() == null ? 0 : p.records().readableBytes();
            }
        }
        context.recordStats(partitionCount, bytes, 0);
        if (request.transactionalId() != null && transactional != null) {
            transactional.produce(context, request, newPending(context, request));
            return;
        }
        if (appends != null) {
            handOff(context, request, onEventLoop);
            return;
        }
        boolean transactional = request.transactionalId() != null;
        PendingProduce pending = newPending(context, request);
        int slot = 0;
        for (TopicData topicData : request.topicData()) {
            short topicError = topics.prepareForProduce(topicData.topic());
            for (PartitionData data : topicData.partitions()) {
                int s = slot++;
                if (topicError != Errors.NONE) {
                    pending.complete(s, error(data.partition(), topicError, -1, -1L));
                    continue;
                }
                Partition partition = topics.leaderPartition(topicData.topic(), data.partition());
                if (partition == null) {
                    pending.complete(
                            s, error(data.partition(), topics.errorFor(topicData.topic(), data.partition()), -1, -1L));
                } else if (request.acks() == -1 && partition.inSyncReplicaCount() < partition.minInsyncReplicas()) {
                    pending.complete(s, notEnoughReplicas(partition, data.partition()));
                } else {
                    produce(pending, s, partition, data, transactional);
                }
            }
        }
    }

    private PendingProduce newPending(RequestContext context, ProduceRequest request) {
        int topicCount = request.topicData().size();
        String[] names = new String[topicCount];
        int slots = 0;
        for (TopicData t : request.topicData()) {
            slots += t.partitions().size();
        }
        int[] topicOfSlot = new int[slots];
        int slot = 0;
        for (int t = 0; t < topicCount; t++) {
            TopicData topicData = request.topicData().get(t);
            names[t] = topicData.topic();
            for (int i = 0; i < topicData.partitions().size(); i++) {
                topicOfSlot[slot++] = t;
            }
        }
        return new PendingProduce(context, names, topicOfSlot, request.acks(), request.timeoutMs(), timer);
    }

    /**
     * NOT_ENOUGH_REPLICAS ({@code docs/spec/wire-protocol.md} §6.3 step 7): acks=-1 with an ISR
     * below min.insync.replicas; nothing appended.
     */
    static PartitionResponse notEnoughReplicas(Partition partition, int partitionId) {
        return error(partitionId, Errors.NOT_ENOUGH_REPLICAS, partition.leaderEpoch(), partition.logStartOffset());
    }

    /**
     * The agent path: errors known without the log are answered in their slot at once; every other
     * partition's records are RETAINED (a slice of the request frame, no copy) and handed to its
     * append agent, which validates, appends, releases and fills the slot. The last slot filled sends
     * the response. Hand-offs run in request order (on the event loop, or on the connection's serial
     * executor when an earlier request of the connection is still there), so a connection's batches
     * for one partition are queued (and appended) in the order sent.
     */
    private void handOff(RequestContext context, ProduceRequest request, boolean onEventLoop) {
        PendingProduce pending = newPending(context, request);
        ReadGate gate = context.channel().attr(ReadGate.KEY).get();
        handOff(context, request, pending, gate, 0, null, onEventLoop);
    }

    /**
     * Hands off slots {@code fromSlot} onwards; {@code held} is slot {@code fromSlot}'s records,
     * already retained (the rest of a request the event loop passed on), or null.
     *
     * <p>A full queue ({@link AppendService#BACK_PRESSURED}, the connection's reads paused): a request
     * thread parks and submits again until the agent made room; the event loop never waits, it
     * passes this slot and the later ones to the request pool in the connection's order ({@link
     * ConnectionHandler#executeInOrder}).
     */
    private void handOff(
            RequestContext context,
            ProduceRequest request,
            PendingProduce pending,
            ReadGate gate,
            int fromSlot,
            ByteBuf held,
            boolean onEventLoop) {
        boolean transactional = request.transactionalId() != null;
        int slot = 0;
        for (TopicData topicData : request.topicData()) {
            if (slot + topicData.partitions().size() <= fromSlot) {
                slot += topicData.partitions().size();
                continue;
            }
            String name = topicData.topic();
            // On the event loop a topic that disappeared since decodeIfNonBlocking looked is not
            // auto-created here (that may wait): the client retries, and its next request goes
            // through the pool.
            short topicError = onEventLoop && !topics.producibleWithoutWaiting(name)
                    ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                    : topics.prepareForProduce(name);
            for (PartitionData data : topicData.partitions()) {
                int s = slot++;
                if (s < fromSlot) {
                    continue;
                }
                ByteBuf mine = s == fromSlot ? held : null;
                Partition partition = topicError != Errors.NONE ? null : topics.leaderPartition(name, data.partition());
                if (topicError != Errors.NONE) {
                    release(mine);
                    pending.complete(s, error(data.partition(), topicError, -1, -1L));
                } else if (partition == null) {
                    release(mine);
                    pending.complete(s, error(data.partition(), topics.errorFor(name, data.partition()), -1, -1L));
                } else if (data.records() == null || !data.records().isReadable()) {
                    release(mine);
                    pending.complete(
                            s,
                            error(
                                    data.partition(),
                                    Errors.INVALID_RECORD,
                                    partition.leaderEpoch(),
                                    partition.logStartOffset()));
                } else if (request.acks() == -1 && partition.inSyncReplicaCount() < partition.minInsyncReplicas()) {
                    release(mine);
                    pending.complete(s, notEnoughReplicas(partition, data.partition()));
                } else {
                    ByteBuf records = mine != null ? mine : data.records().retainedSlice();
                    int code = appends.submit(partition, pending, s, records, transactional, gate);
                    if (code == AppendService.BACK_PRESSURED) {
                        if (onEventLoop) {
                            continueOnPool(context, request, pending, gate, s, records);
                            return;
                        }
                        code = submitWhenRoom(partition, pending, s, records, transactional);
                    }
                    if (code != AppendService.QUEUED) {
                        records.release();
                        pending.complete(s, notQueued(code, partition, data.partition()));
                    }
                }
            }
        }
    }

    /**
     * Request thread, after a {@link AppendService#BACK_PRESSURED} submit paused the connection's
     * reads: submits again every {@link AppendService#BACK_PRESSURE_PARK_NS} until the queue takes
     * it. The retries pass no gate: pausing again on each would register the connection for resuming
     * 20,000 times a second while the agent is stuck (a slow disk, a compaction swap).
     */
    private int submitWhenRoom(
            Partition partition, PendingProduce pending, int slot, ByteBuf records, boolean transactional) {
        return submitWhenRoom(partition, pending, slot, records, transactional, -1);
    }

    /** As above; {@code txnSequence} &gt;= 0 submits a registered transactional batch. */
    private int submitWhenRoom(
            Partition partition,
            PendingProduce pending,
            int slot,
            ByteBuf records,
            boolean transactional,
            long txnSequence) {
        int code;
        do {
            LockSupport.parkNanos(AppendService.BACK_PRESSURE_PARK_NS);
            if (Thread.currentThread().isInterrupted()) {
                return AppendService.CLOSED; // the pool is being stopped: the broker is closing
            }
            code = txnSequence >= 0
                    ? appends.submitTransactional(partition, pending, slot, records, txnSequence, null)
                    : appends.submit(partition, pending, slot, records, transactional, null);
        } while (code == AppendService.BACK_PRESSURED);
        return code;
    }

    /**
     * Appends one registered transactional batch ({@code held}: its retained records, released
     * here) with {@code sequence}, or answers {@code -sequence} as the partition's error code.
     */
    private void appendTransactional(
            PendingProduce pending, int slot, Partition partition, PartitionData data, ByteBuf held, long sequence) {
        if (sequence < 0) {
            held.release();
            pending.complete(
                    slot,
                    error(data.partition(), (short) -sequence, partition.leaderEpoch(), partition.logStartOffset()));
            return;
        }
        if (appends == null) {
            try {
                produce(pending, slot, partition, data, true, sequence);
            } finally {
                held.release();
            }
            return;
        }
        int code = appends.submitTransactional(partition, pending, slot, held, sequence, null);
        if (code == AppendService.BACK_PRESSURED) {
            code = submitWhenRoom(partition, pending, slot, held, true, sequence);
        }
        if (code != AppendService.QUEUED) {
            held.release();
            pending.complete(slot, notQueued(code, partition, data.partition()));
        }
    }

    /**
     * {@link #appendTransactional} when it cannot wait: an error answer, or a batch queued on an
     * append queue with room (true); false, with nothing done, when it would wait (no append agents:
     * the append itself is file I/O; a full queue).
     */
    private boolean appendTransactionalWithoutWaiting(
            PendingProduce pending, int slot, Partition partition, PartitionData data, ByteBuf held, long sequence) {
        if (sequence < 0) {
            appendTransactional(pending, slot, partition, data, held, sequence); // answers the error
            return true;
        }
        if (appends == null) {
            return false;
        }
        int code = appends.submitTransactional(partition, pending, slot, held, sequence, null);
        if (code == AppendService.BACK_PRESSURED) {
            return false;
        }
        if (code != AppendService.QUEUED) {
            held.release();
            pending.complete(slot, notQueued(code, partition, data.partition()));
        }
        return true;
    }

    /**
     * The event loop met a full queue at {@code slot} (holding its retained {@code records}): the
     * slots from there on are handed off on the request pool, after this connection's requests
     * already there and before its later ones. The later slots' records are slices of the frame the
     * event loop releases on return, so they are retained until the pool is done with them.
     */
    private void continueOnPool(
            RequestContext context,
            ProduceRequest request,
            PendingProduce pending,
            ReadGate gate,
            int slot,
            ByteBuf records) {
        List<ByteBuf> frameRefs = new ArrayList<>();
        int s = 0;
        for (TopicData t : request.topicData()) {
            for (PartitionData p : t.partitions()) {
                if (s++ > slot && p.records() != null) {
                    frameRefs.add(p.records().retain());
                }
            }
        }
        Runnable rest = () -> {
            try {
                handOff(context, request, pending, gate, slot, records, false);
            } finally {
                frameRefs.forEach(ByteBuf::release);
            }
        };
        ConnectionHandler connection =
                context.channel().attr(ConnectionHandler.KEY).get();
        if (connection == null) {
            rest.run(); // a channel without the broker's pipeline (a test): wait right here
            return;
        }
        try {
            connection.executeInOrder(rest);
        } catch (RejectedExecutionException e) {
            // The pool is shut down: the broker is closing.
            frameRefs.forEach(ByteBuf::release);
            records.release();
            s = 0;
            for (TopicData t : request.topicData()) {
                for (PartitionData p : t.partitions()) {
                    if (s >= slot) {
                        pending.complete(s, error(p.partition(), Errors.BROKER_NOT_AVAILABLE, -1, -1L));
                    }
                    s++;
                }
            }
        }
    }

    /** The answer for a partition {@link AppendService#submit} did not queue ({@code code}). */
    private static PartitionResponse notQueued(int code, Partition partition, int partitionId) {
        short error = code == AppendService.NOT_LEADER ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.BROKER_NOT_AVAILABLE;
        return error(partitionId, error, partition.leaderEpoch(), partition.logStartOffset());
    }

    private static void release(ByteBuf held) {
        if (held != null) {
            held.release();
        }
    }

    private void produce(
            PendingProduce pending, int slot, Partition partition, PartitionData data, boolean transactional) {
        produce(pending, slot, partition, data, transactional, -1);
    }

    private void produce(
            PendingProduce pending,
            int slot,
            Partition partition,
            PartitionData data,
            boolean transactional,
            long txnSequence) {
        PartitionResponse r = produce(partition, data, transactional, txnSequence);
        if (r.errorCode() != Errors.NONE) {
            pending.complete(slot, r);
        } else {
            int recordCount = RecordBatchValidator.totalRecordCount(data.records());
            pending.appended(slot, partition, r, r.baseOffset() + recordCount);
        }
    }

    private PartitionResponse produce(
            Partition partition, PartitionData data, boolean transactional, long txnSequence) {
        if (partition == null) {
            return error(data.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1L);
        }
        int epoch = partition.leaderEpoch();
        ByteBuf records = data.records();
        if (records == null || !records.isReadable()) {
            return error(data.partition(), Errors.INVALID_RECORD, epoch, partition.logStartOffset());
        }
        // Per request on this path (no append agents): the batches' real max timestamps (decision 9.s).
        BatchMaxTimestamps maxTimestamps = new BatchMaxTimestamps(4);
        CompressedRecordsValidator compressed = compressedValidators.get();
        compressed.requireKeys(partition.log().config().cleanupPolicy().compact());
        int maxMessageBytes = partition.maxMessageBytes(messageMaxBytes);
        short validation =
                RecordBatchValidator.validate(records, maxMessageBytes, transactional, maxTimestamps, compressed);
        if (validation != Errors.NONE) {
            if (compressed.outcome() != CompressedRecordsValidator.VALID) {
                compressionRefusals.refused(partition, Errors.name(validation), compressed);
            }
            return error(data.partition(), validation, epoch, partition.logStartOffset());
        }
        if (partition.log().config().compression().refuseCompressedProduce()) {
            int codecId = CompressionRewriter.firstCompressedCodec(records);
            if (codecId != CompressionType.NONE.id()) {
                compressionRefusals.refusedByPolicy(partition, CompressionType.forId(codecId));
                return error(data.partition(), Errors.FEATURE_NOT_ENABLED, epoch, partition.logStartOffset());
            }
        }
        if (transactional && txnSequence < 0) {
            return error(data.partition(), Errors.FEATURE_NOT_ENABLED, epoch, partition.logStartOffset());
        }
        int kind = IdempotentBatches.classify(records);
        if (kind == IdempotentBatches.INVALID || (transactional && kind != IdempotentBatches.IDEMPOTENT)) {
            // An idempotent Produce carries exactly one batch per partition (§6.12).
            return error(data.partition(), Errors.INVALID_RECORD, epoch, partition.logStartOffset());
        }
        if (!partition.log().acceptsKeys(records)) {
            // DEBUG only: a misconfigured producer would otherwise fill the log, one line per request.
            LOG.debug(
                    "Produce to {} refused with INVALID_RECORD: a record without a key on a compacted topic",
                    partition);
            return error(data.partition(), Errors.INVALID_RECORD, epoch, partition.logStartOffset());
        }
        ByteBuf rewritten = null;
        LogCompression compression = partition.log().config().compression();
        if (CompressionRewriter.needsRewrite(records, compression)) {
            // Rare on this path (no append agents and a topic compression.type): codecs per request.
            try (CompressionRewriter rewriter =
                    new CompressionRewriter(compressionMaxDecompressedBytes, metrics.compression())) {
                rewritten = rewriter.rewrite(records, compression);
            }
            if (CompressionRewriter.largestBatchBytes(rewritten) > maxMessageBytes) {
                rewritten.release();
                return error(data.partition(), Errors.MESSAGE_TOO_LARGE, epoch, partition.logStartOffset());
            }
            records = rewritten;
        }
        try {
            int bytes = records.readableBytes();
            int recordCount = RecordBatchValidator.totalRecordCount(records);
            long baseOffset = txnSequence >= 0
                    ? partition.appendTransactionalAsLeader(records, maxTimestamps, txnSequence)
                    : kind == IdempotentBatches.IDEMPOTENT
                            ? partition.appendIdempotentAsLeader(records, maxTimestamps)
                            : partition.appendAsLeader(records, maxTimestamps);
            if (baseOffset < 0) {
                short code = IdempotentBatches.error(baseOffset, partition, System.currentTimeMillis());
                return error(data.partition(), code, epoch, partition.logStartOffset());
            }
            metrics.produced(bytes, recordCount);
            TopicThroughput.Counters topic = partition.topicCounters();
            if (topic != null) {
                topic.produced(bytes, recordCount);
            }
            return new PartitionResponse(
                    data.partition(), Errors.NONE, baseOffset, epoch, NO_LOG_APPEND_TIME, partition.logStartOffset());
        } catch (InvalidRecordException e) {
            return error(data.partition(), Errors.INVALID_RECORD, epoch, partition.logStartOffset());
        } catch (IOException | Error e) {
            // As the append agents do: the partition fails, the episode is logged once, no trace per request.
            PartitionFailures.writeFailed(partition, "append", e, System.currentTimeMillis());
            metrics.logWriteFailed();
            return error(data.partition(), Errors.BROKER_NOT_AVAILABLE, epoch, -1L);
        } finally {
            if (rewritten != null) {
                rewritten.release();
            }
        }
    }

    static PartitionResponse error(int partition, short errorCode, int leaderEpoch, long logStartOffset) {
        return new PartitionResponse(partition, errorCode, -1L, leaderEpoch, NO_LOG_APPEND_TIME, logStartOffset);
    }
}
