package io.stellflow.controller.image;

import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ConfigChangeRecord;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.FenceBrokerRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.ProducerIdsRecord;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.controller.proto.UnfenceBrokerRecord;
import io.stellflow.server.common.topic.TopicNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The deterministic apply function of the metadata state machine: {@code (image, term, index,
 * records) -> image'}. All records of one entry apply atomically: the first record that does not fit
 * the image (unknown topic, stale partition epoch, bad type/version, ...) rejects the whole entry, and
 * the result is the old content at the new (term, index). It reads nothing but its arguments (no
 * clock, no randomness, no iteration over hash order), so every replica computes equal images.
 *
 * <p>Thread-safety: stateless.
 */
public final class MetadataApplier {
    private MetadataApplier() {}

    /** Applies one entry's records; see the class comment. */
    public static ApplyResult apply(MetadataImage image, long term, long index, List<MetadataRecord> records) {
        Builder b = new Builder(image);
        for (int i = 0; i < records.size(); i++) {
            MetadataRecord r = records.get(i);
            String bad = b.apply(r, index);
            if (bad != null) {
                return new ApplyResult(
                        b.rejected(term, index), b.error, "record " + i + " (" + r.getType() + "): " + bad);
            }
        }
        return new ApplyResult(b.build(term, index), ErrorCode.NONE, "");
    }

    /** Applies a delta; see {@link #apply(MetadataImage, long, long, List)}. */
    public static ApplyResult apply(MetadataImage image, MetadataDelta delta) {
        return apply(image, delta.term(), delta.offset(), delta.records());
    }

    /** Copy-on-write working state for one entry. */
    private static final class Builder {
        private final MetadataImage base;
        private TreeMap<Integer, BrokerRegistration> brokers;
        private TreeMap<String, TopicImage> topics;
        private TreeMap<Integer, BrokerEndpoint> controllers;
        private String clusterId;
        private int activeControllerId;
        private long nextProducerId;
        private ErrorCode error = ErrorCode.INVALID_REQUEST;

        Builder(MetadataImage base) {
            this.base = base;
            this.clusterId = base.clusterId();
            this.activeControllerId = base.activeControllerId();
            this.nextProducerId = base.nextProducerId();
        }

        private TreeMap<Integer, BrokerRegistration> brokers() {
            if (brokers == null) {
                brokers = new TreeMap<>(base.brokersMap());
            }
            return brokers;
        }

        private TreeMap<String, TopicImage> topics() {
            if (topics == null) {
                topics = new TreeMap<>(base.topicsByNameMap());
            }
            return topics;
        }

        private TopicImage topicById(UUID id) {
            if (topics == null) {
                return base.topic(id);
            }
            for (TopicImage t : topics.values()) {
                if (t.id().equals(id)) {
                    return t;
                }
            }
            return null;
        }

        MetadataImage rejected(long term, long index) {
            return new MetadataImage(
                    term,
                    index,
                    base.clusterId(),
                    base.activeControllerId(),
                    base.brokersMap(),
                    base.topicsByNameMap(),
                    base.topicsById(),
                    base.controllersMap(),
                    base.nextProducerId());
        }

        MetadataImage build(long term, long index) {
            Map<UUID, TopicImage> byId;
            if (topics == null) {
                byId = base.topicsById();
            } else {
                byId = new HashMap<>();
                for (TopicImage t : topics.values()) {
                    byId.put(t.id(), t);
                }
            }
            return new MetadataImage(
                    term,
                    index,
                    clusterId,
                    activeControllerId,
                    brokers != null ? brokers : base.brokersMap(),
                    topics != null ? topics : base.topicsByNameMap(),
                    byId,
                    controllers != null ? controllers : base.controllersMap(),
                    nextProducerId);
        }

        private String fail(ErrorCode code, String message) {
            error = code;
            return message;
        }

        /** Null when applied, otherwise why not. */
        String apply(MetadataRecord r, long index) {
            if (r.getVersion() != MetadataRecords.VERSION) {
                return fail(ErrorCode.INVALID_REQUEST, "unknown record version " + r.getVersion());
            }
            if (MetadataRecords.bodyType(r) != r.getType()) {
                return fail(
                        ErrorCode.INVALID_REQUEST, "type " + r.getType() + " does not match body " + r.getBodyCase());
            }
            return switch (r.getBodyCase()) {
                case REGISTER_BROKER -> registerBroker(r.getRegisterBroker(), index);
                case FENCE_BROKER -> fence(r.getFenceBroker());
                case UNFENCE_BROKER -> unfence(r.getUnfenceBroker());
                case TOPIC -> topic(r.getTopic());
                case PARTITION -> partition(r.getPartition());
                case REMOVE_TOPIC ->
                    removeTopic(MetadataRecords.uuid(r.getRemoveTopic().getTopicId()));
                case CONFIG_CHANGE -> config(r.getConfigChange());
                case PARTITION_CHANGE -> partitionChange(r.getPartitionChange());
                case REGISTER_CONTROLLER -> {
                    if (controllers == null) {
                        controllers = new TreeMap<>(base.controllersMap());
                    }
                    controllers.put(
                            r.getRegisterController().getControllerId(),
                            BrokerEndpoint.fromProto(r.getRegisterController().getEndpoint()));
                    yield null;
                }
                case CLUSTER_ID -> clusterId(r.getClusterId());
                case ACTIVE_CONTROLLER -> {
                    int id = r.getActiveController().getControllerId();
                    if (id < 0) {
                        yield fail(ErrorCode.INVALID_REQUEST, "controller id " + id + " < 0");
                    }
                    activeControllerId = id;
                    yield null;
                }
                case PRODUCER_IDS -> producerIds(r.getProducerIds());
                case BODY_NOT_SET -> fail(ErrorCode.INVALID_REQUEST, "record has no body");
            };
        }

        /** Largest block one record may take (a million ids; brokers ask for 1000). */
        static final long MAX_PRODUCER_ID_BLOCK = 1_000_000L;

        private String producerIds(ProducerIdsRecord r) {
            long first = r.getFirstProducerId();
            long size = r.getBlockSize();
            if (first != nextProducerId) {
                return fail(
                        ErrorCode.INVALID_UPDATE_VERSION,
                        "producer id block at " + first + " is not the next one (" + nextProducerId + ")");
            }
            // A snapshot's single record (broker -1) may span every id given so far.
            long max = r.getBrokerId() < 0 ? Long.MAX_VALUE : MAX_PRODUCER_ID_BLOCK;
            if (size <= 0 || size > max || first > Long.MAX_VALUE - size) {
                return fail(ErrorCode.INVALID_REQUEST, "producer id block size " + size + " at " + first);
            }
            nextProducerId = first + size;
            return null;
        }

        private String clusterId(ClusterIdRecord r) {
            String id = r.getClusterId();
            if (id.isBlank()) {
                return fail(ErrorCode.INVALID_REQUEST, "empty cluster id");
            }
            if (clusterId != null && !clusterId.equals(id)) {
                return fail(
                        ErrorCode.INCONSISTENT_CLUSTER_ID,
                        "cluster id '" + id + "' differs from the cluster's '" + clusterId + "'");
            }
            clusterId = id;
            return null;
        }

        private String registerBroker(RegisterBrokerRecord r, long index) {
            if (r.getBrokerId() < 0) {
                return fail(ErrorCode.INVALID_REQUEST, "broker id " + r.getBrokerId() + " < 0");
            }
            List<BrokerEndpoint> listeners = new ArrayList<>();
            r.getListenersList().forEach(e -> listeners.add(BrokerEndpoint.fromProto(e)));
            long epoch = r.getBrokerEpoch() != 0 ? r.getBrokerEpoch() : index;
            brokers()
                    .put(
                            r.getBrokerId(),
                            new BrokerRegistration(
                                    r.getBrokerId(),
                                    MetadataRecords.uuid(r.getIncarnationId()),
                                    epoch,
                                    listeners,
                                    r.getRack(),
                                    r.getFenced()));
            return null;
        }

        private String fence(FenceBrokerRecord r) {
            return setFenced(r.getBrokerId(), r.getBrokerEpoch(), true);
        }

        private String unfence(UnfenceBrokerRecord r) {
            return setFenced(r.getBrokerId(), r.getBrokerEpoch(), false);
        }

        private String setFenced(int id, long epoch, boolean fenced) {
            BrokerRegistration b = brokers().get(id);
            if (b == null) {
                return fail(ErrorCode.BROKER_ID_NOT_REGISTERED, "broker " + id + " is not registered");
            }
            if (b.brokerEpoch() != epoch) {
                return fail(
                        ErrorCode.STALE_BROKER_EPOCH,
                        "broker " + id + " epoch " + epoch + " is not the current " + b.brokerEpoch());
            }
            brokers().put(id, b.withFenced(fenced));
            return null;
        }

        private String topic(TopicRecord r) {
            String bad = TopicNames.validate(r.getName());
            if (bad != null) {
                return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, bad);
            }
            UUID id = MetadataRecords.uuid(r.getTopicId());
            if (topicById(id) != null) {
                return fail(ErrorCode.TOPIC_ALREADY_EXISTS, "topic id " + id + " exists");
            }
            String key = TopicNames.collisionKey(r.getName());
            for (TopicImage t : topics().values()) {
                if (TopicNames.collisionKey(t.name()).equals(key)) {
                    return fail(
                            ErrorCode.TOPIC_ALREADY_EXISTS,
                            t.name().equals(r.getName())
                                    ? "topic '" + r.getName() + "' already exists"
                                    : "topic '" + r.getName() + "' collides with '" + t.name()
                                            + "' ('.' and '_' are treated alike)");
                }
            }
            topics().put(r.getName(), new TopicImage(id, r.getName(), r.getConfigMap(), List.of()));
            return null;
        }

        private static String checkReplicas(List<Integer> replicas, int leader, List<Integer> isr) {
            if (replicas.isEmpty()) {
                return "no replicas";
            }
            Set<Integer> set = new HashSet<>(replicas);
            if (set.size() != replicas.size()) {
                return "duplicate replica in " + replicas;
            }
            if (new HashSet<>(isr).size() != isr.size() || !set.containsAll(isr)) {
                return "ISR " + isr + " is not a set of replicas " + replicas;
            }
            if (leader != PartitionImage.NO_LEADER && !isr.contains(leader)) {
                return "leader " + leader + " not in ISR " + isr;
            }
            return null;
        }

        private String partition(PartitionRecord r) {
            UUID id = MetadataRecords.uuid(r.getTopicId());
            TopicImage t = topicById(id);
            if (t == null) {
                return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic id " + id);
            }
            if (r.getPartition() != t.partitions().size()) {
                return fail(
                        ErrorCode.INVALID_PARTITIONS,
                        "partition " + r.getPartition() + " of " + t.name() + " is not the next one ("
                                + t.partitions().size() + ")");
            }
            String bad = checkReplicas(r.getReplicasList(), r.getLeader(), r.getIsrList());
            if (bad != null) {
                return fail(ErrorCode.INVALID_REQUEST, bad);
            }
            List<PartitionImage> parts = new ArrayList<>(t.partitions());
            parts.add(new PartitionImage(
                    r.getPartition(),
                    r.getReplicasList(),
                    r.getLeader(),
                    r.getLeaderEpoch(),
                    r.getIsrList(),
                    r.getPartitionEpoch()));
            topics().put(t.name(), new TopicImage(t.id(), t.name(), t.config(), parts));
            return null;
        }

        private String removeTopic(UUID id) {
            TopicImage t = topicById(id);
            if (t == null) {
                return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic id " + id);
            }
            topics().remove(t.name());
            return null;
        }

        private String config(ConfigChangeRecord r) {
            UUID id = MetadataRecords.uuid(r.getTopicId());
            TopicImage t = topicById(id);
            if (t == null) {
                return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown topic id " + id);
            }
            if (r.getKey().isEmpty()) {
                return fail(ErrorCode.INVALID_CONFIG, "empty config key");
            }
            Map<String, String> config = new TreeMap<>(t.config());
            if (r.getRemove()) {
                config.remove(r.getKey());
            } else {
                config.put(r.getKey(), r.getValue());
            }
            topics().put(t.name(), new TopicImage(t.id(), t.name(), config, t.partitions()));
            return null;
        }

        /**
         * Null when every member an AlterPartition adds to the ISR is, as this entry applies, still
         * registered unfenced at the broker epoch its leader judged it on (-1: epoch not checked);
         * the controller checked this against its image before committing, and a registration or a
         * fence may have committed in between (docs/replication.md, "A returning follower").
         */
        private String checkJoining(PartitionChangeRecord r) {
            if (r.getJoiningBrokerEpochsCount() != r.getJoiningReplicasCount()) {
                return r.getJoiningReplicasCount() + " joining replicas with " + r.getJoiningBrokerEpochsCount()
                        + " broker epochs";
            }
            Map<Integer, BrokerRegistration> registered = brokers != null ? brokers : base.brokersMap();
            for (int i = 0; i < r.getJoiningReplicasCount(); i++) {
                int id = r.getJoiningReplicas(i);
                long epoch = r.getJoiningBrokerEpochs(i);
                BrokerRegistration b = registered.get(id);
                if (b == null || b.fenced()) {
                    return "joining replica " + id + " is fenced or not registered";
                }
                if (epoch >= 0 && b.brokerEpoch() != epoch) {
                    return "joining replica " + id + " was judged at broker epoch " + epoch + " but is registered at "
                            + b.brokerEpoch();
                }
            }
            return null;
        }

        private String partitionChange(PartitionChangeRecord r) {
            UUID id = MetadataRecords.uuid(r.getTopicId());
            TopicImage t = topicById(id);
            PartitionImage p = t == null ? null : t.partition(r.getPartition());
            if (p == null) {
                return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown partition " + id + "-" + r.getPartition());
            }
            if (p.partitionEpoch() != r.getExpectedPartitionEpoch()) {
                return fail(
                        ErrorCode.INVALID_UPDATE_VERSION,
                        "partition epoch " + r.getExpectedPartitionEpoch() + " is not the current " + p.partitionEpoch()
                                + " of " + t.name() + "-" + p.partition());
            }
            String bad = checkReplicas(p.replicas(), r.getLeader(), r.getIsrList());
            if (bad != null) {
                return fail(ErrorCode.INELIGIBLE_REPLICA, bad);
            }
            bad = checkJoining(r);
            if (bad != null) {
                return fail(ErrorCode.INELIGIBLE_REPLICA, bad + " (" + t.name() + "-" + p.partition() + ")");
            }
            if (r.getLeader() != p.leader() && r.getLeader() != PartitionImage.NO_LEADER) {
                // A new leader must be live when the entry applies (an election computed before a
                // concurrent fence of its choice must not commit).
                BrokerRegistration nb = (brokers != null ? brokers : base.brokersMap()).get(r.getLeader());
                if (nb == null || nb.fenced()) {
                    return fail(
                            ErrorCode.INELIGIBLE_REPLICA,
                            "new leader " + r.getLeader() + " of " + t.name() + "-" + p.partition()
                                    + " is fenced or not registered");
                }
            }
            // Every leader change (to another broker or to none) bumps the leader epoch.
            int leaderEpoch = r.getLeader() != p.leader() ? p.leaderEpoch() + 1 : p.leaderEpoch();
            PartitionImage changed = new PartitionImage(
                    p.partition(), p.replicas(), r.getLeader(), leaderEpoch, r.getIsrList(), p.partitionEpoch() + 1);
            List<PartitionImage> parts = new ArrayList<>(t.partitions());
            parts.set(p.partition(), changed);
            topics().put(t.name(), new TopicImage(t.id(), t.name(), t.config(), parts));
            return null;
        }
    }
}
