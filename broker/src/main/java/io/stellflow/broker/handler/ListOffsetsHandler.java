package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import io.stellflow.protocol.message.ListOffsetsRequest;
import io.stellflow.protocol.message.ListOffsetsRequest.ListOffsetsPartition;
import io.stellflow.protocol.message.ListOffsetsRequest.ListOffsetsTopic;
import io.stellflow.protocol.message.ListOffsetsResponse;
import io.stellflow.protocol.message.ListOffsetsResponse.ListOffsetsPartitionResponse;
import io.stellflow.protocol.message.ListOffsetsResponse.ListOffsetsTopicResponse;
import io.stellflow.storage.TimestampOffset;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ListOffsets (apiKey 4, {@code docs/spec/wire-protocol.md} §6.5, decision 9.k). The visible end E
 * is the high watermark for clients at isolationLevel 0, the last stable offset at isolationLevel 1
 * and the log end offset for brokers ({@code replicaId >= 0}). Brokers get the high watermark here
 * too (no broker asks for more yet); a client at isolationLevel 1 gets the last stable offset.
 *
 * <ul>
 *   <li>-2 (earliest): offset = logStartOffset, offsets = up to maxNumOffsets consecutive offsets below E;
 *   <li>-1 (latest): offset = E, offsets = [E];
 *   <li>&gt;= 0: the first record (record granularity) in [logStartOffset, E) with timestamp &gt;= the
 *       target, its timestamp reported; none: {@code OFFSET_OUT_OF_RANGE}.
 * </ul>
 *
 * <p>Partition errors: unknown topic or partition {@code UNKNOWN_TOPIC_OR_PARTITION}; not led by this
 * broker {@code NOT_LEADER_OR_FOLLOWER} (no leader: {@code LEADER_NOT_AVAILABLE});
 * {@code currentLeaderEpoch >= 0} and not the leader's epoch {@code NOT_LEADER_OR_FOLLOWER};
 * {@code maxNumOffsets <= 0} or a timestamp below -2 {@code INVALID_REQUEST}; a new leader whose HW
 * has not caught up with its predecessor's ({@link Partition#highWatermarkBelowEpochStart}) {@code
 * NOT_LEADER_OR_FOLLOWER} (retriable), so a consumer never sees the HW go back; a read failure
 * {@code BROKER_NOT_AVAILABLE}. A replicaId below -1 is a request-level {@code INVALID_REQUEST}.
 *
 * <p>Thread-safety: stateless.
 */
public final class ListOffsetsHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ListOffsetsHandler.class);

    /**
     * Cap on the {@code offsets} array: 10,000 entries = 80 KB, far below the frame limit even with
     * many partitions in one request; SDKs ask for 1.
     */
    static final int MAX_OFFSETS_PER_PARTITION = 10_000;

    private final PartitionRouter registry;

    /** @param registry the partitions this broker leads */
    public ListOffsetsHandler(PartitionRouter registry) {
        this.registry = registry;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        ListOffsetsRequest request = ListOffsetsRequest.read(body);
        if (request.replicaId() < -1) {
            throw new ProtocolException(Errors.INVALID_REQUEST, "replicaId " + request.replicaId() + " < -1");
        }
        List<ListOffsetsTopicResponse> topics = new ArrayList<>(request.topics().size());
        for (ListOffsetsTopic topic : request.topics()) {
            List<ListOffsetsPartitionResponse> partitions =
                    new ArrayList<>(topic.partitions().size());
            for (ListOffsetsPartition p : topic.partitions()) {
                Partition partition = registry.leaderPartition(topic.topic(), p.partition());
                partitions.add(
                        partition == null
                                ? error(p.partition(), registry.errorFor(topic.topic(), p.partition()), -1)
                                : listOffsets(partition, p, request.replicaId() < 0 && request.isolationLevel() == 1));
            }
            topics.add(new ListOffsetsTopicResponse(topic.topic(), partitions));
        }
        context.respond(new ListOffsetsResponse(topics));
    }

    /** One partition's answer; {@code readCommitted}: a client at isolationLevel 1 (visible end = LSO). */
    static ListOffsetsPartitionResponse listOffsets(
            Partition partition, ListOffsetsPartition request, boolean readCommitted) {
        if (partition == null) {
            return error(request.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION, -1);
        }
        int epoch = partition.leaderEpoch();
        if (request.currentLeaderEpoch() >= 0 && request.currentLeaderEpoch() != epoch) {
            return error(request.partition(), Errors.NOT_LEADER_OR_FOLLOWER, epoch);
        }
        if (request.maxNumOffsets() <= 0 || request.timestamp() < ListOffsetsRequest.EARLIEST_TIMESTAMP) {
            return error(request.partition(), Errors.INVALID_REQUEST, epoch);
        }
        if (partition.highWatermarkBelowEpochStart()) {
            // A new leader whose HW has not yet caught up with its predecessor's
            // (Partition#highWatermarkBelowEpochStart).
            return error(request.partition(), Errors.NOT_LEADER_OR_FOLLOWER, epoch);
        }
        long visibleEnd = readCommitted ? partition.lastStableOffset() : partition.highWatermark();
        long logStart = partition.logStartOffset();
        if (!partition.leadsAt(epoch)) {
            // Deposed while answering: a follower's HW and LSO lag its leader's.
            return error(request.partition(), Errors.NOT_LEADER_OR_FOLLOWER, epoch);
        }
        if (request.timestamp() == ListOffsetsRequest.LATEST_TIMESTAMP) {
            return new ListOffsetsPartitionResponse(
                    request.partition(), Errors.NONE, epoch, -1L, visibleEnd, List.of(visibleEnd));
        }
        if (request.timestamp() == ListOffsetsRequest.EARLIEST_TIMESTAMP) {
            return new ListOffsetsPartitionResponse(
                    request.partition(),
                    Errors.NONE,
                    epoch,
                    -1L,
                    logStart,
                    consecutive(logStart, visibleEnd, request.maxNumOffsets()));
        }
        TimestampOffset found;
        try {
            found = partition.log().offsetForTimestamp(request.timestamp(), visibleEnd);
        } catch (IOException e) {
            LOG.error("Timestamp lookup on {} failed", partition, e);
            return error(request.partition(), Errors.BROKER_NOT_AVAILABLE, epoch);
        }
        if (found == null) {
            return error(request.partition(), Errors.OFFSET_OUT_OF_RANGE, epoch);
        }
        return new ListOffsetsPartitionResponse(
                request.partition(),
                Errors.NONE,
                epoch,
                found.timestampMs(),
                found.offset(),
                consecutive(found.offset(), visibleEnd, request.maxNumOffsets()));
    }

    /** Up to {@code max} offsets {@code from, from+1, ...} below {@code endExclusive}. */
    static List<Long> consecutive(long from, long endExclusive, int max) {
        long count = Math.min(Math.min(max, MAX_OFFSETS_PER_PARTITION), Math.max(0L, endExclusive - from));
        List<Long> offsets = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            offsets.add(from + i);
        }
        return offsets;
    }

    private static ListOffsetsPartitionResponse error(int partition, short errorCode, int leaderEpoch) {
        return new ListOffsetsPartitionResponse(partition, errorCode, leaderEpoch, -1L, -1L, List.of());
    }
}
