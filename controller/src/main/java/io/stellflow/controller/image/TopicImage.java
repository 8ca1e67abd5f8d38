package io.stellflow.controller.image;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One topic: id, name, config overrides and its partitions ({@code partitions.get(i).partition() == i}).
 *
 * @param id topic id, chosen by the controller at creation
 * @param name topic name
 * @param config topic config overrides (sorted by key)
 * @param partitions partitions, indexed by partition number
 */
public record TopicImage(UUID id, String name, Map<String, String> config, List<PartitionImage> partitions) {
    public TopicImage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        config = java.util.Collections.unmodifiableMap(new TreeMap<>(config));
        partitions = List.copyOf(partitions);
    }

    /** The partition, or null when out of range. */
    public PartitionImage partition(int partition) {
        return partition >= 0 && partition < partitions.size() ? partitions.get(partition) : null;
    }
}
