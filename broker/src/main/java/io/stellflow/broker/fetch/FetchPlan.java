package io.stellflow.broker.fetch;

import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionFailure;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.Frames;
import io.stellflow.protocol.ResponseHeader;
import io.stellflow.protocol.message.FetchRequest;
import io.stellflow.protocol.message.FetchRequest.FetchPartition;
import io.stellflow.protocol.message.FetchRequest.FetchTopic;
import io.stellflow.protocol.message.FetchResponseLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A Fetch request resolved against the partition router once, when it arrives: each requested partition
 * with its {@link Partition} or the error that applies ({@code docs/spec/wire-protocol.md} §6.4
 * step 1), plus the response envelope size so reads can keep the whole response under the frame
 * limit.
 *
 * <p>Thread-safety: immutable.
 *
 * @param request the decoded request
 * @param topics per request topic, its partitions in request order
 * @param envelopeBytes size of the response payload without any records bytes
 */
public record FetchPlan(FetchRequest request, List<TopicPlan> topics, int envelopeBytes) {

    /**
     * One request topic.
     *
     * @param topic the name exactly as requested
     * @param partitions its partitions in request order
     */
    public record TopicPlan(String topic, List<PartitionPlan> partitions) {}

    /**
     * One requested partition.
     *
     * @param request the partition's request fields
     * @param partition the partition, or null when {@code errorCode} is set
     * @param errorCode {@code NONE}, {@code UNKNOWN_TOPIC_OR_PARTITION}, {@code LEADER_NOT_AVAILABLE},
     *     {@code NOT_LEADER_OR_FOLLOWER} or {@code BROKER_NOT_AVAILABLE} (led here, but on an offline log dir)
     * @param leaderEpoch the partition's leader epoch when it was resolved (-1 with an error): a read
     *     answers {@code NOT_LEADER_OR_FOLLOWER} once this broker no longer leads at this epoch
     *     ({@link FetchReader})
     */
    public record PartitionPlan(FetchPartition request, Partition partition, short errorCode, int leaderEpoch) {
        /** A partition that could not be resolved: {@code errorCode} answers it. */
        static PartitionPlan failed(FetchPartition request, short errorCode) {
            return new PartitionPlan(request, null, errorCode, -1);
        }
    }

    /** {@link #resolve(FetchRequest, PartitionRouter, short)} for Fetch v0. */
    public static FetchPlan resolve(FetchRequest request, PartitionRouter registry) {
        return resolve(request, registry, (short) 0);
    }

    /**
     * Resolves every requested partition (unknown topic or partition, not led here, leader epoch
     * mismatch, a follower Fetch ({@code replicaId >= 0}) from a broker that is not a follower replica
     * of the partition: {@code NOT_LEADER_OR_FOLLOWER}; led here but its log dir is offline: {@code
     * BROKER_NOT_AVAILABLE}).
     *
     * @param version the request's apiVersion (v1 entries carry 8 more bytes, {@link FetchResponseLayout})
     */
    public static FetchPlan resolve(FetchRequest request, PartitionRouter registry, short version) {
        int partitionEnvelope = FetchResponseLayout.partitionEnvelopeBytes(version);
        long envelope = ResponseHeader.SIZE + FetchResponseLayout.BODY_HEADER_BYTES;
        List<TopicPlan> topics = new ArrayList<>(request.topicPartitions().size());
        for (FetchTopic topic : request.topicPartitions()) {
            envelope += FetchResponseLayout.topicHeaderBytes(topic.topic());
            List<PartitionPlan> partitions = new ArrayList<>(topic.partitions().size());
            for (FetchPartition p : topic.partitions()) {
                envelope += partitionEnvelope;
                Partition partition = registry.leaderPartition(topic.topic(), p.partition());
                int leaderEpoch = partition == null ? -1 : partition.leaderEpoch();
                if (partition == null) {
                    partitions.add(PartitionPlan.failed(p, registry.errorFor(topic.topic(), p.partition())));
                } else if (offline(partition)) {
                    // Its log dir is offline: its files are not trusted for reads either (issue #23).
                    partitions.add(PartitionPlan.failed(p, Errors.BROKER_NOT_AVAILABLE));
                } else if (p.currentLeaderEpoch() >= 0 && p.currentLeaderEpoch() != leaderEpoch) {
                    partitions.add(PartitionPlan.failed(p, Errors.NOT_LEADER_OR_FOLLOWER));
                } else if (request.replicaId() >= 0 && !partition.isFollowerReplica(request.replicaId())) {
                    // A follower Fetch from a broker that is not a replica of the partition: it holds
                    // no role the request needs (docs/spec/wire-protocol.md §6.4 step 1).
                    partitions.add(PartitionPlan.failed(p, Errors.NOT_LEADER_OR_FOLLOWER));
                } else {
                    partitions.add(new PartitionPlan(p, partition, Errors.NONE, leaderEpoch));
                }
            }
            topics.add(new TopicPlan(topic.topic(), partitions));
        }
        return new FetchPlan(request, topics, (int) Math.min(envelope, Frames.MAX_FRAME_LENGTH + 1L));
    }

    private static boolean offline(Partition partition) {
        PartitionFailure f = partition.failure();
        return f != null && f.logDirOffline();
    }

    /** Largest total of records bytes that still fits the response in one frame; may be &lt;= 0. */
    public long recordsBudgetBytes() {
        return (long) Frames.MAX_FRAME_LENGTH - envelopeBytes;
    }

    /** Every resolved partition (those without an error), in request order. */
    public List<Partition> partitions() {
        List<Partition> result = new ArrayList<>();
        for (TopicPlan topic : topics) {
            for (PartitionPlan p : topic.partitions()) {
                if (p.partition() != null) {
                    result.add(p.partition());
                }
            }
        }
        return result;
    }
}
