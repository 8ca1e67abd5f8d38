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
import java.util.function.Function;

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
     * server before the first answer) and merges it into the cache. The brokers are tried in turn from
     * a random one: one that cannot be connected to is passed over for the next.
     *
     * @return the topics fetched; completes exceptionally with a {@link StellflowException}: a
     *     NETWORK_ERROR naming every address tried when none could be connected to, or the failure of
     *     the one broker that took the request
     */
    public CompletableFuture<Map<String, TopicDescription>> refresh(Collection<String> topics) {
        MetadataRequest req = new MetadataRequest(List.copyOf(topics), false, false, false);
        network.metrics().metadataRefreshed();
        return sendToAnyBroker(to -> network.send(to, ApiKeys.METADATA, req::write, MetadataResponse::read))
                .thenApply(this::merge);
    }

    /** The brokers of the last Metadata answer by id (empty before the first). */
    Map<Integer, HostPort> brokers() {
        return snapshot.brokers;
    }

    /**
     * Sends one request to some broker, as Kafka's clients do with their bootstrap list: the
     * candidates are the brokers of the last Metadata answer (the bootstrap servers before the
     * first), each tried at most once in turn from a random one. The next candidate is tried only when
     * the connection to this one could not be set up ({@link NetworkClient#isConnectFailure}: refused,
     * unresolved, no connection within {@code socket.connection.setup.timeout.ms}, closed before the
     * ApiVersions handshake), so the request was never written; any other outcome, an error code
     * included, is the result. No back-off between candidates; the caller's own timeout on the
     * returned future still bounds the whole.
     *
     * @param send writes the request to the given address and returns its answer (it may map the
     *     answer, e.g. throw on an error code); called on the caller's thread for the first candidate,
     *     on the client's I/O thread for the next ones, so it must not block
     * @return the first candidate's outcome that is not a connect failure; when every candidate failed
     *     to connect, a {@link StellflowException#NETWORK_ERROR} naming each address and its failure
     *     (the single failure itself when there was one candidate)
     */
    <T> CompletableFuture<T> sendToAnyBroker(Function<HostPort, CompletableFuture<T>> send) {
        return sendFrom(candidates(), 0, send, new ArrayList<>());
    }

    /** The addresses {@link #sendToAnyBroker} tries, in order: rotated to start at a random one. */
    List<HostPort> candidates() {
        Snapshot s = snapshot;
        List<HostPort> all =
                s.brokers.isEmpty() ? network.config().bootstrapServers() : new ArrayList<>(s.brokers.values());
        int start = ThreadLocalRandom.current().nextInt(all.size());
        List<HostPort> order = new ArrayList<>(all.size());
        for (int i = 0; i < all.size(); i++) {
            order.add(all.get((start + i) % all.size()));
        }
        return order;
    }

    private static <T> CompletableFuture<T> sendFrom(
            List<HostPort> order, int i, Function<HostPort, CompletableFuture<T>> send, List<String> failures) {
        return send.apply(order.get(i)).exceptionallyCompose(err -> {
            if (!NetworkClient.isConnectFailure(err)) {
                return CompletableFuture.failedFuture(err);
            }
            Throwable cause = NetworkClient.unwrap(err);
            failures.add(cause instanceof StellflowException se ? se.reason() : String.valueOf(cause.getMessage()));
            if (i + 1 < order.size()) {
                return sendFrom(order, i + 1, send, failures);
            }
            if (order.size() == 1) {
                return CompletableFuture.failedFuture(err);
            }
            return CompletableFuture.failedFuture(new StellflowException(
                    StellflowException.NETWORK_ERROR,
                    "no broker reachable, tried " + order + " (" + String.join("; ", failures) + ")",
                    cause));
        });
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
