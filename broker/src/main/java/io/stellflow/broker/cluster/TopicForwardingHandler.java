package io.stellflow.broker.cluster;

import io.grpc.StatusRuntimeException;
import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.controller.ControllerClient;
import io.stellflow.controller.ControllerUnavailableException;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.controller.proto.CreatableTopic;
import io.stellflow.controller.proto.CreateTopicsRequest;
import io.stellflow.controller.proto.CreateTopicsResponse;
import io.stellflow.controller.proto.DeleteTopicsRequest;
import io.stellflow.controller.proto.DeleteTopicsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.TopicResult;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.CreateTopicResponse.CreateTopicPartition;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CreateTopic (apiKey 50, {@code docs/spec/wire-protocol.md} §6.14, v0 and v1 with a replication
 * factor) and DeleteTopic (apiKey 51, §6.15) on a broker of a cluster: forwarded to the active
 * controller ({@link ControllerClient} finds it), answered once the controller committed the change
 * and this broker applied it.
 *
 * <p>CreateTopic: success (or an existing topic with the same partition count) answers one entry per
 * partition with its leader epoch; a replication factor of -1 (v0) means
 * {@code default.replication.factor}. A bad name, partition count or replication factor (more than
 * the unfenced brokers), or an existing topic with another count: a single
 * {@code {-1, code, -1}} entry, where code is {@code INVALID_REQUEST} for v0 and v1 (the spec's v0
 * fallback) and from v2 on the specific code ({@code INVALID_TOPIC}, {@code TOPIC_ALREADY_EXISTS},
 * {@code INVALID_PARTITIONS}, {@code INVALID_REPLICATION_FACTOR}) with the controller's reason in the
 * response's errorMessage (also logged at INFO). No controller reachable or the entry not committed in
 * time: {@code {-1, BROKER_NOT_AVAILABLE, -1}} (retriable; a timed-out entry may still commit).
 *
 * <p>DeleteTopic: one entry {@code {-1, errorCode, -1}}: {@code NONE}, {@code UNKNOWN_TOPIC_OR_PARTITION}
 * or {@code BROKER_NOT_AVAILABLE}.
 *
 * <p>Thread-safety: stateless apart from the thread-safe client; blocks a request handler thread for
 * the controller's round trip (a rare administrative call).
 */
public final class TopicForwardingHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(TopicForwardingHandler.class);

    /** How long an answer waits for this broker to apply the committed change. */
    private static final long APPLY_WAIT_MS = 10_000;

    private final short apiKey;
    private final ControllerClient controller;
    private final ReplicaManager replicas;
    private final int defaultReplicationFactor;
    private final CompletableFuture<?> joined;

    private TopicForwardingHandler(
            short apiKey,
            ControllerClient controller,
            ReplicaManager replicas,
            int defaultReplicationFactor,
            CompletableFuture<?> joined) {
        this.apiKey = apiKey;
        this.controller = controller;
        this.replicas = replicas;
        this.defaultReplicationFactor = defaultReplicationFactor;
        this.joined = joined;
    }

    /**
     * The CreateTopic handler ({@code default.replication.factor} for v0 requests).
     *
     * @param joined completes when this broker's start finished joining the cluster (registered and
     *     unfenced, or gave up waiting): the data port opens before that, and a CreateTopic that
     *     arrives in between waits for it (up to {@value #APPLY_WAIT_MS} ms) instead of being
     *     refused because this broker is not yet an unfenced broker the controller can place
     *     replicas on (a single node would answer "replication factor 1 must be in 1..0")
     */
    public static TopicForwardingHandler createTopic(
            ControllerClient controller,
            ReplicaManager replicas,
            int defaultReplicationFactor,
            CompletableFuture<?> joined) {
        return new TopicForwardingHandler(ApiKeys.CREATE_TOPIC, controller, replicas, defaultReplicationFactor, joined);
    }

    /** The DeleteTopic handler ({@code joined}: as for {@link #createTopic}). */
    public static TopicForwardingHandler deleteTopic(
            ControllerClient controller, ReplicaManager replicas, CompletableFuture<?> joined) {
        return new TopicForwardingHandler(ApiKeys.DELETE_TOPIC, controller, replicas, 1, joined);
    }

    @Override
    public short maxVersion() {
        return apiKey == ApiKeys.CREATE_TOPIC ? CreateTopicResponse.VERSION_WITH_ERROR_MESSAGE : 0;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        short version = context.header().apiVersion();
        CreateTopicRequest request = CreateTopicRequest.read(body, version);
        CreateTopicResponse response;
        try {
            awaitJoined();
            response = apiKey == ApiKeys.CREATE_TOPIC ? create(request, version) : delete(request.topic());
        } catch (ControllerUnavailableException | StatusRuntimeException e) {
            LOG.warn("{} {}: no controller answered: {}", ApiKeys.name(apiKey), request.topic(), e.toString());
            response = topicError(
                    request.topic(), Errors.BROKER_NOT_AVAILABLE, "no active controller answered: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            response = topicError(request.topic(), Errors.BROKER_NOT_AVAILABLE);
        }
        CreateTopicResponse answer = response;
        context.respond(out -> answer.write(out, version));
    }

    /**
     * The wire code for a refused CreateTopic: the specific code from v2 on, INVALID_REQUEST (the v0
     * fallback of {@code docs/spec/wire-protocol.md} §8.2) before.
     */
    static short createError(ErrorCode controllerError, short version) {
        if (version < CreateTopicResponse.VERSION_WITH_ERROR_MESSAGE) {
            return Errors.INVALID_REQUEST;
        }
        return switch (controllerError) {
            case INVALID_TOPIC_EXCEPTION -> Errors.INVALID_TOPIC;
            case TOPIC_ALREADY_EXISTS -> Errors.TOPIC_ALREADY_EXISTS;
            case INVALID_PARTITIONS -> Errors.INVALID_PARTITIONS;
            case INVALID_REPLICATION_FACTOR -> Errors.INVALID_REPLICATION_FACTOR;
            default -> Errors.INVALID_REQUEST;
        };
    }

    /** Waits (bounded) for this broker's start to finish joining; a broker that gave up proceeds. */
    private void awaitJoined() throws InterruptedException {
        if (joined.isDone()) {
            return;
        }
        try {
            joined.get(APPLY_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.info("{} while this broker is still joining the cluster: forwarding anyway", ApiKeys.name(apiKey));
        }
    }

    private CreateTopicResponse create(CreateTopicRequest request, short version) throws InterruptedException {
        String name = request.topic();
        int rf = request.replicationFactor() == CreateTopicRequest.DEFAULT_REPLICATION_FACTOR
                ? defaultReplicationFactor
                : request.replicationFactor();
        if (request.partitionCount() <= 0) {
            return topicError(
                    name,
                    createError(ErrorCode.INVALID_PARTITIONS, version),
                    "partition count must be at least 1, got " + request.partitionCount());
        }
        if (rf <= 0) {
            return topicError(
                    name,
                    createError(ErrorCode.INVALID_REPLICATION_FACTOR, version),
                    "replication factor must be at least 1, got " + rf);
        }
        CreateTopicsResponse r = controller.createTopics(CreateTopicsRequest.newBuilder()
                .addTopics(CreatableTopic.newBuilder()
                        .setName(name)
                        .setNumPartitions(request.partitionCount())
                        .setReplicationFactor(rf))
                .build());
        if (r.getError() != ErrorCode.NONE) {
            LOG.warn("CreateTopic {}: controller answered {} {}", name, r.getError(), r.getErrorMessage());
            return topicError(
                    name,
                    Errors.BROKER_NOT_AVAILABLE,
                    "the controller answered " + r.getError() + " " + r.getErrorMessage());
        }
        TopicResult result = r.getTopicsCount() == 0 ? null : r.getTopics(0);
        UUID topicId;
        if (result != null && result.getError() == ErrorCode.NONE) {
            topicId = MetadataRecords.uuid(result.getTopicId());
        } else if (result != null && result.getError() == ErrorCode.TOPIC_ALREADY_EXISTS) {
            TopicImage existing = replicas.image().topic(name);
            if (existing == null || existing.partitions().size() != request.partitionCount()) {
                String why = existing == null
                        ? result.getErrorMessage()
                        : "topic exists with " + existing.partitions().size() + " partition(s), not "
                                + request.partitionCount();
                LOG.info("CreateTopic {}: {}", name, why);
                return topicError(name, createError(ErrorCode.TOPIC_ALREADY_EXISTS, version), why);
            }
            topicId = existing.id();
        } else {
            LOG.info(
                    "CreateTopic {} (partitions {}, replication factor {}) rejected: {} {}",
                    name,
                    request.partitionCount(),
                    rf,
                    result == null ? "no result" : result.getError(),
                    result == null ? "" : result.getErrorMessage());
            return result == null
                    ? topicError(name, Errors.INVALID_REQUEST, "the controller answered no result")
                    : topicError(name, createError(result.getError(), version), result.getErrorMessage());
        }
        MetadataImage applied = replicas.awaitImage(img -> hasTopic(img, name, topicId), APPLY_WAIT_MS);
        if (applied == null) {
            LOG.warn("CreateTopic {}: committed but not applied by this broker within {} ms", name, APPLY_WAIT_MS);
            return topicError(
                    name,
                    Errors.BROKER_NOT_AVAILABLE,
                    "committed but not applied by this broker within " + APPLY_WAIT_MS + " ms");
        }
        TopicImage t = applied.topic(name);
        if (t.partitions().size() != request.partitionCount()) {
            return topicError(name, Errors.INVALID_REQUEST);
        }
        List<CreateTopicPartition> partitions = new ArrayList<>(t.partitions().size());
        for (PartitionImage p : t.partitions()) {
            partitions.add(new CreateTopicPartition(p.partition(), Errors.NONE, p.leaderEpoch()));
        }
        return new CreateTopicResponse(name, partitions);
    }

    private static boolean hasTopic(MetadataImage img, String name, UUID topicId) {
        TopicImage t = img.topic(name);
        return t != null && t.id().equals(topicId);
    }

    private CreateTopicResponse delete(String name) throws InterruptedException {
        TopicImage before = replicas.image().topic(name);
        DeleteTopicsResponse r = controller.deleteTopics(
                DeleteTopicsRequest.newBuilder().addNames(name).build());
        if (r.getError() != ErrorCode.NONE) {
            LOG.warn("DeleteTopic {}: controller answered {} {}", name, r.getError(), r.getErrorMessage());
            return topicError(name, Errors.BROKER_NOT_AVAILABLE);
        }
        TopicResult result = r.getTopicsCount() == 0 ? null : r.getTopics(0);
        if (result == null || result.getError() != ErrorCode.NONE) {
            boolean unknown = result != null && result.getError() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            return topicError(name, unknown ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.INVALID_REQUEST);
        }
        MetadataImage applied = replicas.awaitImage(
                img -> img.topic(name) == null
                        || (before != null && !img.topic(name).id().equals(before.id())),
                APPLY_WAIT_MS);
        return topicError(name, applied == null ? Errors.BROKER_NOT_AVAILABLE : Errors.NONE);
    }

    private static CreateTopicResponse topicError(String topic, short errorCode) {
        return new CreateTopicResponse(topic, List.of(new CreateTopicPartition(-1, errorCode, -1)));
    }

    /** A topic-level error with the reason (sent from v2 on). */
    private static CreateTopicResponse topicError(String topic, short errorCode, String message) {
        return new CreateTopicResponse(topic, List.of(new CreateTopicPartition(-1, errorCode, -1)), message);
    }
}
