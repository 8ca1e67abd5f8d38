package io.stellflow.broker.append;

/**
 * A transaction coordinator's COMMIT or ABORT marker for one partition ({@link
 * io.stellflow.broker.topic.Partition#appendTransactionMarker}), as queued for the partition's
 * append agent. Immutable.
 *
 * @param producerId the transaction's producer id
 * @param producerEpoch the epoch the marker carries
 * @param commit true for COMMIT, false for ABORT
 * @param coordinatorEpoch the leader epoch of the coordinator's {@code __transaction_state} partition
 * @param transactionSequence the transaction's sequence
 */
public record TxnMarker(
        long producerId, short producerEpoch, boolean commit, int coordinatorEpoch, long transactionSequence) {}
