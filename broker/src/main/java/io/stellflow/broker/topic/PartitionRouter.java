package io.stellflow.broker.topic;

import io.stellflow.protocol.Errors;

/**
 * Routes data-plane requests (Produce, Fetch, ListOffsets) to the partitions this broker leads.
 * The broker's copy of the controller's metadata image implements it ({@code ReplicaManager}), with
 * {@code AutoTopicCreation} in front when {@code auto.create.topics.enable} is set.
 *
 * <p>Thread-safety: implementations are thread-safe; lookups run on request handler threads and
 * allocate nothing.
 */
public interface PartitionRouter {
    /**
     * Prepares {@code topic} for a Produce: creates it first when auto-creation is enabled and it is
     * missing.
     *
     * @return {@code NONE}, or the topic-level error every partition of the request gets
     *     ({@code UNKNOWN_TOPIC_OR_PARTITION}, {@code INVALID_REQUEST}, {@code LEADER_NOT_AVAILABLE}
     *     while a just-created topic is not yet in this broker's metadata, {@code BROKER_NOT_AVAILABLE},
     *     {@code INVALID_TOPIC} for an internal topic such as {@code __consumer_offsets}, which only
     *     its coordinator writes; 3 in Produce v0)
     */
    default short prepareForProduce(String topic) {
        return Errors.NONE;
    }

    /**
     * Whether {@link #prepareForProduce} would return at once for {@code topic}, without creating
     * it or waiting for a creation (the topic is known here). Asked by the Produce path on the event
     * loop, which must never block; false (the default) sends the request to the request handler
     * pool. Never blocks.
     */
    default boolean producibleWithoutWaiting(String topic) {
        return false;
    }

    /** The partition when this broker leads it, else null ({@link #errorFor} says why). */
    Partition leaderPartition(String topic, int partition);

    /**
     * Why {@link #leaderPartition} returned null: {@code UNKNOWN_TOPIC_OR_PARTITION} (no such topic or
     * partition), {@code NOT_LEADER_OR_FOLLOWER} (another broker leads it) or
     * {@code LEADER_NOT_AVAILABLE} (no leader right now).
     */
    short errorFor(String topic, int partition);
}
