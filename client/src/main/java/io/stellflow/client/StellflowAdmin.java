package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.CreateTopicRequest;
import io.stellflow.protocol.message.CreateTopicResponse;
import io.stellflow.protocol.message.DescribeBrokerConfigsRequest;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import io.stellflow.protocol.message.DescribeControllersRequest;
import io.stellflow.protocol.message.DescribeControllersResponse;
import io.stellflow.protocol.message.DescribeLogDirsRequest;
import io.stellflow.protocol.message.DescribeLogDirsResponse;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Blocking administrative calls: create topics (CreateTopic, apiKey 50, with a replication factor
 * in v1), delete them (DeleteTopic, apiKey 51), list and describe them (Metadata), look up
 * offsets (ListOffsets) and the controllers' endpoints (DescribeControllers, apiKey 60). Consumer groups: {@link #groups()};
 * transactions: {@link #transactions()}.
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
    private final RecordDeletion deletion;
    private final AdminGroups groups;
    private final AdminTransactions transactions;

    /**
     * An admin client on Kafka-style properties; keys it does not read are logged as one WARN, a
     * {@code security.protocol} other than PLAINTEXT is refused ({@link IllegalArgumentException}).
     */
    public StellflowAdmin(Properties props) {
        this(adminConfig(props));
    }

    /**
     * An admin client beside a consumer or producer, on that client's properties: only the keys the
     * admin client reads are passed on (the common ones, {@code security.protocol}), so a tool's
     * {@code group.id}, {@code auto.offset.reset} or {@code --consumer-property} is not warned about
     * as unknown here; a key no client reads is warned about once, by the consumer or producer.
     *
     * @throws IllegalArgumentException as {@link #StellflowAdmin(Properties)}
     */
    public static StellflowAdmin besideClient(Properties clientProps) {
        Properties admin = new Properties();
        for (String key : clientProps.stringPropertyNames()) {
            if (ClientKeys.ADMIN.contains(key)) {
                admin.setProperty(key, clientProps.getProperty(key));
            }
        }
        return new StellflowAdmin(admin);
    }

    private static ClientConfig adminConfig(Properties props) {
        ClientKeys.check(props, ClientKeys.ADMIN, "admin client");
        return ClientConfig.from(props, "stellflow-admin");
    }

    public StellflowAdmin(ClientConfig config) {
        this.config = config;
        this.network = new NetworkClient(config);
        this.metadata = new MetadataCache(network);
        this.offsets = new OffsetLookup(network, metadata);
        this.deletion = new RecordDeletion(network, metadata);
        this.transactions = new AdminTransactions(network, metadata);
        this.groups = new AdminGroups(new AdminGroupCalls(network, metadata), new GroupLag.LogEnds() {
            @Override
            public int partitionCount(String topic) {
                return StellflowAdmin.this.partitionCount(topic);
            }

            @Override
            public long logEndOffset(TopicPartition tp) {
                return offsets.lookup(tp, LATEST);
            }
        });
    }

    /** The consumer-group calls of this client (list, describe, offsets, resets, deletion, history). */
    public AdminGroups groups() {
        return groups;
    }

    /** The transaction calls of this client (list, describe, producers of a partition, abort). */
    public AdminTransactions transactions() {
        return transactions;
    }

    /**
     * Creates {@code name} with {@code partitions} partitions and the broker's
     * {@code default.replication.factor} (idempotent when it exists with the same count), then waits
     * until Metadata shows a leader for every partition.
     */
    public void createTopic(String name, int partitions) {
        createTopic(name, partitions, CreateTopicRequest.DEFAULT_REPLICATION_FACTOR);
    }

    /**
     * Creates {@code name} with {@code partitions} partitions of {@code replicationFactor} replicas
     * each (-1: the broker's {@code default.replication.factor}), then waits until Metadata shows a
     * leader for every partition. The request goes to a known broker (a bootstrap server before the
     * first Metadata answer), tried in turn from a random one: one that refuses the connection is
     * passed over for the next. The replication factor travels in CreateTopic v1; a broker that only
     * speaks v0 (a single broker without a controller) creates single-replica partitions, so a factor
     * above 1 is then refused with INVALID_REQUEST before anything is sent.
     *
     * @throws StellflowException 3 INVALID_REQUEST for a bad name, partition count or replication
     *     factor (above the number of live brokers), or an existing topic with another count
     */
    public void createTopic(String name, int partitions, int replicationFactor) {
        if (partitions <= 0) {
            throw new StellflowException(
                    Errors.INVALID_PARTITIONS,
                    "CreateTopic " + name + ": partition count must be at least 1, got " + partitions);
        }
        if (replicationFactor == 0 || replicationFactor < -1 || replicationFactor > Short.MAX_VALUE) {
            throw new StellflowException(
                    Errors.INVALID_REPLICATION_FACTOR,
                    "CreateTopic " + name + ": replication factor must be at least 1, got " + replicationFactor);
        }
        CreateTopicRequest req = CreateTopicRequest.of(name, partitions, (short) replicationFactor);
        CreateTopicResponse resp = await(
                metadata.sendToAnyBroker(to -> network.sendVersioned(
                        to,
                        ApiKeys.CREATE_TOPIC,
                        CreateTopicResponse.VERSION_WITH_ERROR_MESSAGE,
                        version -> {
                            if (version < CreateTopicRequest.VERSION_WITH_REPLICATION_FACTOR && replicationFactor > 1) {
                                throw new StellflowException(
                                        Errors.INVALID_REQUEST,
                                        "the broker takes no replication factor (CreateTopic v0 only): "
                                                + replicationFactor);
                            }
                            return out -> req.write(out, (short) version);
                        },
                        version -> b -> CreateTopicResponse.read(b, (short) version))),
                "CreateTopic " + name);
        for (CreateTopicResponse.CreateTopicPartition p : resp.partitions()) {
            if (p.errorCode() != Errors.NONE) {
                throw new StellflowException(p.errorCode(), createTopicRefusal(name, p, resp.errorMessage()));
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

    /**
     * Deletes {@code name} (DeleteTopic, apiKey 51, answered by brokers of a cluster once the
     * controller committed the deletion and the broker applied it), asked of a broker as {@link
     * #createTopic(String, int, int)}.
     *
     * @throws StellflowException 10 UNKNOWN_TOPIC_OR_PARTITION when it does not exist, 20
     *     FEATURE_NOT_ENABLED from a broker without a controller
     */
    public void deleteTopic(String name) {
        CreateTopicRequest req = CreateTopicRequest.of(name, 0, CreateTopicRequest.DEFAULT_REPLICATION_FACTOR);
        CreateTopicResponse resp = await(
                metadata.sendToAnyBroker(
                        to -> network.send(to, ApiKeys.DELETE_TOPIC, req::write, CreateTopicResponse::read)),
                "DeleteTopic " + name);
        for (CreateTopicResponse.CreateTopicPartition p : resp.partitions()) {
            if (p.errorCode() != Errors.NONE) {
                throw new StellflowException(p.errorCode(), "DeleteTopic " + name);
            }
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
     * The partition count of {@code topic} from a fresh Metadata answer, or -1 when the topic does not
     * exist (UNKNOWN_TOPIC_OR_PARTITION).
     *
     * @throws StellflowException the topic's other error code (e.g. 5 LEADER_NOT_AVAILABLE while it is
     *     being created)
     */
    public int partitionCount(String topic) {
        TopicDescription d = describeTopics(List.of(topic)).get(topic);
        if (d == null || d.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION) {
            return -1;
        }
        if (d.errorCode() != Errors.NONE) {
            throw new StellflowException(d.errorCode(), "Metadata of topic " + topic);
        }
        return d.partitions().size();
    }

    /**
     * The control-plane endpoints ({@code host:port}, gRPC) a broker uses to reach the controllers
     * (asked of a broker as {@link #createTopic(String, int, int)}): its {@code
     * controller.quorum.bootstrap.servers}, or its own embedded controller in combined mode
     * (DescribeControllers, apiKey 60, {@code docs/protocol-additions.md}). The tools reach the
     * controllers through it when given only broker addresses.
     *
     * @throws StellflowException {@code NETWORK_ERROR} when the broker did not answer within {@code
     *     request.timeout.ms}, 2 UNSUPPORTED_VERSION from a broker without the API
     */
    public List<String> describeControllers() {
        DescribeControllersResponse resp = await(
                metadata.sendToAnyBroker(to -> network.send(
                        to,
                        ApiKeys.DESCRIBE_CONTROLLERS,
                        DescribeControllersRequest.INSTANCE::write,
                        DescribeControllersResponse::read)),
                "DescribeControllers");
        if (resp.errorCode() != Errors.NONE) {
            throw new StellflowException(resp.errorCode(), "DescribeControllers");
        }
        List<String> endpoints = new ArrayList<>();
        for (DescribeControllersResponse.ControllerEndpoint e : resp.controllers()) {
            endpoints.add(e.hostPort());
        }
        return endpoints;
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

    /**
     * Deletes the records below the given offsets (DeleteRecords, apiKey 27): each partition's leader
     * raises its log start offset to the offset ({@code -1}: the high watermark), checkpointed before
     * it answers; followers follow on their next fetch. Returns one outcome per partition in the
     * order given: the new log start offset, or the error (OFFSET_OUT_OF_RANGE above the high
     * watermark, UNKNOWN_TOPIC_OR_PARTITION at once for a partition the metadata does not know, a
     * leadership error still there after {@value RecordDeletion#MAX_ATTEMPTS} attempts).
     *
     * @throws StellflowException when no broker answers Metadata, or a leader does not serve
     *     DeleteRecords (an older broker)
     */
    public Map<TopicPartition, DeletedRecords> deleteRecords(Map<TopicPartition, Long> offsets) {
        return deletion.delete(offsets);
    }

    /**
     * Broker {@code brokerId}'s effective static configuration (DescribeBrokerConfigs, apiKey 28),
     * sorted by key; {@code keys} null for every key it reports, else only these.
     *
     * @throws IllegalArgumentException when the cluster's Metadata lists no broker {@code brokerId}
     * @throws StellflowException when the broker does not answer, or does not serve
     *     DescribeBrokerConfigs (an older broker)
     */
    public DescribeBrokerConfigsResponse describeBrokerConfigs(int brokerId, List<String> keys) {
        await(metadata.refresh(List.of()), "Metadata");
        HostPort broker = metadata.brokers().get(brokerId);
        if (broker == null) {
            throw new IllegalArgumentException("broker " + brokerId + " is not in the cluster (brokers: "
                    + new TreeMap<>(metadata.brokers()).keySet() + ")");
        }
        String what = "DescribeBrokerConfigs to broker " + brokerId + " (" + broker + ")";
        try {
            return await(
                    network.send(
                            broker,
                            ApiKeys.DESCRIBE_BROKER_CONFIGS,
                            new DescribeBrokerConfigsRequest(keys)::write,
                            DescribeBrokerConfigsResponse::read),
                    what);
        } catch (StellflowException e) {
            if (e.errorCode() == Errors.FEATURE_NOT_ENABLED || e.errorCode() == Errors.UNSUPPORTED_VERSION) {
                throw new StellflowException(
                        e.errorCode(), what + ": the broker does not serve DescribeBrokerConfigs (older version)", e);
            }
            throw e;
        }
    }

    /**
     * The ids of the brokers the cluster's Metadata lists, ascending (empty while none has
     * registered yet).
     *
     * @throws StellflowException when Metadata cannot be read
     */
    public List<Integer> brokerIds() {
        await(metadata.refresh(List.of()), "Metadata");
        return List.copyOf(new TreeMap<>(metadata.brokers()).keySet());
    }

    /**
     * {@link #describeBrokerConfigs(int, List)} of the lowest-id broker in the cluster's Metadata:
     * for cluster-wide defaults such as {@code num.partitions} and {@code default.replication.factor},
     * which the brokers of a cluster share (a broker set apart answers for itself only).
     *
     * @throws StellflowException when Metadata lists no broker ({@code BROKER_NOT_AVAILABLE}), or as
     *     {@link #describeBrokerConfigs(int, List)}
     */
    public DescribeBrokerConfigsResponse describeBrokerConfigs(List<String> keys) {
        await(metadata.refresh(List.of()), "Metadata");
        TreeMap<Integer, HostPort> brokers = new TreeMap<>(metadata.brokers());
        if (brokers.isEmpty()) {
            throw new StellflowException(Errors.BROKER_NOT_AVAILABLE, "Metadata lists no broker");
        }
        return describeBrokerConfigs(brokers.firstKey(), keys);
    }

    /**
     * Every broker's log dirs and the partitions in them (DescribeLogDirs, apiKey 26), by broker id in
     * ascending order; {@code topics} null for all partitions, else only these topics.
     *
     * @throws StellflowException naming the broker when one does not answer or does not serve
     *     DescribeLogDirs (FEATURE_NOT_ENABLED, the answer to an unknown API key: a broker older than
     *     this client)
     */
    public Map<Integer, DescribeLogDirsResponse> describeLogDirs(List<String> topics) {
        await(metadata.refresh(List.of()), "Metadata");
        Map<Integer, DescribeLogDirsResponse> out = new TreeMap<>();
        DescribeLogDirsRequest request = new DescribeLogDirsRequest(topics);
        for (Map.Entry<Integer, HostPort> b : new TreeMap<>(metadata.brokers()).entrySet()) {
            String what = "DescribeLogDirs to broker " + b.getKey() + " (" + b.getValue() + ")";
            try {
                out.put(
                        b.getKey(),
                        await(
                                network.send(
                                        b.getValue(),
                                        ApiKeys.DESCRIBE_LOG_DIRS,
                                        request::write,
                                        DescribeLogDirsResponse::read),
                                what));
            } catch (StellflowException e) {
                if (e.errorCode() == Errors.FEATURE_NOT_ENABLED || e.errorCode() == Errors.UNSUPPORTED_VERSION) {
                    throw new StellflowException(
                            e.errorCode(), what + ": the broker does not serve DescribeLogDirs (older version)", e);
                }
                throw e;
            }
        }
        return out;
    }

    private <T> T await(CompletableFuture<T> f, String what) {
        return AdminGroupCalls.await(f, what, config.requestTimeoutMs());
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

    /**
     * The text of a refused CreateTopic: what the code means for a topic, then the broker's reason when
     * the response carried one (v2), e.g. {@code CreateTopic a.b refused: the name collides with an
     * existing topic ...: topic 'a.b' collides with existing topic 'a_b'}.
     */
    static String createTopicRefusal(String name, CreateTopicResponse.CreateTopicPartition p, String brokerMessage) {
        String what = switch (p.errorCode()) {
            case Errors.INVALID_TOPIC -> "illegal topic name (1-249 characters of [a-zA-Z0-9._-], not '.' or '..')";
            case Errors.TOPIC_ALREADY_EXISTS ->
                "the topic exists with another partition count, or its name collides with an existing topic"
                        + " once '.' and '_' are taken as equal";
            case Errors.INVALID_PARTITIONS -> "invalid partition count";
            case Errors.INVALID_REPLICATION_FACTOR ->
                "invalid replication factor (at least 1 and at most the number of live brokers)";
            case Errors.BROKER_NOT_AVAILABLE ->
                "no active controller answered, or the broker did not apply the change in time";
            case Errors.INVALID_REQUEST ->
                "the broker refused it (bad name, partition count or replication factor, or an existing topic;"
                        + " the broker log has the reason)";
            default -> "refused";
        };
        String where = p.partition() < 0 ? "" : " partition " + p.partition();
        return "CreateTopic " + name + where + " refused: " + what
                + (brokerMessage == null || brokerMessage.isEmpty() ? "" : ": " + brokerMessage);
    }
}
