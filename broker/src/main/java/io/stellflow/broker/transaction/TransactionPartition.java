package io.stellflow.broker.transaction;

import java.util.Comparator;
import java.util.Objects;

/**
 * One partition registered in a transaction. Immutable; ordered by topic then partition (the order
 * of the stored set and of marker requests).
 *
 * @param topic the topic name, non-null
 * @param partition the partition index, &gt;= 0
 */
public record TransactionPartition(String topic, int partition) implements Comparable<TransactionPartition> {
    private static final Comparator<TransactionPartition> ORDER =
            Comparator.comparing(TransactionPartition::topic).thenComparingInt(TransactionPartition::partition);

    public TransactionPartition {
        Objects.requireNonNull(topic, "topic");
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0: " + partition);
        }
    }

    @Override
    public int compareTo(TransactionPartition o) {
        return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
        return topic + "-" + partition;
    }
}
