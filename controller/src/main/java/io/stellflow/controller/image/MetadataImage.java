package io.stellflow.controller.image;

import io.stellflow.controller.proto.ActiveControllerRecord;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.MetadataSnapshot;
import io.stellflow.controller.proto.ProducerIdsRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RegisterControllerRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.server.common.topic.TopicNames;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.UUID;

/**
 * An immutable view of cluster metadata at one metadata offset: the cluster id, the active
 * controller, registered brokers, topics (by name and by id) with their partitions and config
 * overrides, the control-plane endpoints of controllers that have led, and the next producer id.
 *
 * <p>Produced only by {@link MetadataApplier} (deterministic: the same entries in the same order give
 * an equal image on every replica, which {@link #equals} compares in full).
 *
 * <p>Thread-safety: immutable; share freely.
 */
public final class MetadataImage {
    /** {@link #activeControllerId()} before any controller announced itself. */
    public static final int NO_CONTROLLER = -1;

    /** The image before any entry: offset 0, term 0. */
    public static final MetadataImage EMPTY = new MetadataImage(
            0,
            0,
            null,
            NO_CONTROLLER,
            Collections.emptySortedMap(),
            Collections.emptySortedMap(),
            Map.of(),
            Collections.emptySortedMap(),
            0L);

    private final long term;
    private final long offset;
    private final String clusterId;
    private final int activeControllerId;
    private final SortedMap<Integer, BrokerRegistration> brokers;
    private final SortedMap<String, TopicImage> topicsByName;
    private final Map<UUID, TopicImage> topicsById;
    private final SortedMap<Integer, BrokerEndpoint> controllers;
    private final long nextProducerId;

    MetadataImage(
            long term,
            long offset,
            String clusterId,
            int activeControllerId,
            SortedMap<Integer, BrokerRegistration> brokers,
            SortedMap<String, TopicImage> topicsByName,
            Map<UUID, TopicImage> topicsById,
            SortedMap<Integer, BrokerEndpoint> controllers,
            long nextProducerId) {
        this.term = term;
        this.nextProducerId = nextProducerId;
        this.offset = offset;
        this.clusterId = clusterId;
        this.activeControllerId = activeControllerId;
        this.brokers = Collections.unmodifiableSortedMap(brokers);
        this.topicsByName = Collections.unmodifiableSortedMap(topicsByName);
        this.topicsById = Collections.unmodifiableMap(topicsById);
        this.controllers = Collections.unmodifiableSortedMap(controllers);
    }

    /** Raft term of the last applied entry. */
    public long term() {
        return term;
    }

    /** Metadata offset: the Raft index of the last applied entry (0 before any). */
    public long offset() {
        return offset;
    }

    /**
     * The cluster id ({@code ClusterIdRecord}), or null before the first active controller wrote it.
     * Never changes once set.
     */
    public String clusterId() {
        return clusterId;
    }

    /**
     * Node id of the controller that last became active ({@code ActiveControllerRecord}), or
     * {@link #NO_CONTROLLER}. After the active controller dies this names it until its successor's
     * first entry commits (milliseconds after the election).
     */
    public int activeControllerId() {
        return activeControllerId;
    }

    /**
     * The first producer id not yet given to any broker ({@code ProducerIdsRecord}): every committed
     * block lies below it, so the next block starts here. 0 before the first block; only grows.
     */
    public long nextProducerId() {
        return nextProducerId;
    }

    /** Registered brokers by id (ascending). */
    public SortedMap<Integer, BrokerRegistration> brokers() {
        return brokers;
    }

    /** The broker, or null when not registered. */
    public BrokerRegistration broker(int id) {
        return brokers.get(id);
    }

    /** Ids of unfenced brokers, ascending. */
    public List<Integer> unfencedBrokerIds() {
        List<Integer> ids = new ArrayList<>();
        for (BrokerRegistration b : brokers.values()) {
            if (!b.fenced()) {
                ids.add(b.id());
            }
        }
        return ids;
    }

    /**
     * Partitions without a leader ({@link PartitionImage#NO_LEADER}): offline, neither produce nor
     * consume works for them until a replica is elected. Walks every partition (O(partitions)).
     */
    public int leaderlessPartitionCount() {
        int n = 0;
        for (TopicImage t : topicsByName.values()) {
            for (PartitionImage p : t.partitions()) {
                if (p.leader() == PartitionImage.NO_LEADER) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Topics by name (ascending). */
    public SortedMap<String, TopicImage> topicsByName() {
        return topicsByName;
    }

    /** Topics by id. */
    public Map<UUID, TopicImage> topicsById() {
        return topicsById;
    }

    /** The topic, or null. */
    public TopicImage topic(String name) {
        return topicsByName.get(name);
    }

    /** The topic, or null. */
    public TopicImage topic(UUID id) {
        return topicsById.get(id);
    }

    /** The partition, or null when the topic or partition does not exist. */
    public PartitionImage partition(UUID topicId, int partition) {
        TopicImage t = topicsById.get(topicId);
        return t == null ? null : t.partition(partition);
    }

    /** Control-plane endpoints of controllers that have been active, by controller id. */
    public SortedMap<Integer, BrokerEndpoint> controllers() {
        return controllers;
    }

    /** The existing topic whose name collides with {@code name} once '.' and '_' are alike, or null. */
    public TopicImage collidingTopic(String name) {
        String key = TopicNames.collisionKey(name);
        for (TopicImage t : topicsByName.values()) {
            if (TopicNames.collisionKey(t.name()).equals(key)) {
                return t;
            }
        }
        return null;
    }

    /**
     * This image as records that rebuild it from {@link #EMPTY} (cluster id, active controller,
     * controllers, brokers, then each topic followed by its partitions), with its term and offset.
     */
    public MetadataSnapshot toSnapshot() {
        MetadataSnapshot.Builder b = MetadataSnapshot.newBuilder()
                .setVersion(MetadataRecords.VERSION)
                .setTerm(term)
                .setIndex(offset);
        if (clusterId != null) {
            b.addRecords(MetadataRecords.of(
                    ClusterIdRecord.newBuilder().setClusterId(clusterId).build()));
        }
        if (activeControllerId != NO_CONTROLLER) {
            b.addRecords(MetadataRecords.of(ActiveControllerRecord.newBuilder()
                    .setControllerId(activeControllerId)
                    .build()));
        }
        if (nextProducerId > 0) {
            // One block from 0 to the next id: replays to the same nextProducerId.
            b.addRecords(MetadataRecords.of(ProducerIdsRecord.newBuilder()
                    .setBrokerId(-1)
                    .setFirstProducerId(0)
                    .setBlockSize(nextProducerId)
                    .build()));
        }
        for (Map.Entry<Integer, BrokerEndpoint> c : controllers.entrySet()) {
            b.addRecords(MetadataRecords.of(RegisterControllerRecord.newBuilder()
                    .setControllerId(c.getKey())
                    .setEndpoint(c.getValue().toProto())
                    .build()));
        }
        for (BrokerRegistration br : brokers.values()) {
            RegisterBrokerRecord.Builder r = RegisterBrokerRecord.newBuilder()
                    .setBrokerId(br.id())
                    .setIncarnationId(MetadataRecords.uuid(br.incarnationId()))
                    .setRack(br.rack())
                    .setFenced(br.fenced())
                    .setBrokerEpoch(br.brokerEpoch());
            br.listeners().forEach(l -> r.addListeners(l.toProto()));
            b.addRecords(MetadataRecords.of(r.build()));
        }
        for (TopicImage t : topicsByName.values()) {
            b.addRecords(MetadataRecords.of(TopicRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(t.id()))
                    .setName(t.name())
                    .putAllConfig(t.config())
                    .build()));
            for (PartitionImage p : t.partitions()) {
                b.addRecords(MetadataRecords.of(MetadataRecords.partitionRecord(t.id(), p)));
            }
        }
        return b.build();
    }

    /**
     * Rebuilds an image from {@link #toSnapshot()} output.
     *
     * @throws IllegalArgumentException when the records do not apply cleanly (a corrupt snapshot)
     */
    public static MetadataImage fromSnapshot(MetadataSnapshot snapshot) {
        if (snapshot.getVersion() != MetadataRecords.VERSION) {
            throw new IllegalArgumentException("unknown metadata snapshot version " + snapshot.getVersion());
        }
        List<MetadataRecord> records = snapshot.getRecordsList();
        ApplyResult r = MetadataApplier.apply(EMPTY, snapshot.getTerm(), snapshot.getIndex(), records);
        if (!r.ok()) {
            throw new IllegalArgumentException("metadata snapshot at index " + snapshot.getIndex() + " does not apply: "
                    + r.error() + ": " + r.message());
        }
        return r.image();
    }

    // Package-private access for the applier's copy-on-write builder.
    SortedMap<Integer, BrokerRegistration> brokersMap() {
        return brokers;
    }

    SortedMap<String, TopicImage> topicsByNameMap() {
        return topicsByName;
    }

    SortedMap<Integer, BrokerEndpoint> controllersMap() {
        return controllers;
    }

    /** Same content, including term and offset. */
    @Override
    public boolean equals(Object o) {
        return o instanceof MetadataImage m
                && term == m.term
                && offset == m.offset
                && Objects.equals(clusterId, m.clusterId)
                && activeControllerId == m.activeControllerId
                && nextProducerId == m.nextProducerId
                && brokers.equals(m.brokers)
                && topicsByName.equals(m.topicsByName)
                && controllers.equals(m.controllers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                term, offset, clusterId, activeControllerId, nextProducerId, brokers, topicsByName, controllers);
    }

    @Override
    public String toString() {
        return "MetadataImage{term=" + term + ", offset=" + offset + ", clusterId=" + clusterId
                + ", activeController=" + activeControllerId + ", brokers=" + brokers.values() + ", topics="
                + topicsByName.values() + ", controllers=" + controllers + ", nextProducerId=" + nextProducerId + "}";
    }
}
