package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.TopicRegistry;
import io.stellflow.broker.topic.TopicRegistry.CreateResult;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.CreateTopicResponse.CreateTopicPartition;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CreateTopic (apiKey 50, spec §6.14). Fields 3-7 of the request are ignored. Success, or an existing
 * topic with the same partition count (idempotent create): one entry per partition with errorCode 0
 * and the leader epoch. Invalid name, partition count &lt;= 0 or above the limit, or an existing topic
 * with another count: a single {@code {-1, INVALID_REQUEST, -1}} entry. A disk failure: a single
 * {@code {-1, BROKER_NOT_AVAILABLE, -1}} entry (STORAGE_ERROR's v0 fallback).
 *
 * <p>Thread-safety: stateless apart from the thread-safe registry.
 */
public final class CreateTopicHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(CreateTopicHandler.class);

    private final TopicRegistry registry;

    /** @param registry where topics are created */
    public CreateTopicHandler(TopicRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        CreateTopicRequest request = CreateTopicRequest.read(body);
        CreateResult result;
        try {
            result = registry.create(request.topic(), request.partitionCount());
        } catch (IOException e) {
            LOG.error("Creating topic {} failed", request.topic(), e);
            context.respond(topicError(request.topic(), Errors.BROKER_NOT_AVAILABLE));
            return;
        }
        switch (result.status()) {
            case CREATED, EXISTS -> {
                List<CreateTopicPartition> partitions =
                        new ArrayList<>(result.topic().partitionCount());
                for (Partition p : result.topic().partitions()) {
                    partitions.add(new CreateTopicPartition(p.partition(), Errors.NONE, p.leaderEpoch()));
                }
                context.respond(new CreateTopicResponse(request.topic(), partitions));
            }
            case PARTITION_COUNT_MISMATCH, INVALID_NAME, INVALID_PARTITIONS, INVALID_CONFIG ->
                context.respond(topicError(request.topic(), Errors.INVALID_REQUEST));
        }
    }

    private static CreateTopicResponse topicError(String topic, short errorCode) {
        return new CreateTopicResponse(topic, List.of(new CreateTopicPartition(-1, errorCode, -1)));
    }
}
