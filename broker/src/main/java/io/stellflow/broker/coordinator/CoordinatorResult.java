package io.stellflow.broker.coordinator;

import java.util.List;

/**
 * What a shard command produced: the records to append to the coordinator partition (possibly none)
 * and the response to send once they are committed. The shard has already applied the records to
 * its in-memory state when it returns this (apply on write); the runtime appends them as one batch
 * and completes the response only when the high watermark has passed the batch (acks=all, {@code
 * ../shared/DESIGN.md} §7). If the append fails, the runtime answers the command's error response
 * and reloads the shard from the log, so memory never keeps a state the log does not hold.
 *
 * @param records records to append, in order; empty for a read-only or no-op command
 * @param response the answer for the caller, sent after the records are committed
 * @param transaction null for a plain batch; else the batch belongs to that producer's transaction
 *     (the group coordinator's transactional offsets): it is stamped with the producer id and epoch
 *     and appended as a transactional batch ({@code Partition#appendCoordinatorTransactionalAsLeader},
 *     a BEGIN marker first when the producer has no open transaction in the partition)
 * @param <T> the response type
 */
public record CoordinatorResult<T>(List<CoordinatorRecord> records, T response, Transaction transaction) {
    /**
     * The transaction a batch of records belongs to.
     *
     * @param producerId the transactional producer's id (&gt;= 0)
     * @param producerEpoch its epoch
     * @param transactionSequence the transaction's sequence, as the transaction coordinator answered
     *     the partition's registration (&gt;= 0)
     */
    public record Transaction(long producerId, short producerEpoch, long transactionSequence) {}

    public CoordinatorResult {
        records = List.copyOf(records);
    }

    /** A plain (non-transactional) result. */
    public CoordinatorResult(List<CoordinatorRecord> records, T response) {
        this(records, response, null);
    }

    /** A result that writes nothing. */
    public static <T> CoordinatorResult<T> of(T response) {
        return new CoordinatorResult<>(List.of(), response);
    }
}
