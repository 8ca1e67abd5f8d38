package io.stellflow.perf.txn;

import java.util.Map;

/**
 * The clients of the system under test as {@link TxnBench} drives them: a producer (transactional,
 * or idempotent without a {@code transactional.id}) and a consumer (with or without a group, {@code
 * read_committed} or {@code read_uncommitted}). Partitions are named by number within one topic.
 * Each system's adapter ({@code perf/kafka/KafkaTxnBench.java}, {@code perf/txn/StellflowTxnBench.java})
 * wraps its own client classes and adds nothing that one side would pay and the other not.
 *
 * <p>Errors: the transactional calls throw the client's own exception when the system refuses them
 * (fenced, aborted, timed out); the bench counts that as an error of the case and stops it.
 */
public interface TxnClient {
    /** Builds the clients of one bench run; called from the thread that will own the client. */
    interface Factory {
        /**
         * @param bootstrap host:port list
         * @param transactionalId the {@code transactional.id}, or null for an idempotent producer
         *     without transactions ({@code enable.idempotence=true}, {@code acks=all})
         * @param props extra producer properties k=v, applied last
         */
        Producer producer(String bootstrap, String transactionalId, Map<String, String> props);

        /**
         * @param bootstrap host:port list
         * @param groupId the group of a {@link Consumer#subscribe} consumer, or null for {@link
         *     Consumer#assign} without a group
         * @param readCommitted {@code isolation.level=read_committed} when true, else {@code
         *     read_uncommitted}
         * @param props extra consumer properties k=v, applied last
         */
        Consumer consumer(String bootstrap, String groupId, boolean readCommitted, Map<String, String> props);
    }

    /** Called once per record a send completes: {@code error} null when the broker acknowledged it. */
    @FunctionalInterface
    interface SendCallback {
        void done(Exception error);
    }

    /** Called by {@link Consumer#poll} once for each record it returns, on the polling thread. */
    @FunctionalInterface
    interface RecordSink {
        void record(int partition, long offset, byte[] value);
    }

    /**
     * A producer. Thread-safety: one owner thread calls every method; send callbacks run on the
     * client's I/O thread.
     */
    interface Producer extends AutoCloseable {
        /** Registers the {@code transactional.id} and fences older producers of it; once, first. */
        void initTransactions();

        void beginTransaction();

        /** Queues one record; returns without waiting for the broker. */
        void send(String topic, int partition, byte[] key, byte[] value, SendCallback callback);

        /** Waits until every record sent so far is acknowledged or failed. */
        void flush();

        /** Flushes and commits the open transaction; returns once the commit is complete. */
        void commitTransaction();

        void abortTransaction();

        /**
         * Adds the consumed positions ({@code partition -> next offset to read} of {@code topic}) of
         * {@code groupConsumer}'s group to the open transaction: they become the group's committed
         * offsets when it commits. The adapter takes the group from the consumer (its group id, or
         * Kafka's group metadata with member id and generation).
         */
        void sendOffsetsToTransaction(String topic, Map<Integer, Long> offsets, Consumer groupConsumer);

        @Override
        void close();
    }

    /** A consumer. Thread-safety: NOT thread-safe; one owner thread calls every method. */
    interface Consumer extends AutoCloseable {
        /** Reads partitions {@code 0..partitions-1} of {@code topic} without a group, from the earliest offset. */
        void assign(String topic, int partitions);

        /** Joins the consumer's group with a subscription to {@code topic}; returns without waiting. */
        void subscribe(String topic);

        /** Polls once, waiting up to {@code timeoutMs}; hands each record to {@code sink}; returns how many. */
        int poll(long timeoutMs, RecordSink sink);

        /** The next offset this consumer will read from {@code partition} of {@code topic}. */
        long position(String topic, int partition);

        /** Commits {@code partition -> next offset} of {@code topic} for the group without waiting. */
        void commitAsync(String topic, Map<Integer, Long> offsets);

        /** The group id of a {@link #subscribe} consumer, null without a group. */
        String groupId();

        @Override
        void close();
    }
}
