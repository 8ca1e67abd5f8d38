package io.stellflow.storage;

/**
 * What a partition's producer state holds for one producer id ({@link ProducerStateManager}), as
 * DescribeProducers (apiKey 34, {@code docs/protocol-additions.md}) reports it: a copy, so it may be
 * read on any thread.
 *
 * @param lastSequence the last sequence of its last batch in its epoch, -1 when none (a producer
 *     known from a marker only)
 * @param lastTimestampMs its last append: the broker's clock (ms) on the leader and on followers;
 *     a producer rebuilt by a replay of the log (after a crash or a truncation) counts as appended
 *     at the replay
 * @param coordinatorEpoch the highest coordinator epoch of its COMMIT/ABORT markers, -1 when none
 * @param currentTxnStartOffset the first offset (its BEGIN marker) of its open transaction, -1 when
 *     none is open
 * @param transactionSequence the open transaction's sequence, -1 when none is open
 */
public record ActiveProducer(
        long producerId,
        short producerEpoch,
        int lastSequence,
        long lastTimestampMs,
        int coordinatorEpoch,
        long currentTxnStartOffset,
        long transactionSequence) {}
