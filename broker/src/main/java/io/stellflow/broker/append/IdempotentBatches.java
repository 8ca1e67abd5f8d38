package io.stellflow.broker.append;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.record.RecordBatchLayout;
import io.stellflow.storage.UnifiedLog;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What both produce paths (the append agents' {@link PartitionAppender} and the request thread with
 * {@code num.append.agents=0}) decide about a validated batch set that may carry a producer id
 * ({@code docs/spec/wire-protocol.md} §6.3 step 6, §6.12): plain data appends as before; an
 * idempotent producer's data must be exactly one batch and goes through the partition's producer
 * state; and how the log's idempotent outcomes become error codes.
 *
 * <p>Thread-safety: stateless but for a shared rate limit on one WARN; any thread.
 */
public final class IdempotentBatches {
    private static final Logger LOG = LoggerFactory.getLogger(IdempotentBatches.class);

    /** {@link #classify}: no batch carries a producer id (the unchanged fast path). */
    public static final int PLAIN = 0;

    /** {@link #classify}: exactly one batch, with a producer id. */
    public static final int IDEMPOTENT = 1;

    /** {@link #classify}: several batches with a producer id, or a mix: INVALID_RECORD. */
    public static final int INVALID = 2;

    /** At most one WARN about a full producer table per this many ms (a busy producer retries). */
    private static final long WARN_INTERVAL_MS = 60_000;

    private static final AtomicLong lastWarnMs = new AtomicLong(Long.MIN_VALUE / 2);

    private IdempotentBatches() {}

    /** Whether a validated set is {@link #PLAIN}, {@link #IDEMPOTENT} or {@link #INVALID}. */
    public static int classify(ByteBuf records) {
        int pos = records.readerIndex();
        int end = records.writerIndex();
        int batches = 0;
        int withProducerId = 0;
        while (pos < end) {
            batches++;
            if (RecordBatchLayout.producerId(records, pos) != RecordBatchLayout.NO_PRODUCER_ID) {
                withProducerId++;
            }
            pos += RecordBatchLayout.batchSize(records, pos);
        }
        if (withProducerId == 0) {
            return PLAIN;
        }
        return batches == 1 ? IDEMPOTENT : INVALID;
    }

    /**
     * The error code of a negative {@link Partition#appendIdempotentAsLeader} result. A full producer
     * table, the partition's ({@code producer.id.max.per.partition}) or the broker's ({@code
     * producer.id.max.per.broker}), answers BROKER_NOT_AVAILABLE (retriable in both SDKs and the only
     * fitting v0 code; never DUPLICATE_SEQUENCE_NUMBER) and logs a WARN naming the bound, at most
     * once a minute.
     */
    public static short error(long result, Partition partition, long nowMs) {
        if (result == Partition.NOT_LEADER) {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        if (result == UnifiedLog.INVALID_PRODUCER_EPOCH) {
            return Errors.INVALID_PRODUCER_EPOCH;
        }
        if (result == UnifiedLog.INVALID_TXN_STATE) {
            return Errors.INVALID_TXN_STATE;
        }
        if (result == UnifiedLog.TRANSACTION_COORDINATOR_FENCED) {
            return Errors.TRANSACTION_COORDINATOR_FENCED;
        }
        if (result == UnifiedLog.TOO_MANY_PRODUCER_IDS) {
            warnFull(
                    nowMs,
                    "Produce to {} refused with BROKER_NOT_AVAILABLE: the partition keeps "
                            + "producer.id.max.per.partition producer ids already; new ones are refused until "
                            + "ids expire (producer.id.expiration.ms)",
                    partition);
            return Errors.BROKER_NOT_AVAILABLE;
        }
        if (result == UnifiedLog.TOO_MANY_PRODUCER_IDS_ON_BROKER) {
            warnFull(
                    nowMs,
                    "Produce to {} refused with BROKER_NOT_AVAILABLE: the partitions of this broker keep "
                            + "producer.id.max.per.broker producer ids together already; new ones are refused "
                            + "until ids expire (producer.id.expiration.ms); known producers go on",
                    partition);
            return Errors.BROKER_NOT_AVAILABLE;
        }
        return Errors.OUT_OF_ORDER_SEQUENCE_NUMBER;
    }

    private static void warnFull(long nowMs, String message, Partition partition) {
        long last = lastWarnMs.get();
        if (nowMs - last >= WARN_INTERVAL_MS && lastWarnMs.compareAndSet(last, nowMs)) {
            LOG.warn(message, partition);
        }
    }
}
