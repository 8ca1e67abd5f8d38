package io.stellflow.broker.topic;

import java.util.Collections;
import java.util.List;
import java.util.UUID;

/**
 * An ISR change a partition's leader proposed and the controller has not yet delivered in the
 * metadata (made by {@link Partition#prepareIsrChange}, sent by the ISR manager with AlterPartition).
 * Immutable; compared by identity where "still the pending one" matters.
 *
 * @param topicId the topic's id (AlterPartition names it)
 * @param leaderEpoch the leader epoch the proposal was made at
 * @param basePartitionEpoch the partition epoch the change is based on
 * @param oldIsr the committed ISR when it was proposed (broker ids)
 * @param newIsr the proposed ISR (broker ids)
 * @param newIsrBrokerEpochs per member of {@code newIsr}, in its order, the broker epoch of the
 *     process whose fetches the leader judged (-1: unknown, not checked by the controller)
 * @param sinceMs when it was proposed (ms since the epoch)
 * @param awaitingMetadata true once the controller answered (accepted, or refused as stale): no
 *     resend, the next metadata decides
 */
public record PendingIsrChange(
        UUID topicId,
        int leaderEpoch,
        int basePartitionEpoch,
        List<Integer> oldIsr,
        List<Integer> newIsr,
        List<Long> newIsrBrokerEpochs,
        long sinceMs,
        boolean awaitingMetadata) {

    /**
     * @throws IllegalArgumentException when {@code newIsrBrokerEpochs} is not one per member of
     *     {@code newIsr}
     */
    public PendingIsrChange {
        if (newIsrBrokerEpochs.size() != newIsr.size()) {
            throw new IllegalArgumentException(
                    "broker epochs " + newIsrBrokerEpochs + " are not one per member of " + newIsr);
        }
    }

    /** A proposal whose members' broker epochs are unknown (-1 each). */
    public PendingIsrChange(
            UUID topicId,
            int leaderEpoch,
            int basePartitionEpoch,
            List<Integer> oldIsr,
            List<Integer> newIsr,
            long sinceMs,
            boolean awaitingMetadata) {
        this(
                topicId,
                leaderEpoch,
                basePartitionEpoch,
                oldIsr,
                newIsr,
                Collections.nCopies(newIsr.size(), -1L),
                sinceMs,
                awaitingMetadata);
    }

    /** The same proposal, answered by the controller: it now waits for the metadata. */
    PendingIsrChange answered() {
        return new PendingIsrChange(
                topicId, leaderEpoch, basePartitionEpoch, oldIsr, newIsr, newIsrBrokerEpochs, sinceMs, true);
    }
}
