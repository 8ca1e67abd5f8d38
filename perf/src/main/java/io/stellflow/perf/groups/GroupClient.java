package io.stellflow.perf.groups;

import java.util.Collection;

/**
 * One consumer of the system under test, as {@link GroupBench} drives it: one topic, partitions
 * named by number. Each system's adapter wraps its own consumer class (Kafka's {@code KafkaConsumer}
 * with {@code group.protocol=consumer}, our {@code StellflowConsumer}) and adds nothing that one side
 * would pay and the other not.
 *
 * <p>Thread-safety: NOT thread-safe; each instance is created, used and closed by one member thread,
 * and the listener runs on that thread, inside {@link #poll} or {@link #close}, as both consumers
 * run their rebalance listeners.
 */
public interface GroupClient extends AutoCloseable {
    /** Partitions moved to or from this consumer: only the ones that change (incremental callbacks). */
    interface Listener {
        /** The consumer gives these partitions up (revoked or lost). */
        void revoked(Collection<Integer> partitions);

        /** The consumer owns these partitions from now on (possibly none). */
        void assigned(Collection<Integer> partitions);
    }

    /** Builds a consumer; {@code groupId} null for {@link #assign} only. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param bootstrap host:port list
         * @param groupId the group, or null for an {@code assign} consumer without a group
         * @param clientId the client id (the member's name in both systems' tools)
         * @param props extra consumer properties k=v, applied last
         */
        GroupClient create(String bootstrap, String groupId, String clientId, java.util.Map<String, String> props);
    }

    /** Joins the consumer's group with a subscription to {@code topic}; returns without waiting. */
    void subscribe(String topic, Listener listener);

    /** Reads partitions {@code 0..partitions-1} of {@code topic} without a group, from the earliest offset. */
    void assign(String topic, int partitions);

    /**
     * Polls once, waiting up to {@code timeoutMs}; returns the records fetched and adds their value
     * bytes to {@link #valueBytes()}. Runs the listener when the assignment changes.
     */
    int poll(long timeoutMs);

    /** Value bytes of every record {@link #poll} returned so far. */
    long valueBytes();

    /**
     * Commits {@code offset} (the next offset to read) for one partition and waits for the answer.
     *
     * @return true when the coordinator accepted it, false when it refused it (a fenced or stale
     *     member, a partition this member no longer owns); transport failures past the client's own
     *     retries also return false
     */
    boolean commitSync(String topic, int partition, long offset);

    /** Leaves the group (if any) and releases the client's resources; runs the listener's revocation. */
    @Override
    void close();
}
