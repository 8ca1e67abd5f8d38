package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.Topic;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.MetadataResponse.Broker;
import io.stellflow.protocol.message.MetadataResponse.PartitionMetadata;
import io.stellflow.protocol.message.MetadataResponse.TopicMetadata;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Supplier;

/**
 * Metadata (apiKey 1, spec §6.2) for a single-node cluster: this broker is the only broker, the
 * controller and the leader (and only replica) of every partition.
 *
 * <p>Requested topics are answered once each in first-occurrence order; an empty request lists every
 * topic by name. Unknown topic: {@code UNKNOWN_TOPIC_OR_PARTITION} (or created first when
 * {@code auto.create.topics.enable}); empty name: {@code INVALID_REQUEST}.
 *
 * <p>Thread-safety: stateless apart from the thread-safe topic service.
 */
public final class MetadataHandler implements ApiHandler {
    private final TopicService topics;
    private final Supplier<BrokerEndpoint> endpoint;

    /**
     * @param topics topic lookups and auto-creation
     * @param endpoint this broker's advertised identity (known after the listener is bound)
     */
    public MetadataHandler(TopicService topics, Supplier<BrokerEndpoint> endpoint) {
        this.topics = topics;
        this.endpoint = endpoint;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        MetadataRequest request = MetadataRequest.read(body);
        BrokerEndpoint self = endpoint.get();
        List<TopicMetadata> result = new ArrayList<>();
        if (request.topics().isEmpty()) {
            for (Topic topic : topics.registry().topics()) {
                result.add(describe(topic, self.brokerId()));
            }
        } else {
            for (String name : new LinkedHashSet<>(request.topics())) {
                result.add(describe(name, self.brokerId()));
            }
        }
        Broker broker = new Broker(self.brokerId(), self.host(), self.port(), null);
        context.respond(new MetadataResponse(self.clusterId(), self.brokerId(), List.of(broker), result, 0));
    }

    private TopicMetadata describe(String name, int brokerId) {
        if (name.isEmpty()) {
            return new TopicMetadata(Errors.INVALID_REQUEST, name, false, List.of(), 0);
        }
        TopicService.Lookup lookup = topics.lookupOrAutoCreate(name);
        if (lookup.topic() == null) {
            return new TopicMetadata(lookup.errorCode(), name, false, List.of(), 0);
        }
        return describe(lookup.topic(), brokerId);
    }

    private static TopicMetadata describe(Topic topic, int brokerId) {
        List<Integer> self = List.of(brokerId);
        List<PartitionMetadata> partitions = new ArrayList<>(topic.partitionCount());
        for (Partition p : topic.partitions()) {
            partitions.add(new PartitionMetadata(
                    Errors.NONE, p.partition(), brokerId, p.leaderEpoch(), self, self, List.of()));
        }
        return new TopicMetadata(Errors.NONE, topic.name(), false, partitions, 0);
    }
}
