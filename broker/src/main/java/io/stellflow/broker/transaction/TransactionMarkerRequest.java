package io.stellflow.broker.transaction;

import java.util.List;

/**
 * What the coordinator asks the partition leaders to write to end a transaction: a COMMIT or ABORT
 * control batch in each partition, whose marker value carries {@code coordinatorEpoch} and {@code
 * transactionSequence} (so a leader can refuse a marker of an older coordinator or transaction).
 * Writing the same request twice must be harmless: after a coordinator failover a transaction found
 * in PREPARE_COMMIT or PREPARE_ABORT has its markers sent again.
 *
 * @param transactionalId the transactional id (for logs)
 * @param partitions the transaction's partitions, in topic then partition order, never empty
 * @param producerId the transaction's producer id
 * @param producerEpoch the epoch the markers carry (after a timeout or a new instance's
 *     InitProducerId, the bumped one: it fences the old producer on every partition)
 * @param commit true for COMMIT markers, false for ABORT
 * @param coordinatorEpoch the leader epoch of the {@code __transaction_state} partition
 * @param transactionSequence the transaction's sequence (+1 per transaction of the id)
 */
public record TransactionMarkerRequest(
        String transactionalId,
        List<TransactionPartition> partitions,
        long producerId,
        short producerEpoch,
        boolean commit,
        int coordinatorEpoch,
        long transactionSequence) {
    public TransactionMarkerRequest {
        partitions = List.copyOf(partitions);
        if (partitions.isEmpty()) {
            throw new IllegalArgumentException("a marker request needs at least one partition");
        }
    }
}
