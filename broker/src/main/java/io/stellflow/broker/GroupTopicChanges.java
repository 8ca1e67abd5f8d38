package io.stellflow.broker;

import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.group.GroupShard;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.TopicImage;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the group shards led here about topic changes in the metadata (issue #19 point 5): a
 * deleted topic (gone, or recreated under a new topic id) removes every group's offsets for it
 * ({@link GroupShard#deleteTopicOffsets}), so a recreated topic starts clean; a topic created or
 * whose partition count changed lets the shards recompute the target assignments of the groups
 * subscribed to it ({@link GroupShard#onMetadataChange}). Each is one command per loaded partition
 * of {@code __consumer_offsets}, submitted without waiting; a partition that moves meanwhile learns
 * nothing (its new leader loads the log, where the deletion's tombstones are once written).
 *
 * <p>Thread-safety: called on the metadata thread only ({@link
 * io.stellflow.broker.cluster.ReplicaManager#addImageListener}).
 */
final class GroupTopicChanges implements Consumer<MetadataImage> {
    private static final Logger LOG = LoggerFactory.getLogger(GroupTopicChanges.class);

    private record Shape(UUID id, int partitions) {}

    private final CoordinatorRuntime<GroupShard> runtime;
    private Map<String, Shape> last;

    GroupTopicChanges(CoordinatorRuntime<GroupShard> runtime) {
        this.runtime = runtime;
    }

    @Override
    public void accept(MetadataImage image) {
        Map<String, Shape> now = new HashMap<>();
        for (TopicImage t : image.topicsByName().values()) {
            if (!t.name().equals(OffsetsTopic.NAME)) {
                now.put(t.name(), new Shape(t.id(), t.partitions().size()));
            }
        }
        Map<String, Shape> before = last;
        last = now;
        if (before == null || before.equals(now)) {
            return; // the first image: the shards load against it
        }
        Set<String> deleted = new TreeSet<>();
        boolean changed = false;
        for (Map.Entry<String, Shape> e : before.entrySet()) {
            Shape after = now.get(e.getKey());
            if (after == null || !after.id().equals(e.getValue().id())) {
                deleted.add(e.getKey());
            }
            changed |= after != null && after.partitions() != e.getValue().partitions();
        }
        for (String name : now.keySet()) {
            changed |= !before.containsKey(name) || deleted.contains(name);
        }
        for (int p : runtime.loadedPartitions()) {
            if (!deleted.isEmpty()) {
                Set<String> topics = Set.copyOf(deleted);
                runtime.submit(p, (GroupShard s, long nowMs) -> s.deleteTopicOffsets(topics, nowMs))
                        .whenComplete((v, e) -> failed("deleteTopicOffsets " + topics, p, e));
            }
            if (changed) {
                runtime.submit(p, (GroupShard s, long nowMs) -> s.onMetadataChange(nowMs))
                        .whenComplete((v, e) -> failed("onMetadataChange", p, e));
            }
        }
    }

    private static void failed(String what, int partition, Throwable e) {
        if (e != null) {
            LOG.debug("{} on {}-{} not applied: {}", what, OffsetsTopic.NAME, partition, e.toString());
        }
    }
}
