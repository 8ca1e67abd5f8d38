package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DeleteRecordsRequest;
import io.stellflow.protocol.message.DeleteRecordsResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Blocking DeleteRecords (apiKey 27) to each partition's leader, one request per leader, for {@link
 * StellflowAdmin#deleteRecords}. A partition whose leader moved or is being elected
 * (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, a network error) is retried after a metadata refresh
 * and the client's back-off, at most {@link #MAX_ATTEMPTS} times; a topic or partition the metadata
 * does not know answers UNKNOWN_TOPIC_OR_PARTITION at once, without retries (an operator's typo
 * should not wait out a back-off).
 *
 * <p>Thread-safety: stateless apart from the shared, thread-safe network client and metadata cache.
 */
final class RecordDeletion {
    private static final Logger LOG = LoggerFactory.getLogger(RecordDeletion.class);

    /** Attempts per call: enough for one leader election (a few hundred ms at the default back-off). */
    static final int MAX_ATTEMPTS = 6;

    private final NetworkClient network;
    private final MetadataCache metadata;

    RecordDeletion(NetworkClient network, MetadataCache metadata) {
        this.network = network;
        this.metadata = metadata;
    }

    Map<TopicPartition, DeletedRecords> delete(Map<TopicPartition, Long> offsets) {
        ClientConfig cfg = network.config();
        Map<TopicPartition, DeletedRecords> done = new LinkedHashMap<>();
        Map<TopicPartition, Long> pending = new LinkedHashMap<>(offsets);
        Map<TopicPartition, Short> lastError = new HashMap<>();
        for (int attempt = 0; attempt < MAX_ATTEMPTS && !pending.isEmpty(); attempt++) {
            if (attempt > 0) {
                long ms = cfg.retryBackoffMs(attempt);
                LOG.warn(
                        "DeleteRecords: {} partition(s) not done ({}); retry {} in {} ms",
                        pending.size(),
                        lastError.values(),
                        attempt,
                        ms);
                sleep(ms);
            }
            List<String> topics = pending.keySet().stream()
                    .map(TopicPartition::topic)
                    .distinct()
                    .toList();
            AdminGroupCalls.await(metadata.refresh(topics), "Metadata for DeleteRecords", cfg.requestTimeoutMs());
            Map<HostPort, Map<TopicPartition, Long>> byLeader = new LinkedHashMap<>();
            for (Map.Entry<TopicPartition, Long> e : List.copyOf(pending.entrySet())) {
                TopicPartition tp = e.getKey();
                HostPort leader = metadata.leader(tp);
                if (leader != null) {
                    byLeader.computeIfAbsent(leader, k -> new LinkedHashMap<>()).put(tp, e.getValue());
                    continue;
                }
                TopicDescription t = metadata.topic(tp.topic());
                if (t == null
                        || t.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION
                        || tp.partition() < 0
                        || (t.errorCode() == Errors.NONE
                                && tp.partition() >= t.partitions().size())) {
                    finish(done, pending, tp, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1);
                } else {
                    lastError.put(tp, Errors.LEADER_NOT_AVAILABLE);
                }
            }
            for (Map.Entry<HostPort, Map<TopicPartition, Long>> e : byLeader.entrySet()) {
                send(e.getKey(), e.getValue(), cfg, done, pending, lastError);
            }
        }
        for (TopicPartition tp : List.copyOf(pending.keySet())) {
            finish(done, pending, tp, lastError.getOrDefault(tp, Errors.LEADER_NOT_AVAILABLE), -1);
        }
        Map<TopicPartition, DeletedRecords> ordered = new LinkedHashMap<>();
        for (TopicPartition tp : offsets.keySet()) {
            ordered.put(tp, done.get(tp));
        }
        return ordered;
    }

    private void send(
            HostPort leader,
            Map<TopicPartition, Long> partitions,
            ClientConfig cfg,
            Map<TopicPartition, DeletedRecords> done,
            Map<TopicPartition, Long> pending,
            Map<TopicPartition, Short> lastError) {
        Map<String, List<DeleteRecordsRequest.Partition>> byTopic = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Long> e : partitions.entrySet()) {
            byTopic.computeIfAbsent(e.getKey().topic(), k -> new ArrayList<>())
                    .add(new DeleteRecordsRequest.Partition(e.getKey().partition(), e.getValue()));
        }
        List<DeleteRecordsRequest.Topic> topics = new ArrayList<>();
        byTopic.forEach((t, ps) -> topics.add(new DeleteRecordsRequest.Topic(t, ps)));
        DeleteRecordsRequest request = new DeleteRecordsRequest(topics);
        String what = "DeleteRecords to " + leader;
        DeleteRecordsResponse response;
        try {
            response = AdminGroupCalls.await(
                    network.send(leader, ApiKeys.DELETE_RECORDS, request::write, DeleteRecordsResponse::read),
                    what,
                    cfg.requestTimeoutMs());
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.FEATURE_NOT_ENABLED || e.errorCode() == Errors.UNSUPPORTED_VERSION) {
                throw new StellflowException(
                        e.errorCode(), what + ": the broker does not serve DeleteRecords (older version)", e);
            }
            if (!e.retriable()) {
                throw e;
            }
            partitions.keySet().forEach(tp -> lastError.put(tp, e.errorCode()));
            return;
        }
        for (DeleteRecordsResponse.Topic t : response.topics()) {
            for (DeleteRecordsResponse.Partition p : t.partitions()) {
                TopicPartition tp = new TopicPartition(t.topic(), p.partition());
                if (!pending.containsKey(tp)) {
                    continue; // not asked for: ignore rather than trust it
                }
                if (p.errorCode() == Errors.NONE || !retriableHere(p.errorCode())) {
                    finish(done, pending, tp, p.errorCode(), p.lowWatermark());
                } else {
                    lastError.put(tp, p.errorCode());
                }
            }
        }
    }

    /** Leadership moves are worth a retry; UNKNOWN_TOPIC_OR_PARTITION from the leader is final. */
    private static boolean retriableHere(short code) {
        return code != Errors.UNKNOWN_TOPIC_OR_PARTITION && StellflowException.isRetriable(code);
    }

    private static void finish(
            Map<TopicPartition, DeletedRecords> done,
            Map<TopicPartition, Long> pending,
            TopicPartition tp,
            short code,
            long lowWatermark) {
        pending.remove(tp);
        done.put(tp, new DeletedRecords(code, code == Errors.NONE ? lowWatermark : -1));
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }
}
