package io.stellflow.broker.cluster;

import io.grpc.StatusRuntimeException;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.TopicResult;
import io.stellflow.protocol.Errors;
import io.stellflow.server.common.topic.TopicNames;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code auto.create.topics.enable=true} on a broker of a cluster (decision 9.q of {@code
 * docs/spec/wire-protocol.md}): a Metadata or Produce request naming a topic the metadata does not
 * have makes this broker send CreateTopics to the active controller with {@code num.partitions}
 * partitions and {@code default.replication.factor} replicas, and answer once the topic is in this
 * broker's metadata. An illegal name is never created and answers {@code INVALID_REQUEST}; as in
 * Kafka a replication factor above the live brokers fails ({@code INVALID_REPLICATION_FACTOR}, sent
 * to v0 clients as {@code INVALID_REQUEST}), it is not capped.
 *
 * <p>Waiting: at most {@link #WAIT_MS} per request; longer (no controller reachable, an election) the
 * answer is {@code LEADER_NOT_AVAILABLE}, which both SDKs and our client retry after a metadata
 * refresh, and that retry finds the creation still in flight or done: one CreateTopics per topic is
 * in flight at a time (concurrent requests for the same topic share it).
 *
 * <p>Routing ({@link PartitionRouter}): Produce, Fetch and ListOffsets go to the {@link ReplicaManager};
 * only {@link #prepareForProduce} adds the creation, after one hash lookup for a topic this broker
 * hosts.
 *
 * <p>Threads: each creation runs on a virtual thread (it blocks on the controller's answer); request
 * threads only wait on its future. Thread-safety: thread-safe.
 */
public final class AutoTopicCreation implements PartitionRouter, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AutoTopicCreation.class);

    /**
     * Longest wait of one request for a creation, ms. A healthy controller commits and this broker
     * applies in ~10-250 ms (docs/operations.md, measured propagation); 3 s also rides out most of a
     * controller election (1.5-2.5 s with default timeouts) while bounding how long a request thread
     * is held.
     */
    public static final long WAIT_MS = 3_000;

    /** How long the creation waits for this broker to apply the committed topic, ms. */
    private static final long APPLY_WAIT_MS = 10_000;

    private final ControllerClient controller;
    private final ReplicaManager replicas;
    private final Function<String, CreatableTopic> spec;
    private final ConcurrentHashMap<String, CompletableFuture<Short>> inFlight = new ConcurrentHashMap<>();
    private final ExecutorService creators = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("auto-create-topic-", 0).factory());

    /**
     * @param controller the control-plane client (owned by the caller)
     * @param replicas this broker's applied metadata
     * @param numPartitions {@code num.partitions}
     * @param replicationFactor {@code default.replication.factor}
     */
    public AutoTopicCreation(
            ControllerClient controller, ReplicaManager replicas, int numPartitions, int replicationFactor) {
        this(
                controller,
                replicas,
                topic -> CreatableTopic.newBuilder()
                        .setName(topic)
                        .setNumPartitions(numPartitions)
                        .setReplicationFactor(replicationFactor)
                        .build());
    }

    /**
     * Creation with a topic's own settings (an internal topic: {@code __consumer_offsets}).
     *
     * @param controller the control-plane client (owned by the caller)
     * @param replicas this broker's applied metadata
     * @param spec the CreateTopics entry of a topic name (partitions, replicas, configs), asked on the
     *     creating thread just before the request is sent
     */
    public AutoTopicCreation(
            ControllerClient controller, ReplicaManager replicas, Function<String, CreatableTopic> spec) {
        this.controller = controller;
        this.replicas = replicas;
        this.spec = spec;
    }

    /**
     * Creates {@code topic} when the metadata does not have it, waiting up to {@link #WAIT_MS}.
     *
     * @return {@code NONE} once it exists in this broker's metadata; {@code INVALID_REQUEST} for an
     *     illegal name or a creation the controller refused (the reason is logged);
     *     {@code LEADER_NOT_AVAILABLE} while it is still being created or no controller answered
     */
    public short ensureExists(String topic) {
        if (replicas.image().topic(topic) != null) {
            return Errors.NONE;
        }
        if (TopicNames.validate(topic) != null) {
            return Errors.INVALID_REQUEST;
        }
        CompletableFuture<Short> f = inFlight.computeIfAbsent(topic, this::startCreation);
        try {
            return f.get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return Errors.LEADER_NOT_AVAILABLE;
        } catch (ExecutionException e) {
            LOG.warn("Auto-creating topic {} failed", topic, e.getCause());
            return Errors.LEADER_NOT_AVAILABLE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Errors.LEADER_NOT_AVAILABLE;
        }
    }

    private CompletableFuture<Short> startCreation(String topic) {
        CompletableFuture<Short> f = new CompletableFuture<>();
        try {
            creators.execute(() -> {
                try {
                    f.complete(create(topic));
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                } finally {
                    inFlight.remove(topic, f);
                }
            });
        } catch (RejectedExecutionException e) {
            f.complete(Errors.LEADER_NOT_AVAILABLE); // shutting down
            inFlight.remove(topic, f);
        }
        return f;
    }

    /** One CreateTopics round trip and the wait for this broker to apply it. */
    private short create(String topic) {
        CreatableTopic creatable = spec.apply(topic);
        int numPartitions = creatable.getNumPartitions();
        int replicationFactor = creatable.getReplicationFactor();
        CreateTopicsResponse r;
        try {
            r = controller.createTopics(
                    CreateTopicsRequest.newBuilder().addTopics(creatable).build());
        } catch (ControllerUnavailableException | StatusRuntimeException e) {
            LOG.warn("Auto-creating topic {}: no controller answered: {}", topic, e.toString());
            return Errors.LEADER_NOT_AVAILABLE;
        }
        if (r.getError() != ErrorCode.NONE) {
            LOG.warn("Auto-creating topic {}: controller answered {} {}", topic, r.getError(), r.getErrorMessage());
            return Errors.LEADER_NOT_AVAILABLE;
        }
        TopicResult result = r.getTopics(0);
        if (result.getError() != ErrorCode.NONE && result.getError() != ErrorCode.TOPIC_ALREADY_EXISTS) {
            LOG.info(
                    "AUTO_CREATE_TOPIC_REFUSED topic={} partitions={} replicationFactor={} error={}: {}",
                    topic,
                    numPartitions,
                    replicationFactor,
                    result.getError(),
                    result.getErrorMessage());
            return Errors.INVALID_REQUEST;
        }
        if (result.getError() == ErrorCode.TOPIC_ALREADY_EXISTS) {
            TopicImage other = replicas.image().collidingTopic(topic);
            if (other != null && !other.name().equals(topic)) {
                LOG.info(
                        "AUTO_CREATE_TOPIC_REFUSED topic={} error=TOPIC_ALREADY_EXISTS: {}",
                        topic,
                        result.getErrorMessage());
                return Errors.INVALID_REQUEST;
            }
        }
        UUID id = result.getError() == ErrorCode.NONE ? MetadataRecords.uuid(result.getTopicId()) : null;
        if (id != null) {
            LOG.info(
                    "AUTO_CREATED_TOPIC topic={} topicId={} partitions={} replicationFactor={}",
                    topic,
                    id,
                    numPartitions,
                    replicationFactor);
        }
        try {
            // Created now, or meanwhile by another broker or an admin (TOPIC_ALREADY_EXISTS).
            return replicas.awaitImage(img -> img.topic(topic) != null, APPLY_WAIT_MS) != null
                    ? Errors.NONE
                    : Errors.LEADER_NOT_AVAILABLE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Errors.LEADER_NOT_AVAILABLE;
        }
    }

    @Override
    public short prepareForProduce(String topic) {
        if (TopicNames.isInternal(topic)) {
            return Errors.INVALID_TOPIC; // only its coordinator writes it
        }
        return replicas.hostsTopic(topic) ? Errors.NONE : ensureExists(topic);
    }

    @Override
    public boolean producibleWithoutWaiting(String topic) {
        return replicas.hostsTopic(topic) && !TopicNames.isInternal(topic);
    }

    @Override
    public Partition leaderPartition(String topic, int partition) {
        return replicas.leaderPartition(topic, partition);
    }

    @Override
    public short errorFor(String topic, int partition) {
        return replicas.errorFor(topic, partition);
    }

    /** Stops starting creations; requests waiting on one get {@code LEADER_NOT_AVAILABLE}. */
    @Override
    public void close() {
        creators.shutdownNow();
    }
}
