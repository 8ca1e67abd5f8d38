package io.stellflow.broker.cluster;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import io.stellflow.protocol.message.MetadataResponse.Broker;
import io.stellflow.protocol.message.MetadataResponse.PartitionMetadata;
import io.stellflow.protocol.message.MetadataResponse.TopicMetadata;
import io.stellflow.server.common.topic.TopicNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Metadata (apiKey 1, {@code docs/spec/wire-protocol.md} §6.2) of a broker in a cluster, answered
 * from the broker's copy of the controller's metadata image ({@link ReplicaManager#image()}): the
 * cluster id of the metadata log, every unfenced broker with its PLAINTEXT listener, and per
 * partition the leader, leader epoch, replicas, ISR and offline replicas (fenced or unregistered
 * replicas). A partition without a leader carries {@code LEADER_NOT_AVAILABLE}. {@code
 * controllerId} is the active controller's node id when that node is also a listed broker (combined
 * mode), else -1 (spec §6.2: dedicated controllers are not brokers a client can reach; node ids are
 * unique across the cluster).
 *
 * <p>Requested topics are answered once each in first-occurrence order; an empty request lists every
 * topic by name; unknown topic {@code UNKNOWN_TOPIC_OR_PARTITION}, or with
 * {@code auto.create.topics.enable} created first ({@link AutoTopicCreation}: {@code INVALID_REQUEST}
 * for an illegal name or a refused creation, {@code LEADER_NOT_AVAILABLE} while it is under way);
 * empty name {@code INVALID_REQUEST}.
 *
 * <p>Thread-safety: stateless; reads one immutable image per request (after any creation).
 */
public final class ClusterMetadataHandler implements ApiHandler {
    private final ReplicaManager replicas;
    private final Supplier<String> localClusterId;
    private final AutoTopicCreation autoCreate;

    /**
     * @param replicas the broker's applied metadata
     * @param localClusterId the cluster id of this broker's {@code meta.properties}, reported before
     *     the image has one (may give null)
     * @param autoCreate creates unknown topics ({@code auto.create.topics.enable}), or null
     */
    public ClusterMetadataHandler(
            ReplicaManager replicas, Supplier<String> localClusterId, AutoTopicCreation autoCreate) {
        this.replicas = replicas;
        this.localClusterId = localClusterId;
        this.autoCreate = autoCreate;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        MetadataRequest request = MetadataRequest.read(body);
        Map<String, Short> creationErrors = Map.of();
        if (autoCreate != null && !request.topics().isEmpty()) {
            MetadataImage before = replicas.image();
            for (String name : new LinkedHashSet<>(request.topics())) {
                if (!name.isEmpty() && before.topic(name) == null) {
                    short error = autoCreate.ensureExists(name);
                    if (error != Errors.NONE) {
                        if (creationErrors.isEmpty()) {
                            creationErrors = new HashMap<>();
                        }
                        creationErrors.put(name, error);
                    }
                }
            }
        }
        MetadataImage image = replicas.image();
        String clusterId = image.clusterId() != null ? image.clusterId() : localClusterId.get();
        MetadataResponse r = answer(image, request.topics(), clusterId);
        if (!creationErrors.isEmpty()) {
            List<TopicMetadata> topics = new ArrayList<>(r.topics().size());
            for (TopicMetadata t : r.topics()) {
                Short error = creationErrors.get(t.topic());
                topics.add(
                        error == null || t.errorCode() == Errors.NONE
                                ? t
                                : new TopicMetadata(error, t.topic(), false, List.of(), 0));
            }
            r = new MetadataResponse(r.clusterId(), r.controllerId(), r.brokers(), topics, 0);
        }
        context.respond(r);
    }

    /**
     * The Metadata answer for {@code topics} (empty: all) from {@code image}, reporting
     * {@code clusterId} (the image's when it has one).
     */
    public static MetadataResponse answer(MetadataImage image, List<String> topics, String clusterId) {
        List<Broker> brokers = new ArrayList<>();
        boolean controllerIsBroker = false;
        for (BrokerRegistration b : image.brokers().values()) {
            BrokerEndpoint e = plaintext(b);
            if (!b.fenced() && e != null) {
                brokers.add(new Broker(b.id(), e.host(), e.port(), b.rack().isEmpty() ? null : b.rack()));
                controllerIsBroker |= b.id() == image.activeControllerId();
            }
        }
        List<TopicMetadata> result = new ArrayList<>();
        if (topics.isEmpty()) {
            for (TopicImage t : image.topicsByName().values()) {
                result.add(describe(image, t));
            }
        } else {
            for (String name : new LinkedHashSet<>(topics)) {
                if (name.isEmpty()) {
                    result.add(new TopicMetadata(Errors.INVALID_REQUEST, name, false, List.of(), 0));
                    continue;
                }
                TopicImage t = image.topic(name);
                result.add(
                        t == null
                                ? new TopicMetadata(Errors.UNKNOWN_TOPIC_OR_PARTITION, name, false, List.of(), 0)
                                : describe(image, t));
            }
        }
        return new MetadataResponse(
                image.clusterId() != null ? image.clusterId() : clusterId,
                controllerIsBroker ? image.activeControllerId() : -1,
                brokers,
                result,
                0);
    }

    private static TopicMetadata describe(MetadataImage image, TopicImage t) {
        List<PartitionMetadata> partitions = new ArrayList<>(t.partitions().size());
        for (PartitionImage p : t.partitions()) {
            List<Integer> offline = new ArrayList<>();
            for (int r : p.replicas()) {
                BrokerRegistration b = image.broker(r);
                if (b == null || b.fenced()) {
                    offline.add(r);
                }
            }
            short error = p.leader() == PartitionImage.NO_LEADER ? Errors.LEADER_NOT_AVAILABLE : Errors.NONE;
            partitions.add(new PartitionMetadata(
                    error, p.partition(), p.leader(), p.leaderEpoch(), p.replicas(), p.isr(), offline));
        }
        return new TopicMetadata(Errors.NONE, t.name(), TopicNames.isInternal(t.name()), partitions, 0);
    }

    /** The broker's PLAINTEXT listener (the first listener when none is named so), or null. */
    public static BrokerEndpoint plaintext(BrokerRegistration b) {
        for (BrokerEndpoint e : b.listeners()) {
            if (e.name().equals("PLAINTEXT")) {
                return e;
            }
        }
        return b.listeners().isEmpty() ? null : b.listeners().get(0);
    }
}
