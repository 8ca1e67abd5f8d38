package io.stellflow.broker.telemetry;

/**
 * The hooks of the "Broker: replication" instruments of {@code docs/spec/metrics.md}, called by the
 * replica manager, the leader's follower-fetch path and the replica fetchers. {@link ReplicaTelemetry}
 * implements them with the dictionary's names; {@link #NOOP} is for brokers without telemetry and
 * for tests. ISR and leader changes also log {@link LogEvents#ISR_SHRUNK}, {@link
 * LogEvents#ISR_EXPANDED} and {@link LogEvents#PARTITION_LEADER_CHANGED} (the caller writes the line,
 * it knows the partition).
 *
 * <p>Contract: called once per fetch or per state change, never per record; implementations count
 * into {@code LongAdder}s and must not block or allocate.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public interface ReplicationMetrics {
    /** Does nothing. */
    ReplicationMetrics NOOP = new ReplicationMetrics() {};

    /**
     * A replica fetch of this broker's fetcher (this broker is the follower) was answered by the
     * leader after {@code nanos} from sending it ({@code stellflow.replica.fetch.request.count},
     * {@code stellflow.replica.fetch.latency}).
     */
    default void replicaFetch(long nanos) {}

    /** This leader committed an ISR expansion of one partition ({@code stellflow.isr.expand.count}). */
    default void isrExpanded() {}

    /** This leader committed an ISR shrink of one partition ({@code stellflow.isr.shrink.count}). */
    default void isrShrunk() {}

    /** A partition's high watermark advanced on this broker ({@code stellflow.high_watermark.advance.count}). */
    default void highWatermarkAdvanced() {}

    /**
     * This broker became leader of a partition or stopped being its leader ({@code
     * stellflow.partition.leader.change.count}).
     */
    default void leaderChanged() {}

    /** A follower append of this broker's fetcher failed ({@code stellflow.log.write.error.count}). */
    default void logWriteFailed() {}
}
