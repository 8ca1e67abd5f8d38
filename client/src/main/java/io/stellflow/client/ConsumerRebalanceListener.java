package io.stellflow.client;

import java.util.Collection;

/**
 * What a subscribed {@link StellflowConsumer} tells the application when the group coordinator moves
 * partitions to or from it ({@link StellflowConsumer#subscribe(Collection, ConsumerRebalanceListener)}),
 * as Kafka's listener of the same name in its incremental (KIP-848) protocol: only the partitions
 * that change are named.
 *
 * <p>Order within one reconciliation: the revoked partitions' positions are committed first (when
 * {@code enable.auto.commit} is on), then {@link #onPartitionsRevoked} (the partitions are still
 * assigned, so {@link StellflowConsumer#position} and {@link StellflowConsumer#commitSync()} work on
 * them), then the partitions stop being fetched, then the committed offsets of the new partitions
 * are read, then {@link #onPartitionsAssigned}, and only then does the consumer tell the coordinator
 * what it owns now. A partition is therefore never revoked after it was handed to another member.
 *
 * <p>Thread-safety: every method is called on the application thread, from inside {@link
 * StellflowConsumer#poll}, {@link StellflowConsumer#unsubscribe} or {@link StellflowConsumer#close}.
 * A {@link RuntimeException} thrown here does not stop the reconciliation: it is rethrown from the
 * consumer call that ran the listener, after the consumer has updated its assignment.
 */
public interface ConsumerRebalanceListener {
    /** A listener that does nothing. */
    ConsumerRebalanceListener NONE = new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
    };

    /**
     * The coordinator takes these partitions away (or the consumer leaves the group); called before
     * the consumer acknowledges the revocation, with the partitions still assigned. Never called
     * with an empty collection.
     */
    void onPartitionsRevoked(Collection<TopicPartition> partitions);

    /**
     * These partitions are now this consumer's (possibly none, after a revocation); their positions
     * are set: the group's committed offset, else {@code auto.offset.reset}.
     */
    void onPartitionsAssigned(Collection<TopicPartition> partitions);

    /**
     * The consumer lost these partitions without a revocation: the coordinator fenced it
     * (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID: its session expired or a newer member took its place),
     * so other members may already own them and committing their positions would be refused. The
     * default calls {@link #onPartitionsRevoked}. Never called with an empty collection.
     */
    default void onPartitionsLost(Collection<TopicPartition> partitions) {
        onPartitionsRevoked(partitions);
    }
}
