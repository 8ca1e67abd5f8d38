package io.stellflow.broker.cluster;

import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.BrokerHeartbeatRequest;
import io.stellflow.controller.proto.FailedReplica;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions assigned to this broker whose log could not be created or opened (a full or offline
 * log dir; issue #23, point 5). Each is reported failed in every heartbeat ({@link #addTo}), so the
 * controller never keeps this broker as a leader that cannot serve it, and the {@link ReplicaManager}
 * tries again every second until it opens. One {@code PARTITION_APPLY_FAILED partition= topicId=
 * leader=} ERROR line when a partition's creation first fails, one {@code PARTITION_APPLY_RECOVERED}
 * INFO line when it opens after all.
 *
 * <p>Thread-safety: written by the replica manager's reconciling thread, read by the heartbeat thread
 * (a concurrent map).
 */
final class UnopenedPartitions {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaManager.class);

    /** A partition of a topic, by topic id. */
    private record Key(UUID topicId, int partition) {}

    private final Map<Key, String> failures = new ConcurrentHashMap<>();

    /** Records that creating {@code t}-{@code p} failed with {@code e}; logs the first failure of an episode. */
    void failed(TopicImage t, PartitionImage p, Throwable e) {
        if (failures.put(new Key(t.id(), p.partition()), e.toString()) == null) {
            LOG.error(
                    "PARTITION_APPLY_FAILED partition={}-{} topicId={} leader={}: {}; reported failed to the"
                            + " controller, retried every second",
                    t.name(),
                    p.partition(),
                    t.id(),
                    p.leader(),
                    e.toString());
        } else {
            LOG.debug("Creating {}-{} failed again: {}", t.name(), p.partition(), e.toString());
        }
    }

    /** Records that {@code t}-{@code p} opened; logs it when it had failed before. */
    void opened(TopicImage t, PartitionImage p) {
        if (!failures.isEmpty() && failures.remove(new Key(t.id(), p.partition())) != null) {
            LOG.info("PARTITION_APPLY_RECOVERED partition={}-{} topicId={}", t.name(), p.partition(), t.id());
        }
    }

    /** Forgets the partitions {@code image} no longer assigns to {@code brokerId}. */
    void retainAssigned(MetadataImage image, int brokerId) {
        if (failures.isEmpty()) {
            return;
        }
        failures.keySet().removeIf(k -> {
            PartitionImage p = image.partition(k.topicId(), k.partition());
            return p == null || !p.replicas().contains(brokerId);
        });
    }

    boolean isEmpty() {
        return failures.isEmpty();
    }

    /** Adds each of them to {@code heartbeat}'s failed replicas. */
    void addTo(BrokerHeartbeatRequest.Builder heartbeat) {
        for (Key k : failures.keySet()) {
            heartbeat.addFailedReplicas(failedReplica(k.topicId(), k.partition()));
        }
    }

    /** The heartbeat entry of one failed replica. */
    static FailedReplica failedReplica(UUID topicId, int partition) {
        return FailedReplica.newBuilder()
                .setTopicId(MetadataRecords.uuid(topicId))
                .setPartition(partition)
                .build();
    }
}
