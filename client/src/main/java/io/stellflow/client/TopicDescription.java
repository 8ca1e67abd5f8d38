package io.stellflow.client;

import java.util.List;

/**
 * A topic as Metadata describes it. Immutable.
 *
 * @param name the topic name
 * @param errorCode topic-level error (0 = none, 10 = unknown topic)
 * @param internal true for broker-internal topics
 * @param partitions the partitions in ascending order; empty on a topic-level error
 */
public record TopicDescription(String name, short errorCode, boolean internal, List<PartitionInfo> partitions) {}
