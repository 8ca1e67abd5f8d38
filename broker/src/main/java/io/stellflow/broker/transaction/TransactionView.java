package io.stellflow.broker.transaction;

import java.util.List;

/**
 * A copy of one transactional id's state at its coordinator, for ListTransactions and
 * DescribeTransactions (apiKeys 32, 33, {@code docs/protocol-additions.md}).
 *
 * <p>Thread-safety: immutable.
 *
 * @param startMs when the current (or last) transaction began, epoch ms; -1 before the first Begin
 * @param sequence the current (or last) transaction's sequence (+1 per Begin)
 * @param partitions the partitions registered in the current (or last) transaction, ascending
 */
public record TransactionView(
        String transactionalId,
        long producerId,
        short producerEpoch,
        TransactionState state,
        int timeoutMs,
        long startMs,
        long sequence,
        List<TransactionPartition> partitions) {

    public TransactionView {
        partitions = List.copyOf(partitions);
    }

    /**
     * Kafka's name of {@code state} ({@code Empty}, {@code Ongoing}, {@code PrepareCommit}, {@code
     * PrepareAbort}, {@code CompleteCommit}, {@code CompleteAbort}), what the transactions tool
     * prints and ListTransactions filters on; the wire names of Begin/End answers stay §6.13's.
     */
    public static String kafkaName(TransactionState state) {
        return switch (state) {
            case EMPTY -> "Empty";
            case ONGOING -> "Ongoing";
            case PREPARE_COMMIT -> "PrepareCommit";
            case PREPARE_ABORT -> "PrepareAbort";
            case COMPLETE_COMMIT -> "CompleteCommit";
            case COMPLETE_ABORT -> "CompleteAbort";
        };
    }
}
