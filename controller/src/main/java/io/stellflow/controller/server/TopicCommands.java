package io.stellflow.controller.server;

import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.AlterableConfig;
import io.stellflow.controller.proto.ConfigChangeRecord;
import io.stellflow.controller.proto.ConfigOpType;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreatePartitionsRequest;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.IncrementalAlterConfigsRequest;
import io.stellflow.controller.proto.MetadataRecord;
import io.stellflow.controller.proto.PartitionRecord;
import io.stellflow.controller.proto.TopicRecord;
import io.stellflow.server.common.topic.TopicConfigRules;
import io.stellflow.server.common.topic.TopicNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Validation and record building of topic commands, against one image. Bad input gives an error and
 * no records, so nothing is written.
 *
 * <p>Thread-safety: stateless apart from the random rotation start; callable from any thread.
 */
final class TopicCommands {
    /** Upper bound on partitions per topic (the broker's MAX_PARTITIONS_PER_TOPIC). */
    static final int MAX_PARTITIONS = 10_000;

    private final StorageReports storage;

    TopicCommands() {
        this(new StorageReports());
    }

    /** @param storage new replicas go only to brokers that {@link StorageReports#acceptsNewReplicas} */
    TopicCommands(StorageReports storage) {
        this.storage = storage;
    }

    /** A validated command: records to commit, or the error. */
    record Plan(ErrorCode error, String message, UUID topicId, List<MetadataRecord> records) {
        static Plan error(ErrorCode code, String message) {
            return new Plan(code, message, null, List.of());
        }
    }

    Plan planCreate(MetadataImage img, CreatableTopic t) {
        String bad = TopicNames.validate(t.getName());
        if (bad != null) {
            return Plan.error(ErrorCode.INVALID_TOPIC_EXCEPTION, bad);
        }
        if (img.topic(t.getName()) != null) {
            return Plan.error(ErrorCode.TOPIC_ALREADY_EXISTS, "topic '" + t.getName() + "' already exists");
        }
        TopicImage colliding = img.collidingTopic(t.getName());
        if (colliding != null) {
            return Plan.error(
                    ErrorCode.TOPIC_ALREADY_EXISTS,
                    "topic '" + t.getName() + "' collides with existing topic '" + colliding.name()
                            + "' ('.' and '_' are treated alike)");
        }
        if (t.getNumPartitions() <= 0 || t.getNumPartitions() > MAX_PARTITIONS) {
            return Plan.error(
                    ErrorCode.INVALID_PARTITIONS,
                    "number of partitions " + t.getNumPartitions() + " must be in 1.." + MAX_PARTITIONS);
        }
        List<BrokerRegistration> unfenced = unfenced(img);
        if (t.getReplicationFactor() <= 0 || t.getReplicationFactor() > unfenced.size()) {
            return Plan.error(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    "replication factor " + t.getReplicationFactor() + " must be in 1.." + unfenced.size()
                            + " (the number of unfenced brokers" + withoutRoom(img) + ")");
        }
        Map<String, String> config = new TreeMap<>();
        for (Map.Entry<String, String> c : t.getConfigMap().entrySet()) {
            String badConfig = TopicConfigRules.validate(c.getKey(), c.getValue());
            if (badConfig != null) {
                return Plan.error(ErrorCode.INVALID_CONFIG, "topic '" + t.getName() + "': " + badConfig);
            }
            config.put(c.getKey(), TopicConfigRules.normalize(c.getValue()));
        }
        UUID id;
        do {
            id = UUID.randomUUID();
        } while (img.topic(id) != null);
        List<MetadataRecord> records = new ArrayList<>();
        records.add(MetadataRecords.of(TopicRecord.newBuilder()
                .setTopicId(MetadataRecords.uuid(id))
                .setName(t.getName())
                .putAllConfig(config)
                .build()));
        addPartitions(records, id, unfenced, 0, t.getNumPartitions(), t.getReplicationFactor());
        return new Plan(ErrorCode.NONE, "", id, records);
    }

    Plan planCreatePartitions(MetadataImage img, CreatePartitionsRequest req) {
        TopicImage t = img.topic(req.getName());
        if (t == null) {
            return Plan.error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no topic '" + req.getName() + "'");
        }
        int current = t.partitions().size();
        if (req.getTotalCount() <= current || req.getTotalCount() > MAX_PARTITIONS) {
            return Plan.error(
                    ErrorCode.INVALID_PARTITIONS,
                    "new partition count " + req.getTotalCount() + " must be in " + (current + 1) + ".."
                            + MAX_PARTITIONS + " (topic has " + current + ")");
        }
        int rf = current == 0 ? 1 : t.partitions().get(0).replicas().size();
        List<BrokerRegistration> unfenced = unfenced(img);
        if (rf > unfenced.size()) {
            return Plan.error(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    "replication factor " + rf + " of '" + t.name() + "' exceeds the " + unfenced.size()
                            + " unfenced brokers" + withoutRoom(img));
        }
        List<MetadataRecord> records = new ArrayList<>();
        addPartitions(records, t.id(), unfenced, current, req.getTotalCount() - current, rf);
        return new Plan(ErrorCode.NONE, "", t.id(), records);
    }

    /**
     * The ConfigChangeRecords of an IncrementalAlterConfigs, in request order; an op that changes
     * nothing (setting the current value, deleting an absent key) gives no record, so the plan may
     * have none. A key named twice, an unknown key or a bad value: INVALID_CONFIG for the whole
     * request.
     */
    Plan planAlterConfigs(MetadataImage img, IncrementalAlterConfigsRequest req) {
        TopicImage t = img.topic(req.getTopic());
        if (t == null) {
            return Plan.error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no topic '" + req.getTopic() + "'");
        }
        if (req.getConfigsCount() == 0) {
            return Plan.error(ErrorCode.INVALID_REQUEST, "no config to alter for topic '" + t.name() + "'");
        }
        Map<String, String> after = new TreeMap<>(t.config());
        List<String> seen = new ArrayList<>();
        List<MetadataRecord> records = new ArrayList<>();
        for (AlterableConfig c : req.getConfigsList()) {
            if (seen.contains(c.getKey())) {
                return Plan.error(ErrorCode.INVALID_CONFIG, "config '" + c.getKey() + "' is altered twice");
            }
            seen.add(c.getKey());
            ConfigChangeRecord.Builder r = ConfigChangeRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(t.id()))
                    .setKey(c.getKey());
            if (c.getOp() == ConfigOpType.DELETE) {
                if (!TopicConfigRules.KEYS.contains(c.getKey())) {
                    return Plan.error(ErrorCode.INVALID_CONFIG, TopicConfigRules.validate(c.getKey(), c.getValue()));
                }
                if (after.remove(c.getKey()) != null) {
                    records.add(MetadataRecords.of(r.setRemove(true).build()));
                }
            } else if (c.getOp() == ConfigOpType.SET) {
                String bad = TopicConfigRules.validate(c.getKey(), c.getValue());
                if (bad != null) {
                    return Plan.error(ErrorCode.INVALID_CONFIG, "topic '" + t.name() + "': " + bad);
                }
                String value = TopicConfigRules.normalize(c.getValue());
                if (!value.equals(after.put(c.getKey(), value))) {
                    records.add(MetadataRecords.of(r.setValue(value).build()));
                }
            } else {
                return Plan.error(ErrorCode.INVALID_REQUEST, "unknown config op " + c.getOpValue());
            }
        }
        return new Plan(ErrorCode.NONE, "", t.id(), records);
    }

    private static void addPartitions(
            List<MetadataRecord> records, UUID id, List<BrokerRegistration> brokers, int first, int count, int rf) {
        int start = ThreadLocalRandom.current().nextInt(brokers.size());
        List<List<Integer>> assignment = ReplicaPlacer.place(brokers, first, count, rf, start);
        for (int i = 0; i < count; i++) {
            List<Integer> replicas = assignment.get(i);
            records.add(MetadataRecords.of(PartitionRecord.newBuilder()
                    .setTopicId(MetadataRecords.uuid(id))
                    .setPartition(first + i)
                    .addAllReplicas(replicas)
                    .setLeader(replicas.get(0))
                    .setLeaderEpoch(0)
                    .addAllIsr(replicas)
                    .setPartitionEpoch(0)
                    .build()));
        }
    }

    /** Unfenced brokers that can take a new replica (their last heartbeat named a writable log dir). */
    private List<BrokerRegistration> unfenced(MetadataImage img) {
        List<BrokerRegistration> out = new ArrayList<>();
        for (BrokerRegistration b : img.brokers().values()) {
            if (!b.fenced() && storage.acceptsNewReplicas(b.id())) {
                out.add(b);
            }
        }
        return out;
    }

    /** {@code "; not counted: brokers [..] without a writable log dir"}, or empty when every unfenced broker counts. */
    private String withoutRoom(MetadataImage img) {
        List<Integer> full = new ArrayList<>();
        for (BrokerRegistration b : img.brokers().values()) {
            if (!b.fenced() && !storage.acceptsNewReplicas(b.id())) {
                full.add(b.id());
            }
        }
        return full.isEmpty() ? "" : " with a writable log dir; brokers " + full + " have none";
    }
}
