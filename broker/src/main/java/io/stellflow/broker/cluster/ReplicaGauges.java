package io.stellflow.broker.cluster;

import io.stellflow.broker.telemetry.ReplicaTelemetry;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;

/**
 * What the replication gauges of one broker read ({@link ReplicaTelemetry#registerGauges}), computed
 * from its {@link ReplicaManager}'s hosted partitions and applied image at each read: under-replicated
 * and under-min-ISR led partitions, offline partitions ({@link #offlinePartitions}), and the largest
 * lag per role. Lag in bytes is estimated from the lag in records times the log's average bytes per
 * record (size over retained records): the leader does not know the followers' byte positions.
 *
 * <p>Owns nothing: every read walks the replica manager's partitions.
 *
 * <p>Thread-safety: any thread (the replica manager's concurrent map, immutable images, volatile
 * partition roles).
 */
final class ReplicaGauges implements ReplicaTelemetry.Source {
    private final ReplicaManager replicas;

    ReplicaGauges(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    @Override
    public long underReplicatedPartitions() {
        return underReplicatedCount();
    }

    @Override
    public long underMinIsrPartitions() {
        return underMinIsrCount();
    }

    @Override
    public long offlinePartitions() {
        return ReplicaGauges.offlinePartitions(replicas.image(), replicas.brokerId());
    }

    @Override
    public long maxLagBytes(boolean leaderRole) {
        long[] max = {0};
        replicas.forEachHostedPartition(p -> {
            if (p.isLeader() == leaderRole) {
                long records = p.maxLagRecords();
                if (records > 0) {
                    long retained = Math.max(1, p.logEndOffset() - p.logStartOffset());
                    max[0] = Math.max(max[0], records * Math.max(1, p.log().sizeInBytes() / retained));
                }
            }
        });
        return max[0];
    }

    @Override
    public long maxLagTimeMs(boolean leaderRole) {
        long nowMs = System.currentTimeMillis();
        long[] max = {0};
        replicas.forEachHostedPartition(p -> {
            if (p.isLeader() == leaderRole) {
                max[0] = Math.max(max[0], p.maxLagTimeMs(nowMs));
            }
        });
        return max[0];
    }

    /** {@link ReplicaManager#underReplicatedCount}. */
    int underReplicatedCount() {
        int[] n = {0};
        replicas.forEachHostedPartition(p -> {
            if (p.isLeader() && p.inSyncReplicas().size() < p.replicas().size()) {
                n[0]++;
            }
        });
        return n[0];
    }

    /**
     * The {@code stellflow.partition.offline.count} this broker reports: every partition of the
     * cluster without a leader when {@code brokerId} is the lowest-id unfenced broker of {@code img},
     * else 0. One broker reports the whole cluster's count, so the sum over brokers counts each
     * offline partition once, including one whose replicas are all down (no hosting broker could
     * report that one); Kafka's active controller reports its {@code OfflinePartitionsCount} the same
     * way. Brokers decide from their own images: while these differ (for one metadata round trip)
     * the sum can count a partition twice or not at all. With no unfenced broker nobody reports.
     *
     * @param img the metadata image this broker applied last
     * @param brokerId this broker's id
     * @return offline partitions (0 or more)
     */
    static long offlinePartitions(MetadataImage img, int brokerId) {
        for (BrokerRegistration b : img.brokers().values()) {
            if (!b.fenced()) {
                return b.id() == brokerId ? img.leaderlessPartitionCount() : 0;
            }
        }
        return 0;
    }

    /** {@link ReplicaManager#underMinIsrCount}. */
    int underMinIsrCount() {
        int[] n = {0};
        replicas.forEachHostedPartition(p -> {
            if (p.isLeader() && p.inSyncReplicaCount() < p.minInsyncReplicas()) {
                n[0]++;
            }
        });
        return n[0];
    }
}
