package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.broker.topic.PartitionRouter;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DeleteRecordsRequest;
import io.stellflow.protocol.message.DeleteRecordsResponse;
import io.stellflow.storage.LogStartOffsetResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DeleteRecords (apiKey 27, {@code docs/protocol-additions.md}): on the leader, raises each named
 * partition's log start offset to the requested offset ({@code -1}: the high watermark) with {@link
 * io.stellflow.storage.UnifiedLog#maybeIncrementLogStartOffset}, which writes the log-start-offset
 * checkpoint before it returns, so the new start survives a restart. Followers take it from the
 * leader's Fetch answers ({@code logStartOffset}) as they take retention's; the segments below it go
 * with the next retention pass. An offset at or below the current start changes nothing and answers
 * the current start.
 *
 * <p>Partition errors (low watermark -1): not led here {@code NOT_LEADER_OR_FOLLOWER} (no leader:
 * {@code LEADER_NOT_AVAILABLE}; unknown topic or partition {@code UNKNOWN_TOPIC_OR_PARTITION}, both
 * from {@link PartitionRouter#errorFor}); an offset above the high watermark or below -1 {@code
 * OFFSET_OUT_OF_RANGE}; a new leader whose high watermark has not caught up with its predecessor's
 * {@code NOT_LEADER_OR_FOLLOWER} (retriable); a failed checkpoint write {@code BROKER_NOT_AVAILABLE}.
 *
 * <p>Thread-safety: stateless; runs on the request pool (the log's write lock orders it against the
 * append agent, retention and the flusher).
 */
public final class DeleteRecordsHandler implements ApiHandler {
    private static final Logger LOG = LoggerFactory.getLogger(DeleteRecordsHandler.class);

    private final PartitionRouter router;

    /** @param router the partitions this broker leads */
    public DeleteRecordsHandler(PartitionRouter router) {
        this.router = router;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        DeleteRecordsRequest request = DeleteRecordsRequest.read(body);
        List<DeleteRecordsResponse.Topic> topics =
                new ArrayList<>(request.topics().size());
        for (DeleteRecordsRequest.Topic t : request.topics()) {
            List<DeleteRecordsResponse.Partition> out =
                    new ArrayList<>(t.partitions().size());
            for (DeleteRecordsRequest.Partition p : t.partitions()) {
                Partition partition = router.leaderPartition(t.topic(), p.partition());
                out.add(
                        partition == null
                                ? error(p.partition(), router.errorFor(t.topic(), p.partition()))
                                : delete(partition, p));
            }
            topics.add(new DeleteRecordsResponse.Topic(t.topic(), out));
        }
        context.respond(new DeleteRecordsResponse(topics));
    }

    private static DeleteRecordsResponse.Partition delete(Partition partition, DeleteRecordsRequest.Partition p) {
        if (partition.highWatermarkBelowEpochStart()) {
            return error(p.partition(), Errors.NOT_LEADER_OR_FOLLOWER);
        }
        long highWatermark = partition.highWatermark();
        long target = p.offset() == DeleteRecordsRequest.HIGH_WATERMARK ? highWatermark : p.offset();
        if (target < 0) {
            return error(p.partition(), Errors.OFFSET_OUT_OF_RANGE);
        }
        LogStartOffsetResult result;
        try {
            result = partition.log().maybeIncrementLogStartOffset(target, highWatermark);
        } catch (IOException e) {
            LOG.error("DeleteRecords on {} up to {} failed", partition, target, e);
            return error(p.partition(), Errors.BROKER_NOT_AVAILABLE);
        }
        if (result == LogStartOffsetResult.BEYOND_HIGH_WATERMARK) {
            return error(p.partition(), Errors.OFFSET_OUT_OF_RANGE);
        }
        if (result == LogStartOffsetResult.INCREMENTED) {
            LOG.info("DELETE_RECORDS partition={} logStartOffset={}", partition, partition.logStartOffset());
        }
        return new DeleteRecordsResponse.Partition(p.partition(), Errors.NONE, partition.logStartOffset());
    }

    private static DeleteRecordsResponse.Partition error(int partition, short errorCode) {
        return new DeleteRecordsResponse.Partition(partition, errorCode, -1L);
    }
}
