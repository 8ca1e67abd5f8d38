package io.stellflow.controller.image;

import io.stellflow.controller.proto.ActiveControllerRecord;
import io.stellflow.controller.proto.ClusterIdRecord;
import io.stellflow.controller.proto.ConfigChangeRecord;
import io.stellflow.controller.proto.FenceBrokerRecord;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionChangeRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.ProducerIdsRecord;
import io.stellflow.controller.proto.RecordType;
import io.stellflow.controller.proto.RegisterBrokerRecord;
import io.stellflow.controller.proto.RegisterControllerRecord;
import io.stellflow.controller.proto.RemoveTopicRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.controller.proto.UnfenceBrokerRecord;
import io.stellflow.controller.proto.Uuid;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.UUID;

/**
 * Builds {@link MetadataRecord}s with the right type and version, and converts ids.
 *
 * <p>Thread-safety: stateless.
 */
public final class MetadataRecords {
    /** Schema version written for every record body today. */
    public static final int VERSION = 1;

    private MetadataRecords() {}

    public static Uuid uuid(UUID id) {
        return Uuid.newBuilder()
                .setMostSignificantBits(id.getMostSignificantBits())
                .setLeastSignificantBits(id.getLeastSignificantBits())
                .build();
    }

    public static UUID uuid(Uuid id) {
        return new UUID(id.getMostSignificantBits(), id.getLeastSignificantBits());
    }

    private static MetadataRecord.Builder base(RecordType type) {
        return MetadataRecord.newBuilder().setType(type).setVersion(VERSION);
    }

    public static MetadataRecord of(RegisterBrokerRecord r) {
        return base(RecordType.REGISTER_BROKER).setRegisterBroker(r).build();
    }

    public static MetadataRecord of(FenceBrokerRecord r) {
        return base(RecordType.FENCE_BROKER).setFenceBroker(r).build();
    }

    public static MetadataRecord of(UnfenceBrokerRecord r) {
        return base(RecordType.UNFENCE_BROKER).setUnfenceBroker(r).build();
    }

    public static MetadataRecord of(TopicRecord r) {
        return base(RecordType.TOPIC).setTopic(r).build();
    }

    public static MetadataRecord of(PartitionRecord r) {
        return base(RecordType.PARTITION).setPartition(r).build();
    }

    public static MetadataRecord of(RemoveTopicRecord r) {
        return base(RecordType.REMOVE_TOPIC).setRemoveTopic(r).build();
    }

    public static MetadataRecord of(ConfigChangeRecord r) {
        return base(RecordType.CONFIG_CHANGE).setConfigChange(r).build();
    }

    public static MetadataRecord of(PartitionChangeRecord r) {
        return base(RecordType.PARTITION_CHANGE).setPartitionChange(r).build();
    }

    public static MetadataRecord of(RegisterControllerRecord r) {
        return base(RecordType.REGISTER_CONTROLLER).setRegisterController(r).build();
    }

    public static MetadataRecord of(ClusterIdRecord r) {
        return base(RecordType.CLUSTER_ID).setClusterId(r).build();
    }

    public static MetadataRecord of(ActiveControllerRecord r) {
        return base(RecordType.ACTIVE_CONTROLLER).setActiveController(r).build();
    }

    public static MetadataRecord of(ProducerIdsRecord r) {
        return base(RecordType.PRODUCER_IDS).setProducerIds(r).build();
    }

    /**
     * A fresh random cluster id: 22 characters, URL-safe base64 (no padding) of a random UUID's 16
     * bytes (the shape Kafka's {@code kafka-storage.sh random-uuid} prints).
     */
    public static String randomClusterId() {
        UUID uuid = UUID.randomUUID();
        ByteBuffer bytes = ByteBuffer.allocate(16);
        bytes.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.array());
    }

    /** The record type its body implies (the oneof field number), or UNSPECIFIED when it has none. */
    static RecordType bodyType(MetadataRecord r) {
        return switch (r.getBodyCase()) {
            case REGISTER_BROKER -> RecordType.REGISTER_BROKER;
            case FENCE_BROKER -> RecordType.FENCE_BROKER;
            case UNFENCE_BROKER -> RecordType.UNFENCE_BROKER;
            case TOPIC -> RecordType.TOPIC;
            case PARTITION -> RecordType.PARTITION;
            case REMOVE_TOPIC -> RecordType.REMOVE_TOPIC;
            case CONFIG_CHANGE -> RecordType.CONFIG_CHANGE;
            case PARTITION_CHANGE -> RecordType.PARTITION_CHANGE;
            case REGISTER_CONTROLLER -> RecordType.REGISTER_CONTROLLER;
            case CLUSTER_ID -> RecordType.CLUSTER_ID;
            case ACTIVE_CONTROLLER -> RecordType.ACTIVE_CONTROLLER;
            case PRODUCER_IDS -> RecordType.PRODUCER_IDS;
            case BODY_NOT_SET -> RecordType.RECORD_TYPE_UNSPECIFIED;
        };
    }

    /** The full-state record of a partition (used at creation and in snapshots). */
    public static PartitionRecord partitionRecord(UUID topicId, PartitionImage p) {
        return PartitionRecord.newBuilder()
                .setTopicId(uuid(topicId))
                .setPartition(p.partition())
                .addAllReplicas(p.replicas())
                .setLeader(p.leader())
                .setLeaderEpoch(p.leaderEpoch())
                .addAllIsr(p.isr())
                .setPartitionEpoch(p.partitionEpoch())
                .build();
    }
}
