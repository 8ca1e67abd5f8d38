package io.stellflow.broker;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.group.ChannelGroup;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.network.ConnectionHandler;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.telemetry.CapacityGauges;
import io.stellflow.broker.topic.Partition;
import java.util.function.Consumer;

/**
 * What the broker's gauges read at collection time ({@code docs/spec/metrics.md}: connection count,
 * request and response queue depths, active segment size, log start and end offsets): the open
 * connections of the listener and the hosted partitions of the replica manager. {@link #register}
 * registers them, and the replication gauges ({@link ReplicaManager#gauges}), once the listener is
 * bound.
 *
 * <p>Thread-safety: read from the metrics exporter's thread (a Prometheus scrape or the OTLP
 * reader); every read is racy against the event loops and append agents that change what it counts,
 * which is fine for a gauge. No state of its own.
 */
final class BrokerGauges implements BrokerMetrics.GaugeSource {
    private final ChannelGroup connections;
    private final Consumer<Consumer<Partition>> partitions;

    /**
     * @param connections the open client connections
     * @param partitions visits every hosted partition (e.g. {@link ReplicaManager#forEachHostedPartition})
     */
    BrokerGauges(ChannelGroup connections, Consumer<Consumer<Partition>> partitions) {
        this.connections = connections;
        this.partitions = partitions;
    }

    /** Registers the broker gauges over {@code listener}'s connections and the replication gauges of {@code replicas}. */
    static void register(BrokerMetrics metrics, BrokerListener listener, ReplicaManager replicas) {
        metrics.registerGauges(new BrokerGauges(listener.connections(), replicas::forEachHostedPartition));
        metrics.replication().registerGauges(replicas.gauges());
    }

    /**
     * What the capacity gauges read: each hosted partition's log dir (the parent of its partition
     * directory, as the log manager places it), whether it leads, and its segment bytes.
     */
    static CapacityGauges.Source capacity(ReplicaManager replicas) {
        return visitor -> replicas.forEachHostedPartition(p -> visitor.partition(
                p.log().dir().getParent(), p.isLeader(), p.log().sizeInBytes()));
    }

    @Override
    public long connections() {
        return connections.size();
    }

    @Override
    public long queuedRequests() {
        long n = 0;
        for (Channel ch : connections) {
            ConnectionHandler h = ch.pipeline().get(ConnectionHandler.class);
            if (h != null) {
                n += h.pendingRequests();
            }
        }
        return n;
    }

    @Override
    public long queuedResponses() {
        long n = 0;
        for (Channel ch : connections) {
            // A racy read of the flushed-entry count from the exporter's thread: a gauge only.
            ChannelOutboundBuffer out = ch.unsafe().outboundBuffer();
            if (out != null) {
                n += out.size();
            }
        }
        return n;
    }

    @Override
    public void forEachPartition(BrokerMetrics.PartitionVisitor visitor) {
        partitions.accept(p -> visit(visitor, p));
    }

    private static void visit(BrokerMetrics.PartitionVisitor visitor, Partition p) {
        visitor.partition(
                p.topic(),
                p.partition(),
                p.logStartOffset(),
                p.logEndOffset(),
                p.log().activeSegmentSizeBytes());
    }
}
