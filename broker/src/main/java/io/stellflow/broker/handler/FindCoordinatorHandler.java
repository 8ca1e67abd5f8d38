package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.cluster.ClusterMetadataHandler;
import io.stellflow.broker.cluster.ReplicaManager;
import io.stellflow.broker.coordinator.GroupPartitioner;
import io.stellflow.broker.coordinator.OffsetsTopic;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.transaction.TransactionStateTopic;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.BrokerRegistration;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.FindCoordinatorRequest;
import io.stellflow.protocol.message.FindCoordinatorResponse;

/**
 * FindCoordinator (apiKey 7, v0, {@code docs/spec/wire-protocol.md} §6.8, and our v1), answered by
 * any broker: the coordinator of group {@code key} is the leader of its partition of {@code
 * __consumer_offsets} ({@link GroupPartitioner}), named with its id and the host and port Metadata
 * gives it (its PLAINTEXT listener). The first request creates the topic through the controller
 * ({@link OffsetsTopic#ensureExists}, waiting up to 3 s). v1 also takes keyType 1: the coordinator of
 * transactional id {@code key}, the leader of its partition of {@code __transaction_state}, created
 * the same way as by the first transactional InitProducerId.
 *
 * <p>Errors, in the body with the header at 0 (decision 9.r), nodeId -1, host null, port -1:
 *
 * <ul>
 *   <li>{@code INVALID_REQUEST} (3): a null or empty key, or a keyType other than 0 (v0) or 0 and 1
 *       (v1).
 *   <li>{@code COORDINATOR_NOT_AVAILABLE} (16): the topic is being created (or no controller
 *       answered), the partition has no leader, its leader is not registered or is fenced, or this
 *       broker is the leader and has not loaded the partition yet.
 * </ul>
 *
 * <p>Thread-safety: stateless; reads one immutable metadata image per request.
 */
public final class FindCoordinatorHandler implements ApiHandler {
    /** The local runtime's view of a partition of {@code __consumer_offsets}. */
    @FunctionalInterface
    public interface LocalStatus {
        /**
         * @return {@code NONE} when loaded here, another code ({@code COORDINATOR_NOT_AVAILABLE},
         *     {@code NOT_COORDINATOR}) when not (yet) serving it
         */
        short status(int partition);
    }

    /** The transaction coordinator's side of a keyType 1 lookup. */
    public interface TransactionSide {
        /** The partition of {@code transactionalId}, creating the topic if missing; a negated code while it cannot be had. */
        int partitionOf(String transactionalId);

        /** The local runtime's status of a partition of {@code __transaction_state} ({@link LocalStatus}). */
        short status(int partition);
    }

    private final ReplicaManager replicas;
    private final OffsetsTopic offsets;
    private final LocalStatus local;
    private final TransactionSide transactions;

    /**
     * @param replicas this broker's applied metadata
     * @param offsets the topic and its creation
     * @param local the coordinator runtime's status of a partition (consulted when this broker leads it)
     */
    public FindCoordinatorHandler(ReplicaManager replicas, OffsetsTopic offsets, LocalStatus local) {
        this(replicas, offsets, local, null);
    }

    /** @param transactions the transaction coordinator for keyType 1 (v1); null: v0 only */
    public FindCoordinatorHandler(
            ReplicaManager replicas, OffsetsTopic offsets, LocalStatus local, TransactionSide transactions) {
        this.replicas = replicas;
        this.offsets = offsets;
        this.local = local;
        this.transactions = transactions;
    }

    /** v1 (keyType 1) when a transaction coordinator is given, else v0. */
    @Override
    public short maxVersion() {
        return transactions == null ? 0 : FindCoordinatorRequest.VERSION_WITH_TRANSACTION_KEY;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        FindCoordinatorRequest request = FindCoordinatorRequest.read(body);
        context.respond(answer(request, context.header().apiVersion()));
    }

    FindCoordinatorResponse answer(FindCoordinatorRequest request) {
        return answer(request, (short) 0);
    }

    FindCoordinatorResponse answer(FindCoordinatorRequest request, short version) {
        if (request.key() == null || request.key().isEmpty()) {
            return FindCoordinatorResponse.error(Errors.INVALID_REQUEST);
        }
        if (request.keyType() == FindCoordinatorRequest.KEY_TYPE_TRANSACTION
                && version >= FindCoordinatorRequest.VERSION_WITH_TRANSACTION_KEY
                && transactions != null) {
            int partition = transactions.partitionOf(request.key());
            if (partition < 0) {
                return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE);
            }
            return leaderOf(TransactionStateTopic.NAME, partition, transactions::status);
        }
        if (request.keyType() != FindCoordinatorRequest.KEY_TYPE_GROUP) {
            return FindCoordinatorResponse.error(Errors.INVALID_REQUEST);
        }
        if (offsets.ensureExists() != Errors.NONE) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        MetadataImage image = replicas.image();
        TopicImage topic = image.topic(OffsetsTopic.NAME);
        if (topic == null || topic.partitions().isEmpty()) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        int partition =
                GroupPartitioner.partitionFor(request.key(), topic.partitions().size());
        return leaderOf(OffsetsTopic.NAME, partition, local);
    }

    /** The coordinator of {@code partition} of {@code topicName}: its leader, once loaded there. */
    private FindCoordinatorResponse leaderOf(String topicName, int partition, LocalStatus status) {
        MetadataImage image = replicas.image();
        TopicImage topic = image.topic(topicName);
        PartitionImage p = topic == null ? null : topic.partition(partition);
        int leader = p == null ? PartitionImage.NO_LEADER : p.leader();
        if (leader == PartitionImage.NO_LEADER) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        if (leader == replicas.brokerId() && status.status(partition) != Errors.NONE) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE); // still loading
        }
        BrokerRegistration b = image.broker(leader);
        BrokerEndpoint e = b == null || b.fenced() ? null : ClusterMetadataHandler.plaintext(b);
        if (e == null) {
            return FindCoordinatorResponse.error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        return new FindCoordinatorResponse(Errors.NONE, leader, e.host(), e.port());
    }
}
