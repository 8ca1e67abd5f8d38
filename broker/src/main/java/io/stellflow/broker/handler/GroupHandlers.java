package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.coordinator.CoordinatorResult;
import io.stellflow.broker.coordinator.CoordinatorRuntime;
import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.group.GroupShard;
import io.stellflow.broker.group.RequestOrigin;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.telemetry.BrokerMetrics;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TxnRegistrations;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ApiMessage;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatRequest;
import io.stellflow.protocol.message.ConsumerGroupHeartbeatResponse;
import io.stellflow.protocol.message.DeleteGroupsRequest;
import io.stellflow.protocol.message.DeleteGroupsResponse;
import io.stellflow.protocol.message.DescribeGroupsRequest;
import io.stellflow.protocol.message.DescribeGroupsResponse;
import io.stellflow.protocol.message.HeartbeatRequest;
import io.stellflow.protocol.message.HeartbeatResponse;
import io.stellflow.protocol.message.JoinGroupRequest;
import io.stellflow.protocol.message.JoinGroupResponse;
import io.stellflow.protocol.message.ListGroupsRequest;
import io.stellflow.protocol.message.ListGroupsResponse;
import io.stellflow.protocol.message.OffsetCommitRequest;
import io.stellflow.protocol.message.OffsetCommitResponse;
import io.stellflow.protocol.message.OffsetDeleteRequest;
import io.stellflow.protocol.message.OffsetDeleteResponse;
import io.stellflow.protocol.message.OffsetFetchRequest;
import io.stellflow.protocol.message.OffsetFetchResponse;
import io.stellflow.protocol.message.OffsetHistoryRequest;
import io.stellflow.protocol.message.OffsetHistoryResponse;
import io.stellflow.protocol.message.SyncGroupRequest;
import io.stellflow.protocol.message.SyncGroupResponse;
import io.stellflow.protocol.message.TxnOffsetCommitRequest;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group APIs ({@code docs/spec/wire-protocol.md} §6.6-6.11; ours 20-25 in {@code
 * docs/protocol-additions.md}): each request is routed to its group's partition of {@code
 * __consumer_offsets} ({@link GroupPartitioner}) and run there by the coordinator runtime on the
 * partition's {@link GroupShard}; the answer is sent when the runtime completes the command (after
 * its records are committed; an OffsetFetch after the shard's earlier writes are, so it never shows
 * an offset a failover could take back). Request threads never wait for a command.
 *
 * <p>Errors (decision 9.r): in the body, with the header at 0, except OffsetCommit and OffsetFetch
 * with a null or empty groupId, which get {@code INVALID_REQUEST} header-only (§6.6, §6.7). A group
 * not coordinated here gets {@code NOT_COORDINATOR}; one being loaded, or a write that failed or was
 * not committed in time, {@code COORDINATOR_NOT_AVAILABLE} (per partition in OffsetCommit and
 * OffsetFetch). A v0 response carries only codes of v0 ({@link Errors#v0Fallback}).
 *
 * <p>Thread-safety: stateless apart from the runtime, which is thread-safe.
 */
public final class GroupHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(GroupHandlers.class);

    private final CoordinatorRuntime<GroupShard> runtime;
    private final OffsetsTopic offsets;
    private final BrokerMetrics metrics;
    private final TxnRegistrations registrations;

    /**
     * @param runtime the group coordinator's runtime (its shards are the partitions led here)
     * @param offsets the topic (partition count, creation on first use)
     * @param metrics where OffsetCommit counts and latencies go
     */
    public GroupHandlers(CoordinatorRuntime<GroupShard> runtime, OffsetsTopic offsets, BrokerMetrics metrics) {
        this(runtime, offsets, metrics, null);
    }

    /**
     * As above, with TxnOffsetCommit, whose coordinator registers its partition in the transaction
     * through {@code registrations} (null: TxnOffsetCommit is not served).
     */
    public GroupHandlers(
            CoordinatorRuntime<GroupShard> runtime,
            OffsetsTopic offsets,
            BrokerMetrics metrics,
            TxnRegistrations registrations) {
        this.runtime = runtime;
        this.offsets = offsets;
        this.metrics = metrics;
        this.registrations = registrations;
    }

    /** The handlers by API key, in key order. */
    public Map<Short, ApiHandler> handlers() {
        Map<Short, ApiHandler> h = new LinkedHashMap<>();
        h.put(ApiKeys.OFFSET_COMMIT, versioned(OffsetCommitRequest.VERSION_WITH_MEMBER_EPOCH, this::offsetCommit));
        h.put(ApiKeys.OFFSET_FETCH, versioned(OffsetFetchRequest.VERSION_WITH_ALL_TOPICS, this::offsetFetch));
        h.put(ApiKeys.HEARTBEAT, this::heartbeat);
        h.put(ApiKeys.JOIN_GROUP, this::joinGroup);
        h.put(ApiKeys.SYNC_GROUP, this::syncGroup);
        h.put(ApiKeys.CONSUMER_GROUP_HEARTBEAT, this::consumerGroupHeartbeat);
        h.put(ApiKeys.LIST_GROUPS, this::listGroups);
        h.put(ApiKeys.DESCRIBE_GROUPS, this::describeGroups);
        h.put(ApiKeys.DELETE_GROUPS, this::deleteGroups);
        h.put(ApiKeys.OFFSET_DELETE, this::offsetDelete);
        h.put(ApiKeys.OFFSET_HISTORY, this::offsetHistory);
        if (registrations != null) {
            h.put(ApiKeys.TXN_OFFSET_COMMIT, this::txnOffsetCommit);
        }
        return h;
    }

    private static ApiHandler versioned(short maxVersion, ApiHandler handler) {
        return new ApiHandler() {
            @Override
            public void handle(RequestContext context, ByteBuf body) {
                handler.handle(context, body);
            }

            @Override
            public short maxVersion() {
                return maxVersion;
            }
        };
    }

    // ---------------------------------------------------------------- routing

    /**
     * The partition of {@code groupId}, or a negative code: {@code -COORDINATOR_NOT_AVAILABLE} while
     * {@code __consumer_offsets} does not exist (its creation is started, as by FindCoordinator).
     */
    private int partitionOf(String groupId) {
        int count = offsets.partitionCount();
        if (count <= 0) {
            offsets.ensureExists();
            count = offsets.partitionCount();
            if (count <= 0) {
                return -Errors.COORDINATOR_NOT_AVAILABLE;
            }
        }
        return GroupPartitioner.partitionFor(groupId, count);
    }

    static RequestOrigin origin(RequestContext context) {
        String clientId = context.header().clientId();
        SocketAddress remote = context.channel().remoteAddress();
        String host = remote instanceof InetSocketAddress a && a.getAddress() != null
                ? a.getAddress().getHostAddress()
                : String.valueOf(remote);
        return RequestOrigin.anonymous(clientId == null ? "" : clientId, host); // until security lands
    }

    /** The wire code of a failed command; a bug in the shard is logged. */
    private static short codeOf(Throwable error) {
        short code = CoordinatorException.errorCodeOf(error);
        if (code == Errors.UNKNOWN_SERVER_ERROR) {
            LOG.error("Group command failed", error);
        }
        return code;
    }

    /**
     * Answers {@code context} with the result of {@code command} on the group's shard, or with
     * {@code onError} of the code when routing or the command failed.
     */
    private <T extends ApiMessage> void run(
            RequestContext context,
            String groupId,
            Function<Integer, CompletableFuture<T>> command,
            Function<Short, T> onError) {
        run(context, groupId, command, onError, r -> {});
    }

    /** As above; {@code answered} sees the response just before it is sent. */
    private <T extends ApiMessage> void run(
            RequestContext context,
            String groupId,
            Function<Integer, CompletableFuture<T>> command,
            Function<Short, T> onError,
            Consumer<T> answered) {
        int partition = partitionOf(groupId);
        if (partition < 0) {
            T r = onError.apply((short) -partition);
            answered.accept(r);
            context.respond(r);
            return;
        }
        command.apply(partition).whenComplete((r, e) -> {
            T answer = e == null ? r : onError.apply(codeOf(e));
            answered.accept(answer);
            context.respond(answer);
        });
    }

    private static boolean missing(String groupId) {
        return groupId == null || groupId.isEmpty();
    }

    // ---------------------------------------------------------------- v0 APIs (§6.6-6.11)

    private void offsetCommit(RequestContext context, ByteBuf body) {
        long startNs = System.nanoTime();
        short version = context.header().apiVersion();
        OffsetCommitRequest req = OffsetCommitRequest.read(body, version);
        if (missing(req.groupId())) {
            context.respondError(Errors.INVALID_REQUEST);
            return;
        }
        RequestOrigin origin = origin(context);
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.commitOffsets(req, version, origin, now))
                        .thenApply(r -> version == 0 ? commitForV0(r) : r),
                code -> commitError(req, code),
                r -> metrics.offsetCommit(BrokerMetrics.result(firstError(r)), System.nanoTime() - startNs));
    }

    private static short firstError(OffsetCommitResponse r) {
        for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
            for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                if (p.errorCode() != Errors.NONE) {
                    return p.errorCode();
                }
            }
        }
        return Errors.NONE;
    }

    private static OffsetCommitResponse commitError(OffsetCommitRequest req, short code) {
        List<OffsetCommitResponse.OffsetCommitTopicResponse> topics =
                new ArrayList<>(req.topics().size());
        for (OffsetCommitRequest.OffsetCommitTopic t : req.topics()) {
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> parts = new ArrayList<>();
            for (OffsetCommitRequest.OffsetCommitPartition p : t.partitions()) {
                parts.add(
                        new OffsetCommitResponse.OffsetCommitPartitionResponse(p.partition(), Errors.v0Fallback(code)));
            }
            topics.add(new OffsetCommitResponse.OffsetCommitTopicResponse(t.topic(), parts));
        }
        return new OffsetCommitResponse(topics);
    }

    /**
     * TxnOffsetCommit v0 ({@code docs/exactly-once.md} "Transactional offset commits"): registers
     * the group's {@code __consumer_offsets} partition in the producer's transaction at its
     * transaction coordinator (as a partition leader does before a transactional append; our
     * replacement for Kafka's AddOffsetsToTxn), then has the shard write the offsets as the
     * producer's transactional batch. Every partition gets the same code when the request fails as a
     * whole: INVALID_REQUEST (empty ids, negative producer id); NOT_COORDINATOR,
     * COORDINATOR_NOT_AVAILABLE (the group's coordinator; also when the transaction coordinator cannot
     * be reached, retriable); the registration's INVALID_TXN_STATE (no ONGOING transaction, or not
     * the one of {@code transactionSequence}), INVALID_PRODUCER_EPOCH (fenced), INVALID_REQUEST.
     */
    private void txnOffsetCommit(RequestContext context, ByteBuf body) {
        TxnOffsetCommitRequest req = TxnOffsetCommitRequest.read(body);
        OffsetCommitRequest asCommit = new OffsetCommitRequest(req.groupId(), req.topics());
        if (missing(req.groupId()) || missing(req.transactionalId()) || req.producerId() < 0) {
            context.respond(txnCommitError(asCommit, Errors.INVALID_REQUEST));
            return;
        }
        int partition = partitionOf(req.groupId());
        short status = partition < 0 ? (short) -partition : runtime.status(partition);
        if (status != Errors.NONE) {
            context.respond(txnCommitError(asCommit, status));
            return;
        }
        registrations
                .register(
                        req.transactionalId(),
                        req.producerId(),
                        req.producerEpoch(),
                        new TransactionPartition(OffsetsTopic.NAME, partition),
                        -1,
                        req.transactionSequence())
                .thenCompose(sequence -> {
                    if (sequence < 0) {
                        short code = (short) -sequence;
                        return CompletableFuture.completedFuture(txnCommitError(
                                asCommit,
                                code == Errors.BROKER_NOT_AVAILABLE ? Errors.COORDINATOR_NOT_AVAILABLE : code));
                    }
                    return runtime.submit(
                            partition, (GroupShard s, long now) -> s.txnCommitOffsets(req, sequence, now));
                })
                .whenComplete((r, e) -> context.respond(e == null ? r : txnCommitError(asCommit, codeOf(e))));
    }

    private static OffsetCommitResponse txnCommitError(OffsetCommitRequest req, short code) {
        List<OffsetCommitResponse.OffsetCommitTopicResponse> topics =
                new ArrayList<>(req.topics().size());
        for (OffsetCommitRequest.OffsetCommitTopic t : req.topics()) {
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> parts = new ArrayList<>();
            for (OffsetCommitRequest.OffsetCommitPartition p : t.partitions()) {
                parts.add(new OffsetCommitResponse.OffsetCommitPartitionResponse(p.partition(), code));
            }
            topics.add(new OffsetCommitResponse.OffsetCommitTopicResponse(t.topic(), parts));
        }
        return new OffsetCommitResponse(topics);
    }

    private static OffsetCommitResponse commitForV0(OffsetCommitResponse r) {
        List<OffsetCommitResponse.OffsetCommitTopicResponse> topics =
                new ArrayList<>(r.topics().size());
        for (OffsetCommitResponse.OffsetCommitTopicResponse t : r.topics()) {
            List<OffsetCommitResponse.OffsetCommitPartitionResponse> parts = new ArrayList<>();
            for (OffsetCommitResponse.OffsetCommitPartitionResponse p : t.partitions()) {
                parts.add(new OffsetCommitResponse.OffsetCommitPartitionResponse(
                        p.partition(), Errors.v0Fallback(p.errorCode())));
            }
            topics.add(new OffsetCommitResponse.OffsetCommitTopicResponse(t.topic(), parts));
        }
        return new OffsetCommitResponse(topics);
    }

    private void offsetFetch(RequestContext context, ByteBuf body) {
        short version = context.header().apiVersion();
        OffsetFetchRequest req = OffsetFetchRequest.read(body, version);
        if (missing(req.groupId())) {
            context.respondError(Errors.INVALID_REQUEST);
            return;
        }
        run(
                context,
                req.groupId(),
                // Through submit, not read: the answer waits for the shard's earlier writes to commit,
                // so a fetched offset is never one a failover could still take back.
                p -> runtime.submit(p, s -> CoordinatorResult.of(s.fetchOffsets(req, version)))
                        .thenApply(r -> versioned(r, version)),
                code -> versioned(fetchError(req, code, version), version));
    }

    private static ApiMessage versioned(OffsetFetchResponse r, short version) {
        return version == 0 ? r : out -> r.write(out, version);
    }

    /** Every requested partition with {@code code}; v1 also at the group level. */
    private static OffsetFetchResponse fetchError(OffsetFetchRequest req, short code, short version) {
        List<OffsetFetchResponse.OffsetFetchTopicResponse> topics = new ArrayList<>();
        if (req.topics() != null) {
            for (OffsetFetchRequest.OffsetFetchTopic t : req.topics()) {
                List<OffsetFetchResponse.OffsetFetchPartitionResponse> parts = new ArrayList<>();
                for (int p : t.partitions()) {
                    parts.add(new OffsetFetchResponse.OffsetFetchPartitionResponse(
                            p, OffsetFetchResponse.NO_OFFSET, "", version == 0 ? Errors.v0Fallback(code) : code));
                }
                topics.add(new OffsetFetchResponse.OffsetFetchTopicResponse(t.topic(), parts));
            }
        }
        return new OffsetFetchResponse(topics, version == 0 ? Errors.NONE : code);
    }

    private void heartbeat(RequestContext context, ByteBuf body) {
        HeartbeatRequest req = HeartbeatRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(new HeartbeatResponse(Errors.INVALID_REQUEST));
            return;
        }
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.heartbeat(req, now))
                        .thenApply(r -> new HeartbeatResponse(Errors.v0Fallback(r.errorCode()))),
                code -> new HeartbeatResponse(Errors.v0Fallback(code)));
    }

    private void joinGroup(RequestContext context, ByteBuf body) {
        JoinGroupRequest req = JoinGroupRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(JoinGroupResponse.error(Errors.INVALID_REQUEST));
            return;
        }
        RequestOrigin origin = origin(context);
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.joinGroup(req, origin, now))
                        .thenApply(r -> r.errorCode() == Errors.v0Fallback(r.errorCode())
                                ? r
                                : JoinGroupResponse.error(Errors.v0Fallback(r.errorCode()))),
                code -> JoinGroupResponse.error(Errors.v0Fallback(code)));
    }

    private void syncGroup(RequestContext context, ByteBuf body) {
        SyncGroupRequest req = SyncGroupRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(new SyncGroupResponse(Errors.INVALID_REQUEST));
            return;
        }
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.syncGroup(req, now))
                        .thenApply(r -> new SyncGroupResponse(Errors.v0Fallback(r.errorCode()))),
                code -> new SyncGroupResponse(Errors.v0Fallback(code)));
    }

    // ---------------------------------------------------------------- ours (20-25)

    private void consumerGroupHeartbeat(RequestContext context, ByteBuf body) {
        ConsumerGroupHeartbeatRequest req = ConsumerGroupHeartbeatRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(ConsumerGroupHeartbeatResponse.error(Errors.INVALID_REQUEST, "groupId is required"));
            return;
        }
        RequestOrigin origin = origin(context);
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.consumerGroupHeartbeat(req, origin, now)),
                code -> ConsumerGroupHeartbeatResponse.error(code, Errors.name(code)));
    }

    /** Every group of every partition loaded here (each partition's groups live on one broker). */
    private void listGroups(RequestContext context, ByteBuf body) {
        ListGroupsRequest req = ListGroupsRequest.read(body);
        int[] partitions = runtime.loadedPartitions();
        List<CompletableFuture<List<ListGroupsResponse.ListedGroup>>> parts = new ArrayList<>(partitions.length);
        for (int p : partitions) {
            parts.add(runtime.read(p, s -> s.listGroups(req.statesFilter())));
        }
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            List<ListGroupsResponse.ListedGroup> groups = new ArrayList<>();
            for (CompletableFuture<List<ListGroupsResponse.ListedGroup>> f : parts) {
                if (!f.isCompletedExceptionally()) {
                    groups.addAll(f.join()); // a partition that moved meanwhile is listed by its new leader
                }
            }
            context.respond(new ListGroupsResponse(Errors.NONE, groups));
        });
    }

    private void describeGroups(RequestContext context, ByteBuf body) {
        DescribeGroupsRequest req = DescribeGroupsRequest.read(body);
        List<CompletableFuture<DescribeGroupsResponse.DescribedGroup>> parts = new ArrayList<>();
        for (String groupId : req.groupIds()) {
            int p = missing(groupId) ? -Errors.INVALID_REQUEST : partitionOf(groupId);
            parts.add(
                    p < 0
                            ? CompletableFuture.completedFuture(
                                    DescribeGroupsResponse.DescribedGroup.error(groupId, (short) -p))
                            : runtime.read(p, s -> s.describeGroup(groupId))
                                    .exceptionally(
                                            e -> DescribeGroupsResponse.DescribedGroup.error(groupId, codeOf(e))));
        }
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> context.respond(new DescribeGroupsResponse(
                        parts.stream().map(CompletableFuture::join).toList())));
    }

    private void deleteGroups(RequestContext context, ByteBuf body) {
        DeleteGroupsRequest req = DeleteGroupsRequest.read(body);
        RequestOrigin origin = origin(context);
        List<CompletableFuture<DeleteGroupsResponse.GroupResult>> parts = new ArrayList<>();
        for (String groupId : req.groupIds()) {
            int p = missing(groupId) ? -Errors.INVALID_REQUEST : partitionOf(groupId);
            parts.add(
                    p < 0
                            ? CompletableFuture.completedFuture(
                                    new DeleteGroupsResponse.GroupResult(groupId, (short) -p))
                            : runtime.submit(p, (GroupShard s, long now) -> s.deleteGroup(groupId, origin, now))
                                    .thenApply(code -> new DeleteGroupsResponse.GroupResult(groupId, code))
                                    .exceptionally(e -> new DeleteGroupsResponse.GroupResult(groupId, codeOf(e))));
        }
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> context.respond(new DeleteGroupsResponse(
                        parts.stream().map(CompletableFuture::join).toList())));
    }

    private void offsetDelete(RequestContext context, ByteBuf body) {
        OffsetDeleteRequest req = OffsetDeleteRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(new OffsetDeleteResponse(Errors.INVALID_REQUEST, List.of()));
            return;
        }
        RequestOrigin origin = origin(context);
        run(
                context,
                req.groupId(),
                p -> runtime.submit(p, (GroupShard s, long now) -> s.deleteOffsets(req, origin, now)),
                code -> new OffsetDeleteResponse(code, List.of()));
    }

    private void offsetHistory(RequestContext context, ByteBuf body) {
        OffsetHistoryRequest req = OffsetHistoryRequest.read(body);
        if (missing(req.groupId())) {
            context.respond(new OffsetHistoryResponse(Errors.INVALID_REQUEST, List.of()));
            return;
        }
        run(
                context,
                req.groupId(),
                p -> runtime.read(p, s -> s.offsetHistory(req.groupId(), req.maxEntries())),
                code -> new OffsetHistoryResponse(code, List.of()));
    }
}
