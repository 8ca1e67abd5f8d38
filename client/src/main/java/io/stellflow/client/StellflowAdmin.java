package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Blocking administrative calls: create topics (CreateTopic, apiKey 50), list and describe them
 * (Metadata), and look up offsets (ListOffsets).
 *
 * <p>Errors: every method throws {@link StellflowException} carrying the protocol error code
 * (for example 3 INVALID_REQUEST for a bad name or a partition count that does not match an
 * existing topic) or {@link StellflowException#NETWORK_ERROR} when no broker answered within
 * {@code request.timeout.ms}.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class StellflowAdmin implements AutoCloseable {
    /** ListOffsets spec for the log start offset. */
    public static final long EARLIEST = OffsetLookup.EARLIEST;
    /** ListOffsets spec for the end of the visible log (high watermark). */
    public static final long LATEST = OffsetLookup.LATEST;

    private final ClientConfig config;
    private final NetworkClient network;
    private final MetadataCache metadata;
    private final OffsetLookup offsets;

    public StellflowAdmin(Properties props) {
        this(ClientConfig.from(props, "stellflow-admin"));
    }

    public StellflowAdmin(ClientConfig config) {
        this.config = config;
        this.network = new NetworkClient(config);
        this.metadata = new MetadataCache(network);
        this.offsets = new OffsetLookup(network, metadata);
    }

    /**
     * Creates {@code name} with {@code partitions} partitions (idempotent when it exists with the
     * same count), then waits until Metadata shows a leader for every partition.
     */
    public void createTopic(String name, int partitions) {
        CreateTopicRequest req = new CreateTopicRequest(name, partitions, -1, -1, -1, List.of(), List.of());
        CreateTopicResponse resp = await(
                network.send(
                        config.bootstrapServers().get(0), ApiKeys.CREATE_TOPIC, req::write, CreateTopicResponse::read),
                "CreateTopic " + name);
        for (CreateTopicResponse.CreateTopicPartition p : resp.partitions()) {
            if (p.errorCode() != Errors.NONE) {
                throw new StellflowException(p.errorCode(), "CreateTopic " + name + " partition " + p.partition());
            }
        }
        for (int attempt = 0; ; attempt++) {
            TopicDescription d = describeTopics(List.of(name)).get(name);
            if (d != null && d.errorCode() == Errors.NONE && d.partitions().size() == partitions && allLed(d)) {
                return;
            }
            if (attempt >= config.retries()) {
                throw new StellflowException(
                        d == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : d.errorCode(),
                        "topic " + name + " created but its partitions have no leader yet");
            }
            sleep(config.retryBackoffMs());
        }
    }

    private static boolean allLed(TopicDescription d) {
        for (PartitionInfo p : d.partitions()) {
            if (p.errorCode() != Errors.NONE || p.leaderId() < 0) {
                return false;
            }
        }
        return true;
    }

    /** Names of all topics, sorted. */
    public List<String> listTopics() {
        return new ArrayList<>(describeTopics(List.of()).keySet());
    }

    /**
     * Describes {@code names} (empty = all topics), sorted by name. An unknown topic is present
     * with errorCode 10 and no partitions.
     */
    public Map<String, TopicDescription> describeTopics(Collection<String> names) {
        return new TreeMap<>(await(metadata.refresh(names), "Metadata"));
    }

    /**
     * The offset for {@code spec}: {@link #EARLIEST} (-2), {@link #LATEST} (-1) or a timestamp in
     * epoch ms (first record at or after it; OFFSET_OUT_OF_RANGE when there is none).
     */
    public long listOffsets(TopicPartition tp, long spec) {
        if (spec < -2) {
            throw new IllegalArgumentException("spec must be -2, -1 or a timestamp >= 0: " + spec);
        }
        return offsets.lookup(tp, spec);
    }

    private <T> T await(CompletableFuture<T> f, String what) {
        try {
            return f.get(config.requestTimeoutMs() + 1000L, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StellflowException se) {
                throw se;
            }
            throw new StellflowException(Errors.UNKNOWN_SERVER_ERROR, what + " failed", e.getCause());
        } catch (TimeoutException e) {
            throw new StellflowException(StellflowException.NETWORK_ERROR, what + " timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, what + " interrupted", e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }

    @Override
    public void close() {
        network.close();
    }
}
