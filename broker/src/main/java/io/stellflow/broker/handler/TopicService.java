package io.stellflow.broker.handler;

import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.broker.topic.Topic;
import io.stellflow.broker.topic.TopicRegistry;
import io.stellflow.broker.topic.TopicRegistry.CreateResult;
import io.stellflow.broker.topic.TopicRegistry.CreateStatus;
import io.stellflow.protocol.Errors;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic lookups for the handlers of a single broker without a controller ({@code metadata.local}),
 * with the {@code auto.create.topics.enable} policy (decision 9.q): when enabled, Produce and
 * Metadata create a missing topic with {@code num.partitions} partitions. Every hosted partition is
 * led by this broker.
 *
 * <p>Thread-safety: thread-safe (the registry serialises creations).
 */
public final class TopicService implements PartitionRouter {
    private static final Logger LOG = LoggerFactory.getLogger(TopicService.class);

    private final TopicRegistry registry;
    private final boolean autoCreate;
    private final int defaultPartitions;

    /**
     * @param registry the topics
     * @param autoCreate {@code auto.create.topics.enable}
     * @param defaultPartitions {@code num.partitions}
     */
    public TopicService(TopicRegistry registry, boolean autoCreate, int defaultPartitions) {
        this.registry = registry;
        this.autoCreate = autoCreate;
        this.defaultPartitions = defaultPartitions;
    }

    /** The registry. */
    public TopicRegistry registry() {
        return registry;
    }

    /**
     * A topic lookup outcome.
     *
     * @param topic the topic, or null
     * @param errorCode {@code NONE} with a topic; otherwise {@code UNKNOWN_TOPIC_OR_PARTITION},
     *     {@code INVALID_REQUEST} (bad name, auto-create only) or {@code BROKER_NOT_AVAILABLE} (the
     *     creation failed on disk; STORAGE_ERROR's v0 fallback)
     */
    public record Lookup(Topic topic, short errorCode) {}

    @Override
    public short prepareForProduce(String topic) {
        return lookupOrAutoCreate(topic).errorCode();
    }

    @Override
    public boolean producibleWithoutWaiting(String topic) {
        return registry.topic(topic) != null;
    }

    @Override
    public Partition leaderPartition(String topic, int partition) {
        return registry.partition(topic, partition);
    }

    @Override
    public short errorFor(String topic, int partition) {
        return Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    /** Finds the topic, creating it first when auto-creation is enabled. */
    public Lookup lookupOrAutoCreate(String name) {
        Topic topic = registry.topic(name);
        if (topic != null) {
            return new Lookup(topic, Errors.NONE);
        }
        if (!autoCreate) {
            return new Lookup(null, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        try {
            CreateResult result = registry.create(name, defaultPartitions);
            if (result.topic() != null) {
                return new Lookup(result.topic(), Errors.NONE);
            }
            return new Lookup(
                    null,
                    result.status() == CreateStatus.INVALID_NAME
                            ? Errors.INVALID_REQUEST
                            : Errors.UNKNOWN_TOPIC_OR_PARTITION);
        } catch (IOException e) {
            LOG.error("Auto-creating topic {} failed", name, e);
            return new Lookup(null, Errors.BROKER_NOT_AVAILABLE);
        }
    }
}
