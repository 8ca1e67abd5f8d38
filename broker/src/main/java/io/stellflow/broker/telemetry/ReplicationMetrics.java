package io.stellflow.broker.telemetry;

/**
 * Hook point for the "Broker: replication" instruments of {@code spec/metrics.md}, for the replica
 * manager and fetchers to call when they exist. Nothing implements it yet, so none of these series is
 * exported (a single-node broker has no followers); the implementation registers, with {@code
 * node.id} and where listed {@code replica.role}: {@code stellflow.replica.fetch.request.count},
 * {@code stellflow.replica.fetch.latency} (ms), {@code stellflow.replica.lag} (By), {@code
 * stellflow.replica.lag.time} (ms), {@code stellflow.isr.expand.count}, {@code
 * stellflow.isr.shrink.count}, {@code stellflow.high_watermark.advance.count}, {@code
 * stellflow.partition.leader.change.count} and the partition state gauges {@code
 * stellflow.partition.under_replicated.count}, {@code under_min_isr.count}, {@code offline.count}.
 * ISR changes and leader changes also log {@link LogEvents#ISR_SHRUNK}, {@link
 * LogEvents#ISR_EXPANDED} and {@link LogEvents#PARTITION_LEADER_CHANGED}.
 *
 * <p>Contract: called on fetcher or request threads once per fetch or state change (never per
 * record); implementations count into {@code LongAdder}s like {@link BrokerMetrics}.
 */
public interface ReplicationMetrics {
    /** Does nothing. */
    ReplicationMetrics NOOP = new ReplicationMetrics() {};

    /** A follower fetch answered by the leader after {@code nanos}. */
    default void replicaFetch(long nanos) {}

    /** The ISR of a partition grew. */
    default void isrExpanded() {}

    /** The ISR of a partition shrank. */
    default void isrShrunk() {}

    /** A partition's high watermark advanced. */
    default void highWatermarkAdvanced() {}

    /** This broker became or stopped being leader of a partition. */
    default void leaderChanged() {}
}
