package io.stellflow.broker.telemetry;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.context.Context;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.util.concurrent.atomic.LongAdder;

/**
 * The "Broker: replication" instruments of {@code docs/spec/metrics.md} ({@link BrokerInstruments}
 * {@code REPLICA_*}, {@code ISR_*}, {@code HIGH_WATERMARK_ADVANCE_COUNT}, {@code LEADER_CHANGE_COUNT},
 * {@code UNDER_REPLICATED_COUNT}, {@code UNDER_MIN_ISR_COUNT}, {@code OFFLINE_COUNT}).
 *
 * <p>Counters are {@link LongAdder}s read at collection time; the fetch latency histogram is recorded
 * once per replica fetch (ms, the broker's latency buckets) with a prebuilt attribute set. The gauges
 * read a {@link Source} at collection time only: the partition state counts and, per {@code
 * replica.role}, the largest lag in bytes and in ms over the partitions of that role.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class ReplicaTelemetry implements ReplicationMetrics {
    private static final double NANOS_PER_MS = 1_000_000.0;

    /**
     * What the replication gauges read at collection time (on the exporter's thread; must be cheap
     * and thread-safe).
     */
    public interface Source {
        /** Partitions led here whose ISR is smaller than their replica list. */
        long underReplicatedPartitions();

        /** Partitions led here whose ISR is smaller than their {@code min.insync.replicas}. */
        long underMinIsrPartitions();

        /**
         * Partitions of the whole cluster that the metadata shows without a leader, reported by one
         * broker only (see {@code ReplicaManager#gauges}) so that the sum over brokers counts each
         * partition once; 0 on every other broker.
         */
        long offlinePartitions();

        /**
         * The largest replication lag in bytes, an estimate: as leader, over the followers of the
         * partitions led here (leader's log end offset minus the follower's); as follower, over the
         * partitions followed here (the leader's high watermark minus this log end offset). Both are
         * known in offsets; the implementation converts with the log's average bytes per record.
         */
        long maxLagBytes(boolean leaderRole);

        /**
         * The largest time in ms since a replica was last caught up: as leader over its followers, as
         * follower over its own partitions (0 when caught up).
         */
        long maxLagTimeMs(boolean leaderRole);
    }

    private final Attributes node;
    private final Attributes leaderAttrs;
    private final Attributes followerAttrs;
    private final InstrumentCallbacks callbacks;
    private final LongAdder replicaFetches = new LongAdder();
    private final LongAdder isrExpands = new LongAdder();
    private final LongAdder isrShrinks = new LongAdder();
    private final LongAdder highWatermarkAdvances = new LongAdder();
    private final LongAdder leaderChanges = new LongAdder();
    private final DoubleHistogram replicaFetchLatency;
    /** Shared with {@link BrokerMetrics#logWriteFailed} (one instrument for leader and follower writes). */
    private final LongAdder logWriteErrors;

    ReplicaTelemetry(Meter meter, InstrumentCallbacks callbacks, int nodeId, LongAdder logWriteErrors) {
        this.callbacks = callbacks;
        this.logWriteErrors = logWriteErrors;
        this.node = Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId);
        this.leaderAttrs = Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId, BrokerMetrics.REPLICA_ROLE, "leader");
        this.followerAttrs =
                Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId, BrokerMetrics.REPLICA_ROLE, "follower");
        callbacks.counter(BrokerInstruments.REPLICA_FETCH_REQUEST_COUNT, m -> m.record(replicaFetches.sum(), node));
        callbacks.counter(BrokerInstruments.ISR_EXPAND_COUNT, m -> m.record(isrExpands.sum(), node));
        callbacks.counter(BrokerInstruments.ISR_SHRINK_COUNT, m -> m.record(isrShrinks.sum(), node));
        callbacks.counter(
                BrokerInstruments.HIGH_WATERMARK_ADVANCE_COUNT, m -> m.record(highWatermarkAdvances.sum(), node));
        callbacks.counter(BrokerInstruments.LEADER_CHANGE_COUNT, m -> m.record(leaderChanges.sum(), node));
        replicaFetchLatency = BrokerInstruments.REPLICA_FETCH_LATENCY.latencyHistogram(meter);
    }

    /**
     * Registers the partition-state and lag gauges over {@code source}; a broker without a controller
     * (single node) passes {@link #SINGLE_NODE}.
     */
    public void registerGauges(Source source) {
        callbacks.gauge(
                BrokerInstruments.UNDER_REPLICATED_COUNT, m -> m.record(source.underReplicatedPartitions(), node));
        callbacks.gauge(BrokerInstruments.UNDER_MIN_ISR_COUNT, m -> m.record(source.underMinIsrPartitions(), node));
        callbacks.gauge(BrokerInstruments.OFFLINE_COUNT, m -> m.record(source.offlinePartitions(), node));
        callbacks.gauge(BrokerInstruments.REPLICA_LAG, m -> {
            m.record(source.maxLagBytes(true), leaderAttrs);
            m.record(source.maxLagBytes(false), followerAttrs);
        });
        callbacks.gauge(BrokerInstruments.REPLICA_LAG_TIME, m -> {
            m.record(source.maxLagTimeMs(true), leaderAttrs);
            m.record(source.maxLagTimeMs(false), followerAttrs);
        });
    }

    /** The gauge source of a single-node broker: one replica per partition, nothing lags or is offline. */
    public static final Source SINGLE_NODE = new Source() {
        @Override
        public long underReplicatedPartitions() {
            return 0;
        }

        @Override
        public long underMinIsrPartitions() {
            return 0;
        }

        @Override
        public long offlinePartitions() {
            return 0;
        }

        @Override
        public long maxLagBytes(boolean leaderRole) {
            return 0;
        }

        @Override
        public long maxLagTimeMs(boolean leaderRole) {
            return 0;
        }
    };

    @Override
    public void replicaFetch(long nanos) {
        replicaFetches.increment();
        replicaFetchLatency.record(nanos / NANOS_PER_MS, node, Context.root());
    }

    @Override
    public void isrExpanded() {
        isrExpands.increment();
    }

    @Override
    public void isrShrunk() {
        isrShrinks.increment();
    }

    @Override
    public void highWatermarkAdvanced() {
        highWatermarkAdvances.increment();
    }

    @Override
    public void leaderChanged() {
        leaderChanges.increment();
    }

    @Override
    public void logWriteFailed() {
        logWriteErrors.increment();
    }
}
