package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.TopicPartitions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * {@link GroupTransport} on the wire: FindCoordinator v0 to any broker, ConsumerGroupHeartbeat v0,
 * OffsetCommit v1 and OffsetFetch v1 to the coordinator ({@code docs/protocol-additions.md}; v0 of
 * the two offset APIs when the broker advertises nothing higher, which carries no member epoch).
 *
 * <p>Thread-safety: thread-safe (stateless over a thread-safe {@link NetworkClient}); futures
 * complete on the client's I/O thread.
 */
final class NetworkGroupTransport implements GroupTransport {
    private final NetworkClient network;
    private final MetadataCache metadata;

    NetworkGroupTransport(NetworkClient network, MetadataCache metadata) {
        this.network = network;
        this.metadata = metadata;
    }

    /** {@link #findCoordinator(NetworkClient, MetadataCache, String)} on this transport's client. */
    @Override
    public CompletableFuture<HostPort> findCoordinator(String groupId) {
        return findCoordinator(network, metadata, groupId);
    }

    /**
     * {@link #findCoordinator(NetworkClient, HostPort, String)} at a broker of {@code metadata},
     * passing over ones that refuse the connection ({@link MetadataCache#sendToAnyBroker}).
     */
    static CompletableFuture<HostPort> findCoordinator(NetworkClient network, MetadataCache metadata, String groupId) {
        return metadata.sendToAnyBroker(to -> findCoordinator(network, to, groupId));
    }

    /**
     * FindCoordinator v0 (apiKey 7, key type 0: a group; spec §6.8) for {@code groupId} at broker
     * {@code to}: the one lookup of the client, used by the consumer (through {@link
     * CoordinatorLocator}) and the admin client ({@link AdminGroupCalls}), which each add their own
     * retries.
     *
     * @return the coordinator's address; completes exceptionally with {@link StellflowException}
     *     carrying the answer's error code (e.g. 16 COORDINATOR_NOT_AVAILABLE, 20 FEATURE_NOT_ENABLED)
     *     or the network's failure
     */
    static CompletableFuture<HostPort> findCoordinator(NetworkClient network, HostPort to, String groupId) {
        FindCoordinatorRequest req = FindCoordinatorRequest.forGroup(groupId);
        return network.send(to, ApiKeys.FIND_COORDINATOR, req::write, FindCoordinatorResponse::read)
                .thenApply(r -> {
                    if (r.errorCode() != Errors.NONE) {
                        throw new StellflowException(
                                r.errorCode(), "FindCoordinator for group " + groupId + " at " + to + " refused");
                    }
                    return new HostPort(r.host(), r.port());
                });
    }

    @Override
    public CompletableFuture<HeartbeatReply> heartbeat(HostPort coordinator, HeartbeatCall call) {
        ConsumerGroupHeartbeatRequest req = new ConsumerGroupHeartbeatRequest(
                call.groupId(),
                call.memberId(),
                call.memberEpoch(),
                call.instanceId(),
                null,
                call.rebalanceTimeoutMs(),
                call.subscribedTopics(),
                call.serverAssignor(),
                call.owned() == null ? null : toWire(call.owned()));
        return network.send(
                        coordinator, ApiKeys.CONSUMER_GROUP_HEARTBEAT, req::write, ConsumerGroupHeartbeatResponse::read)
                .thenApply(r -> new HeartbeatReply(
                        r.errorCode(),
                        r.errorMessage(),
                        r.memberId(),
                        r.memberEpoch(),
                        r.heartbeatIntervalMs(),
                        r.assignment() == null ? null : fromWire(r.assignment())));
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Short>> commitOffsets(
            HostPort coordinator, String groupId, String memberId, int memberEpoch, Map<TopicPartition, Long> offsets) {
        Map<String, List<OffsetCommitRequest.OffsetCommitPartition>> byTopic = new LinkedHashMap<>();
        offsets.forEach((tp, offset) -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                .add(new OffsetCommitRequest.OffsetCommitPartition(tp.partition(), offset, "")));
        List<OffsetCommitRequest.OffsetCommitTopic> topics = new ArrayList<>();
        byTopic.forEach((t, parts) -> topics.add(new OffsetCommitRequest.OffsetCommitTopic(t, parts)));
        OffsetCommitRequest req = new OffsetCommitRequest(
                groupId, memberId, memberId == null ? OffsetCommitRequest.NO_MEMBER_EPOCH : memberEpoch, topics);
        return network.sendVersioned(
                        coordinator,
                        ApiKeys.OFFSET_COMMIT,
                        OffsetCommitRequest.VERSION_WITH_MEMBER_EPOCH,
                        version -> out -> req.write(out, (short) version),
                        version -> OffsetCommitResponse::read)
                .thenApply(r -> {
                    Map<TopicPartition, Short> codes = new LinkedHashMap<>();
                    for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
                        for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                            codes.put(new TopicPartition(t.topic(), p.partition()), p.errorCode());
                        }
                    }
                    for (TopicPartition tp : offsets.keySet()) {
                        codes.putIfAbsent(tp, Errors.UNKNOWN_SERVER_ERROR); // not answered: not committed
                    }
                    return codes;
                });
    }

    @Override
    public CompletableFuture<Map<TopicPartition, Long>> fetchOffsets(
            HostPort coordinator, String groupId, Set<TopicPartition> partitions) {
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        List<OffsetFetchRequest.OffsetFetchTopic> topics = new ArrayList<>();
        byTopic.forEach((t, parts) -> topics.add(new OffsetFetchRequest.OffsetFetchTopic(t, parts)));
        OffsetFetchRequest req = new OffsetFetchRequest(groupId, topics);
        return network.sendVersioned(
                        coordinator,
                        ApiKeys.OFFSET_FETCH,
                        OffsetFetchResponse.VERSION_WITH_ERROR_CODE,
                        version -> out -> req.write(out, (short) version),
                        version -> body -> OffsetFetchResponse.read(body, (short) version))
                .thenApply(r -> {
                    if (r.errorCode() != Errors.NONE) {
                        throw new StellflowException(r.errorCode(), "OffsetFetch for group " + groupId);
                    }
                    Map<TopicPartition, Long> out = new LinkedHashMap<>();
                    for (OffsetFetchResponse.OffsetFetchTopicResponse t : r.topics()) {
                        for (OffsetFetchResponse.OffsetFetchPartitionResponse p : t.partitions()) {
                            TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                            if (p.errorCode() != Errors.NONE) {
                                throw new StellflowException(
                                        p.errorCode(), "OffsetFetch of " + tp + " for group " + groupId);
                            }
                            out.put(tp, p.offset());
                        }
                    }
                    return out;
                });
    }

    private static List<TopicPartitions> toWire(Collection<TopicPartition> partitions) {
        Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        List<TopicPartitions> out = new ArrayList<>();
        byTopic.forEach((t, parts) -> out.add(new TopicPartitions(t, parts)));
        return out;
    }

    private static Set<TopicPartition> fromWire(List<TopicPartitions> assignment) {
        Set<TopicPartition> out = new LinkedHashSet<>();
        for (TopicPartitions t : assignment) {
            for (int p : t.partitions()) {
                out.add(new TopicPartition(t.topic(), p));
            }
        }
        return out;
    }
}
