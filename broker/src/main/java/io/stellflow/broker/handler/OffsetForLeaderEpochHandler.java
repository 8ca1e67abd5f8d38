package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest;
import io.stellflow.protocol.message.OffsetForLeaderEpochRequest.PartitionEpoch;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse;
import io.stellflow.protocol.message.OffsetForLeaderEpochResponse.EpochEndOffset;
import io.stellflow.storage.UnifiedLog;
import java.util.ArrayList;
import java.util.List;

/**
 * OffsetForLeaderEpoch (apiKey 100, {@code docs/protocol-additions.md}), served by the partition
 * leader: where does leader epoch {@code e} end in the leader's log?
 *
 * <ul>
 *   <li>Not led here: {@code NOT_LEADER_OR_FOLLOWER} ({@code LEADER_NOT_AVAILABLE} without a leader,
 *       {@code UNKNOWN_TOPIC_OR_PARTITION} for a partition the metadata does not know).
 *   <li>{@code currentLeaderEpoch >= 0} below the leader's epoch: {@code FENCED_LEADER_EPOCH} (the
 *       asker is stale); above it: {@code UNKNOWN_LEADER_EPOCH} (this broker's metadata lags).
 *   <li>Otherwise the log's answer ({@link UnifiedLog#endOffsetForEpoch}): the largest epoch &lt;=
 *       {@code e} that wrote to the log and the start offset of the next higher epoch, or the log
 *       end offset when that epoch is the log's latest.
 *   <li>The leader's current epoch counts as started at the log end offset even before anything
 *       was appended in it (Kafka records it in the epoch cache when it becomes leader; here the
 *       cache only learns epochs from appends): for {@code latest log epoch < e <= current epoch}
 *       the answer is {@code (e, LEO)} when {@code e} is the current epoch, else {@code (latest log
 *       epoch, LEO)} ({@code (e, LEO)} for an empty history). So a follower of an older leader of
 *       epoch {@code e} learns that {@code e} ended where the leader's log ends, not "undefined".
 *   <li>{@code e} above the current epoch (or below 0): undefined, epoch and offset -1; the
 *       follower then truncates to its high watermark.
 * </ul>
 *
 * <p>Thread-safety: stateless; runs on request handler threads.
 */
public final class OffsetForLeaderEpochHandler implements ApiHandler {
    private final PartitionRouter router;

    /** @param router the partitions this broker leads */
    public OffsetForLeaderEpochHandler(PartitionRouter router) {
        this.router = router;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        OffsetForLeaderEpochRequest request = OffsetForLeaderEpochRequest.read(body);
        List<OffsetForLeaderEpochResponse.Topic> topics =
                new ArrayList<>(request.topics().size());
        for (OffsetForLeaderEpochRequest.Topic t : request.topics()) {
            List<EpochEndOffset> partitions = new ArrayList<>(t.partitions().size());
            for (PartitionEpoch p : t.partitions()) {
                Partition leader = router.leaderPartition(t.topic(), p.partition());
                partitions.add(
                        leader == null
                                ? EpochEndOffset.error(p.partition(), router.errorFor(t.topic(), p.partition()))
                                : answer(leader, p));
            }
            topics.add(new OffsetForLeaderEpochResponse.Topic(t.topic(), partitions));
        }
        context.respond(new OffsetForLeaderEpochResponse(topics));
    }

    /**
     * The answer of the leader of {@code partition} (the rules of the class comment after the
     * leadership check). Any thread.
     */
    public static EpochEndOffset answer(Partition partition, PartitionEpoch request) {
        int id = request.partition();
        int current = partition.leaderEpoch();
        int asked = request.currentLeaderEpoch();
        if (asked >= 0 && asked < current) {
            return EpochEndOffset.error(id, Errors.FENCED_LEADER_EPOCH);
        }
        if (asked > current) {
            return EpochEndOffset.error(id, Errors.UNKNOWN_LEADER_EPOCH);
        }
        return endOffset(partition.log(), request.leaderEpoch(), current, id);
    }

    /** {@code epoch}'s end in {@code log} of a leader at {@code currentEpoch}. */
    private static EpochEndOffset endOffset(UnifiedLog log, int epoch, int currentEpoch, int partition) {
        // LEO first: if the history below still has no epoch >= `epoch`, nothing was appended in
        // the current epoch before this read, so the LEO read is where the current epoch starts.
        long logEnd = log.logEndOffset();
        io.stellflow.storage.EpochEndOffset found = log.endOffsetForEpoch(epoch);
        if (found.endOffset() >= 0) {
            return new EpochEndOffset(partition, Errors.NONE, found.leaderEpoch(), found.endOffset());
        }
        if (epoch < 0 || epoch > currentEpoch) {
            return EpochEndOffset.error(partition, Errors.NONE);
        }
        int latest = log.latestLeaderEpoch();
        int answered = epoch == currentEpoch || latest < 0 ? epoch : latest;
        return new EpochEndOffset(partition, Errors.NONE, answered, logEnd);
    }
}
