package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.stellflow.broker.telemetry.TopicThroughput;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailures;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.record.BatchMaxTimestamps;
import io.stellflow.protocol.record.CompressedRecordsValidator;
import io.stellflow.protocol.record.RecordBatchValidator;
import io.stellflow.storage.InvalidRecordException;
import io.stellflow.storage.LogCompression;
import org.jctools.queues.MpscArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One partition's bounded MPSC append queue and the append step its agent runs on it.
 *
 * <p>Producers (request handler threads) {@link #offer}; exactly one {@link AppendAgent} drains
 * ({@link #drain}): it validates each queued batch set ({@code docs/spec/wire-protocol.md} §7.7,
 * CRC-32C included), then appends all valid ones queued so far in ONE {@code appendAsLeader} call
 * over a {@link CompositeByteBuf} (one gather {@code write(2)} of up to {@value
 * #MAX_GATHER_REQUESTS} requests and {@value #MAX_GATHER_BYTES} bytes, or one larger request
 * alone), hands each request its base offset, and releases the buffers.
 *
 * <p>Life: created on a partition's first Produce while it leads here, polled by its agent until it
 * is {@link #retire retired} (its partition stopped leading, left this broker, or the broker
 * closes). A retired appender appends nothing more: once its agent {@link #letGo let go} of the
 * queue, what is queued, and what a late {@link #offer} adds ({@link #sweepIfLetGo}), is answered
 * with the retirement's error code.
 *
 * <p>Thread-safety: {@link #offer} from any thread; {@link #drain} confined to the owning agent
 * until it lets go; after that the queue is polled only under this object's monitor.
 */
final class PartitionAppender {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionAppender.class);

    /** logAppendTimeMs is always -1 in v0 (CreateTime only). */
    static final long NO_LOG_APPEND_TIME = -1L;

    /** Requests merged into one write; binds before the byte cap for requests under 4 KiB. */
    static final int MAX_GATHER_REQUESTS = 64;

    /**
     * Bytes one pass takes from the queue (a first request larger than this is taken alone): small
     * requests share a write up to 256 KiB, which already spreads a write's fixed cost (the call, the
     * lock, the index entries, the HW step, the listeners: microseconds) over tens of requests, and a
     * large one goes alone. Every request of a pass waits for the whole pass (validation included)
     * before its answer. With 8 MiB, a producer's five 1 MiB requests in flight were validated,
     * written and answered together, so it had nothing in flight while the broker worked and nothing
     * to work on while its answers travelled: non-idempotent produce ran 12% below idempotent (whose
     * batches are appended one by one) in {@code perf/run-matrix.sh --idempotence-ab} (issue #20).
     */
    static final int MAX_GATHER_BYTES = 256 << 10;

    final Partition partition;
    final AppendAgent agent;
    private final MpscArrayQueue<AppendRequest> queue;
    /** The broker's {@code message.max.bytes}: the batch limit unless the topic sets {@code max.message.bytes}. */
    private final int messageMaxBytes;

    private final AppendRequest[] batch = new AppendRequest[MAX_GATHER_REQUESTS];
    private final int[] recordCounts = new int[MAX_GATHER_REQUESTS];

    /**
     * Real largest record timestamp of every batch of the pass's valid requests, in append order,
     * computed by their validation (decision 9.s of docs/spec/wire-protocol.md); reused per pass.
     */
    private final BatchMaxTimestamps maxTimestamps = new BatchMaxTimestamps(16);

    /** Set once; from then on nothing is appended ({@link #retire}). */
    private volatile boolean retired;

    /** The error the queued requests get once retired; written before {@link #retired}. */
    private short retiredError;

    /** Agent thread: a failed pass was logged with its trace (later ones at DEBUG). */
    private boolean passFailureLogged;

    /** Guarded by this: the agent polls the queue no more (it is answered under this monitor). */
    private boolean letGo;

    PartitionAppender(Partition partition, AppendAgent agent, int capacity, int messageMaxBytes) {
        this.partition = partition;
        this.agent = agent;
        this.queue = new MpscArrayQueue<>(capacity);
        this.messageMaxBytes = messageMaxBytes;
    }

    /** Whether the queue is at most half full now (a hint: other threads may fill it). Any thread. */
    boolean atMostHalfFull() {
        return queue.size() <= queue.capacity() / 2;
    }

    /** Whether the queue is full now (a hint: the agent may be draining it). Any thread. */
    boolean isFull() {
        return queue.size() >= queue.capacity();
    }

    /** Queues a request; false when the queue is full (the caller applies back-pressure). */
    boolean offer(AppendRequest request) {
        return queue.offer(request);
    }

    /**
     * Retires this appender (the first call decides the error code; later calls change nothing):
     * from now on nothing is appended, and its requests are answered with {@code errorCode} once the
     * agent lets go. Any thread; the caller then tells the agent ({@link AppendAgent#command}).
     */
    synchronized void retire(short errorCode) {
        if (!retired) {
            retiredError = errorCode;
            retired = true;
        }
    }

    /** Whether {@link #retire} was called. Any thread. */
    boolean isRetired() {
        return retired;
    }

    /** Agent thread, after it removed this appender from its pass: answers what is queued. */
    synchronized void letGo(AppendService service) {
        letGo = true;
        failQueued(service);
    }

    /**
     * After an {@link #offer} that found this appender retired: answers the queue if the agent has
     * let go (else the agent's {@link #letGo} will). Any thread.
     */
    synchronized void sweepIfLetGo(AppendService service) {
        if (letGo) {
            failQueued(service);
        }
    }

    private void failQueued(AppendService service) {
        AppendRequest r;
        while ((r = queue.poll()) != null) {
            finish(service, r, error(r, retiredError));
        }
    }

    /**
     * Appends what is queued (up to the gather limits); returns the number of requests handled, 0
     * when the queue was empty or the appender is retired (its agent answers the queue next pass).
     */
    int drain(AppendService service) {
        if (retired) {
            return 0;
        }
        int n = 0;
        long bytes = 0;
        int valid = 0;
        AppendRequest r = null;
        maxTimestamps.clear();
        try {
            AppendRequest next;
            while (n < MAX_GATHER_REQUESTS && (next = queue.peek()) != null) {
                if (n > 0 && bytes + next.records().readableBytes() > MAX_GATHER_BYTES) {
                    break; // stays queued for the next pass
                }
                r = queue.poll(); // the peeked one: this agent is the queue's only consumer
                n++;
                if (r.marker() != null) {
                    // Behind the batches gathered so far: append them first.
                    AppendRequest marker = r;
                    r = null;
                    if (valid > 0) {
                        append(service, valid);
                        valid = 0;
                    }
                    maxTimestamps.clear();
                    appendMarker(service, marker);
                    continue;
                }
                bytes += r.records().readableBytes();
                short code = validate(r);
                if (code == Errors.NONE || code == IDEMPOTENT) {
                    boolean idempotent = code == IDEMPOTENT;
                    AppendRequest validated = r;
                    r = rewriteIfNeeded(service, r);
                    if (r != validated // rewritten: decompression may have grown a batch
                            && CompressionRewriter.largestBatchBytes(r.records())
                                    > partition.maxMessageBytes(messageMaxBytes)) {
                        maxTimestamps.truncate(maxTimestamps.size() - RecordBatchValidator.batchCount(r.records()));
                        code = Errors.MESSAGE_TOO_LARGE;
                    } else if (idempotent) {
                        // One batch through the producer state, after what was gathered before it.
                        AppendRequest one = r;
                        r = null;
                        long maxTimestamp = maxTimestamps.get(maxTimestamps.size() - 1);
                        maxTimestamps.truncate(maxTimestamps.size() - 1);
                        if (valid > 0) {
                            append(service, valid);
                            valid = 0;
                        }
                        maxTimestamps.clear();
                        maxTimestamps.add(maxTimestamp);
                        appendIdempotent(service, one);
                        maxTimestamps.clear();
                        continue;
                    }
                }
                if (code != Errors.NONE) {
                    AppendRequest refused = r;
                    r = null; // answered from here on
                    finish(service, refused, error(refused, code));
                    continue;
                }
                recordCounts[valid] = RecordBatchValidator.totalRecordCount(r.records());
                batch[valid++] = r;
                r = null; // held in batch from here on
            }
        } catch (Throwable e) {
            // A bug in the validation: what this pass holds is answered, the agent goes on.
            passFailed(service, r, valid, e);
            return n;
        }
        if (valid > 0) {
            append(service, valid);
        }
        return n;
    }

    /** Answers the requests a failed pass held (the one being validated, the valid ones so far). */
    private void passFailed(AppendService service, AppendRequest current, int valid, Throwable e) {
        logPassFailure(e);
        if (current != null) {
            answerFailed(service, current, partition.leaderEpoch());
        }
        for (int i = 0; i < valid; i++) {
            answerFailed(service, batch[i], partition.leaderEpoch());
            batch[i] = null;
        }
    }

    /** {@link #validate}: a valid idempotent request (one batch with a producer id); not an error code. */
    private static final short IDEMPOTENT = -1;

    /**
     * Validates one request; on NONE or {@link #IDEMPOTENT} its batches' max timestamps are in
     * {@link #maxTimestamps}, else none of them.
     */
    private short validate(AppendRequest r) {
        int before = maxTimestamps.size();
        short code = check(r);
        if (code != Errors.NONE && code != IDEMPOTENT) {
            maxTimestamps.truncate(before);
        }
        return code;
    }

    private short check(AppendRequest r) {
        ByteBuf records = r.records();
        if (!records.isReadable()) {
            return Errors.INVALID_RECORD;
        }
        CompressedRecordsValidator compressed = agent.compressedValidator();
        compressed.requireKeys(partition.log().config().cleanupPolicy().compact());
        short code = RecordBatchValidator.validate(
                records, partition.maxMessageBytes(messageMaxBytes), r.transactional(), maxTimestamps, compressed);
        if (code != Errors.NONE) {
            if (compressed.outcome() != CompressedRecordsValidator.VALID) {
                agent.service().compressionRefusals().refused(partition, Errors.name(code), compressed);
            }
            return code;
        }
        if (partition.log().config().compression().refuseCompressedProduce()) {
            int codecId = CompressionRewriter.firstCompressedCodec(records);
            if (codecId != CompressionType.NONE.id()) {
                agent.service().compressionRefusals().refusedByPolicy(partition, CompressionType.forId(codecId));
                return Errors.FEATURE_NOT_ENABLED;
            }
        }
        if (r.transactional() && r.txnSequence() < 0) {
            return Errors.FEATURE_NOT_ENABLED; // not registered at a coordinator: never queued so
        }
        int kind = IdempotentBatches.classify(records);
        if (kind == IdempotentBatches.INVALID || (r.transactional() && kind != IdempotentBatches.IDEMPOTENT)) {
            // An idempotent or transactional Produce carries exactly one batch with a producer id (§6.12).
            return Errors.INVALID_RECORD;
        }
        // Checked per request: one null key on a compacted topic must not fail the others merged
        // into the same append.
        if (!partition.log().acceptsKeys(records)) {
            // DEBUG only: a misconfigured producer would otherwise fill the log, one line per request.
            LOG.debug(
                    "Produce to {} refused with INVALID_RECORD: a record without a key on a compacted topic",
                    partition);
            return Errors.INVALID_RECORD;
        }
        return kind == IdempotentBatches.IDEMPOTENT ? IDEMPOTENT : Errors.NONE;
    }

    /**
     * Appends one validated idempotent request alone ({@link Partition#appendIdempotentAsLeader},
     * its max timestamp in {@link #maxTimestamps}) and answers it: the base offset (the original
     * one for an exact retry) or the sequence or epoch error.
     */
    private void appendIdempotent(AppendService service, AppendRequest r) {
        int epoch = partition.leaderEpoch();
        int recordCount = RecordBatchValidator.totalRecordCount(r.records());
        int bytes = r.records().readableBytes();
        long base;
        try {
            base = r.txnSequence() >= 0
                    ? partition.appendTransactionalAsLeader(r.records(), maxTimestamps, r.txnSequence())
                    : partition.appendIdempotentAsLeader(r.records(), maxTimestamps);
        } catch (InvalidRecordException e) {
            finish(service, r, error(r, Errors.INVALID_RECORD));
            return;
        } catch (Throwable e) {
            PartitionFailures.writeFailed(partition, "append", e, System.currentTimeMillis());
            answerFailed(service, r, epoch);
            return;
        }
        if (base < 0) {
            finish(service, r, error(r, IdempotentBatches.error(base, partition, System.currentTimeMillis())));
            return;
        }
        service.metrics().produced(bytes, recordCount);
        TopicThroughput.Counters topic = partition.topicCounters();
        if (topic != null) {
            topic.produced(bytes, recordCount);
        }
        PartitionResponse ok = new PartitionResponse(
                r.partitionId(), Errors.NONE, base, epoch, NO_LOG_APPEND_TIME, partition.logStartOffset());
        release(service, r);
        // acks=-1: waits for the high watermark to pass the batch (also a retry's original one).
        r.pending().appended(r.slot(), partition, ok, base + recordCount);
    }

    /**
     * Appends one transaction marker ({@link Partition#appendTransactionMarker}) and answers it: its
     * offset (acks=-1: once the high watermark passed it), or the refusal's code.
     */
    private void appendMarker(AppendService service, AppendRequest r) {
        TxnMarker m = r.marker();
        int epoch = partition.leaderEpoch();
        long offset;
        try {
            offset = partition.appendTransactionMarker(
                    m.producerId(), m.producerEpoch(), m.commit(), m.coordinatorEpoch(), m.transactionSequence());
        } catch (Throwable e) {
            PartitionFailures.writeFailed(partition, "append", e, System.currentTimeMillis());
            answerFailed(service, r, epoch);
            return;
        }
        if (offset < 0) {
            finish(service, r, error(r, IdempotentBatches.error(offset, partition, System.currentTimeMillis())));
            return;
        }
        PartitionResponse ok = new PartitionResponse(
                r.partitionId(), Errors.NONE, offset, epoch, NO_LOG_APPEND_TIME, partition.logStartOffset());
        // Zero bytes, but a request gone from the queue: a connection paused on the full queue (its
        // own retry may have ended another way) is resumed here, as after any other request.
        release(service, r);
        r.pending().appended(r.slot(), partition, ok, offset + 1);
    }

    /**
     * {@code r} itself, or, when the topic's {@code compression.type} asks for another codec than a
     * batch has, a request with the rewritten set (the old buffer released, the queued-bytes budget
     * moved to the new size). Agent thread.
     */
    private AppendRequest rewriteIfNeeded(AppendService service, AppendRequest r) {
        LogCompression compression = partition.log().config().compression();
        if (!CompressionRewriter.needsRewrite(r.records(), compression)) {
            return r;
        }
        ByteBuf rewritten = agent.compressionRewriter().rewrite(r.records(), compression);
        int oldBytes = r.records().readableBytes();
        r.records().release();
        service.released(oldBytes - rewritten.readableBytes());
        return r.withRecords(rewritten);
    }

    private void append(AppendService service, int valid) {
        ByteBuf records;
        if (valid == 1) {
            records = batch[0].records();
        } else {
            CompositeByteBuf c = ByteBufAllocator.DEFAULT.compositeDirectBuffer(valid);
            for (int i = 0; i < valid; i++) {
                c.addComponent(true, batch[i].records().retainedDuplicate());
            }
            records = c;
        }
        int epoch = partition.leaderEpoch();
        int appendedBytes = records.readableBytes();
        boolean written = false;
        try {
            long base = partition.appendAsLeader(records, maxTimestamps);
            written = true;
            if (base == Partition.NOT_LEADER) {
                // Leadership moved after these requests were accepted: nothing was written.
                for (int i = 0; i < valid; i++) {
                    AppendRequest r = batch[i];
                    batch[i] = null;
                    finish(service, r, error(r, Errors.NOT_LEADER_OR_FOLLOWER));
                }
                return;
            }
            long logStart = partition.logStartOffset();
            long appendedRecords = 0;
            for (int i = 0; i < valid; i++) {
                appendedRecords += recordCounts[i];
            }
            service.metrics().produced(appendedBytes, appendedRecords);
            TopicThroughput.Counters topic = partition.topicCounters();
            if (topic != null) {
                topic.produced(appendedBytes, appendedRecords);
            }
            for (int i = 0; i < valid; i++) {
                AppendRequest r = batch[i];
                batch[i] = null; // answered from here on, also if the answer throws
                PartitionResponse ok =
                        new PartitionResponse(r.partitionId(), Errors.NONE, base, epoch, NO_LOG_APPEND_TIME, logStart);
                base += recordCounts[i];
                release(service, r);
                // acks=-1: waits for the high watermark to pass base (the next request's base offset).
                r.pending().appended(r.slot(), partition, ok, base);
            }
        } catch (InvalidRecordException e) {
            // Not reached: validate() rejected such requests one by one; nothing was appended.
            for (int i = 0; i < valid; i++) {
                AppendRequest r = batch[i];
                batch[i] = null;
                finish(service, r, error(r, Errors.INVALID_RECORD));
            }
        } catch (Throwable e) {
            // Any failure of the write (IOException, or an Error such as a fault in a mapped write)
            // fails these requests and the partition, never the agent (issue #23). After the write,
            // only answering failed (a bug): the partition stays writable.
            if (written) {
                logPassFailure(e);
            } else {
                PartitionFailures.writeFailed(partition, "append", e, System.currentTimeMillis());
            }
            for (int i = 0; i < valid; i++) {
                if (batch[i] != null) {
                    answerFailed(service, batch[i], epoch);
                    batch[i] = null;
                }
            }
        } finally {
            if (valid > 1) {
                records.release();
            }
            for (int i = 0; i < valid; i++) {
                batch[i] = null;
            }
        }
    }

    /** A bug in a pass: logged with its trace once per appender, later at DEBUG. */
    private void logPassFailure(Throwable e) {
        if (!passFailureLogged) {
            passFailureLogged = true;
            LOG.error("Append pass of {} failed; answering its requests BROKER_NOT_AVAILABLE", partition, e);
        } else {
            LOG.debug("Append pass of {} failed again: {}", partition, e.toString());
        }
    }

    /** Answers a request whose write failed: {@code BROKER_NOT_AVAILABLE} (STORAGE_ERROR's v0 fallback), counted. */
    private static void answerFailed(AppendService service, AppendRequest r, int epoch) {
        service.metrics().logWriteFailed();
        finish(
                service,
                r,
                new PartitionResponse(
                        r.partitionId(), Errors.BROKER_NOT_AVAILABLE, -1L, epoch, NO_LOG_APPEND_TIME, -1L));
    }

    /** Releases the request's buffer, answers its slot and returns its bytes to the budget. */
    private static void finish(AppendService service, AppendRequest r, PartitionResponse response) {
        release(service, r);
        r.pending().complete(r.slot(), response);
    }

    /** Releases the request's buffer and returns its bytes to the budget. */
    private static void release(AppendService service, AppendRequest r) {
        int bytes = r.records().readableBytes();
        r.records().release();
        service.released(bytes);
    }

    private PartitionResponse error(AppendRequest r, short code) {
        return new PartitionResponse(
                r.partitionId(), code, -1L, partition.leaderEpoch(), NO_LOG_APPEND_TIME, partition.logStartOffset());
    }
}
