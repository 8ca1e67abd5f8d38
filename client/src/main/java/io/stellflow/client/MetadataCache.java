package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The client's view of brokers and partition leaders, refreshed from Metadata (apiKey 1) on
 * demand: when a topic is first used and after a NOT_LEADER_OR_FOLLOWER,
 * UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE answer.
 *
 * <p>Thread-safety: thread-safe; readers see an immutable snapshot, refreshes replace it.
 */
public final class MetadataCache {
    private final NetworkClient network;
    private volatile Snapshot snapshot = new Snapshot(Map.of(), Map.of());

    private record Snapshot(Map<Integer, HostPort> brokers, Map<String, TopicDescription> topics) {}

    public MetadataCache(NetworkClient network) {
        this.network = network;
    }

    /** The leader's address, or null when unknown or the partition has an error. */
    public HostPort leader(TopicPartition tp) {
        Snapshot s = snapshot;
        TopicDescription t = s.topics.get(tp.topic());
        if (t == null
                || t.errorCode() != Errors.NONE
                || tp.partition() >= t.partitions().size()) {
            return null;
        }
        PartitionInfo p = t.partitions().get(tp.partition());
        if (p.errorCode() != Errors.NONE || p.leaderId() < 0) {
            return null;
        }
        return s.brokers.get(p.leaderId());
    }

    /** Whether no broker has answered a Metadata request yet (only the bootstrap servers are known). */
    public boolean neverAnswered() {
        return snapshot.brokers.isEmpty();
    }

    /** The last known description of {@code topic}, or null if never fetched. */
    public TopicDescription topic(String topic) {
        return snapshot.topics.get(topic);
    }

    /**
     * Fetches Metadata for {@code topics} (empty = all topics) from a known broker (a bootstrap
     * server before the first answer) and merges it into the cache.
     */
    public CompletableFuture<Map<String, TopicDescription>> refresh(Collection<String> topics) {
        MetadataRequest req = new MetadataRequest(List.copyOf(topics), false, false, false);
        network.metrics().metadataRefreshed();
        return network.send(anyBroker(), ApiKeys.METADATA, req::write, MetadataResponse::read)
                .thenApply(this::merge);
    }

    /** A broker to ask: a known one at random, a bootstrap server before the first answer. */
    /** The brokers of the last Metadata answer by id (empty before the first). */
    Map<Integer, HostPort> brokers() {
        return snapshot.brokers;
    }

    HostPort anyBroker() {
        Snapshot s = snapshot;
        List<HostPort> candidates =
                s.brokers.isEmpty() ? network.config().bootstrapServers() : new ArrayList<>(s.brokers.values());
        return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
    }

    private synchronized Map<String, TopicDescription> merge(MetadataResponse resp) {
        Map<Integer, HostPort> brokers = new HashMap<>();
        for (MetadataResponse.Broker b : resp.brokers()) {
            brokers.put(b.brokerId(), new HostPort(b.host(), b.port()));
        }
        Map<String, TopicDescription> fetched = new HashMap<>();
        for (MetadataResponse.TopicMetadata t : resp.topics()) {
            List<PartitionInfo> parts = new ArrayList<>(t.partitions().size());
            for (MetadataResponse.PartitionMetadata p : t.partitions()) {
                parts.add(new PartitionInfo(
                        t.topic(),
                        p.partition(),
                        p.errorCode(),
                        p.leaderId(),
                        p.leaderEpoch(),
                        List.copyOf(p.replicaNodes()),
                        List.copyOf(p.isrNodes())));
            }
            parts.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            fetched.put(t.topic(), new TopicDescription(t.topic(), t.errorCode(), t.isInternal(), List.copyOf(parts)));
        }
        Map<String, TopicDescription> topics = new HashMap<>(snapshot.topics);
        topics.putAll(fetched);
        snapshot = new Snapshot(brokers.isEmpty() ? snapshot.brokers : Map.copyOf(brokers), Map.copyOf(topics));
        return fetched;
    }
}
